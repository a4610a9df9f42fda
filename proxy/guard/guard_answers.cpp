// The guard's side of the upstream's answers: the request each answers,
// fsguard's own (initialize, listings, probes, reads, identity checks),
// and what a guarded call's answer showed or changed.
#include "proxy/guard/guard.hpp"

#include <regex>

#include "proxy/guard/client_limits.hpp"
#include "proxy/guard/stale_change.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "tracker/read_response.hpp"
#include "tracker/unified_diff.hpp"
#include "proxy/guard/guard_internal.hpp"

namespace fsguard {

namespace {

bool succeeded(const nlohmann::json& response)
{
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    return false;
  }
  const auto& is_error = member(result, "isError");
  return !(is_error.is_boolean() && is_error.get<bool>());
}

// True when a read's answer shows content at all: an empty result answers
// nothing that was asked, so it records no read.
bool shows_content(const nlohmann::json& response)
{
  const auto& content = member(member(response, "result"), "content");
  return content.is_array() && !content.empty();
}

} // namespace

std::string_view result_text(const nlohmann::json& response)
{
  const auto& content = member(member(response, "result"), "content");
  if (!content.is_array() || content.empty()) {
    return {};
  }
  const auto& text = member(content.front(), "text");
  return text.is_string() ? std::string_view(text.get_ref<const std::string&>())
                          : std::string_view();
}

std::optional<std::size_t> Guard::answer_text_wanted(const Ledger::Answered& answered) const
{
  const PendingRequest* pending = answered.request();
  if (pending == nullptr || pending->expect != Expectation::guarded_call || !pending->call) {
    return std::nullopt;
  }
  const CallInFlight& call = *pending->call;
  if (call.what.role != ToolRole::read || call.what.extent != ReadExtent::whole
      || !keeps_text_shown(call)) {
    return std::nullopt;
  }
  return m_records.kept().budget().file_bytes;
}

bool Guard::keeps_text_shown(const CallInFlight& call) const
{
  return !view() && !call.what.path_list && call.files.size() == 1 && call.files.front()
         && call.what.view == ReadView::utf8_text && call.what.whole_if_status.empty()
         && m_records.kept().budget().total_bytes > 0;
}

void Guard::on_verify_answer(const std::string& key, const UpstreamRead& read, Outbox& out,
                             Clock::time_point now)
{
  const auto taken = m_verification.on_verify_answer(key, read, out);
  if (taken != UpstreamVerification::Answer::nothing) {
    release_held(out, now);
  }
  if (taken == UpstreamVerification::Answer::file_read) {
    view()->forget_all();
  }
}

