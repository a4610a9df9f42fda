// Built-in profiles: for each known filesystem server, which tools read and
// write which files, and how it turns a path argument into a file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/file_info.hpp"
#include "tracker/path.hpp"
#include "tracker/tool_map.hpp"

namespace fsguard {

struct Profile {
  std::string name;
  ToolMap tools;
  PathRules rules = PathRules::absolute_only;
  // The server's other tools, reviewed and passed through unguarded, each
  // with the reason fsguard does not (or cannot) guard it.
  std::map<std::string, std::string, std::less<>> unguarded = {};
  // How its get_file_info shows a file, which fsguard asks before a change
  // where its paths may not be the server's; none: no such tool fsguard reads.
  FileInfoFormat file_info = FileInfoFormat::none;
};

// Whether fsguard reads the answers of `tools`' get_file_info, by the
// format of `profile` (the server's): both must have it.
bool reads_file_info(const Profile& profile, const ToolMap& tools);

// The tools of @modelcontextprotocol/server-filesystem.
ToolMap server_filesystem_tools();

// The profile called `name` ("server-filesystem", "agent-infra-filesystem",
// "desktop-commander"), if there is one.
std::optional<Profile> profile_named(std::string_view name);

// The profile for the server that introduced itself as `server_name`
// `server_version` in its initialize result, if fsguard knows it.
std::optional<Profile> profile_for_server(std::string_view server_name,
                                          std::string_view server_version);

// The names of all built-in profiles, for messages.
std::string profile_names();

} // namespace fsguard
