// The person's override (override: ask): asking the person about a veto,
// and settling their answer, its absence or its withdrawal. The questions
// are OverrideQuestions'; the decision on an accepted one is the one
// decision's (decide_accepted).
#include "proxy/guard/guard.hpp"

#include "proxy/guard/override_prompt.hpp"
#include "proxy/guard/guard_internal.hpp"

namespace fsguard {

bool Guard::asks_person(const Veto& veto) const
{
  // With verify: upstream fsguard could not tell, when the person allows it,
  // that the file still holds what they were shown: the veto stands.
  return m_settings.override_mode == Override::ask && m_client_elicits && !view()
         && may_override(veto.code);
}

void Guard::ask_person(OutgoingLine line, const nlohmann::json& arguments, CallInFlight call,
                       const std::string& key, Verdict verdict, Outbox& out,
                       Clock::time_point now)
{
  const std::string id = m_overrides.next_id();
  PendingRequest question;
  question.from = Peer::fsguard;
  question.id = id;
  question.method = "elicitation/create";
  question.expect = Expectation::override_answer;
  const std::string question_key = id_key(question.id);
  Veto shown_veto = *verdict.veto;
  shown_veto.path = server_spelling(shown_veto.path);
  if (!m_ledger.open_toward_client(question_key, std::move(question))) {
    veto_change(call, key, verdict, 0, out, now); // cannot happen: the number never repeats
    return;
  }
  // The person allows the write over the very bytes the question was made
  // from: a change landing after them is one they were not shown.
  PendingOverride pending;
  std::optional<FilePreview> preview;
  pending.shown = question_shown(*verdict.veto, preview);
  out.to_client.push_back(
    override_request(id, call.what.tool, shown_veto, preview ? &*preview : nullptr));
  mark_busy(call, +1); // the calls after it on its file wait for the answer
  pending.line = std::move(line).take();
  pending.arguments = arguments;
  pending.call = std::move(call);
  pending.key = key;
  pending.verdict = std::move(verdict);
  pending.asked = now;
  pending.deadline = now + m_settings.override_timeout;
  pending.question_id = id;
  m_overrides.add(question_key, std::move(pending));
}

void Guard::settle_override(const std::string& key, const nlohmann::json* answer,
                            std::string_view no_answer, Outbox& out, Clock::time_point now)
{
  auto taken = m_overrides.take(key);
  if (!taken) {
    return;
  }
  PendingOverride pending = std::move(*taken);
  mark_busy(pending.call, -1);
  if (m_ledger.find(Peer::upstream, pending.key) == nullptr) {
    release_held(out, now); // the call was answered already: nothing to forward or refuse
    return;
  }
  const OverrideReply reply = answer ? read_override_answer(*answer) : OverrideReply{};
  std::string outcome;
  if (answer == nullptr) {
    outcome = unanswered_outcome(no_answer);
  } else if (!person_allowed(reply, now - pending.asked)) {
    outcome = refused_reply_outcome(reply, now - pending.asked);
  } else {
    // Allowed for the content the person was shown: if the file moved on
    // meanwhile, that is a change nobody has seen.
    std::optional<ContentHash> now_holds;
    if (auto fingerprint = m_disk.fingerprint(pending.verdict.veto->path)) {
      now_holds = fingerprint->hash;
    }
    // The roots may have changed while the person decided: the path must
    // still name the file they were asked about.
    const auto what = describe_call(tools(), pending.call.what.tool, pending.arguments);
    const bool same_files =
      what
      && describe(pending.call.id, GuardedCall(*what), pending.call.expected)->files
           == pending.call.files;
    if (!same_files) {
      now_holds.reset();
    }
    // Decided again as every change is: the person's answer lifts the one
    // refusal they were asked about, and no other rule.
    ChangeDecision decision;
    if (now_holds == pending.shown && same_files) {
      decision = decide_accepted(pending.call, pending.line, pending.verdict.veto->code);
    }
    if (now_holds == pending.shown && same_files && decision.outcome != ChangeOutcome::veto) {
      audit(pending.call, "override", pending.verdict.veto, 0, out);
      out.say(LogLevel::info, "the user allowed " + pending.call.what.tool + " of "
                                + server_spelling(pending.verdict.veto->path));
      forward(std::move(pending.line), std::make_unique<CallInFlight>(std::move(pending.call)),
              *m_ledger.find(Peer::upstream, pending.key), out, now);
      release_held(out, now);
      return;
    }
    if (decision.outcome == ChangeOutcome::veto && decision.veto) {
      pending.verdict.veto = std::move(decision.veto);
      pending.verdict.shown.reset(); // the question's diff is not this veto's
      outcome = redecided_allow_outcome();
    } else {
      outcome = outdated_allow_outcome();
    }
  }
  pending.verdict.veto->override_outcome = std::move(outcome);
  audit(pending.call, "override_refused", pending.verdict.veto, 0, out);
  veto_change(pending.call, pending.key, pending.verdict, 0, out, now);
  release_held(out, now);
}

void Guard::on_client_gone(Outbox& out, Clock::time_point now)
{
  for (const auto& key : m_overrides.keys()) {
    m_ledger.close(Peer::client, key);
    settle_override(key, nullptr, "the client ended the session before it answered", out, now);
  }
}

} // namespace fsguard