bool Guard::on_upstream_response(Ledger::Answered answered_by_key, const std::string& key,
                                 UpstreamMessage& answer, Outbox& out, Clock::time_point now)
{
  const PendingRequest* pending = answered_by_key.request();
  if (pending == nullptr || (pending->expect == Expectation::guarded_call && !pending->call)) {
    return true; // answers nothing the upstream was asked: the client's business
  }
  auto closed = m_ledger.close(answered_by_key);
  PendingRequest& answered = closed.mapped();
  switch (answered.expect) {
  case Expectation::relay:
  case Expectation::roots:
  case Expectation::override_answer: // asked of the client: never answered by the upstream
    return true;
  case Expectation::initialize: {
    const nlohmann::json& response = answer.tree();
    if (!member(response, "result").is_object()) {
      m_ledger.initialize_failed(); // the client may correct it and send it again
      refuse_session_waits_after(response, out);
      return true;
    }
    m_paths.on_initialize_result(response, out);
    release_held(out, now); // the calls sent before, if the server has no directories to learn
    return true;
  }
  case Expectation::discover: {
    const bool own = answered.from == Peer::fsguard;
    const nlohmann::json& response = answer.tree();
    if ((member(response, "result").is_object() || own) && !m_paths.knows_server()) {
      // The first answer fixes the server for the session: a later one (a
      // client's own server/discover) cannot change its profile.
      // A server that refused fsguard's own server/discover is guarded as
      // one that never said which it is; the client's own refused one is
      // followed by its initialize (the SDK's fallback to the 2025 era).
      if (own && !member(response, "result").is_object()) {
        out.say(LogLevel::warn, "the upstream did not answer fsguard's server/discover, so "
                                "fsguard cannot tell which server it is");
      }
      m_paths.on_initialize_result(response, out);
      release_held(out, now); // the calls that waited to know the server, as after initialize
    }
    return !own;
  }
  case Expectation::own_listing:
  case Expectation::client_listing: {
    const bool own = answered.expect == Expectation::own_listing;
    if (own) {
      m_paths.listing_done();
    }
    m_paths.on_listing_result(answer.tree(),
                              answered.listing_sequence, own, out);
    after_listing(out, now);
    return !own;
  }
  case Expectation::own_probe:
    m_paths.on_probe_result(answer.tree(), answered.probed, out);
    after_listing(out, now);
    return false;
  case Expectation::own_verify:
    on_verify_answer(key, read_outcome(answer), out, now);
    return false;
  case Expectation::own_identity:
    on_identity_answer(key, identity_outcome(answer.tree(), m_paths.file_info_format()), out, now);
    return false;
  case Expectation::guarded_call:
    break;
  }
  CallInFlight& call = *answered.call;
  const auto drop_unused_checks = [&] { m_verification.drop_unused_checks(call); };
  if (call.expired) {
    drop_unused_checks();
    // It was given up on (cancelled, or no answer in time) and the calls
    // behind it went on: when it took effect is unknown.
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file);
        }
      }
    }
    return true;
  }
  // Marked idle before its answer is recorded, which looks at no call in
  // flight, so that the record may take the call's paths rather than copy them.
  mark_busy(call, -1);
  const bool relay =
    (changes_files(call.what.role) && unfinished_change(answered, answer, out, now))
    || record_answer(call, answer, out, now);
  drop_unused_checks();
  m_ledger.recycle(std::move(closed));
  release_held(out, now);
  return relay;
}

