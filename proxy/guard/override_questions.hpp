// The person's override (override: ask): the vetoed changes the person is
// being asked to allow, by the id key of fsguard's question, and the
// numbers of those questions. Guard asks and settles them
// (proxy/guard/guard_override.cpp); this class is their one owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/call_in_flight.hpp"
#include "proxy/guard/verdict.hpp"

namespace fsguard {

// A vetoed change the person is being asked to allow (override: ask):
// the call as it would go upstream, its verdict, the content of its file
// the person was shown (allowed only if it still holds), and when the
// question was sent and when it expires.
struct PendingOverride {
  std::string line; // owned, as a held call's
  nlohmann::json arguments; // as parsed, minus a write's content: described again on an accept
  CallInFlight call;
  std::string key; // the call's, toward the upstream
  Verdict verdict;
  // The hash of the bytes the question was made from (the diff's, the
  // preview's), or of the file when it showed none of its content.
  std::optional<ContentHash> shown;
  std::chrono::steady_clock::time_point asked{};
  std::chrono::steady_clock::time_point deadline{};
  nlohmann::json question_id;
};

class OverrideQuestions {
public:
  using Clock = std::chrono::steady_clock;

  // The id of the next question, "fsguard/override/N"; never repeats.
  std::string next_id();
  // Asks `pending` under the question's id key `key`.
  void add(const std::string& key, PendingOverride pending)
  {
    m_pending.emplace(key, std::move(pending));
  }
  // The question `key` is answered, or will never be: takes it out.
  std::optional<PendingOverride> take(const std::string& key);
  // The question asked about the call whose upstream key is `call_key`,
  // taken out with its own key; nothing if none.
  std::optional<std::pair<std::string, PendingOverride>> take_for_call(const std::string& call_key);
  // The question `key`, if still asked.
  const PendingOverride* find(const std::string& key) const;
  // The keys of every question asked, and of those past their deadline at `now`.
  std::vector<std::string> keys() const;
  std::vector<std::string> due(Clock::time_point now) const;
  bool empty() const { return m_pending.empty(); }
  // Forgets every question (their calls are answered otherwise).
  void clear() { m_pending.clear(); }

private:
  std::map<std::string, PendingOverride> m_pending; // by the question's id key
  std::uint64_t m_next_question = 0;
};

} // namespace fsguard
