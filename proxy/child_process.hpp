// The upstream server as a child process: its own process group (so npx's
// grandchildren can be signalled together), killed if fsguard dies, with
// pipes for stdin, stdout and stderr (relayed to fsguard's stderr).
#pragma once

#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/process/v2/process.hpp>

#include "tracker/result.hpp"

namespace fsguard {

struct Upstream {
  boost::process::v2::process process;
  boost::asio::writable_pipe input;  // the upstream's stdin
  boost::asio::readable_pipe output; // the upstream's stdout
  boost::asio::readable_pipe errors; // the upstream's stderr
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

// The command fsguard runs when none is given: the server-filesystem copy
// next to the build (installed by scripts/setup.sh) on the current
// directory, else the pinned package through npx.
std::vector<std::string> default_upstream_command();

} // namespace fsguard
