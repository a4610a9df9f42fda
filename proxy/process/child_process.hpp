// The upstream server as a child process: its own process group (so npx's
// grandchildren can be signalled together), killed if fsguard dies, with
// pipes for stdin, stdout and stderr (relayed to fsguard's stderr).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/process.hpp>

#include "proxy/process/executor.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// fsguard's ends of the pipes are descriptors rather than Asio pipes: only
// descriptors offer non-blocking reads and writes that return at once and a
// wait for readiness, which the relay uses to skip a pass through the event
// loop when bytes can move right away.
struct Upstream {
  boost::process::v2::process process;
  Descriptor input;  // the upstream's stdin
  Descriptor output; // the upstream's stdout
  Descriptor errors; // the upstream's stderr
};

// Starts `command` (argv; the program is looked up in PATH unless it holds a
// '/'). Errors are messages naming the command and the reason.
Result<Upstream, std::string> start_upstream(boost::asio::io_context& context,
                                             const std::vector<std::string>& command);

// Sends `signal_number` to the upstream's whole process group.
void signal_upstream_group(const Upstream& upstream, int signal_number);

// True while a process of the upstream's process group is still running.
// Zombies do not count: a group whose members have exited but were not yet
// reaped (their parent is gone, or PID 1 reaps slowly) has nothing to stop.
bool upstream_group_alive(const Upstream& upstream);

// Why the upstream may see other files than fsguard under the same paths:
// its `command` starts with a container runtime, a sandbox or a remote
// shell (tracker/server_runners.hpp), or a process of its group is one or
// runs in another mount view (process_group.hpp); nothing when neither.
std::optional<std::string> upstream_runs_elsewhere(const Upstream& upstream,
                                                   const std::vector<std::string>& command);

// The command fsguard runs when none is given: the server-filesystem copy
// next to the build (installed by scripts/setup.sh) on the current
// directory, else the pinned package through npx.
std::vector<std::string> default_upstream_command();

} // namespace fsguard
