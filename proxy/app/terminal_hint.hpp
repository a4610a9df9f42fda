// What fsguard says when it is started by hand in a terminal, where no MCP
// client is connected to its stdin.
#pragma once

#include <string>
#include <vector>

namespace fsguard {

// Whether the upstream `command` is the one fsguard chose (none was given).
enum class DefaultUpstream { yes, no };

// Lines for stderr: fsguard serves `command` to an MCP client on stdin, and
// how it is meant to be used (in a client's config; --help).
std::string terminal_hint(const std::vector<std::string>& command, DefaultUpstream chosen);

} // namespace fsguard
