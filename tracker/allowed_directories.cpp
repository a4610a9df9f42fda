#include "tracker/allowed_directories.hpp"

namespace fsguard {

void AllowedDirectories::confirm(const DirectorySet& listed, std::uint64_t asked_at)
{
  // The newest state that matches the listing is the server's state at the
  // time of the listing; everything older is over.
  for (std::size_t index = m_states.size(); index-- > 0;) {
    if (m_states[index].directories == listed) {
      m_states.erase(m_states.begin(), m_states.begin() + static_cast<long>(index));
      return;
    }
  }
  // An unpredicted state: the listing is the truth as of `asked_at`; states
  // that became possible after the listing was sent may still follow.
  std::vector<State> later;
  for (auto& state : m_states) {
    if (state.since > asked_at) {
      later.push_back(std::move(state));
    }
  }
  m_states.clear();
  m_states.push_back(State{listed, asked_at});
  for (auto& state : later) {
    m_states.push_back(std::move(state));
  }
}

void AllowedDirectories::expect(std::optional<DirectorySet> predicted)
{
  m_states.push_back(State{std::move(predicted), ++m_sequence});
}

std::vector<DirectorySet> AllowedDirectories::possible() const
{
  std::vector<DirectorySet> sets;
  for (const auto& state : m_states) {
    if (!state.directories) {
      return {};
    }
    sets.push_back(*state.directories);
  }
  return sets;
}

std::optional<DirectorySet> AllowedDirectories::latest() const
{
  for (auto state = m_states.rbegin(); state != m_states.rend(); ++state) {
    if (state->directories) {
      return state->directories;
    }
  }
  return std::nullopt;
}

} // namespace fsguard
