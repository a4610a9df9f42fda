// fsguard's settings: defaults, the JSON config file, the environment and
// the command line, merged in that order of increasing precedence.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/path_map.hpp"
#include "proxy/guard/guard_settings.hpp"
#include "proxy/app/log.hpp"
#include "tracker/result.hpp"
#include "tracker/tool_map.hpp"

namespace fsguard {

inline constexpr std::size_t k_default_max_line_bytes = 64 * 1024 * 1024;

struct Config {
  Mode mode = Mode::enforce;
  LogLevel log_level = LogLevel::warn;
  PartialReadAllowsOverwrite partial_read_allows_write = PartialReadAllowsOverwrite::no;
  std::size_t max_line_bytes = k_default_max_line_bytes;
  // "auto" (chosen from the server's initialize result) or a built-in
  // profile's name; `tools`, if set, replaces the profile's tool map.
  std::string profile = "auto";
  std::optional<ToolMap> tools;
  // Directories every file tool is confined to (canonical); empty: no limit.
  std::vector<std::string> confine_to;
  // How the server's paths name fsguard's files (server directory -> local).
  PathMap path_map;
  // Where each key's value came from: "default", "file <path>",
  // "environment FSGUARD_MODE" or "flag --mode" (for --print-config).
  std::map<std::string, std::string> sources;
  // How long a guarded call may go unanswered before it stops holding back
  // the calls behind it (its files then need a fresh read).
  std::chrono::milliseconds call_timeout = k_default_call_timeout;
  // Characters of a tool result a client shows the model, by clientInfo.name,
  // over the built-in table.
  std::map<std::string, std::size_t, std::less<>> client_result_limits;
  StaleEdit stale_edit = StaleEdit::rebase;
  StaleWrite stale_write = StaleWrite::veto;
  Override override_mode = Override::never;
  Verify verify = Verify::local; // fixed at start: a reload keeps it
  IdentityCheck identity_check = IdentityCheck::automatic;
  std::chrono::seconds override_timeout = k_default_override_timeout;
  std::chrono::seconds read_ttl{0}; // 0: reads never expire
  KeptTextBudget kept_texts; // the texts the agent saw whole, kept for diffs
  DiffBounds diff_bounds;    // how much of a diff a veto or a note shows
  std::string file;      // the config file in force, if any
  std::string audit_log; // JSONL audit log path; empty: none
  // Where the records are saved for the next session; empty: nowhere.
  std::string state_file;
  // The SQLite ledger of the writes of every session sharing it; empty: none.
  std::string shared_ledger;
};

// The part of `config` the guard decides with.
GuardSettings guard_settings(const Config& config);

// Everything the effective config is made from, kept so that a changed
// config file can be merged again with the same environment and flags.
struct ConfigInputs {
  std::optional<std::string> file;
  std::optional<std::string> environment_mode;
  std::optional<Mode> flag_mode;
  std::optional<LogLevel> flag_log_level;
  std::string file_named_by; // "--config" or "$FSGUARD_CONFIG", for messages
};

// The effective `config` as JSON, each key with its value and source.
std::string describe_config(const Config& config);

struct Profile;

// The built-in `profile` as JSON: each guarded tool's spec, and each tool
// passed through unguarded with the reason.
std::string describe_profile(const Profile& profile);

// Parses the JSON config `text` (from `origin`, for messages) over the
// defaults. Unknown keys are errors, so a typo never silently does nothing.
Result<Config, std::string> parse_config(std::string_view text, std::string_view origin);

// The config key `key` is most likely a typo of (edit distance, case
// ignored), if one is near enough; `key` itself if it is one.
std::optional<std::string_view> nearest_config_key(std::string_view key);

// Reads and parses the config file at `path`; an error that it cannot be
// read says why, and `named_by` (an option or variable; "": not said).
Result<Config, std::string> load_config_file(const std::string& path,
                                             std::string_view named_by = "");

// The effective config: defaults, then the file (if any), then the
// environment ($FSGUARD_MODE), then the command-line flags.
Result<Config, std::string> load_effective_config(const ConfigInputs& inputs);

} // namespace fsguard
