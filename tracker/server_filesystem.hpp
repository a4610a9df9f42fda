// What fsguard must know of @modelcontextprotocol/server-filesystem to name
// the file a path argument touches exactly as the server will: its home and
// relative-path rules, its allowed-directory listing, and its roots rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracker/disk.hpp"
#include "tracker/result.hpp"

namespace fsguard {

using DirectorySet = std::vector<std::string>;

// The upstream's home directory as Node's os.homedir() gives it: $HOME if it
// is set, even to "" or a relative path, else the password database's entry;
// nothing if there is neither (os.homedir() then throws).
using HomeDirectory = std::optional<std::string>;

// The serverInfo.name the server reports in its initialize result.
inline constexpr std::string_view k_server_filesystem_name = "secure-filesystem-server";

// `raw` with a leading "~" or "~/" expanded as the server's expandHome()
// does: Node's path.join(`home`, rest), which stays relative when `home` is
// (a relative $HOME, or "." for an empty one). Other paths are unchanged;
// nothing for a "~" path when `home` is unknown.
std::optional<std::string> expand_home(std::string_view raw, const HomeDirectory& home);

// The absolute path the server derives from `raw` (before symlinks): "~" and
// "~/..." expand with `home` (see expand_home); a relative path resolves
// against the first of `allowed` under which it stays inside `allowed`
// (else the first), or against `cwd` when `allowed` is empty. Nothing for a
// Windows drive path, which the server refuses, or when `home` is unknown.
std::optional<std::string> server_absolute_path(std::string_view raw, const HomeDirectory& home,
                                                const std::string& cwd,
                                                const DirectorySet& allowed);

// The directories in the text of a list_allowed_directories result
// ("Allowed directories:\n/a\n/b"), or nothing if the text has another shape.
std::optional<DirectorySet> parse_allowed_directories(std::string_view text);

// The creation time, in seconds since the epoch, in the text of a
// get_file_info result ("created: Mon Nov 23 2026 08:39:57 GMT+0100 (…)",
// a JavaScript Date); nothing if absent or of another shape.
std::optional<std::int64_t> parse_created_seconds(std::string_view info);

// The value of `key` in the text of a get_file_info result ("size: 12" gives
// "12" for "size"); nothing if absent.
std::optional<std::string> file_info_value(std::string_view info, const std::string& key);

// The seconds since the epoch of a JavaScript Date's toString() (e.g. "Mon
// Nov 23 2026 08:39:57 GMT+0100 (…)"), as get_file_info shows its times.
std::optional<std::int64_t> javascript_date_seconds(const std::string& text);

// The millisecond since the epoch Node's fs.stat Date holds for a file
// time of `seconds` and `nanoseconds`: Math.round of the double
// seconds * 1e3 + nanoseconds / 1e6, computed as Node computes it, so a time
// within about 120 ns below a half millisecond (where the double has no
// finer step) rounds up as Node's does (measured with Node 20).
std::int64_t node_shown_millisecond(std::int64_t seconds, std::int64_t nanoseconds);

// The second Node's Date shows for a file time of `seconds` and
// `nanoseconds`: that of node_shown_millisecond(), so the last half
// millisecond of a second shows as the next one (2 in 4,000 temporary
// directories, measured). Compare birth times in it.
std::int64_t node_shown_second(std::int64_t seconds, std::int64_t nanoseconds);

// The allowed directories the server will adopt from a roots/list `result`
// sent by the client, given its `current` ones: each file:// root that
// resolves to a directory, in order; `current` if there are none, or if any
// root is not a file:// URI (the SDK then rejects the whole reply).
std::optional<DirectorySet> predict_root_directories(const nlohmann::json& result, const DirectorySet& current,
                                      Disk& disk, const HomeDirectory& home,
                                      const std::string& cwd);

} // namespace fsguard
