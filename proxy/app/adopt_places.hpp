// Where fsguard adopt looks for MCP client configs: the files each client
// reads, for the user's home and the current directory and its parents.
#pragma once

#include <string>
#include <vector>

namespace fsguard {

// The directories the paths are made from; empty ones are left out.
struct AdoptPlaces {
  std::string home;              // $HOME
  std::string working_directory; // the current directory, absolute
  std::string config_home;       // $XDG_CONFIG_HOME, else home/.config
  std::string codex_home;        // $CODEX_HOME, else home/.codex
};

// The client configs to look at for `places`, each once, in this order:
// those of the current directory and each directory above it (Claude
// Code's .mcp.json, Cursor's, VS Code's, Gemini CLI's, Codex's), then the
// user's own (Claude Code, Claude Desktop, Cursor, VS Code, Codex, Gemini
// CLI). Whether each exists is for the caller to find out.
std::vector<std::string> client_config_paths(const AdoptPlaces& places);

} // namespace fsguard