bool Guard::record_answer(CallInFlight& call, UpstreamMessage& answer, Outbox& out,
                          Clock::time_point now)
{
  const std::string_view line = answer.line();
  const SkimmedMessage& skimmed = answer.skimmed();
  DecodedAnswerText* const first_text = answer.first_text();
  // Most answers only need their outcome, which a skim finds without
  // parsing megabytes of file content; the rest need the text.
  bool relay = true;
  const bool is_read = call.what.role == ToolRole::read;
  const bool needs_text = call.what.path_list || !call.what.whole_if_status.empty()
                          || (call.what.role == ToolRole::edit && call.what.result_is_diff);
  const nlohmann::json* response = &null_value(); // the tree, when the skim cannot tell
  bool ok = false;
  const auto skimmed_ok = needs_text ? std::nullopt : skim_tool_succeeded(skimmed);
  const auto skimmed_content = is_read && !needs_text ? skim_shows_content(skimmed) : std::nullopt;
  if (skimmed_ok && (!is_read || skimmed_content)) {
    ok = *skimmed_ok && (!is_read || *skimmed_content);
  } else {
    response = &answer.tree();
    ok = succeeded(*response) && (!is_read || shows_content(*response));
  }
  if (!ok) {
    return true;
  }
  switch (call.what.role) {
  case ToolRole::read: {
    // Which files the answer showed: all of them, unless a list's answer
    // leaves some out (left empty otherwise: no allocation for a list of one).
    std::vector<bool> listed_shown;
    if (call.what.path_list) {
      std::vector<std::string> requested;
      for (const auto& argument : call.what.paths) {
        requested.push_back(argument.raw.value_or(""));
      }
      listed_shown = parts_read(result_text(*response), requested);
    }
    ReadExtent extent = call.what.extent;
    std::string reason;
    if (!call.what.whole_if_status.empty()) {
      const std::string_view text = result_text(*response);
      const std::string first_line(text.substr(0, text.find('\n')));
      if (!std::regex_match(first_line, std::regex(call.what.whole_if_status))) {
        extent = ReadExtent::partial;
      }
    }
    const std::size_t shown_bytes =
      skimmed.raw_result.empty() ? line.size() : skimmed.raw_result.size();
    if (const auto limit = result_limit_for(m_client_name, m_settings.client_result_limits);
        limit && shown_bytes > *limit && extent == ReadExtent::whole) {
      extent = ReadExtent::partial;
      reason = "the result of " + call.what.tool + " was about " + std::to_string(shown_bytes)
               + " characters long, and " + m_client_name + " shows the model only the first "
               + std::to_string(*limit);
    }
    const std::uint64_t shown_at = m_records.next_moment();
    if (view()) {
      m_verification.record_read(call, answer, *response, extent, reason, shown_at, tools(),
                                 m_era.own_envelope(), out);
    }
    std::optional<std::int64_t> owed_size; // the first file's, if its record owes a hash
    for (std::size_t index = 0; index < call.files.size() && !view(); ++index) {
      if (call.files[index] && (!call.what.path_list || listed_shown[index])) {
        const SeenRecord* record = m_tracker.finish_read(
          *call.files[index], call.read_starts[index], extent, call.what.view, reason, shown_at);
        if (index == 0 && record != nullptr && record->hash_state == HashState::owed
            && record->trusted_stat) {
          owed_size = record->trusted_stat->size;
        }
      }
    }
    if (extent == ReadExtent::whole && keeps_text_shown(call)) {
      // The text exactly as the agent saw it, kept once settle_reads() has
      // confirmed that it is the file's content. The call is done with its
      // path (on_upstream_response marked it idle first): the text takes it.
      const auto raw = skim_first_text(skimmed);
      if (raw && raw->size() <= max_raw_json_string(m_records.kept().budget().file_bytes)) {
        ShownText& shown =
          m_records.shown_read(ShownText{.file = std::move(*call.files.front()),
                                               .in_answer = *raw,
                                               .read = true,
                                               .shown_at = shown_at,
                                               .is_file_bytes = call.what.text_is_file_bytes,
                                               .owed_size = owed_size});
        if (first_text != nullptr && first_text->end == raw->data() + raw->size()) {
          // The very string, decoded as the answer was skimmed (one string
          // ends at one closing quote).
          shown.owned = std::move(first_text->decoded.text);
          shown.decoded = true;
          shown.facts = first_text->decoded.facts;
        }
      }
    }
    break;
  }
  case ToolRole::edit:
  case ToolRole::write: {
    if (!call.files.front()) {
      break;
    }
    std::string& file = *call.files.front();
    // What the change should have left, where fsguard can tell: a writer
    // that lands at the same moment is then not taken for the agent.
    std::optional<ContentHash> expected = call.expected;
    std::optional<std::string> expected_text; // with the hash `expected`
    if (call.what.role == ToolRole::edit && call.what.result_is_diff) {
      // Its diff applied to the content the edit was decided on.
      auto applied = call.edit_base ? apply_unified_diff(without_carriage_returns(*call.edit_base),
                                                         result_text(*response))
                                    : std::nullopt;
      if (!applied) {
        m_tracker.mark_unknown(file, "fsguard could not confirm what the last " + call.what.tool
                                       + " left in the file");
        break;
      }
      expected = m_disk.hash_of(*applied);
      expected_text = std::move(applied);
    } else if (call.carried) {
      expected_text = call.carried->result; // its hash is `expected`
    }
    ReadExtent extent =
      call.licensed_extent.empty() ? ReadExtent::partial : call.licensed_extent.front();
    std::uint64_t known_since = call.sent_at;
    if (call.carried) {
      // The agent learns of the other change from the note on this answer,
      // so only calls sent after it may rely on the result.
      nlohmann::ordered_json meta = {
        {"how", call.carried->how == CarriedOver::How::rebase ? "rebase" : "merge"},
        {"path", server_spelling(file)},
        {"seen_xxh3_128", to_hex(call.carried->seen)},
        {"current_xxh3_128", to_hex(call.carried->current)},
        {"diff_complete", call.carried->shows_whole},
      };
      auto noted = with_note(answer.line(), answer.skimmed(), call.carried->note, "fsguard/stale", meta);
      if (!noted) {
        m_tracker.mark_unknown(file, "fsguard could not tell you how it carried your last "
                                       + call.what.tool + " over to a change made elsewhere");
        break;
      }
      if (!call.carried->shows_whole || !client_shows_whole(*noted)) {
        extent = ReadExtent::partial; // the note's diff is cut, or the client cuts the note
      }
      out.to_client.push_back(std::move(*noted)); // before any call released after it
      relay = false;
      known_since = k_not_yet; // see take_in_shown()
    }
    if (view()) {
      m_verification.record_change(call, file, expected, expected_text, extent, known_since);
    }
    AnsweredChange change{.file = std::move(file),
                          .tool = call.what.tool,
                          .sent_at = call.sent_at,
                          .expected = expected,
                          .expected_text = std::move(expected_text),
                          .extent = extent,
                          .written = std::move(call.written)};
    if (!view() && !call.carried && change.expected) {
      // Recorded once the answer has gone on (settle_reads()): the agent
      // does not wait while fsguard reads and hashes the file. Only a
      // change whose result fsguard knows: another writer landing while
      // the answer goes to a slow client is then still told from the
      // agent (Tracker::finish_write); without it, the record is taken now.
      m_records.answered(std::move(change));
      break;
    }
    // The record the change left, looked up once for what follows.
    const SeenRecord* record =
      view() ? m_tracker.find(change.file)
             : m_tracker.finish_write(change.file, expected, extent, known_since,
                                      change.expected_bytes());
    if (known_since == k_not_yet && record != nullptr) {
      m_records.remember_shown(ShownKnowledge{change.file, now, std::nullopt, record->hash, k_not_yet,
                                    call.carried->seen});
    }
    m_records.after_change_recorded(std::move(change), record, m_client_name);
    break;
  }
  case ToolRole::move:
    if (call.files.size() == 2 && call.files[0] && call.files[1]) {
      m_tracker.finish_move(*call.files[0], *call.files[1]);
    }
    break;
  case ToolRole::other:
    break;
  }
  return relay;
}

