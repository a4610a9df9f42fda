#include "proxy/guard/upstream_intake.hpp"

#include <string>

#include "proxy/jsonrpc/ids.hpp"

namespace fsguard {

UpstreamLine UpstreamIntake::take(std::string_view text, Clock::time_point now, Outbox& out)
{
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) {
    return UpstreamLine::blank;
  }
  // The answer to a call fsguard only relays goes on without a skim: its
  // id is at its end. (A line in that shape that is not JSON goes on too,
  // where the skim would drop it; the guard learns nothing from either.)
  const std::string_view id_from_ends = answer_id_from_ends(text);
  const std::string key_from_ends =
    id_from_ends.empty() ? std::string() : id_key_of_raw(id_from_ends);
  // The request it answers, looked up once for all that follows.
  Ledger::Answered answered_from_ends;
  if (!key_from_ends.empty()) {
    answered_from_ends = m_guard.find_answer(key_from_ends);
    if (m_guard.close_relayed_request(answered_from_ends)) {
      return UpstreamLine::relayed;
    }
  }
  m_message.begin(text);
  if (!key_from_ends.empty()) {
    // A whole read's text, decoded as its answer is skimmed: the skim then
    // need not scan it too.
    if (const auto wanted = m_guard.answer_text_wanted(answered_from_ends)) {
      m_message.decode_first_text(id_from_ends, *wanted);
    }
  }
  if (!m_message.skim()) {
    constexpr std::size_t k_shown = 500;
    out.say(LogLevel::warn, "the upstream wrote a line that is not JSON-RPC to stdout (not "
                            "relayed): "
                              + std::string(text.substr(0, k_shown))
                              + (text.size() > k_shown ? "..." : ""));
    m_message.clear();
    return UpstreamLine::withheld;
  }
  const SkimmedMessage& skimmed = m_message.skimmed();
  if (skimmed.raw_id.empty()) {
    m_message.clear();
    return UpstreamLine::relayed;
  }
  // The key from the ends, when there is one, is this id's: the skim found
  // the line a JSON object with one id, and answer_key_from_ends() its
  // last member's.
  const std::string key = key_from_ends.empty() ? id_key_of_raw(skimmed.raw_id) : key_from_ends;
  if (skimmed.has_method) {
    if (const auto method = m_message.method()) {
      m_guard.on_upstream_request(key, *method);
    }
    m_message.clear();
    return UpstreamLine::relayed;
  }
  if (!skimmed.has_result_or_error) {
    m_message.clear();
    return UpstreamLine::relayed;
  }
  // The entry found from the ends is this key's, and the skim and decode
  // above changed nothing in the ledger.
  Ledger::Answered answered =
    key_from_ends.empty() ? m_guard.find_answer(key) : std::move(answered_from_ends);
  const bool relayed =
    m_guard.on_upstream_response(std::move(answered), key, m_message, out, now);
  m_answer_taken = true;
  m_message.clear(); // the guard keeps what it wants of the answer, not its tree
  return relayed ? UpstreamLine::relayed : UpstreamLine::withheld;
}

} // namespace fsguard
