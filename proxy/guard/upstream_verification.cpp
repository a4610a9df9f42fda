#include "proxy/guard/upstream_verification.hpp"

#include <limits>

#include "proxy/guard/guard_internal.hpp"
#include "proxy/jsonrpc/content_hash.hpp"
#include "tracker/read_response.hpp"

namespace fsguard {

UpstreamVerification::UpstreamVerification(Verify verify, Disk& disk, Tracker& tracker,
                                           Ledger& ledger, BusyFiles& busy,
                                           AnswerRecords& records, const ServerPaths& paths,
                                           const GuardSettings& settings)
  : m_view(verify == Verify::upstream ? std::make_unique<UpstreamView>(disk) : nullptr),
    m_tracker(tracker), m_ledger(ledger), m_busy(busy), m_records(records), m_paths(paths),
    m_settings(settings)
{
}

std::vector<std::size_t> UpstreamVerification::verified_files(const CallInFlight& call,
                                                               const ToolMap& tools) const
{
  std::vector<std::size_t> verified;
  // A partial read goes upstream only once fsguard's whole read of its
  // file is answered: the server serves requests concurrently, so a read
  // sent with it could find the file after the part (see PartialCheck).
  const bool partial_read = call.what.role == ToolRole::read
                            && call.what.extent == ReadExtent::partial
                            && call.what.view == ReadView::utf8_text
                            && call.what.whole_if_status.empty() && verify_tool(tools);
  const ToolRole role = call.what.role;
  const bool changes = role == ToolRole::write || role == ToolRole::edit || role == ToolRole::move;
  if (!m_view || (!changes && !partial_read)) {
    return verified;
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    // A move loses nothing of its source: only an existing destination.
    if (call.files[index] && call.what.paths[index].raw
        && (call.what.role != ToolRole::move || index == 1)) {
      verified.push_back(index);
    }
  }
  return verified;
}

bool UpstreamVerification::awaits_upstream(const CallInFlight& call, const ToolMap& tools,
                                           const nlohmann::json& envelope, Outbox& out,
                                           Clock::time_point now)
{
  bool waits = false;
  for (const std::size_t index : verified_files(call, tools)) {
    const std::string& file = *call.files[index];
    if (m_view->knows(file)) {
      continue;
    }
    waits = true;
    if (m_view->asking(file)) {
      continue;
    }
    if (!verify_tool(tools)) {
      m_view->learn(file, UpstreamRead{UpstreamRead::Outcome::failed, {},
                                       "with \"verify\": \"upstream\" fsguard reads the file "
                                       "through the server before a change, and the server's "
                                       "profile has no tool that reads a whole file as text; "
                                       "set \"verify\": \"local\" (with path_map if the server "
                                       "runs elsewhere)"});
      waits = false;
      continue;
    }
    m_view->asked(file, ask_upstream(*call.what.paths[index].raw, tools, envelope, out), now);
  }
  return waits;
}

std::string UpstreamVerification::ask_upstream(const std::string& raw, const ToolMap& tools,
                                               const nlohmann::json& envelope, Outbox& out)
{
  const VerifyTool tool = verify_tool(tools).value(); // callers check that there is one
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = std::string(k_own_id_prefix) + "verify/" + std::to_string(++m_next_verify);
  request.method = "tools/call";
  request.expect = Expectation::own_verify;
  const std::string key = id_key(request.id);
  out.to_upstream.push_back(
    verify_request(request.id.get<std::string>(), tool, raw, envelope));
  m_ledger.open(key, std::move(request)); // the number never repeats
  return key;
}

UpstreamVerification::Answer UpstreamVerification::on_verify_answer(const std::string& key,
                                                                   const UpstreamRead& read,
                                                                   Outbox& out)
{
  if (auto found = m_partial_reads.extract(key)) {
    const std::uint64_t number = found.mapped();
    const auto check = m_partial_checks.find(number);
    if (check != m_partial_checks.end()) {
      check->second.after = read;
      finish_partial_check(number, out);
      return Answer::partial_check;
    }
    return Answer::nothing;
  }
  return m_view->answered(key, read) ? Answer::file_read : Answer::nothing;
}

void UpstreamVerification::finish_partial_check(std::uint64_t number, Outbox& out)
{
  const PartialCheck& check = m_partial_checks.at(number);
  if (!check.before || !check.after || !check.shown) {
    return;
  }
  // Lines compared without "\r": a tail turns CRLF into LF.
  std::string whole = check.after->text;
  std::string part = *check.shown;
  std::erase(whole, '\r');
  std::erase(part, '\r');
  if (check.before->outcome == UpstreamRead::Outcome::text
      && check.after->outcome == UpstreamRead::Outcome::text
      && check.before->text == check.after->text && whole.find(part) != std::string::npos) {
    m_tracker.record_known(check.file, shown_text_digest(check.after->text),
                           static_cast<std::int64_t>(check.after->text.size()),
                           ReadExtent::partial, check.view, check.reason, check.shown_at);
  } else if (m_settings.log_level >= LogLevel::debug) {
    out.say(LogLevel::debug, "fsguard could not confirm what a partial read of "
                               + m_paths.context().map.to_server(check.file)
                               + " was cut from (the file changed around it, or fsguard's whole "
                                 "read of it failed), so that read licenses no change: the "
                                 "agent must read it again first");
  }
  drop_partial_check(number);
}

void UpstreamVerification::drop_partial_check(std::uint64_t number)
{
  const auto check = m_partial_checks.find(number);
  if (check == m_partial_checks.end()) {
    return;
  }
  if (check->second.holds_file) {
    m_busy.free(check->second.file);
  }
  m_partial_reads.erase(check->second.after_key); // a late answer is ignored
  m_partial_checks.erase(check);
}

void UpstreamVerification::record_read(const CallInFlight& call, UpstreamMessage& answer,
                                 const nlohmann::json& response,
                                 ReadExtent extent, const std::string& reason,
                                 std::uint64_t shown_at, const ToolMap& tools,
                                 const nlohmann::json& envelope, Outbox& out)
{
  if (call.what.view != ReadView::utf8_text || !call.what.whole_if_status.empty()) {
    // fsguard's own read shows text, so only a read that showed the same
    // text can be compared with it later (not read_media_file's base64).
    return;
  }
  std::string decoded; // one file's text, decoded where it lies without a full parse
  std::vector<std::optional<std::string_view>> shown(1);
  if (!call.what.path_list) {
    UpstreamRead read = read_outcome(answer);
    if (read.outcome != UpstreamRead::Outcome::text) {
      return;
    }
    decoded = std::move(read.text);
    shown.front() = decoded;
  } else {
    const std::string_view text = result_text(response);
    std::vector<std::string> requested;
    for (const auto& argument : call.what.paths) {
      requested.push_back(argument.raw.value_or(""));
    }
    shown = parts_shown(text, requested);
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const std::uint64_t number =
      index < call.partial_checks.size() ? call.partial_checks[index] : 0;
    const auto check = m_partial_checks.find(number);
    if (!call.files[index] || index >= shown.size() || !shown[index]) {
      drop_partial_check(number); // nothing shown, nothing to check
      continue;
    }
    const std::string& file = *call.files[index];
    if (call.what.extent == ReadExtent::whole) {
      // The text is the whole file, even where the client cuts it (extent).
      const ContentDigest digest = shown_text_digest(*shown[index]);
      m_tracker.record_known(file, digest, static_cast<std::int64_t>(shown[index]->size()),
                             extent, call.what.view, reason, shown_at);
      if (!call.what.path_list && extent == ReadExtent::whole
          && m_records.kept().budget().total_bytes > 0 && decoded.size() <= m_records.kept().budget().file_bytes) {
        m_records.keep_text(digest.hash, TextBytes::copy_of(decoded)); // it is the record: no need to decode it again
      }
      continue;
    }
    // A part (head, tail): what it was cut from is learned by reading the
    // whole file again now (see PartialCheck). Calls on the file wait for it.
    if (check == m_partial_checks.end()) {
      continue;
    }
    if (!verify_tool(tools)) {
      drop_partial_check(number); // a reload took the read tool away
      continue;
    }
    PartialCheck& partial = check->second;
    partial.shown = std::string(*shown[index]);
    partial.view = call.what.view;
    partial.reason = reason;
    partial.shown_at = shown_at;
    partial.holds_file = true;
    m_busy.hold(file);
    partial.after_key = ask_upstream(partial.raw, tools, envelope, out);
    m_partial_reads[partial.after_key] = number;
  }
}

void UpstreamVerification::record_change(const CallInFlight& call, const std::string& file,
                                   const std::optional<ContentHash>& expected,
                                   const std::optional<std::string>& expected_text,
                                   ReadExtent extent, std::uint64_t known_since)
{
  std::optional<std::string> text = expected_text;
  if (!text && call.written) {
    text = call.written->raw ? decoded_json_string(call.written->bytes.view(),
                                                   std::numeric_limits<std::size_t>::max())
                             : std::string(call.written->bytes.view());
  }
  if (!expected || !text || hash_bytes(*text) != *expected) {
    // What the change left is unknown: the next change needs a read first.
    m_tracker.mark_unknown(file, "fsguard could not tell what the last " + call.what.tool
                                   + " left in the file");
    return;
  }
  m_tracker.record_known(file, ContentDigest{*expected, content_traits(*text)},
                         static_cast<std::int64_t>(text->size()), extent, ReadView::bytes, {},
                         known_since, KnownFrom::own_change);
}

void UpstreamVerification::begin_partial_checks(CallInFlight& call, const ToolMap& tools,
                                                Clock::time_point now)
{
  if (m_view && call.what.extent == ReadExtent::partial && verify_tool(tools)) {
    // Each file's whole text, which fsguard read through the upstream
    // before this read goes there (awaits_upstream held it until then).
    call.partial_checks.assign(call.files.size(), 0);
    for (std::size_t index = 0; index < call.files.size(); ++index) {
      const UpstreamRead* before = call.files[index] ? m_view->known(*call.files[index]) : nullptr;
      if (before == nullptr || !call.what.paths[index].raw) {
        continue; // nothing read before it: the part licenses nothing
      }
      const std::uint64_t number = ++m_next_partial_check;
      PartialCheck check;
      check.file = *call.files[index];
      check.raw = *call.what.paths[index].raw;
      check.before = *before;
      check.asked = now;
      m_partial_checks.emplace(number, std::move(check));
      call.partial_checks[index] = number;
    }
  }
}

void UpstreamVerification::drop_unused_checks(const CallInFlight& call)
{
  for (const std::uint64_t number : call.partial_checks) {
    const auto check = m_partial_checks.find(number);
    if (check != m_partial_checks.end() && !check->second.holds_file) {
      drop_partial_check(number); // the read failed or was given up on
    }
  }
}

bool UpstreamVerification::expire(Clock::time_point before)
{
  if (!m_view) {
    return false;
  }
  bool any = !m_view->expire(before).empty();
  std::vector<std::uint64_t> overdue_checks;
  for (const auto& [number, check] : m_partial_checks) {
    if (check.asked <= before) {
      overdue_checks.push_back(number);
    }
  }
  for (const std::uint64_t number : overdue_checks) {
    drop_partial_check(number);
    any = true;
  }
  return any;
}

void UpstreamVerification::clear()
{
  m_partial_checks.clear();
  m_partial_reads.clear();
}

} // namespace fsguard