void Guard::on_upstream_answer_dropped(std::string_view tail, std::size_t length,
                                       std::size_t limit, Outbox& out, Clock::time_point now)
{
  const std::string sizes = std::to_string(length) + " bytes, over max_line_bytes ("
                            + std::to_string(limit) + ")";
  const std::string_view raw_id = trailing_id(tail);
  const std::string key = raw_id.empty() ? std::string() : id_key_of_raw(raw_id);
  const PendingRequest* pending = key.empty() ? nullptr : m_ledger.find(Peer::upstream, key);
  if (pending == nullptr || (pending->expect == Expectation::guarded_call && !pending->call)) {
    out.say(LogLevel::error, "dropped an upstream message of " + sizes
                               + "; raise max_line_bytes in the config to relay it");
    return;
  }
  auto closed = m_ledger.close(Peer::upstream, key);
  PendingRequest& answered = closed.mapped();
  out.say(LogLevel::error, "dropped the upstream's answer to " + answered.method + " " + key
                             + " (" + sizes + ") and answered it with an error");
  if (answered.expect == Expectation::own_listing) {
    m_paths.listing_done();
    // Read as a listing that could not be read, so the calls that waited
    // for it are decided (with absolute paths alone) rather than time out.
    m_paths.on_listing_result(nlohmann::json(), 0, true, out);
    after_listing(out, now);
    return;
  }
  if (answered.expect == Expectation::own_probe) {
    m_paths.probe_done();
    after_listing(out, now); // it may have been the last one the session waited for
    return;
  }
  if (answered.expect == Expectation::own_identity) {
    ServerFileReport report;
    report.reason = "its answer to fsguard's get_file_info was " + sizes;
    on_identity_answer(key, std::move(report), out, now);
    return;
  }
  if (answered.expect == Expectation::own_verify) {
    on_verify_answer(key,
                     UpstreamRead{UpstreamRead::Outcome::failed, {},
                                  "the server's answer to fsguard's read of it was " + sizes},
                     out, now);
    return;
  }
  if (answered.call && !answered.call->expired) {
    const CallInFlight& call = *answered.call;
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file, "the server's answer to the last change of it was too "
                                        "long for fsguard to relay");
        }
      }
    }
    mark_busy(call, -1);
  }
  const std::string text = "fsguard: the server's answer was " + sizes
                           + ", so fsguard could not relay it. Read large files in parts "
                             "(head/tail), or raise max_line_bytes in fsguard's config.";
  if (answered.from == Peer::client) {
    answer_error(answered.id, RpcError::internal_error, text, out);
  }
  release_held(out, now);
}

} // namespace fsguard
