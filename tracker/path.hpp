// Which file a path argument names: spelling checks, lexical normalisation,
// symlink resolution and Unicode-equivalent names, all through `Disk`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tracker/disk.hpp"
#include "tracker/path_map.hpp"
#include "tracker/result.hpp"
#include "tracker/server_filesystem.hpp"

namespace fsguard {

// Why a raw path could not be resolved to one file; `reason` is for people.
struct PathError {
  std::string reason;
  // The server's allowed directories are not known right now (or are
  // changing); the same path may resolve once they are.
  bool directories_in_doubt = false;
};

// How the upstream turns a path argument into an absolute path.
enum class PathRules {
  absolute_only,     // unknown server: only absolute paths can be resolved
  server_filesystem, // "~" and relative paths as server-filesystem resolves them
  working_directory, // "~" expands to $HOME, relative paths resolve against the cwd
};

// What resolving a path depends on besides the filesystem.
struct PathContext {
  PathRules rules = PathRules::absolute_only;
  HomeDirectory home; // the upstream's os.homedir()
  std::string cwd;  // the upstream's working directory
  // The allowed-directory sets the server may be using right now; empty
  // when fsguard does not know them. In the server's spelling.
  std::vector<DirectorySet> allowed_sets;
  // How the server's paths name fsguard's files (path_map).
  PathMap map;
};

// A spelling problem that stops fsguard from knowing which file `raw` names
// under `rules` (empty, NUL byte, padded with white space or quotes, or
// relative/"~" for an unknown server), or "" when there is none.
std::string spelling_problem(std::string_view raw, PathRules rules);

// `absolute` with "." and ".." resolved lexically and duplicate slashes
// collapsed, as the upstream's path.resolve() does. `absolute` starts with '/'.
std::string lexically_normal(std::string_view absolute);

// True if `path` is absolute and already lexically normal: no empty, "." or
// ".." component and no trailing slash (except "/" itself). Such a path is
// what realpath() returns when no symlink is involved.
bool is_lexically_normal(std::string_view path);

// True if the normal absolute `path` is `directory` or lies below it.
bool is_within(std::string_view path, std::string_view directory);

// The canonical path of the absolute path `absolute`: the real path of its
// longest existing prefix (symlinks resolved, Unicode-equivalent names
// matched as the upstream matches them), followed by the missing rest.
Result<std::string, PathError> canonical_path(Disk& disk, std::string_view absolute);

// The canonical path (on fsguard's side, through `context.map`) of the file
// that the path argument `raw` names, under `context`. Fails when fsguard
// cannot tell for sure.
Result<std::string, PathError> resolve_path(Disk& disk, std::string_view raw,
                                            const PathContext& context);

} // namespace fsguard
