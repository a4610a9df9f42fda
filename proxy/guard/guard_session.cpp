// What the guard waits for and what time does: the session's era and the
// server fsguard must learn before it decides, the calls that wait for
// the server's directories (ListingSchedule), and the calls and questions
// that wait too long.
#include "proxy/guard/guard.hpp"

#include <algorithm>

#include "proxy/guard/quoted_text.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "proxy/guard/guard_internal.hpp"

namespace fsguard {

bool Guard::learn_client(const std::optional<ClientFacts>& facts, std::string_view method)
{
  if (!facts && m_era.known() && method != "initialize") {
    return false; // a 2025-era request, in a session whose era is known: nothing new
  }
  const bool opens_session = m_era.on_client_request(facts, method);
  m_client_name = m_era.client_name();
  // A 2026-era session has no requests from the server to the client: its
  // question to the person goes another way, which fsguard does not take yet.
  m_client_elicits = m_era.era() == Era::handshake && m_era.declares_elicitation();
  m_paths.set_own_envelope(m_era.own_envelope());
  return opens_session;
}

void Guard::ask_server(Outbox& out)
{
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = std::string(k_own_id_prefix) + "discover";
  request.method = "server/discover";
  request.expect = Expectation::discover;
  const nlohmann::json message = {{"jsonrpc", "2.0"},
                                  {"id", request.id},
                                  {"method", request.method},
                                  {"params", nlohmann::json::object()}};
  if (m_ledger.open(id_key(request.id), std::move(request)) != nullptr) { // asked once a session
    out.to_upstream.push_back(own_request_line(message, m_era.own_envelope()));
  }
}

bool Guard::awaits_directories(const CallInFlight& call) const
{
  if (m_paths.context().rules != PathRules::server_filesystem
      || !m_listings.calls_wait()) {
    return false;
  }
  if (changes_files(call.what.role) && m_paths.probing()) {
    return true; // whether fsguard sees the directories is being asked
  }
  return std::any_of(call.problems.begin(), call.problems.end(),
                     [](const PathError& problem) { return problem.directories_in_doubt; });
}

void Guard::after_listing(Outbox& out, Clock::time_point now)
{
  if (knows_session() && m_queue.any_waits(Queue::Wait::session)) {
    release_held(out, now); // the listing (or its last probe) completed the session
  }
  if (!m_queue.any_waits(Queue::Wait::directories)) {
    return;
  }
  if (m_paths.probing()) {
    return; // the last probe's answer releases them
  }
  if (m_paths.in_doubt() && m_listings.calls_wait()) {
    return; // the next try goes on the schedule (ListingSchedule)
  }
  // Known, or the tries are spent: awaits_directories() lets them through
  // to a decision with what is known.
  for (auto& held : m_queue.held()) {
    if (held.wait == Queue::Wait::directories) {
      held.wait = Queue::Wait::behind_calls;
    }
  }
  release_held(out, now);
}

void Guard::expire(Clock::time_point now, Outbox& out)
{
  m_states.forget_expired(
    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  bool any = false;
  m_ledger.for_each_guarded_call([&](const std::string& key, PendingRequest& entry) {
    CallInFlight& call = *entry.call;
    if (call.expired || now - call.started < m_settings.call_timeout) {
      return;
    }
    call.expired = true;
    any = true;
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file);
        }
      }
    }
    mark_busy(call, -1);
    out.say(LogLevel::warn,
            "the upstream has not answered " + call.what.tool + " " + key + " for "
              + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                 m_settings.call_timeout)
                                 .count())
              + " s; the calls held behind it go ahead, and its files must be read again");
  });
  // fsguard's own reads through the upstream unanswered that long: their
  // changes are refused, and partial reads license nothing.
  any = m_verification.expire(now - m_settings.call_timeout) || any;
  refuse_overdue_session_waits(now, out);
  // fsguard's own get_file_info unanswered that long: the changes it was
  // asked for are refused.
  any = !m_identity.expire(now, m_settings.call_timeout).empty() || any;
  // Calls that waited for the server's directories that long are decided
  // with what is known.
  bool overdue = false;
  for (auto& held : m_queue.held()) {
    if (held.wait == Queue::Wait::directories && now - held.arrived >= m_settings.call_timeout) {
      held.wait = Queue::Wait::behind_calls;
      overdue = true;
    }
  }
  if (overdue) {
    m_listings.lift_waits(true);
    release_held(out, now);
    m_listings.lift_waits(false);
  } else if (any) {
    release_held(out, now);
  }
  if (view()) {
    view()->forget_all(); // a failure no call took stays with none
  }
}

