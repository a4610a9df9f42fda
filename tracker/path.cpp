#include "tracker/path.hpp"

#include <algorithm>

#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

std::vector<std::string_view> split_components(std::string_view path)
{
  std::vector<std::string_view> components;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    if (slash > start) {
      components.push_back(path.substr(start, slash - start));
    }
    start = slash + 1;
  }
  return components;
}

std::string join(std::string_view directory, std::string_view name)
{
  std::string joined(directory);
  if (joined.empty() || joined.back() != '/') {
    joined += '/';
  }
  joined += name;
  return joined;
}

bool is_ascii(std::string_view text)
{
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// The entry of `directory` whose name is Unicode-equivalent to `name`, the
// way server-filesystem finds `café.txt` when asked for `cafe\u0301.txt`.
Result<std::string, PathError>
equivalent_entry(Disk& disk, const std::string& directory, std::string_view name)
{
  const auto wanted = to_nfc(name);
  if (!wanted) {
    return PathError{"the name is not valid UTF-8"};
  }
  const std::string newer = "characters newer than fsguard's Unicode tables ("
                            + std::string(unicode_version())
                            + "), which the server may match with other names";
  if (has_unassigned_code_point(name)) {
    return PathError{"the name holds " + newer};
  }
  auto entries = disk.list_directory(directory);
  if (!entries) {
    return std::string();
  }
  std::vector<std::string> matches;
  for (const auto& entry : *entries) {
    if (entry != name && !is_ascii(entry) && has_unassigned_code_point(entry)) {
      return PathError{"an existing name in " + directory + " holds " + newer};
    }
    if (entry != name && to_nfc(entry) == wanted) {
      matches.push_back(entry);
    }
  }
  if (matches.size() > 1) {
    return PathError{"several existing names in " + directory
                     + " are Unicode-equivalent to it"};
  }
  return matches.empty() ? std::string() : matches.front();
}

} // namespace

std::string spelling_problem(std::string_view raw, PathRules rules)
{
  if (raw.empty()) {
    return "the path is empty";
  }
  if (raw.find('\0') != std::string_view::npos) {
    return "the path contains a NUL character";
  }
  if (has_trimmable_edge(raw)) {
    return "the path begins or ends with white space, which the server trims in some "
           "checks but not in others";
  }
  const char first = raw.front();
  const char last = raw.back();
  if (first == '"' || first == '\'' || last == '"' || last == '\'') {
    return "the path begins or ends with a quote character, which the server strips in "
           "some checks but not in others";
  }
  if (rules == PathRules::absolute_only && first != '/') {
    return first == '~' ? "the path starts with ~, and fsguard does not know how this server "
                          "expands it"
                        : "the path is relative, and fsguard does not know how this server "
                          "resolves relative paths";
  }
  return {};
}

bool is_lexically_normal(std::string_view path)
{
  if (path.empty() || path.front() != '/') {
    return false;
  }
  if (path.size() == 1) {
    return true;
  }
  std::size_t start = 1;
  for (;;) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view name = path.substr(start, end - start);
    if (name.empty() || name == "." || name == "..") {
      return false;
    }
    if (end == path.size()) {
      return true;
    }
    start = end + 1;
  }
}

std::string lexically_normal(std::string_view absolute)
{
  if (is_lexically_normal(absolute)) {
    return std::string(absolute); // the common case, without splitting it
  }
  std::vector<std::string_view> kept;
  for (auto component : split_components(absolute)) {
    if (component == ".") {
      continue;
    }
    if (component == "..") {
      if (!kept.empty()) {
        kept.pop_back();
      }
      continue;
    }
    kept.push_back(component);
  }
  std::string normal;
  for (auto component : kept) {
    normal += '/';
    normal += component;
  }
  return normal.empty() ? "/" : normal;
}

bool is_within(std::string_view path, std::string_view directory)
{
  if (directory == "/") {
    return path.starts_with('/');
  }
  return path.starts_with(directory)
         && (path.size() == directory.size() || path[directory.size()] == '/');
}

