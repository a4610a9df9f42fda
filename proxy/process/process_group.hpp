// The upstream's processes, as /proc shows them, and whether any of them
// runs where fsguard's paths may not be the server's.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace fsguard {

struct ProcessInfo {
  pid_t pid = 0;
  std::string name; // /proc/<pid>/comm: at most 15 bytes of the program's name
  char state = 0;   // 'R', 'S', ..., 'Z' for a zombie
};

// The processes whose process group is `group`.
std::vector<ProcessInfo> group_members(pid_t group);

// The upstream's processes: those of its process group `group`, and those
// descended from its leader (pid `group`) that left it (setsid, a sudo
// with a terminal of its own). One whose parent exits at once is not
// among them, but then the leader has exited too, and the session ends.
std::vector<ProcessInfo> upstream_processes(pid_t group);

// Why the upstream may see other files than fsguard under the same paths:
// one of its processes (upstream_processes()) is a container runtime, a
// sandbox or a remote shell (tracker/server_runners.hpp), or runs in
// another mount namespace or under another root than fsguard, or fsguard
// cannot tell which; nothing when every live one shares fsguard's view.
std::optional<std::string> group_runs_elsewhere(pid_t group);

} // namespace fsguard
