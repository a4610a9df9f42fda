// Which tools of an upstream server read files, which write them, and which
// arguments name the files: the server's profile, as data.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracker/result.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

enum class ToolRole {
  read,  // shows the agent file content
  write, // replaces a file's whole content
  edit,  // changes part of a file's content
  move,  // renames a file
  other, // names files but cannot lose content (listings, mkdir): only
         // confinement applies
};

// How an edit tool applies its {oldText, newText} edits, as far as fsguard
// can reproduce it: a stale edit is carried over to a file's current
// content (rebased) only when it can.
enum class EditSemantics {
  unknown, // fsguard cannot reproduce it
  // server-filesystem's edit_file: CRLF becomes LF in the file and in the
  // edits, and each edit in turn replaces the first exact match of oldText
  // (only when there is none does it match lines ignoring white space).
  first_exact_match,
  // The same, except that newText goes through JavaScript's "$" patterns
  // (String.replace with a string, as @agent-infra's fork does): edits
  // whose newText holds a "$" are not reproduced.
  first_exact_match_dollar_patterns,
};

struct ToolSpec {
  ToolRole role = ToolRole::read;
  std::string path_argument = "path";       // "source" for a move
  bool path_is_list = false;                // read_multiple_files' "paths"
  std::vector<std::string> partial_if_set;  // e.g. head, tail
  ReadView view = ReadView::utf8_text;      // how a read shows the file
  // A whole read's text is the file's bytes exactly wherever it shows no
  // U+FFFD (Node's readFile as UTF-8: server-filesystem), so its answer may
  // stand for the file's hash. Only built-in profiles set it.
  bool text_is_file_bytes = false;
  std::string dry_run_argument;             // true => the call writes nothing
  std::string destination_argument;         // a move's target
  // The argument that names the file when `path_argument` is absent, null
  // or "" (write_pdf writes to outputPath, else over path).
  std::string fallback_path_argument;
  // False when a write's "content" argument is not the bytes it writes
  // (write_pdf renders Markdown), so the file is not checked against it.
  bool content_is_file = true;
  // The read is whole only if the first line of its result text matches
  // this regular expression (a server that reports truncation in-band).
  std::string whole_if_status;
  // A write to a file with one of these extensions (lower case, with the
  // dot) stores a conversion of the content, not the content itself.
  std::vector<std::string> converted_extensions;
  // An edit whose result text is the unified diff it applied to the file
  // (with CRLF turned into LF first), as server-filesystem's edit_file.
  bool result_is_diff = false;
  // How an edit tool applies its edits (see EditSemantics).
  EditSemantics edit_semantics = EditSemantics::unknown;
  // Another role when argument `role_argument` has one of these values
  // (write_file with mode "append" edits).
  std::string role_argument;
  std::map<std::string, ToolRole> role_by_value;
};

using ToolMap = std::map<std::string, ToolSpec, std::less<>>;

// Parses a "tools" config object, e.g.
// {"read_text_file": {"role": "read", "path": "path", "partial_if_set": ["head"]}}.
Result<ToolMap, std::string> parse_tool_map(const nlohmann::json& tools);

// One path argument of a guarded call; `raw` is empty when the argument is
// missing or not a string (fsguard then cannot tell which file it names).
struct PathArgument {
  std::optional<std::string> raw;
};

// What a tools/call asks of the files, when its tool is guarded.
struct GuardedCall {
  std::string tool;
  ToolRole role = ToolRole::read;
  std::vector<PathArgument> paths; // a move: {source, destination}
  bool path_list = false;          // one response part per path (read_multiple_files)
  std::string whole_if_status;     // see ToolSpec
  bool content_is_file = true;     // see ToolSpec
  ReadExtent extent = ReadExtent::whole;
  bool content_converted = false;  // see ToolSpec::converted_extensions
  bool result_is_diff = false;     // see ToolSpec
  EditSemantics edit_semantics = EditSemantics::unknown; // see ToolSpec
  ReadView view = ReadView::utf8_text; // see ToolSpec
  bool text_is_file_bytes = false;     // see ToolSpec
};

// The names `tools` gives its file tools, for the texts that tell the agent
// what to call: the text read (read_text_file when there is one) and how it
// shows a whole file, the exact-bytes read, the write and the edit.
// server-filesystem's names stand in for roles `tools` lacks.
ToolNames tool_names(const ToolMap& tools);

// Describes the call of `tool` with `arguments` under `tools`: nothing when
// the tool is not in the map; role other when the call cannot change a file
// (a dry run), so that only confinement applies to it.
std::optional<GuardedCall> describe_call(const ToolMap& tools, std::string_view tool,
                                         const nlohmann::json& arguments);

// describe_call() of a call of `tool` with `arguments`, which `tools` maps
// to `spec`: for a caller that has looked the tool up already.
GuardedCall describe_call(const ToolSpec& spec, std::string_view tool,
                          const nlohmann::json& arguments);

// True if every call of `tool` under `tools` is described with role other
// whatever its arguments (only confinement applies to it), so that a guard
// without confinement need not describe it at all.
bool only_confined(const ToolMap& tools, std::string_view tool);

// only_confined() of a tool that the map gives `spec`.
bool only_confined(const ToolSpec& spec);

} // namespace fsguard
