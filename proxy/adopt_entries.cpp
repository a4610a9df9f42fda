#include "proxy/adopt_entries.hpp"

#include <nlohmann/json.hpp>

namespace fsguard {

namespace {

using ordered_json = nlohmann::ordered_json;

// Words that name a server of a built-in profile (tracker/profiles.cpp)
// wherever a launcher puts them: "server-filesystem" is in
// @modelcontextprotocol/server-filesystem, its program mcp-server-filesystem,
// a path into the package (node .../server-filesystem/dist/index.js) and
// @agent-infra/mcp-server-filesystem; "desktop-commander" in
// @wonderwhy-er/desktop-commander and its program.
constexpr std::string_view k_server_words[] = {"server-filesystem", "desktop-commander"};

// The reference server's Docker image (`docker run -i --rm ... mcp/filesystem DIR`).
constexpr std::string_view k_server_image = "mcp/filesystem";

std::string_view base_name(std::string_view path)
{
  const auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `token` names the server's image, with or without a registry, tag or digest.
bool names_server_image(std::string_view token)
{
  if (const auto digest = token.find('@'); digest != std::string_view::npos) {
    token = token.substr(0, digest);
  }
  const auto slash = token.find_last_of('/');
  if (const auto tag = token.find_last_of(':');
      tag != std::string_view::npos && (slash == std::string_view::npos || tag > slash)) {
    token = token.substr(0, tag);
  }
  return token == k_server_image
         || (token.ends_with(k_server_image)
             && token[token.size() - k_server_image.size() - 1] == '/');
}

bool names_server(std::string_view token)
{
  for (const auto word : k_server_words) {
    if (token.find(word) != std::string_view::npos) {
      return true;
    }
  }
  return names_server_image(token);
}

bool has_space(std::string_view text)
{
  return text.find_first_of(" \t") != std::string_view::npos;
}

// How a JSON config is laid out, so that a rewrite keeps it.
struct JsonLayout {
  int indent = -1; // -1: all on one line
  char indent_char = ' ';
  bool final_newline = false;
  bool crlf = false;
  bool bom = false;
};

constexpr std::string_view k_bom = "\xEF\xBB\xBF";

JsonLayout layout_of(std::string_view text)
{
  JsonLayout layout;
  layout.bom = text.starts_with(k_bom);
  layout.final_newline = text.ends_with('\n');
  layout.crlf = text.find("\r\n") != std::string_view::npos;
  // The first line inside the top-level value sets the indentation.
  for (auto newline = text.find('\n'); newline != std::string_view::npos;
       newline = text.find('\n', newline + 1)) {
    const auto line = text.substr(newline + 1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '\r' || line[first] == '\n') {
      continue; // blank line
    }
    layout.indent = static_cast<int>(first);
    layout.indent_char = first > 0 ? line[0] : ' ';
    break;
  }
  return layout;
}

std::string dump_in_layout(const ordered_json& document, const JsonLayout& layout)
{
  std::string dumped = document.dump(layout.indent, layout.indent_char);
  if (layout.final_newline) {
    dumped += '\n';
  }
  std::string text = layout.bom ? std::string(k_bom) : std::string();
  if (!layout.crlf) {
    return text + dumped;
  }
  for (const char c : dumped) {
    if (c == '\n') {
      text += '\r';
    }
    text += c;
  }
  return text;
}

// The launch an entry holds, or why it holds none fsguard can read.
Result<ServerLaunch, std::string> launch_of(const ordered_json& entry)
{
  if (!entry.is_object()) {
    return std::string("it is not an object");
  }
  const auto command = entry.find("command");
  if (command == entry.end()) {
    return std::string("it has no \"command\"");
  }
  if (!command->is_string()) {
    return std::string("its \"command\" is not a string");
  }
  ServerLaunch launch{command->get<std::string>(), {}};
  if (const auto args = entry.find("args"); args != entry.end()) {
    if (!args->is_array()) {
      return std::string("its \"args\" is not a list");
    }
    for (const auto& arg : *args) {
      if (!arg.is_string()) {
        return std::string("its \"args\" holds a value that is not a string");
      }
      launch.args.push_back(arg.get<std::string>());
    }
  }
  return launch;
}

// `entry` with `launch` as its command and args, every other key kept in
// its place (args right after command if it had none).
ordered_json with_launch(const ordered_json& entry, const ServerLaunch& launch)
{
  ordered_json rewritten = ordered_json::object();
  const bool had_args = entry.contains("args");
  for (const auto& [key, value] : entry.items()) {
    if (key == "command") {
      rewritten["command"] = launch.command;
      if (!had_args) {
        rewritten["args"] = launch.args;
      }
    } else if (key == "args") {
      rewritten["args"] = launch.args;
    } else {
      rewritten[key] = value;
    }
  }
  return rewritten;
}

// One list of MCP servers in a config: where it is, and the object itself.
struct ServerList {
  std::string label;
  ordered_json* servers;
};

// The lists of servers in `root`; an error for one that is not an object
// but names a filesystem server.
Result<std::vector<ServerList>, std::string> server_lists(ordered_json& root)
{
  std::vector<ServerList> lists;
  std::string problem;
  auto take = [&](ordered_json& parent, const std::string& key, const std::string& label) {
    const auto found = parent.find(key);
    if (found == parent.end()) {
      return;
    }
    if (found->is_object()) {
      lists.push_back({label, &*found});
    } else if (problem.empty() && names_filesystem_server(found->dump())) {
      problem = "\"" + label + "\" names a filesystem server but is not an object";
    }
  };
  take(root, "mcpServers", "mcpServers");
  take(root, "servers", "servers");
  if (const auto mcp = root.find("mcp"); mcp != root.end() && mcp->is_object()) {
    take(*mcp, "servers", "mcp.servers");
  }
  // Claude Code keeps the servers of its "local" scope per project.
  if (const auto projects = root.find("projects");
      projects != root.end() && projects->is_object()) {
    for (auto& [directory, project] : projects->items()) {
      if (project.is_object()) {
        take(project, "mcpServers", "projects[" + ordered_json(directory).dump() + "].mcpServers");
      }
    }
  }
  if (!problem.empty()) {
    return problem;
  }
  return lists;
}

} // namespace

bool names_filesystem_server(std::string_view text)
{
  for (const auto word : k_server_words) {
    if (text.find(word) != std::string_view::npos) {
      return true;
    }
  }
  return text.find(k_server_image) != std::string_view::npos;
}

LaunchKind classify_launch(const ServerLaunch& launch, std::string_view fsguard_path)
{
  if (launch.command == fsguard_path || base_name(launch.command) == "fsguard") {
    return LaunchKind::fsguard;
  }
  bool server = names_server(launch.command);
  for (const auto& arg : launch.args) {
    // A launcher in front of fsguard (env, nice, a wrapper script's argument).
    if (arg == fsguard_path || base_name(arg) == "fsguard") {
      return LaunchKind::fsguard;
    }
    server = server || names_server(arg);
  }
  return server ? LaunchKind::filesystem_server : LaunchKind::other;
}

ServerLaunch guarded_launch(const ServerLaunch& launch, const std::string& fsguard_path)
{
  ServerLaunch guarded{fsguard_path, {"--", launch.command}};
  guarded.args.insert(guarded.args.end(), launch.args.begin(), launch.args.end());
  return guarded;
}

std::optional<ServerLaunch> unguarded_launch(const ServerLaunch& launch,
                                             std::string_view fsguard_path)
{
  if (launch.command != fsguard_path || launch.args.size() < 2 || launch.args.front() != "--") {
    return std::nullopt;
  }
  return ServerLaunch{launch.args[1], {launch.args.begin() + 2, launch.args.end()}};
}

std::string cannot_guard(const ServerLaunch& launch)
{
  if (launch.command.empty()) {
    return "its command is empty";
  }
  if (has_space(launch.command) && names_server(launch.command)) {
    return "its command \"" + launch.command
           + "\" is a whole command line in one string; split it into command and args first";
  }
  return "";
}

Result<AdoptedConfig, std::string> adopt_json_config(std::string_view text,
                                                     const std::string& fsguard_path,
                                                     Rewrite rewrite)
{
  const std::string_view body = text.starts_with(k_bom) ? text.substr(k_bom.size()) : text;
  ordered_json root = ordered_json::parse(body, nullptr, false);
  if (root.is_discarded()) {
    if (!ordered_json::parse(body, nullptr, false, true).is_discarded()) {
      return std::string("it holds comments, which fsguard would lose in rewriting it; put "
                         "fsguard in front of its filesystem servers by hand (docs/clients.md)");
    }
    return std::string("it is not valid JSON");
  }
  if (!root.is_object()) {
    return std::string("its top level is not a JSON object");
  }
  auto lists = server_lists(root);
  if (!lists) {
    return lists.error();
  }
  AdoptedConfig adopted{std::string(text), {}, {}, lists->size()};
  for (const auto& list : *lists) {
    for (auto& [name, entry] : list.servers->items()) {
      const std::string label = list.label + "." + name;
      const auto launch = launch_of(entry);
      if (rewrite == Rewrite::undo) {
        if (const auto inner = launch ? unguarded_launch(*launch, fsguard_path) : std::nullopt) {
          entry = with_launch(entry, *inner);
          adopted.adopted.push_back(label);
        }
        continue;
      }
      const auto kind = launch ? classify_launch(*launch, fsguard_path) : LaunchKind::other;
      if (kind == LaunchKind::fsguard) {
        adopted.guarded.push_back(label);
        continue;
      }
      if (kind == LaunchKind::filesystem_server) {
        if (const auto why = cannot_guard(*launch); !why.empty()) {
          return label + " starts a filesystem server, but " + why;
        }
        entry = with_launch(entry, guarded_launch(*launch, fsguard_path));
        adopted.adopted.push_back(label);
        continue;
      }
      // Not rewritten: it must not start a filesystem server some other way.
      if (names_filesystem_server(entry.dump())) {
        return label + " names a filesystem server in a form fsguard does not rewrite ("
               + (launch ? std::string("not in its command or args") : launch.error())
               + "); put fsguard in front of it by hand (docs/clients.md)";
      }
    }
  }
  if (!adopted.adopted.empty()) {
    adopted.text = dump_in_layout(root, layout_of(text));
  }
  return adopted;
}

} // namespace fsguard
