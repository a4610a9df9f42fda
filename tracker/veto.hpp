// Why fsguard refuses a write, as a code for programs and a text for agents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/file_state.hpp"

namespace fsguard {

enum class VetoCode {
  not_read,            // the file exists and was never read in this session
  partial_read,        // only a head/tail read, and the tool overwrites it all
  changed,             // content differs from the last read or own write
  changed_during_read, // the file changed while the read was in flight
  unresolved_path,     // fsguard cannot tell which file the path names
  cannot_inspect,      // the file exists but cannot be stat'ed or hashed
  outside_confinement, // the path lies outside the configured confine_to
  unknown_outcome,     // an earlier write through fsguard was cancelled or never answered
  lossy_read,          // not valid UTF-8: written as text, bytes would be lost
  not_visible,         // below a server directory fsguard cannot see on its side
  expired,             // the last read is older than read_ttl_s
};

// The code as it appears in `_meta["fsguard/veto"].code`, e.g. "not_read".
std::string_view to_string(VetoCode code);

// A size fsguard does not know: of a write of the agent's that another
// writer replaced at once, when only its hash was taken.
inline constexpr std::int64_t k_unknown_size = -1;

// A refused write. `path` is the canonical path, or the raw argument when it
// could not be resolved. The numbers are filled in for VetoCode::changed.
struct Veto {
  VetoCode code = VetoCode::not_read;
  std::string path;
  std::string reason;            // unresolved_path / cannot_inspect: why;
                                 // not_visible: the server's directory;
                                 // outside_confinement: the allowed directories;
                                 // partial_read: how the read was cut, if not head/tail
  std::int64_t seen_size = k_unknown_size; // size when last read or written by the agent
  std::int64_t current_size = k_unknown_size;
  std::int64_t seen_at_ns = 0;   // when the agent last read or wrote it
  std::int64_t current_mtime_ns = 0;
  // For VetoCode::changed, what fsguard could show of the change:
  std::optional<ContentHash> seen_hash;    // the content the agent last saw
  std::optional<ContentHash> current_hash; // the content on disk now
  std::string cause;          // who changed it: "outside fsguard", or the agent's own write
  // cannot_inspect: what to do, where it is not to make the file readable
  // and read it (the server did not answer about it, or it kept changing).
  std::string remedy;
  std::string diff;           // unified diff from what the agent saw to the disk; "" if none
  bool diff_complete = false; // `diff` shows every changed line
  bool counts_as_read = false; // `diff` and a whole earlier read show the agent the whole file
  // counts_as_read, and an earlier refusal showed the agent this same diff,
  // which this call was sent before the agent could take in.
  bool repeats_shown_diff = false;
  std::string not_rebased;    // why a stale edit was not carried over to the current content
  std::string conflict;       // a stale write's merge: the conflicting hunks
  std::string not_merged;     // why a stale write was not merged (not a conflict)
  // The write would undo a change the agent knows only from fsguard's own
  // text (a veto's diff, a note), and may have been written before it saw it.
  bool undoes_shown_change = false;
  // expired: how long ago the agent last read or wrote it, and the limit.
  std::int64_t age_s = 0;
  std::int64_t ttl_s = 0;
  // The person was to be asked to allow the write (override: ask) and it
  // did not go ahead: what the client answered, or that no answer came, in
  // whole sentences for the agent; "" when not asked.
  std::string override_outcome;
  // override is "ask", but the client cannot ask the person (no MCP
  // elicitation): the text says so.
  bool person_unreachable = false;
};

// The names a server gives its file tools, for texts that tell the agent
// what to call (server-filesystem's by default).
struct ToolNames {
  std::string read = "read_text_file";              // reads one file as text
  std::string read_whole = "without head or tail";  // how that read shows the whole file
  std::string read_bytes = "read_media_file";       // shows exact bytes; "" if none
  std::string write = "write_file";
  std::string edit = "edit_file";
};

// The text the agent sees for a refused `tool` call: it names the file, says
// what happened, and gives the one way to recover, with the tools `names`.
std::string veto_text(std::string_view tool, const Veto& veto, const ToolNames& names = {});

// `diff` in a Markdown code block whose fence is longer than any run of
// backticks inside it.
std::string fenced_diff(std::string_view diff);

} // namespace fsguard
