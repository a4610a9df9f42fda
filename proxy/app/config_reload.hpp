// Hot reload: the config file is watched, and a changed file is merged
// again with the same environment and flags.
#pragma once

#include "proxy/process/session.hpp"

namespace fsguard {

// Applies a changed config file to `session`, or keeps the last good one.
void reload_config(Session& session);

// Watches the session's config file (if any) and reloads it on change.
Task<void> watch_config(Session& session);

} // namespace fsguard
