// What the guard needs to know of fsguard's settings: a plain struct, so
// the guard's decisions can be tested without a config file.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/guard/log_level.hpp"
#include "proxy/guard/text_diff.hpp"
#include "tracker/kept_texts.hpp"
#include "tracker/path_map.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

enum class Mode {
  enforce, // veto blind and stale writes
  warn,    // let them through, log what would have been vetoed
  off,     // relay only
};

std::optional<Mode> parse_mode(std::string_view name);
std::string_view to_string(Mode mode);

// What becomes of an edit of a file that changed since the agent saw it.
enum class StaleEdit {
  rebase, // applied to the current content when it cannot touch the change
  veto,   // refused, with the diff of the change
};

// What becomes of a whole-file write of a file that changed since the
// agent saw it.
enum class StaleWrite {
  veto,  // refused, with the diff of the change
  merge, // merged three ways with the change; refused on a conflict
};

// Whether the person may let one vetoed write through.
enum class Override {
  never, // no: the veto stands
  ask,   // ask the person through the client (MCP elicitation) first
};

std::optional<Override> parse_override(std::string_view name);
std::string_view to_string(Override override_mode);

inline constexpr std::chrono::seconds k_default_override_timeout{30};
// How fsguard learns what a file holds before a change of it is decided.
enum class Verify {
  local,    // it stats and hashes the file itself (path_map says where)
  upstream, // it asks the upstream for the file's text with its own read
};
std::optional<Verify> parse_verify(std::string_view name);
std::string_view to_string(Verify verify);

// When fsguard asks the server about each file before a change of it
// (proxy/guard/guard_identity.cpp).
enum class IdentityCheck {
  // where fsguard's paths may not be the server's: with path_map, or an
  // upstream that runs in a container, a sandbox, another mount namespace
  // or over ssh (Guard::set_server_elsewhere)
  automatic,
  every_change, // before every change: for a setup fsguard cannot recognise
};
std::optional<IdentityCheck> parse_identity_check(std::string_view name);
std::string_view to_string(IdentityCheck check);

// Why each change's files are asked of the server before it goes, with
// `check`, `map`, and why the upstream may run elsewhere (`elsewhere`, ""
// when it runs in fsguard's view); "" when fsguard's paths are the server's.
std::string why_check_each_change(IdentityCheck check, const PathMap& map,
                                  const std::string& elsewhere);

std::optional<StaleEdit> parse_stale_edit(std::string_view name);
std::string_view to_string(StaleEdit stale_edit);
std::optional<StaleWrite> parse_stale_write(std::string_view name);
std::string_view to_string(StaleWrite stale_write);

// How long a guarded call may go unanswered before it stops holding back
// the calls behind it on the same file.
inline constexpr std::chrono::seconds k_default_call_timeout{60};

struct GuardSettings {
  Mode mode = Mode::enforce;
  LogLevel log_level = LogLevel::warn;
  PartialReadAllowsOverwrite partial_read_allows_write = PartialReadAllowsOverwrite::no;
  // "auto" (chosen from the server's initialize result) or a built-in
  // profile's name; `tools`, if set, replaces the profile's tool map.
  std::string profile = "auto";
  std::optional<ToolMap> tools;
  // Directories every file tool is confined to (canonical); empty: no limit.
  std::vector<std::string> confine_to;
  // How the server's paths name fsguard's files.
  PathMap path_map;
  std::chrono::milliseconds call_timeout = k_default_call_timeout;
  // How many characters of a tool result each client shows the model, by
  // clientInfo.name, over the built-in table (see client_limits.hpp).
  std::map<std::string, std::size_t, std::less<>> client_result_limits;
  StaleEdit stale_edit = StaleEdit::rebase;
  StaleWrite stale_write = StaleWrite::veto;
  // The memory for the texts the agent saw whole (diffs, rebases, merges).
  KeptTextBudget kept_texts;
  // How much of a diff a veto or a note shows.
  DiffBounds diff_bounds;
  Override override_mode = Override::never;
  // How long the person has to answer an override question.
  std::chrono::seconds override_timeout = k_default_override_timeout;
  // How long a read licenses changes; 0: for ever.
  std::chrono::seconds read_ttl{0};
  // Fixed for a session: the guard keeps the one it started with.
  Verify verify = Verify::local;
  // A reload may change it: it holds from the next change on.
  IdentityCheck identity_check = IdentityCheck::automatic;
};

} // namespace fsguard
