// fsguard adopt: finds the MCP client configs that start a filesystem
// server, shows how fsguard would go in front of each, and with --apply
// rewrites them (keeping the original beside each as FILE.fsguard-backup);
// --undo puts the originals back. The rewriting itself is adopt_entries
// and adopt_toml; this file reads, writes and reports.
#pragma once

#include "proxy/app/log.hpp"
#include "proxy/app/options.hpp"

namespace fsguard {

// Runs `request` and prints its report on stdout. Returns 0 when every
// config was handled, 1 when one was refused or could not be read or
// written (each says why).
int run_adopt(const AdoptRequest& request, Log& log);

} // namespace fsguard
