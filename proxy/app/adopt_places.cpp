#include "proxy/app/adopt_places.hpp"

#include <algorithm>
#include <filesystem>

namespace fsguard {

namespace {

// A project's own configs, relative to its directory.
constexpr const char* k_project_configs[] = {
  ".mcp.json",             // Claude Code, --scope project
  ".cursor/mcp.json",      // Cursor
  ".vscode/mcp.json",      // VS Code ("servers")
  ".gemini/settings.json", // Gemini CLI, project scope
  ".codex/config.toml",    // Codex, in a trusted project
};

} // namespace

std::vector<std::string> client_config_paths(const AdoptPlaces& places)
{
  std::vector<std::string> paths;
  auto add = [&](const std::filesystem::path& path) {
    const std::string text = path.lexically_normal().string();
    if (std::find(paths.begin(), paths.end(), text) == paths.end()) {
      paths.push_back(text);
    }
  };
  if (!places.working_directory.empty()) {
    std::filesystem::path directory(places.working_directory);
    for (;;) {
      for (const char* config : k_project_configs) {
        add(directory / config);
      }
      if (!directory.has_relative_path()) {
        break;
      }
      directory = directory.parent_path();
    }
  }
  if (!places.home.empty()) {
    const std::filesystem::path home(places.home);
    add(home / ".claude.json"); // Claude Code: user scope, and each project's local scope
    add(home / ".cursor/mcp.json");
    add(home / ".gemini/settings.json");
    add(home / "Library/Application Support/Claude/claude_desktop_config.json"); // macOS
  }
  if (!places.config_home.empty()) {
    const std::filesystem::path config(places.config_home);
    add(config / "Claude/claude_desktop_config.json");
    add(config / "Code/User/mcp.json");      // VS Code's user servers ("servers")
    add(config / "Code/User/settings.json"); // VS Code's older place ("mcp": {"servers"})
  }
  if (!places.codex_home.empty()) {
    add(std::filesystem::path(places.codex_home) / "config.toml");
  }
  return paths;
}

} // namespace fsguard
