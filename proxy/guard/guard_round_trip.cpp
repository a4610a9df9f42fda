// The Guard's part in the 2026 era's requests that do not finish with their
// first answer: a guarded change goes upstream without the Tasks extension
// (so the server answers it at once), a change the server answers
// input_required is not done and its retry is a new call, decided again;
// and override: ask asks the person through the client's retry
// (input_required with fsguard's own question and requestState). See
// docs/design.md, "The two eras of MCP".
#include <algorithm>

#include "proxy/guard/guard.hpp"
#include "proxy/guard/override_round_trip.hpp"
#include "proxy/jsonrpc/round_trip.hpp"

namespace fsguard {

namespace {

std::int64_t nanoseconds_of(std::chrono::steady_clock::time_point when)
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
}

} // namespace

Guard::RetryTake Guard::take_retry(OutgoingLine& line, const nlohmann::json& request,
                                   const ContentArgument& content,
                                   std::unique_ptr<OverrideRetry>& retry, Outbox& out,
                                   Clock::time_point now)
{
  const std::string* state = request_state_of(request);
  const auto* tool = member(member(request, "params"), "name").get_ptr<const std::string*>();
  if (state == nullptr || tool == nullptr) {
    return RetryTake::none;
  }
  const bool own = state->starts_with(k_own_state_prefix);
  if (!own && m_states.carries_nothing()) {
    return RetryTake::none; // the server's own state, and no change of it the person allowed
  }
  const std::string digest =
    arguments_digest(member(member(request, "params"), "arguments"), content.hash);
  const std::int64_t now_ns = nanoseconds_of(now);
  if (!own) {
    auto carried = m_states.take_carried(*state, *tool, digest, now_ns);
    if (!carried) {
      return RetryTake::none;
    }
    // The server's question after a change the person allowed: the retry,
    // its answers and the server's state go on untouched.
    retry = std::make_unique<OverrideRetry>(
      OverrideRetry{std::move(*carried), OverrideReply{OverrideAnswer::allow, {}}, true, {}});
    return RetryTake::taken;
  }
  auto grant = m_states.redeem(*state, *tool, digest, now_ns);
  if (!grant) {
    out.to_client.push_back(refused_state_answer(member(request, "id"), *tool, grant.error(),
                                                 m_settings.override_timeout));
    out.say(LogLevel::info, "refused " + *tool + " " + id_key(member(request, "id"))
                              + ": its requestState is not one fsguard can take");
    return RetryTake::refused;
  }
  auto stripped = without_own_input(line.text(), k_override_input_key);
  if (!stripped) {
    return RetryTake::none; // cannot be: the request was parsed
  }
  retry = std::make_unique<OverrideRetry>(
    OverrideRetry{std::move(grant).value(), read_override_input(request), false, {}});
  line = OutgoingLine(std::move(*stripped)); // fsguard's own part never reaches the server
  return RetryTake::taken;
}

bool Guard::settle_retry(OutgoingLine& line, std::unique_ptr<CallInFlight>& owned,
                         const std::string& key, PendingRequest& entry, Outbox& out,
                         Clock::time_point now)
{
  OverrideRetry& retry = *entry.retry;
  CallInFlight& call = *owned;
  const auto elapsed = retry.carried ? k_person_answer_time
                                     : now - Clock::time_point(std::chrono::nanoseconds(
                                                   retry.grant.asked_ns));
  if (!person_allowed(retry.reply, elapsed)) {
    retry.outcome = refused_reply_outcome(retry.reply, elapsed);
    return false; // decided as any call, and refused saying what the client answered
  }
  // Allowed over the bytes the person was shown: the path must still name
  // that file, and the file still hold them.
  std::optional<ContentHash> now_holds;
  if (std::find(call.files.begin(), call.files.end(), retry.grant.file) != call.files.end()) {
    if (auto fingerprint = m_disk.fingerprint(retry.grant.file)) {
      now_holds = fingerprint->hash;
    }
  }
  if (now_holds != retry.grant.shown) {
    retry.outcome = outdated_allow_outcome();
    return false;
  }
  Veto asked;
  asked.code = retry.grant.code;
  asked.path = retry.grant.file;
  // Decided again as every change is: the answer lifts the one refusal the
  // person was asked about, and no other rule.
  ChangeDecision decision = decide_accepted(call, line.text(), retry.grant.code);
  if (decision.outcome == ChangeOutcome::veto && decision.veto) {
    Verdict verdict;
    verdict.veto = std::move(decision.veto);
    verdict.veto->override_outcome = redecided_allow_outcome();
    audit(call, "override_refused", verdict.veto, 0, out);
    veto_change(call, key, verdict, 0, out, now);
    return true;
  }
  if (!retry.carried) {
    audit(call, "override", asked, 0, out);
    out.say(LogLevel::info, "the user allowed " + call.what.tool + " of "
                              + server_spelling(retry.grant.file));
  }
  forward(std::move(line), std::move(owned), entry, out, now);
  return true;
}

void Guard::keep_refused(Verdict& verdict, const PendingRequest& entry)
{
  if (verdict.veto || !entry.retry || entry.retry->outcome.empty()) {
    return;
  }
  Veto asked;
  asked.code = entry.retry->grant.code;
  asked.path = entry.retry->grant.file;
  verdict = Verdict{std::move(asked), {}, {}};
}

