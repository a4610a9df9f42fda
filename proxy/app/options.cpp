#include "proxy/app/options.hpp"

#include <algorithm>
#include <span>

#include <boost/version.hpp>
#include <git2/version.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>
#include <utf8proc.h>
#include <xxhash.h>

namespace fsguard {

namespace {

// `fsguard adopt`'s own arguments (`arguments` without "adopt").
Result<AdoptRequest, std::string> parse_adopt(std::span<const std::string> arguments)
{
  AdoptRequest request;
  bool apply = false;
  bool undo = false;
  bool files_only = false;
  for (const auto& argument : arguments) {
    if (files_only || !argument.starts_with('-') || argument == "-") {
      request.files.push_back(argument);
    } else if (argument == "--") {
      files_only = true;
    } else if (argument == "--apply") {
      apply = true;
    } else if (argument == "--undo") {
      undo = true;
    } else {
      return "fsguard adopt: unknown option \"" + argument + "\"; it takes --apply or --undo, "
             "and config files";
    }
  }
  if (apply && undo) {
    return std::string("fsguard adopt: --apply and --undo exclude each other");
  }
  request.action = apply ? AdoptAction::apply : undo ? AdoptAction::undo : AdoptAction::show;
  return request;
}

} // namespace

Result<Options, std::string> parse_options(const std::vector<std::string>& arguments)
{
  Options options;
  // A command of fsguard's own, before any upstream command ("fsguard --
  // adopt" starts a program called adopt).
  if (!arguments.empty() && arguments.front() == "adopt") {
    if (std::ranges::any_of(arguments, [](const auto& a) { return a == "--help" || a == "-h"; })) {
      options.help = true;
      return options;
    }
    auto request = parse_adopt(std::span(arguments).subspan(1));
    if (!request) {
      return request.error();
    }
    options.adopt = std::move(request).value();
    return options;
  }
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    const std::string& argument = arguments[index];
    auto value_of = [&](std::string_view name) -> std::optional<std::string> {
      const std::string prefix = std::string(name) + "=";
      if (argument.starts_with(prefix)) {
        return argument.substr(prefix.size());
      }
      if (index + 1 < arguments.size()) {
        return arguments[++index];
      }
      return std::nullopt;
    };
    auto named = [&](std::string_view long_name, std::string_view short_name) {
      return argument == long_name || (!short_name.empty() && argument == short_name)
             || argument.starts_with(std::string(long_name) + "=");
    };

    if (argument == "--") {
      options.upstream.assign(arguments.begin() + static_cast<long>(index) + 1, arguments.end());
      break;
    }
    if (!argument.starts_with('-')) {
      // The upstream command, as with env, timeout and nice: client launchers
      // (gemini mcp add, the Inspector) eat a "--" of their own.
      options.upstream.assign(arguments.begin() + static_cast<long>(index), arguments.end());
      break;
    }
    if (named("--help", "-h")) {
      options.help = true;
    } else if (named("--version", "-V")) {
      options.version = true;
    } else if (named("--check-config", "")) {
      const auto value = value_of("--check-config");
      if (!value || value->empty()) return std::string("--check-config needs a file path");
      options.check_config = *value;
    } else if (named("--print-config", "")) {
      options.print_config = true;
    } else if (named("--check-setup", "")) {
      options.check_setup = true;
    } else if (named("--print-profile", "")) {
      const auto value = value_of("--print-profile");
      if (!value || value->empty()) return std::string("--print-profile needs a profile name");
      options.print_profile = *value;
    } else if (named("--config", "-c")) {
      const auto value = value_of("--config");
      if (!value || value->empty()) return std::string("--config needs a file path");
      options.config_path = *value;
    } else if (named("--mode", "-m")) {
      const auto value = value_of("--mode");
      const auto mode = value ? parse_mode(*value) : std::nullopt;
      if (!mode) return std::string("--mode must be enforce, warn or off");
      options.mode = *mode;
    } else if (named("--log-level", "")) {
      const auto value = value_of("--log-level");
      const auto level = value ? parse_log_level(*value) : std::nullopt;
      if (!level) return std::string("--log-level must be error, warn, info or debug");
      options.log_level = *level;
    } else {
      return "unknown option \"" + argument
             + "\"; see fsguard --help. The upstream command comes after fsguard's options, "
               "e.g. fsguard npx -y @modelcontextprotocol/server-filesystem /path/to/project "
               "(or after \"--\")";
    }
  }
  return options;
}

std::string usage_text()
{
  return R"(Usage: fsguard [options] [--] <upstream command> [args...]
       fsguard adopt [--apply | --undo] [FILE...]

fsguard is a transparent MCP proxy for filesystem servers. It relays JSON-RPC
between the MCP client on its stdin/stdout and the upstream server it starts,
and refuses a write or edit when the agent never read the existing file, or
when the file changed since the agent read it.

Options:
  -c, --config PATH      JSON config file (default: $FSGUARD_CONFIG, if set)
  -m, --mode MODE        enforce (default) | warn | off
                         overrides $FSGUARD_MODE and the config file
      --log-level LEVEL  error | warn (default) | info | debug; logs go to stderr
      --check-config PATH
                         validate the config file PATH, print the verdict, exit
                         (0: valid, 1: invalid)
      --print-config     print the effective config and where each value came
                         from (default, file, environment, flag), then exit
      --print-profile NAME
                         print a built-in profile (server-filesystem,
                         agent-infra-filesystem, desktop-commander): which tools
                         it guards, and why the others pass through; then exit
      --check-setup      start the upstream, tell for each of its allowed
                         directories whether fsguard sees it (the same path,
                         through path_map, or not at all), then exit (0: all
                         seen, 1: not)
  -h, --help             show this help
  -V, --version          show the version and the libraries fsguard was built with

fsguard adopt finds the MCP client configs that start a filesystem server
(Claude Code, Claude Desktop, Cursor, VS Code, Codex, Gemini CLI; or the
FILEs given) and shows, as a diff, each entry rewritten to start this fsguard
in front of the same server; exit status 1 if a config was refused.
      --apply            rewrite them, keeping each original as FILE.fsguard-backup
      --undo             put each FILE.fsguard-backup back

Without an upstream command, fsguard runs @modelcontextprotocol/server-filesystem
on the current directory.

The upstream command starts at the first argument that is not an option of
fsguard's (or after "--"); its own options follow it untouched.

Example (Claude Desktop, Cursor, Claude Code, VS Code, Codex: use as the command):
  fsguard npx -y @modelcontextprotocol/server-filesystem /home/me/project
)";
}

std::string version_text()
{
  return "fsguard " FSGUARD_VERSION "\n"
         "built with Boost " + std::to_string(BOOST_VERSION / 100000) + "."
         + std::to_string(BOOST_VERSION / 100 % 1000) + "."
         + std::to_string(BOOST_VERSION % 100) + ", nlohmann_json "
         + std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "."
         + std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "."
         + std::to_string(NLOHMANN_JSON_VERSION_PATCH) + ", xxHash "
         + std::to_string(XXH_VERSION_MAJOR) + "." + std::to_string(XXH_VERSION_MINOR)
         + "." + std::to_string(XXH_VERSION_RELEASE) + ", utf8proc "
         + utf8proc_version() + ", libgit2 " LIBGIT2_VERSION ", SQLite " SQLITE_VERSION "\n";
}

} // namespace fsguard
