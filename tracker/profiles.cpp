#include "tracker/profiles.hpp"

#include "tracker/server_filesystem.hpp"

namespace fsguard {

namespace {

constexpr const char* k_names_no_file = "lists the allowed directories; names no file";

ToolSpec spec(ToolRole role, std::string path_argument = "path")
{
  ToolSpec tool;
  tool.role = role;
  tool.path_argument = std::move(path_argument);
  return tool;
}

void add_others(ToolMap& tools, std::initializer_list<const char*> names)
{
  for (const char* name : names) {
    tools[name] = spec(ToolRole::other);
  }
}

// read_multiple_files, write_file, edit_file and move_file as the reference
// server and its forks define them.
void add_reference_file_tools(ToolMap& tools)
{
  ToolSpec many = spec(ToolRole::read, "paths");
  many.path_is_list = true;
  tools["read_multiple_files"] = many;
  tools["write_file"] = spec(ToolRole::write);
  ToolSpec edit = spec(ToolRole::edit);
  edit.dry_run_argument = "dryRun";
  // The fork's applyFileEdits calls String.replace with newText itself.
  edit.edit_semantics = EditSemantics::first_exact_match_dollar_patterns;
  tools["edit_file"] = edit;
  ToolSpec move = spec(ToolRole::move, "source");
  move.destination_argument = "destination";
  tools["move_file"] = move;
}

// @agent-infra/mcp-server-filesystem: a fork of the older reference server.
// It resolves relative paths against its working directory.
Profile agent_infra_filesystem()
{
  Profile profile{"agent-infra-filesystem", {}, PathRules::working_directory};
  ToolMap& tools = profile.tools;
  tools["read_file"] = spec(ToolRole::read);
  add_reference_file_tools(tools);
  add_others(tools, {"create_directory", "list_directory", "directory_tree", "search_files",
                     "get_file_info"});
  profile.unguarded = {{"list_allowed_directories", k_names_no_file}};
  // Its get_file_info prints fs.stat's fields as the reference server
  // does: "ENOENT: …", or "Parent directory does not exist: /p/d" for a
  // missing parent.
  profile.file_info = FileInfoFormat::date_text;
  return profile;
}

// @wonderwhy-er/desktop-commander. read_file shows at most `length` lines
// (1000 by default) and says so in a status line; only a read whose status
// says it started at the top, showed as many lines as the file has, and
// left nothing out is whole. (It counts the total by "\n" but reads with
// Node's readline, which also ends a line at a bare "\r": a log with
// progress bars shows "1000 lines (total: 600 lines, 0 remaining)" for its
// first half.) Its read_multiple_files has another format and is not
// counted as a read.
Profile desktop_commander()
{
  Profile profile{"desktop-commander", {}, PathRules::absolute_only};
  ToolMap& tools = profile.tools;
  ToolSpec read = spec(ToolRole::read);
  read.whole_if_status =
    R"(\[Reading (0|[1-9][0-9]*) lines from start \(total: \1 lines, 0 remaining\)\])";
  read.view = ReadView::utf8_lines;
  tools["read_file"] = read;
  ToolSpec write = spec(ToolRole::write);
  write.role_argument = "mode";
  write.role_by_value = {{"append", ToolRole::edit}};
  // Its file handlers (dist/utils/files/factory.js) convert what is written
  // to these: the bytes on disk are never the content sent.
  write.converted_extensions = {".docx", ".pdf", ".xlsx", ".xls", ".xlsm", ".png", ".jpg",
                                ".jpeg", ".gif", ".webp", ".bmp", ".svg"};
  tools["write_file"] = write;
  tools["edit_block"] = spec(ToolRole::edit, "file_path");
  // write_pdf renders its content (Markdown, or page operations on `path`)
  // and writes the PDF with a plain file write to outputPath, or over path
  // when outputPath is missing or "".
  ToolSpec pdf = spec(ToolRole::write, "outputPath");
  pdf.fallback_path_argument = "path";
  pdf.content_is_file = false;
  tools["write_pdf"] = pdf;
  ToolSpec move = spec(ToolRole::move, "source");
  move.destination_argument = "destination";
  tools["move_file"] = move;
  add_others(tools, {"create_directory", "list_directory", "get_file_info"});
  // Its get_file_info writes each Date with JSON.stringify (to the
  // millisecond), and errors as "Error: ENOENT: …", a missing parent too
  // (dist/handlers/filesystem-handlers.js, handleGetFileInfo).
  profile.file_info = FileInfoFormat::iso_json;
  constexpr const char* k_shell =
    "runs any shell command, which can write any file; fsguard cannot see which files a "
    "command touches";
  constexpr const char* k_search = "searches file names and content; writes nothing";
  constexpr const char* k_processes = "reads or lists terminal sessions; names no file";
  constexpr const char* k_own = "reports desktop-commander's own state; names no file";
  profile.unguarded = {
    {"start_process", k_shell},
    {"interact_with_process", std::string("sends input to a running process (a shell, a REPL), "
                                          "which can write any file; fsguard cannot see which "
                                          "files it touches")},
    {"read_process_output", k_processes},
    {"list_sessions", k_processes},
    {"list_processes", k_processes},
    {"force_terminate", "ends a terminal session; names no file"},
    {"kill_process", "ends a process; names no file"},
    {"read_multiple_files", "shows several files in a layout fsguard does not split, so its "
                            "reads do not count; writes nothing"},
    {"start_search", k_search},
    {"get_more_search_results", k_search},
    {"stop_search", k_search},
    {"list_searches", k_search},
    {"get_config", k_own},
    {"set_config_value", "changes one setting in desktop-commander's own config file (under "
                         "$HOME/.claude-server-commander), which the server reads and rewrites "
                         "itself; it names no file of the agent's"},
    {"get_usage_stats", k_own},
    {"get_recent_tool_calls", k_own},
    {"get_prompts", k_own},
    {"give_feedback_to_desktop_commander", "opens desktop-commander's feedback form; names no "
                                           "file"},
  };
  return profile;
}

} // namespace

ToolMap server_filesystem_tools()
{
  ToolMap tools;
  ToolSpec text_read = spec(ToolRole::read);
  text_read.partial_if_set = {"head", "tail"};
  text_read.text_is_file_bytes = true; // fs.readFile(path, "utf-8"), returned as it is
  tools["read_text_file"] = text_read;
  tools["read_file"] = text_read; // the deprecated alias
  ToolSpec media = spec(ToolRole::read);
  media.view = ReadView::bytes; // base64: every byte as it is
  tools["read_media_file"] = media;
  add_reference_file_tools(tools);
  // Its edit_file answers with the unified diff it applied (measured in
  // docs: upstream facts), so fsguard can tell what the edit left.
  tools["edit_file"].result_is_diff = true;
  // It replaces through a function, so "$" in newText is plain text.
  tools["edit_file"].edit_semantics = EditSemantics::first_exact_match;
  add_others(tools, {"create_directory", "list_directory", "list_directory_with_sizes",
                     "directory_tree", "search_files", "get_file_info"});
  return tools;
}

std::optional<Profile> profile_named(std::string_view name)
{
  if (name == "server-filesystem") {
    return Profile{"server-filesystem", server_filesystem_tools(), PathRules::server_filesystem,
                   {{"list_allowed_directories", k_names_no_file}}, FileInfoFormat::date_text};
  }
  if (name == "agent-infra-filesystem") {
    return agent_infra_filesystem();
  }
  if (name == "desktop-commander") {
    return desktop_commander();
  }
  return std::nullopt;
}

std::optional<Profile> profile_for_server(std::string_view server_name,
                                          std::string_view server_version)
{
  if (server_name == k_server_filesystem_name) {
    // The fork keeps the reference server's name; its versions start at 1,
    // the reference server's at 0.
    const bool fork = !server_version.empty() && server_version.front() >= '1'
                      && server_version.front() <= '9';
    return profile_named(fork ? "agent-infra-filesystem" : "server-filesystem");
  }
  if (server_name == "desktop-commander") {
    return profile_named("desktop-commander");
  }
  return std::nullopt;
}

bool reads_file_info(const Profile& profile, const ToolMap& tools)
{
  return profile.file_info != FileInfoFormat::none && tools.contains("get_file_info");
}

std::string profile_names()
{
  return "server-filesystem, agent-infra-filesystem, desktop-commander";
}

} // namespace fsguard
