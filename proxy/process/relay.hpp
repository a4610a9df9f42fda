// The session: relays JSON-RPC lines between the client (fsguard's own
// stdin/stdout) and the upstream server, through the guard.
#pragma once

#include <string>
#include <vector>

#include "proxy/app/config.hpp"
#include "proxy/app/log.hpp"

namespace fsguard {

// Runs one session with the upstream `command` under `config` (made from
// `inputs`, which are merged again whenever the config file changes) until
// the client closes stdin (or a signal asks fsguard to stop) and the
// upstream has exited. Returns fsguard's exit status: the upstream's
// status, 128+signal if it was killed, 1 if it could not be started.
int run_session(const ConfigInputs& inputs, const Config& config,
                const std::vector<std::string>& command, Log& log);

} // namespace fsguard
