#include "proxy/guard/override_questions.hpp"

#include "proxy/jsonrpc/message.hpp"

namespace fsguard {

std::string OverrideQuestions::next_id()
{
  return std::string(k_own_id_prefix) + "override/" + std::to_string(++m_next_question);
}

std::optional<PendingOverride> OverrideQuestions::take(const std::string& key)
{
  auto found = m_pending.extract(key);
  if (!found) {
    return std::nullopt;
  }
  return std::move(found.mapped());
}

std::optional<std::pair<std::string, PendingOverride>>
OverrideQuestions::take_for_call(const std::string& call_key)
{
  for (auto pending = m_pending.begin(); pending != m_pending.end(); ++pending) {
    if (pending->second.key == call_key) {
      auto found = m_pending.extract(pending);
      return std::make_pair(std::move(found.key()), std::move(found.mapped()));
    }
  }
  return std::nullopt;
}

const PendingOverride* OverrideQuestions::find(const std::string& key) const
{
  const auto found = m_pending.find(key);
  return found == m_pending.end() ? nullptr : &found->second;
}

std::vector<std::string> OverrideQuestions::keys() const
{
  std::vector<std::string> keys;
  for (const auto& [key, pending] : m_pending) {
    keys.push_back(key);
  }
  return keys;
}

std::vector<std::string> OverrideQuestions::due(Clock::time_point now) const
{
  std::vector<std::string> due;
  for (const auto& [key, pending] : m_pending) {
    if (now >= pending.deadline) {
      due.push_back(key);
    }
  }
  return due;
}

} // namespace fsguard
