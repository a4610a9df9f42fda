// Which allowed-directory sets the upstream may be using right now. The
// server adopts a client's roots asynchronously, so between a roots reply
// and a confirming listing both the old and the new set are possible.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tracker/server_filesystem.hpp"

namespace fsguard {

class AllowedDirectories {
public:
  // The server's answer to a listing that fsguard sent at `asked_at` (a
  // sequence number from next_sequence()): states older than the one it
  // shows are over.
  void confirm(const DirectorySet& listed, std::uint64_t asked_at);

  // The client answered a roots/list: the server will move to `predicted`
  // (nothing: fsguard cannot predict it, so relative paths are refused
  // until a listing confirms the new state).
  void expect(std::optional<DirectorySet> predicted);

  // A sequence number for a listing fsguard is about to send.
  std::uint64_t next_sequence() { return ++m_sequence; }

  // The sets the server may be using: empty if any is unknown.
  std::vector<DirectorySet> possible() const;

  // True when exactly one set is possible and it is known.
  bool settled() const { return m_states.size() == 1 && m_states.front().directories.has_value(); }

  // The most recent set known (for messages), if any.
  std::optional<DirectorySet> latest() const;

private:
  struct State {
    std::optional<DirectorySet> directories; // nothing: unknown
    std::uint64_t since = 0;                 // sequence when it became possible
  };
  std::vector<State> m_states; // oldest first
  std::uint64_t m_sequence = 0;
};

} // namespace fsguard
