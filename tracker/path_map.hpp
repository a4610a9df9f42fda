// How the server's paths name fsguard's files when the two see the same
// files under other names: a server in a container with the project
// mounted (docker's --mount / -v), or in its own mount namespace.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsguard {

// One directory as the server spells it, and as fsguard sees it.
struct PathMapping {
  std::string server;
  std::string local;
  bool operator==(const PathMapping&) const = default;
};

class PathMap {
public:
  PathMap() = default;
  // `mappings` hold absolute, lexically normal paths (see lexically_normal).
  explicit PathMap(std::vector<PathMapping> mappings);

  // No mapping: server paths are fsguard's.
  bool empty() const { return m_mappings.empty(); }
  const std::vector<PathMapping>& mappings() const { return m_mappings; }

  // fsguard's spelling of the server's absolute, normal path
  // `server_path`: the longest server directory that holds it is replaced by
  // its local one. Nothing when the map is not empty and no entry holds it
  // (fsguard cannot see that file); the path itself when the map is empty.
  std::optional<std::string> to_local(std::string_view server_path) const;

  // The server's spelling of fsguard's path `local_path`, for texts the
  // agent reads: the longest local directory that holds it is replaced by
  // its server one; the path itself when none does.
  std::string to_server(std::string_view local_path) const;

  bool operator==(const PathMap&) const = default;

private:
  std::vector<PathMapping> m_mappings; // as given
};

} // namespace fsguard
