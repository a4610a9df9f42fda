#include "tracker/path_map.hpp"

#include "tracker/path.hpp"

namespace fsguard {

namespace {

// `path` with `from` (a directory that holds it) replaced by `to`.
std::string moved(std::string_view path, const std::string& from, const std::string& to)
{
  if (from == "/") {
    return to == "/" ? std::string(path) : to + std::string(path);
  }
  const std::string_view rest = path.substr(from.size());
  if (to == "/") {
    return rest.empty() ? std::string("/") : std::string(rest);
  }
  return to + std::string(rest);
}

// The mapping whose `side` directory is the longest to hold `path`.
template <typename Side>
const PathMapping* longest_holding(const std::vector<PathMapping>& mappings,
                                   std::string_view path, Side side)
{
  const PathMapping* best = nullptr;
  for (const auto& mapping : mappings) {
    const std::string& directory = side(mapping);
    if (is_within(path, directory) && (best == nullptr || directory.size() > side(*best).size())) {
      best = &mapping;
    }
  }
  return best;
}

} // namespace

PathMap::PathMap(std::vector<PathMapping> mappings) : m_mappings(std::move(mappings)) {}

std::optional<std::string> PathMap::to_local(std::string_view server_path) const
{
  if (m_mappings.empty()) {
    return std::string(server_path);
  }
  const auto* mapping = longest_holding(m_mappings, server_path,
                                        [](const PathMapping& m) -> const std::string& {
                                          return m.server;
                                        });
  if (mapping == nullptr) {
    return std::nullopt;
  }
  return moved(server_path, mapping->server, mapping->local);
}

std::string PathMap::to_server(std::string_view local_path) const
{
  const auto* mapping = longest_holding(m_mappings, local_path,
                                        [](const PathMapping& m) -> const std::string& {
                                          return m.local;
                                        });
  if (mapping == nullptr) {
    return std::string(local_path);
  }
  return moved(local_path, mapping->local, mapping->server);
}

} // namespace fsguard