void Guard::refuse_session_waits_after(const nlohmann::json& refused_initialize, Outbox& out)
{
  const auto waits = [](const Queue::Held& held) { return held.wait == Queue::Wait::session; };
  const auto& message = member(member(refused_initialize, "error"), "message");
  const std::string said = message.is_string()
                             ? "its error: " + in_quotes(message.get_ref<const std::string&>())
                             : "it gave no error message";
  for (const Queue::Held& waiting : m_queue.held()) {
    if (!waits(waiting)) {
      continue;
    }
    const HeldCall& held = waiting.payload;
    answer_error(held.id, RpcError::server_error,
                 "fsguard: " + held.tool + " was sent before the server answered initialize, "
                   + "and the server refused initialize (" + said + "), so fsguard could not "
                   + "check the call and did not send it. Fix what the server's error names, "
                   + "then initialize again and call again.",
                 out);
    out.say(LogLevel::warn, "refused " + held.tool + " " + held.key
                              + ": it waited for an initialize the server refused");
    m_ledger.close(Peer::upstream, held.key);
  }
  m_queue.drop_if(waits);
}

void Guard::refuse_overdue_session_waits(Clock::time_point now, Outbox& out)
{
  const auto overdue = [&](const Queue::Held& held) {
    return held.wait == Queue::Wait::session && now - held.arrived >= m_settings.call_timeout;
  };
  if (std::none_of(m_queue.held().begin(), m_queue.held().end(), overdue)) {
    return;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(m_settings.call_timeout);
  const std::string waited = std::to_string(seconds.count()) + " s (call_timeout_s)";
  const bool initialized = m_paths.knows_server();
  const bool stateless = m_era.era() == Era::stateless; // no initialize: server/discover
  const std::string awaited =
    initialized ? "the server's answer to fsguard's own list_allowed_directories (or get_file_info "
                  "of those directories), which tells fsguard which files the server serves"
    : stateless ? "the server's answer to fsguard's own server/discover, which tells fsguard "
                  "which server it guards and how that server reads a call's paths"
                : "the server's answer to initialize, which tells fsguard which server it guards "
                  "and how that server reads a call's paths";
  const std::string remedy =
    initialized || stateless
      ? "Call again; if this keeps happening, the server does not answer fsguard: "
        "fsguard --check-setup shows what it sees."
      : "Call tools once the initialize result has come; if it never does, the server "
        "does not start or answer: fsguard --check-setup shows what it sees.";
  for (const Queue::Held& waiting : m_queue.held()) {
    if (!overdue(waiting)) {
      continue;
    }
    const HeldCall& held = waiting.payload;
    answer_error(held.id, RpcError::server_error,
                 "fsguard: " + held.tool + " waited " + waited + " for " + awaited
                   + ". It never came, so fsguard could not check the call and did not send it. "
                   + remedy,
                 out);
    out.say(LogLevel::warn, "refused " + held.tool + " " + held.key + ": it waited " + waited
                              + " for " + awaited);
    m_ledger.close(Peer::upstream, held.key);
  }
  m_queue.drop_if(overdue);
}

void Guard::tick(Clock::time_point now, Outbox& out)
{
  expire(now, out);
  for (const auto& key : m_overrides.due(now)) {
    const nlohmann::json cancel = {
      {"jsonrpc", "2.0"},
      {"method", "notifications/cancelled"},
      {"params", {{"requestId", m_overrides.find(key)->question_id}, {"reason", "no answer in time"}}},
    };
    out.to_client.push_back(cancel.dump() + "\n");
    m_ledger.close(Peer::client, key);
    settle_override(key, nullptr,
                    "no answer came within " + std::to_string(m_settings.override_timeout.count())
                      + " s, so fsguard withdrew the question",
                    out, now);
  }
  if (m_listings.tick(now, out)) {
    after_listing(out, now); // a listing given up on: the calls that waited for it
  }
}

} // namespace fsguard
