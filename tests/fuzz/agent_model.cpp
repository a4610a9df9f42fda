#include "agent_model.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "proxy/guard/guard.hpp" // k_take_in_time

namespace fsguard::fuzz {

void AgentModel::show(const std::string& file, const std::string& content, Clock::time_point now)
{
  m_taking_in.push_back({now + k_take_in_time, file, content});
}

void AgentModel::take_in(Clock::time_point now)
{
  std::erase_if(m_taking_in, [&](const Shown& shown) {
    if (shown.at > now) {
      return false;
    }
    learn(shown.file, shown.content, Knowledge{true, false});
    return true;
  });
}

std::optional<std::string>
AgentModel::find(const std::string& file,
                 const std::function<bool(const std::string&, const Knowledge&)>& wanted) const
{
  if (const auto known = m_known.find(file); known != m_known.end()) {
    for (const auto& [content, knowledge] : known->second) {
      if (wanted(content, knowledge)) {
        return content;
      }
    }
  }
  for (const auto& shown : m_taking_in) {
    if (shown.file == file && wanted(shown.content, Knowledge{true, false})) {
      return shown.content;
    }
  }
  return std::nullopt;
}

void AgentModel::viewed(const std::string& file, bool whole, std::int64_t now_ns)
{
  m_views[file].any_ns = now_ns;
  if (whole) {
    m_views[file].whole_ns = now_ns;
  }
}

bool AgentModel::recent(const std::string& file, bool whole_needed, std::chrono::seconds ttl,
                        std::int64_t now_ns)
{
  if (ttl.count() == 0) {
    return true;
  }
  const ViewClock& clock = m_views[file];
  const auto& at = whole_needed ? clock.whole_ns : clock.any_ns;
  return at && now_ns - *at <= std::chrono::nanoseconds(ttl).count();
}

const AgentModel::Files& AgentModel::send(const std::string& key, const std::vector<Move>& moves)
{
  Files effective = m_known;
  for (const auto& [source, destination] : moves) {
    transfer(effective, source, destination);
  }
  m_order[key] = m_next_order++;
  return m_when_sent[key] = std::move(effective);
}

void AgentModel::moved(const std::string& key, const std::string& source,
                       const std::string& destination)
{
  Files known;
  for (const auto& file : m_files) {
    if (below(file, source)) {
      if (const auto found = m_known.find(file); found != m_known.end()) {
        known[destination + file.substr(source.size())] = found->second;
      }
    }
  }
  for (const auto& [file, contents] : known) {
    for (const auto& [content, knowledge] : contents) {
      learn(file, content, knowledge);
    }
  }
  // Its views go with the file (a replaced destination's go).
  for (const auto& file : m_files) {
    if (below(file, source)) {
      const ViewClock clock = m_views[file];
      m_views.erase(file);
      m_views[destination + file.substr(source.size())] = clock;
    }
  }
  const auto moved_at = m_order[key];
  for (auto& [sent, snapshot] : m_when_sent) {
    if (m_order[sent] > moved_at) {
      transfer(snapshot, source, destination);
    }
  }
}

void AgentModel::transfer(Files& known, const std::string& source,
                          const std::string& destination) const
{
  for (const auto& file : m_files) {
    if (below(file, source)) {
      for (const auto& [content, knowledge] : Known(known[file])) {
        known[destination + file.substr(source.size())][content] |= knowledge;
      }
    }
  }
}

bool AgentModel::replaces_only_known(const std::string& key, const std::string& file,
                                     const std::string& now,
                                     const std::optional<std::string>& leaves)
{
  for (const auto& [seen, knowledge] : known_when_sent(key, file)) {
    if (knowledge.own_whole && (seen == now || (leaves && keeps_change(seen, now, *leaves)))) {
      return true;
    }
  }
  return unsafe(key, file, now, "it destroys content the agent did not know whole");
}

bool AgentModel::edits_only_known(const std::string& key, const std::string& file,
                                  const std::string& now, const std::string& old_text,
                                  const std::string& new_text)
{
  const Known& known = known_when_sent(key, file);
  if (known.contains(now)) {
    return true;
  }
  // A stale edit carried over: it lands where it would have landed on some
  // content the agent knew, and keeps every line that changed since.
  if (const auto after = replaced_once(now, old_text, new_text)) {
    for (const auto& [seen, knowledge] : known) {
      const auto ours = replaced_once(seen, old_text, new_text);
      if (ours && merged_by_line(seen, *ours, now) == *after) {
        return true;
      }
    }
  }
  return unsafe(key, file, now, "the edit changes content the agent never saw");
}

bool AgentModel::unsafe(const std::string& key, const std::string& file, const std::string& now,
                        const char* why)
{
  std::fprintf(stderr, "UNSAFE %s on %s (%s): it holds %s; known when sent:", key.c_str(),
               file.c_str(), why, nlohmann::json(now).dump().c_str());
  for (const auto& [text, knowledge] : known_when_sent(key, file)) {
    std::fprintf(stderr, " %s%s", nlohmann::json(text).dump().c_str(),
                 knowledge.own_whole ? "(own whole)" : knowledge.whole ? "(whole)" : "");
  }
  std::fprintf(stderr, "\n");
  return false;
}

} // namespace fsguard::fuzz
