#include "tracker/server_runners.hpp"

#include <array>
#include <utility>

namespace fsguard {

namespace {

constexpr std::string_view k_container = "a container runtime";
constexpr std::string_view k_sandbox = "a sandbox with mounts of its own";
constexpr std::string_view k_remote = "a remote shell";
constexpr std::string_view k_machine = "a virtual machine's shell";

constexpr auto k_runners = std::to_array<std::pair<std::string_view, std::string_view>>({
  {"docker", k_container},       {"podman", k_container},     {"nerdctl", k_container},
  {"docker-compose", k_container}, {"podman-compose", k_container}, {"devcontainer", k_container},
  {"finch", k_container},        {"ctr", k_container},        {"crictl", k_container},
  {"kubectl", k_container},      {"oc", k_container},         {"lxc", k_container},
  {"lxc-attach", k_container},   {"lxc-execute", k_container}, {"incus", k_container},
  {"systemd-nspawn", k_container}, {"machinectl", k_container}, {"distrobox", k_container},
  {"toolbox", k_container},      {"apptainer", k_container},  {"singularity", k_container},
  {"unshare", k_sandbox},        {"bwrap", k_sandbox},        {"firejail", k_sandbox},
  {"nsenter", k_sandbox},        {"flatpak-spawn", k_sandbox}, {"ssh", k_remote},
  {"limactl", k_machine},        {"vagrant", k_machine},      {"wsl", k_machine},
  {"multipass", k_machine},
});

// Launchers that run the rest of their command in the same mount view.
constexpr std::array<std::string_view, 10> k_launchers{
  "env", "sudo", "doas", "nice", "nohup", "setsid", "exec", "stdbuf", "time", "timeout"};

std::string_view base_name(std::string_view program)
{
  const auto slash = program.find_last_of('/');
  program = slash == std::string_view::npos ? program : program.substr(slash + 1);
  if (program.ends_with(".exe")) {
    program.remove_suffix(4); // wsl.exe, docker.exe from inside WSL
  }
  return program;
}

// The launchers' options that take the next word as their value
// ("sudo -u bob docker …", "timeout -s KILL 60 ssh …").
constexpr auto k_options_with_values = std::to_array<std::pair<std::string_view, std::string_view>>({
  {"sudo", "-u"}, {"sudo", "-g"}, {"sudo", "-C"}, {"sudo", "-D"}, {"sudo", "-h"}, {"sudo", "-p"},
  {"sudo", "-r"}, {"sudo", "-t"}, {"sudo", "-U"}, {"sudo", "-T"}, {"sudo", "--user"},
  {"sudo", "--group"}, {"sudo", "--chdir"}, {"doas", "-u"}, {"doas", "-C"}, {"env", "-C"},
  {"env", "-u"}, {"env", "-S"}, {"env", "--chdir"}, {"env", "--unset"}, {"timeout", "-s"},
  {"timeout", "-k"}, {"timeout", "--signal"}, {"timeout", "--kill-after"}, {"nice", "-n"},
  {"nice", "--adjustment"}, {"stdbuf", "-i"}, {"stdbuf", "-o"}, {"stdbuf", "-e"},
});

bool takes_value(std::string_view launcher, std::string_view option)
{
  for (const auto& [owner, name] : k_options_with_values) {
    if (owner == launcher && option == name) {
      return true;
    }
  }
  return false;
}

bool is_launcher(std::string_view program)
{
  for (const auto launcher : k_launchers) {
    if (program == launcher) {
      return true;
    }
  }
  return false;
}

} // namespace

std::optional<std::string> elsewhere_runner(std::string_view program)
{
  const std::string_view name = base_name(program);
  for (const auto& [runner, kind] : k_runners) {
    if (name == runner) { // every runner's name fits /proc/<pid>/comm's 15 bytes
      return std::string(runner) + ", " + std::string(kind);
    }
  }
  return std::nullopt;
}

std::optional<std::string> command_runs_elsewhere(const std::vector<std::string>& command)
{
  std::string_view launcher; // the last launcher seen; "": none yet
  bool value_next = false;     // the word is the value of the launcher's option
  for (const auto& word : command) {
    if (std::exchange(value_next, false)) {
      continue;
    }
    if (auto runner = elsewhere_runner(word)) {
      return "the upstream command runs " + *runner;
    }
    const std::string_view name = base_name(word);
    if (is_launcher(name)) {
      launcher = name;
      continue;
    }
    value_next = takes_value(launcher, word);
    const bool after_launcher = !launcher.empty();
    // A launcher's options and env's assignments come before the command
    // it runs; anything else is the command, which runs here.
    const bool option_or_assignment =
      word.starts_with("-") || (word.find('=') != std::string::npos && word.front() != '=');
    const bool number = !word.empty() && word.find_first_not_of("0123456789.smhd") == std::string::npos;
    if (!after_launcher || !(option_or_assignment || number)) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

} // namespace fsguard
