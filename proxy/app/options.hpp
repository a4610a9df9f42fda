// The command line: `fsguard [options] -- <upstream command> [args...]`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/app/config.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// What `fsguard adopt` is asked to do.
enum class AdoptAction {
  show,  // show the change as a diff, change nothing
  apply, // --apply: rewrite the configs, keeping a backup beside each
  undo,  // --undo: put each backup back
};

// `fsguard adopt [--apply | --undo] [FILE...]`: no FILE means the client
// configs fsguard knows where to find.
struct AdoptRequest {
  AdoptAction action = AdoptAction::show;
  std::vector<std::string> files;
};

struct Options {
  std::optional<std::string> config_path;
  std::optional<Mode> mode;
  std::optional<LogLevel> log_level;
  bool help = false;
  bool version = false;
  std::optional<std::string> check_config; // validate this file and exit
  bool print_config = false;               // print the effective config and exit
  bool check_setup = false;                // tell whether fsguard sees the upstream's directories
  std::optional<std::string> print_profile; // print this built-in profile and exit
  std::vector<std::string> upstream; // empty: the default upstream
  std::optional<AdoptRequest> adopt;  // `fsguard adopt ...`: nothing else is read
};

// Parses `arguments` (without argv[0]). Errors are usage messages.
Result<Options, std::string> parse_options(const std::vector<std::string>& arguments);

// The --help text.
std::string usage_text();

// The --version text.
std::string version_text();

} // namespace fsguard
