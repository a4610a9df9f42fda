// Programs that run a command where the paths fsguard sees may not name
// the server's files: container runtimes, sandboxes that set up their own
// mounts, and remote shells. An upstream started through one of them (or
// running one in its process group) is asked about each file before a
// change (identity_check "auto"; see proxy/guard/guard_identity.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsguard {

// What `program` (a path, a bare name, or a process's name as
// /proc/<pid>/comm shows it, cut to 15 bytes) is, if it is such a program:
// e.g. "docker, a container runtime".
std::optional<std::string> elsewhere_runner(std::string_view program);

// The runner the upstream `command` starts with, if any, looking past the
// launchers that run the rest of their command as it is (env with its
// options and assignments, sudo, doas, nice, nohup, setsid, exec, stdbuf,
// time, timeout): e.g. "the upstream command runs docker, a container runtime".
std::optional<std::string> command_runs_elsewhere(const std::vector<std::string>& command);

} // namespace fsguard