Result<std::string, PathError> canonical_path(Disk& disk, std::string_view absolute)
{
  std::string normal = lexically_normal(absolute);
  const auto problem = disk.make_real_path(normal);
  if (!problem) {
    return normal; // now its real path
  }
  if (!problem->missing()) {
    return PathError{"cannot resolve " + normal + ": " + problem->describe()};
  }

  // Some component does not exist: resolve the existing prefix one step at a
  // time, then append the rest as spelled.
  const auto components = split_components(normal);
  std::string resolved = "/";
  for (std::size_t index = 0; index < components.size(); ++index) {
    std::string_view name = components[index];
    auto next = disk.real_path(join(resolved, name));
    if (!next && next.error().missing() && !is_ascii(name)) {
      auto equivalent = equivalent_entry(disk, resolved, name);
      if (!equivalent) {
        return equivalent.error();
      }
      if (!equivalent->empty()) {
        next = disk.real_path(join(resolved, *equivalent));
      }
    }
    if (next) {
      resolved = std::move(next).value();
      continue;
    }
    if (!next.error().missing()) {
      return PathError{"cannot resolve " + join(resolved, name) + ": "
                       + next.error().describe()};
    }
    for (; index < components.size(); ++index) {
      resolved = join(resolved, components[index]);
    }
    break;
  }
  return resolved;
}

namespace {

// The canonical path on fsguard's side of the server's absolute path
// `server_path`, through `map`.
Result<std::string, PathError> local_canonical_path(Disk& disk, std::string_view server_path,
                                                    const PathMap& map)
{
  if (map.empty()) {
    return canonical_path(disk, server_path);
  }
  const std::string normal = lexically_normal(server_path);
  const auto local = map.to_local(normal);
  if (!local) {
    return PathError{"the server's path " + normal + " lies outside every directory of "
                     "fsguard's path_map, so fsguard cannot see that file; add its directory "
                     "to path_map"};
  }
  return canonical_path(disk, *local);
}

} // namespace

Result<std::string, PathError> resolve_path(Disk& disk, std::string_view raw,
                                            const PathContext& context)
{
  if (auto problem = spelling_problem(raw, context.rules); !problem.empty()) {
    return PathError{std::move(problem)};
  }
  if (raw.front() == '/') {
    return local_canonical_path(disk, raw, context.map);
  }
  const bool home_relative = raw == "~" || raw.starts_with("~/");
  if (home_relative && !context.home) {
    return PathError{"the path starts with ~, and the server's home directory is unknown"};
  }
  if (context.rules == PathRules::working_directory) {
    const auto absolute = server_absolute_path(raw, context.home, context.cwd, {});
    if (!absolute) {
      return PathError{"the server would refuse this path"};
    }
    return local_canonical_path(disk, *absolute, context.map);
  }
  // "~" expands with Node's path.join, which keeps a relative $HOME (or ""
  // as ".") relative: the server then resolves it like any relative path.
  const bool relative = !expand_home(raw, context.home).value_or("/").starts_with('/');
  if (relative && context.allowed_sets.empty()) {
    return PathError{"the path is relative, and the server's allowed directories are not "
                     "known right now (they are learned at start-up and after a roots change)",
                     true};
  }
  // Resolve under every allowed-directory set the server may be using; the
  // path names one file only if they all agree.
  const std::vector<DirectorySet> one_set(1);
  const auto& sets = relative ? context.allowed_sets : one_set;
  std::optional<std::string> agreed;
  for (const auto& allowed : sets) {
    const auto absolute = server_absolute_path(raw, context.home, context.cwd, allowed);
    if (!absolute) {
      return PathError{"the server would refuse this path"};
    }
    auto canonical = local_canonical_path(disk, *absolute, context.map);
    if (!canonical) {
      return canonical.error();
    }
    if (agreed && *agreed != *canonical) {
      return PathError{"the path is relative, and the server's allowed directories are "
                       "changing, so it could name " + *agreed + " or " + *canonical,
                       true};
    }
    agreed = std::move(canonical).value();
  }
  return *agreed;
}

} // namespace fsguard
