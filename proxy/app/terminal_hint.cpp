#include "proxy/app/terminal_hint.hpp"

#include "tracker/joined.hpp"

namespace fsguard {

std::string terminal_hint(const std::vector<std::string>& command, DefaultUpstream chosen)
{
  const std::string served = chosen == DefaultUpstream::yes
                                ? "the current directory (no server command given, so "
                                  "fsguard starts \"" + joined(command, " ") + "\")"
                                : "\"" + joined(command, " ") + "\"";
  return "fsguard: serving " + served + " to an MCP client on stdin, guarded.\n"
         "fsguard: stdin is a terminal, so no client is connected. fsguard is meant to be "
         "started by an MCP client: put it in the client's config in front of the server "
         "command, e.g.\n"
         "fsguard:   claude mcp add fs -- fsguard npx -y "
         "@modelcontextprotocol/server-filesystem /path/to/project\n"
         "fsguard: fsguard adopt finds the filesystem servers in your clients' configs and "
         "shows how it would put fsguard in front of each (--apply does it).\n"
         "fsguard: fsguard --help lists its options; docs/clients.md shows each client. "
         "Ctrl-D or Ctrl-C ends this.\n";
}

} // namespace fsguard
