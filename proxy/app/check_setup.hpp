// fsguard --check-setup: starts the upstream, asks for its allowed
// directories, and tells for each whether fsguard sees it (where, and
// whether it is the same directory), then exits.
#pragma once

#include <string>
#include <vector>

#include "proxy/app/config.hpp"
#include "proxy/app/log.hpp"

namespace fsguard {

// Runs the check against `command` under `config`; prints the report on
// stdout. Returns 0 when fsguard sees every directory, 1 otherwise.
int check_setup(const Config& config, const std::vector<std::string>& command, Log& log);

} // namespace fsguard
