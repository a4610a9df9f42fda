#include "proxy/process/child_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/stdio.hpp>

#include "proxy/process/pipe_size.hpp"
#include "proxy/process/process_group.hpp"
#include "tracker/server_runners.hpp"

namespace fsguard {

namespace bp = boost::process::v2;

namespace {

// Runs in the child between fork and exec.
struct ChildSetup {
  pid_t parent = 0;

  template <class Launcher>
  boost::system::error_code on_exec_setup(Launcher&, const bp::filesystem::path&,
                                          const char* const*)
  {
    // Own process group: fsguard signals the upstream and its grandchildren
    // together, and a terminal's Ctrl-C reaches fsguard first.
    ::setpgid(0, 0);
    // Die with fsguard, even if fsguard is killed with SIGKILL.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127); // fsguard died before prctl took effect
    }
    // fsguard ignores SIGPIPE; the upstream gets the default back.
    ::signal(SIGPIPE, SIG_DFL);
    return {};
  }
};

std::filesystem::path own_executable_directory()
{
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self.parent_path();
}

} // namespace

Result<Upstream, std::string> start_upstream(boost::asio::io_context& context,
                                             const std::vector<std::string>& command)
{
  if (command.empty() || command.front().empty()) {
    return std::string("no upstream command given");
  }
  const std::string& program = command.front();
  bp::filesystem::path executable = program;
  if (program.find('/') == std::string::npos) {
    executable = bp::environment::find_executable(program);
    if (executable.empty()) {
      return "cannot start the upstream: \"" + program + "\" was not found in PATH";
    }
  }
  boost::asio::writable_pipe input(context);
  boost::asio::readable_pipe output(context);
  boost::asio::readable_pipe errors(context);
  const std::vector<std::string> arguments(command.begin() + 1, command.end());
  boost::system::error_code error;
  // The executor overload: in Boost 1.81 the io_context overload ignores `error`
  // and throws.
  auto process = bp::default_process_launcher()(
    context.get_executor(), error, executable, arguments,
    bp::process_stdio{input, output, errors}, ChildSetup{::getpid()});
  if (error) {
    return "cannot start the upstream \"" + program + "\": " + error.message();
  }
  widen_pipe(input.native_handle());
  widen_pipe(output.native_handle());
  Upstream upstream{std::move(process),
                    Descriptor(context, input.release()),
                    Descriptor(context, output.release()),
                    Descriptor(context, errors.release())};
  return upstream;
}

void signal_upstream_group(const Upstream& upstream, int signal_number)
{
  const pid_t group = upstream.process.id();
  if (group > 0) {
    ::kill(-group, signal_number);
  }
}

bool upstream_group_alive(const Upstream& upstream)
{
  const pid_t group = upstream.process.id();
  if (group <= 0 || (::kill(-group, 0) != 0 && errno != EPERM)) {
    return false;
  }
  // Some member exists; look for one that is not a zombie.
  for (const auto& member : group_members(group)) {
    if (member.state != 'Z' && member.state != 'X') {
      return true;
    }
  }
  return false;
}

std::optional<std::string> upstream_runs_elsewhere(const Upstream& upstream,
                                                   const std::vector<std::string>& command)
{
  if (auto runner = command_runs_elsewhere(command)) {
    return runner;
  }
  return group_runs_elsewhere(upstream.process.id());
}

std::vector<std::string> default_upstream_command()
{
  const auto server = own_executable_directory()
                      / "../tests/integration/node_modules/@modelcontextprotocol/"
                        "server-filesystem/dist/index.js";
  std::error_code error;
  if (std::filesystem::exists(server, error)) {
    return {"node", std::filesystem::weakly_canonical(server, error).string(), "."};
  }
  return {"npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "."};
}

} // namespace fsguard
