// fsguard adopt for Codex's config.toml: a line editor for the `command`
// and `args` keys of `[mcp_servers.NAME]` tables. It reads only the TOML it
// must (keys, strings, arrays of strings, where each value ends) and
// rewrites only those lines, so the rest of the file stays byte for byte.
#pragma once

#include <string>
#include <string_view>

#include "proxy/app/adopt_entries.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// Puts each filesystem server of the `[mcp_servers.NAME]` tables in the
// TOML `text` behind the fsguard at `fsguard_path`. An error, saying why,
// when a filesystem server is named anywhere else among the servers (an
// inline table, dotted keys, another key), or a table it would rewrite is
// unusual (a command that is not one string, args that are not one array
// of strings, a comment inside that array, a key given twice).
// With Rewrite::undo, each table that starts `fsguard_path` -- CMD gets CMD
// back as its command.
Result<AdoptedConfig, std::string> adopt_toml_config(std::string_view text,
                                                     const std::string& fsguard_path,
                                                     Rewrite rewrite = Rewrite::adopt);

// `value` as a TOML basic string, quoted and escaped.
std::string toml_string(std::string_view value);

} // namespace fsguard
