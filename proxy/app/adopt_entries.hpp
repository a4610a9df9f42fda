// fsguard adopt, the pure part: which MCP server entries of a client config
// start a filesystem server, and the same entries with fsguard in front.
// No I/O: the text of a config goes in, the text to write comes out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/result.hpp"

namespace fsguard {

// What a client starts for one MCP server: a program and its arguments.
struct ServerLaunch {
  std::string command;
  std::vector<std::string> args;
  bool operator==(const ServerLaunch&) const = default;
};

enum class LaunchKind {
  other,             // no filesystem server fsguard knows
  filesystem_server, // starts one of the servers fsguard has a profile for
  fsguard,           // starts fsguard (in front of whatever it starts)
};

// What `launch` starts: fsguard (a program named fsguard, or `fsguard_path`),
// a filesystem server of a built-in profile (its package, program, script
// or Docker image is named in the command or an argument), or another.
LaunchKind classify_launch(const ServerLaunch& launch, std::string_view fsguard_path);

// Whether `text` names a filesystem server fsguard knows anywhere in it.
bool names_filesystem_server(std::string_view text);

// `launch` started by fsguard: command `fsguard_path`, arguments "--", then
// the original command and its arguments.
ServerLaunch guarded_launch(const ServerLaunch& launch, const std::string& fsguard_path);

// The launch that `guarded_launch` made `launch` from, if `launch` is one:
// command `fsguard_path`, then "--" and a command.
std::optional<ServerLaunch> unguarded_launch(const ServerLaunch& launch,
                                             std::string_view fsguard_path);

// What a person adopting `launch` should know, if anything: a server run
// in a container may see the files under other paths ("" when nothing).
std::string launch_note(const ServerLaunch& launch);

// Why fsguard cannot be put in front of `launch` as it is written ("" when
// it can): a command that holds a whole command line, which the client
// itself would have to split.
std::string cannot_guard(const ServerLaunch& launch);

// Which way a config is rewritten.
enum class Rewrite {
  adopt, // every filesystem server behind fsguard
  undo,  // every entry adopt made back as it was
};

// A client config with every filesystem server behind fsguard (or, undone,
// with every entry that adopt made back as it was).
struct AdoptedConfig {
  std::string text;                    // the config to write (the same if nothing changes)
  std::vector<std::string> adopted;    // each entry rewritten, e.g. "mcpServers.fs"
  std::vector<std::string> guarded;    // entries that started fsguard already
  std::size_t server_lists = 0;        // how many lists of MCP servers the config holds
  std::vector<std::string> notes = {}; // on rewritten entries, each starting with its place
};

// Reads the JSON config `text` (Claude Code, Claude Desktop, Cursor, VS Code,
// Gemini CLI; comments and trailing commas allowed) and puts each filesystem
// server in its lists of servers (`mcpServers`, `servers`, `mcp.servers`,
// `projects.<dir>.mcpServers`) behind the fsguard at `fsguard_path`. Only
// the values of command and args change (args laid out as before, or added
// after command); every other byte stays. An error, saying why, when the
// text is not JSON, or names a filesystem server in an entry it cannot
// rewrite: no unguarded filesystem server is ever left beside a guarded one.
// With Rewrite::undo, each entry that starts `fsguard_path` -- CMD gets CMD
// back as its command, and nothing is refused but text that is not JSON.
Result<AdoptedConfig, std::string> adopt_json_config(std::string_view text,
                                                     const std::string& fsguard_path,
                                                     Rewrite rewrite = Rewrite::adopt);

} // namespace fsguard
