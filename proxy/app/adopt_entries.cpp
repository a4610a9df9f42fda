#include "proxy/app/adopt_entries.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "proxy/app/adopt_json_spans.hpp"
#include "proxy/app/adopt_replacements.hpp"

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

constexpr std::string_view k_bom = "\xEF\xBB\xBF";

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

std::string json_string(const std::string& value)
{
  return ordered_json(value).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// Whether the JSON `fragment` holds a comment outside its strings.
bool has_comment(std::string_view fragment)
{
  for (std::size_t at = 0; at < fragment.size(); ++at) {
    if (fragment[at] == '"') {
      for (++at; at < fragment.size() && fragment[at] != '"'; at += fragment[at] == '\\' ? 2 : 1) {
      }
    } else if (fragment.substr(at).starts_with("//") || fragment.substr(at).starts_with("/*")) {
      return true;
    }
  }
  return false;
}

// `strings` as a JSON array laid out as the array `old` it replaces: one
// element a line at old's indentation, or all on one line.
std::string json_array_like(const std::vector<std::string>& strings, std::string_view old)
{
  const auto first_newline = old.find('\n');
  if (first_newline == std::string_view::npos) {
    const bool tight =
      old.find(",\"") != std::string_view::npos && old.find(", ") == std::string_view::npos;
    std::string array = "[";
    for (std::size_t i = 0; i < strings.size(); ++i) {
      array += (i == 0 ? "" : tight ? "," : ", ") + json_string(strings[i]);
    }
    return array + "]";
  }
  const std::string newline = old.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  const auto last_newline = old.rfind('\n');
  const auto closing = old.substr(last_newline + 1, old.size() - 1 - (last_newline + 1));
  const bool closing_alone = closing.find_first_not_of(" \t") == std::string_view::npos;
  const auto after_first = old.substr(first_newline + 1);
  std::string indent(after_first.substr(0, after_first.find_first_not_of(" \t")));
  if (after_first.substr(indent.size()).starts_with("]")) {
    indent += "  "; // it was empty: one level in from its bracket
  }
  std::string array = "[";
  for (std::size_t i = 0; i < strings.size(); ++i) {
    array += (i == 0 ? "" : ",") + newline + indent + json_string(strings[i]);
  }
  return array + (closing_alone ? newline + std::string(closing) : std::string()) + "]";
}

const JsonMemberSpan* span_at(const std::vector<JsonMemberSpan>& spans,
                              const std::vector<std::string>& path)
{
  for (const auto& span : spans) {
    if (span.path == path) {
      return &span;
    }
  }
  return nullptr;
}

// The replacements that give the entry at `path` the launch `launch`; an
// error when its args hold comments, which the rewrite would lose.
Result<std::vector<Replacement>, std::string> relaunch(std::string_view text,
                                                      const std::vector<JsonMemberSpan>& spans,
                                                      std::vector<std::string> path,
                                                      const ServerLaunch& launch)
{
  path.push_back("command");
  const JsonMemberSpan* command = span_at(spans, path);
  path.back() = "args";
  const JsonMemberSpan* args = span_at(spans, path);
  if (command == nullptr) {
    return std::string("fsguard could not find its command in the text");
  }
  std::vector<Replacement> replacements{
    {command->value_begin, command->value_end, json_string(launch.command)}};
  if (args != nullptr) {
    const auto old = text.substr(args->value_begin, args->value_end - args->value_begin);
    if (has_comment(old)) {
      return std::string("its args hold comments, which rewriting them would lose");
    }
    replacements.push_back({args->value_begin, args->value_end, json_array_like(launch.args, old)});
    return replacements;
  }
  // No args: a new member after command, on a line of its own if command has one.
  const auto previous_newline = text.rfind('\n', command->key_begin);
  const std::size_t line_begin =
    previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
  const auto before_key = text.substr(line_begin, command->key_begin - line_begin);
  const bool own_line = before_key.find_first_not_of(" \t") == std::string_view::npos;
  const std::string newline = text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  const auto colon = text.substr(command->key_end, command->value_begin - command->key_end);
  const std::string lead = own_line ? newline + std::string(before_key) : std::string(" ");
  replacements.push_back({command->value_end, command->value_end,
                          "," + lead + "\"args\"" + std::string(colon)
                            + json_array_like(launch.args, "[]")});
  return replacements;
}

// One list of MCP servers in a config: where it is, and the object itself.
struct ServerList {
  std::string label;
  std::vector<std::string> path;
  ordered_json* servers;
};

// The lists of servers in `root`; an error for one that is not an object
// but names a filesystem server.
Result<std::vector<ServerList>, std::string> server_lists(ordered_json& root)
{
  std::vector<ServerList> lists;
  std::string problem;
  auto take = [&](ordered_json& parent, const std::vector<std::string>& path,
                  const std::string& label) {
    const auto found = parent.find(path.back());
    if (found == parent.end()) {
      return;
    }
    if (found->is_object()) {
      lists.push_back({label, path, &*found});
    } else if (problem.empty() && names_filesystem_server(found->dump())) {
      problem = "\"" + label + "\" names a filesystem server but is not an object";
    }
  };
  take(root, {"mcpServers"}, "mcpServers");
  take(root, {"servers"}, "servers");
  if (const auto mcp = root.find("mcp"); mcp != root.end() && mcp->is_object()) {
    take(*mcp, {"mcp", "servers"}, "mcp.servers");
  }
  // Claude Code keeps the servers of its "local" scope per project.
  if (const auto projects = root.find("projects");
      projects != root.end() && projects->is_object()) {
    for (auto& [directory, project] : projects->items()) {
      if (project.is_object()) {
        take(project, {"projects", directory, "mcpServers"},
             "projects[" + ordered_json(directory).dump() + "].mcpServers");
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

std::string launch_note(const ServerLaunch& launch)
{
  const auto program = base_name(launch.command);
  if (program != "docker" && program != "podman" && program != "nerdctl") {
    return "";
  }
  return "runs the server in a container: where the container sees your files under other "
         "paths, fsguard refuses their writes until its config's path_map maps them "
         "(docs/clients.md#servers-in-containers); fsguard --check-setup with the entry's new "
         "args tells";
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
  // Comments and trailing commas are read, and kept: only the values that
  // change are written, every other byte stays.
  const auto spans = json_member_spans(text);
  if (!spans) {
    return "it is not valid JSON (" + spans.error() + ")";
  }
  const std::string_view plain = spans->plain;
  const auto json = plain.starts_with(k_bom) ? plain.substr(k_bom.size()) : plain;
  ordered_json root = ordered_json::parse(json, nullptr, false);
  if (root.is_discarded()) {
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
  std::vector<std::pair<std::vector<std::string>, ServerLaunch>> changes;
  for (const auto& list : *lists) {
    for (auto& [name, entry] : list.servers->items()) {
      const std::string label = list.label + "." + name;
      std::vector<std::string> path = list.path;
      path.push_back(name);
      const auto launch = launch_of(entry);
      if (rewrite == Rewrite::undo) {
        if (const auto inner = launch ? unguarded_launch(*launch, fsguard_path) : std::nullopt) {
          changes.emplace_back(path, *inner);
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
        changes.emplace_back(path, guarded_launch(*launch, fsguard_path));
        adopted.adopted.push_back(label);
        if (const auto note = launch_note(*launch); !note.empty()) {
          adopted.notes.push_back(label + " " + note);
        }
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
  if (changes.empty()) {
    return adopted;
  }
  std::vector<Replacement> replacements;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    auto entry = relaunch(text, spans->members, changes[i].first, changes[i].second);
    if (!entry) {
      return adopted.adopted[i] + ": " + entry.error();
    }
    replacements.insert(replacements.end(), entry->begin(), entry->end());
  }
  apply_replacements(adopted.text, std::move(replacements));
  return adopted;
}

} // namespace fsguard