bool Guard::asks_in_answer(const Veto& veto, const PendingRequest& entry) const
{
  // With verify: upstream fsguard could not tell, when the person allows it,
  // that the file still holds what they were shown (as asks_person()).
  return m_era.era() == Era::stateless && !entry.retry
         && m_settings.override_mode == Override::ask && m_states.has_key() && !view()
         && may_override(veto.code) && entry.envelope_elicits;
}

void Guard::note_override_outcome(Veto& veto, const PendingRequest& entry) const
{
  if (m_era.era() != Era::stateless || !veto.override_outcome.empty()) {
    return;
  }
  if (entry.retry) {
    veto.override_outcome = entry.retry->outcome; // what the person's answer was
  } else if (m_settings.override_mode == Override::ask && may_override(veto.code)
             && !entry.envelope_elicits) {
    veto.override_outcome = undeclared_elicitation_outcome();
  }
}

void Guard::ask_in_answer(const CallInFlight& call, const nlohmann::json& arguments,
                          const std::string& key, Verdict& verdict, Outbox& out,
                          Clock::time_point now)
{
  std::optional<FilePreview> preview;
  const auto shown = question_shown(*verdict.veto, preview);
  if (!shown) {
    veto_change(call, key, verdict, 0, out, now); // the file cannot be read: nothing to show
    return;
  }
  OverrideGrant grant;
  grant.tool = call.what.tool;
  grant.arguments_digest = arguments_digest(arguments, call.expected);
  grant.file = verdict.veto->path;
  grant.shown = *shown;
  grant.code = verdict.veto->code;
  grant.asked_ns = nanoseconds_of(now);
  grant.expires_ns =
    grant.asked_ns
    + std::chrono::duration_cast<std::chrono::nanoseconds>(m_settings.override_timeout).count();
  Veto asked = *verdict.veto;
  asked.path = server_spelling(asked.path);
  out.to_client.push_back(override_input_required(call.id, call.what.tool, asked,
                                                  preview ? &*preview : nullptr,
                                                  m_states.issue(std::move(grant))));
  m_ledger.close(Peer::upstream, key);
  if (m_settings.log_level >= LogLevel::info) {
    out.say(LogLevel::info, "asked the user, in the answer to " + call.what.tool + " "
                              + id_key(call.id) + ", whether to allow it over " + asked.path);
  }
}

std::optional<ContentHash> Guard::question_shown(const Veto& veto,
                                                 std::optional<FilePreview>& preview)
{
  const std::string& file = veto.path;
  if (veto.code == VetoCode::changed && veto.current_hash) {
    return veto.current_hash; // the diff's "on disk now", or the veto's
  }
  std::optional<ContentHash> shown;
  if (veto.code == VetoCode::not_read) {
    // What would be overwritten: its size and first lines.
    const auto stat = m_disk.stat(file);
    if (stat && stat->size <= k_preview_source_bytes) {
      if (const auto bytes = m_disk.read(file)) {
        preview = preview_of(*bytes);
        shown = m_disk.hash_of(*bytes);
      }
    }
  }
  if (!shown) {
    if (auto fingerprint = m_disk.fingerprint(file)) {
      shown = fingerprint->hash;
      if (veto.code == VetoCode::not_read) {
        preview.emplace(); // its size only
        preview->size = fingerprint->stat.size;
      }
    }
  }
  return shown;
}

void Guard::forward_change_line(OutgoingLine& line) const
{
  if (m_era.era() != Era::stateless) {
    return;
  }
  // Kept synchronous: without the Tasks extension in its capabilities the
  // server answers the change itself, not a task that finishes later.
  if (auto rewritten = without_tasks_extension(line.text())) {
    line = OutgoingLine(std::move(*rewritten));
  }
}

bool Guard::unfinished_change(const PendingRequest& answered, UpstreamMessage& answer,
                              Outbox& out, Clock::time_point now)
{
  const CallInFlight& call = *answered.call;
  const auto result_type = unfinished_result_type(answer);
  if (!result_type) {
    return false;
  }
  if (*result_type == "input_required") {
    // Not done: the server asks the client first, and the client's retry
    // is a new call, decided again when it comes against the file then.
    // Nothing is recorded, and the file is not held between the two: a
    // client may never retry.
    if (answered.retry) {
      if (auto state = answered_request_state(answer.line())) {
        // The person allowed this change: the server's retry of it is the same change.
        OverrideGrant grant = answered.retry->grant;
        grant.expires_ns =
          nanoseconds_of(now)
          + std::chrono::duration_cast<std::chrono::nanoseconds>(m_settings.override_timeout)
              .count();
        m_states.carry(std::move(*state), std::move(grant));
      }
    }
    if (m_settings.log_level >= LogLevel::info) {
      out.say(LogLevel::info, call.what.tool + " " + id_key(call.id)
                                + " was answered input_required: not done; its retry is "
                                  "decided again when it comes");
    }
    return true;
  }
  // A task (the server ignored the capabilities fsguard sent it) or an
  // outcome fsguard does not know: the change may still be under way, so
  // its files' outcome is unknown until they are read again.
  const std::string reason =
    "the server answered the last " + call.what.tool + " of it with resultType \"" + *result_type
    + "\" instead of its result (fsguard asks for the result itself, and does not follow a "
      "change that finishes later), and the change may still be under way";
  for (const auto& file : call.files) {
    if (file) {
      m_tracker.mark_unknown(*file, reason);
    }
  }
  out.say(LogLevel::warn, call.what.tool + " " + id_key(call.id) + " was answered with resultType \""
                            + *result_type
                            + "\": its files must be read again before they are changed");
  return true;
}

} // namespace fsguard
