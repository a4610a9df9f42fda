// Which file a path argument names: spelling checks, lexical normalisation,
// symlink resolution and Unicode-equivalent names, all through `Disk`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tracker/disk.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// Why a raw path could not be resolved to one file; `reason` is for people.
struct PathError {
  std::string reason;
};

// A spelling problem that stops fsguard from knowing which file `raw` names
// (empty, NUL byte, relative, "~", padded with whitespace or quotes), or an
// empty string when the spelling is a plain absolute path.
std::string spelling_problem(std::string_view raw);

// `absolute` with "." and ".." resolved lexically and duplicate slashes
// collapsed, as the upstream's path.resolve() does. `absolute` starts with '/'.
std::string lexically_normal(std::string_view absolute);

// The canonical path of the file that `raw` names: the real path of its
// longest existing prefix (symlinks resolved, Unicode-equivalent names
// matched as the upstream matches them), followed by the missing rest.
Result<std::string, PathError> resolve_path(Disk& disk, std::string_view raw);

} // namespace fsguard
