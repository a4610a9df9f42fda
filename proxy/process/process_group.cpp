#include "proxy/process/process_group.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>

#include <filesystem>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "tracker/server_runners.hpp"

namespace fsguard {

namespace {

// What the link /proc/<pid>/<name> points at; nothing if it cannot be read.
std::optional<std::string> proc_link(const std::string& pid, const char* name)
{
  std::error_code error;
  auto target = std::filesystem::read_symlink("/proc/" + pid + "/" + name, error);
  if (error) {
    return std::nullopt;
  }
  return target.string();
}

// The first bytes of the file at `path` (a /proc file: read in one call);
// "" if it cannot be read.
std::string first_bytes(const std::string& path)
{
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) {
    return {};
  }
  std::array<char, 512> buffer{};
  const ssize_t count = ::read(descriptor, buffer.data(), buffer.size());
  ::close(descriptor);
  return count > 0 ? std::string(buffer.data(), static_cast<std::size_t>(count)) : std::string();
}

} // namespace

namespace {

struct ProcessEntry {
  GroupMember member;
  pid_t parent = 0;
  pid_t group = 0;
};

// Every process /proc shows.
std::vector<ProcessEntry> all_processes()
{
  std::vector<ProcessEntry> processes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    // /proc/<pid>/stat is "pid (comm) state ppid pgrp ...", and comm may
    // hold spaces and parentheses.
    const std::string stat = first_bytes("/proc/" + name + "/stat");
    const auto open = stat.find('(');
    const auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      continue;
    }
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long parent = 0;
    long process_group = 0;
    if (fields >> state >> parent >> process_group) {
      processes.push_back(ProcessEntry{
        GroupMember{static_cast<pid_t>(std::stol(name)), stat.substr(open + 1, close - open - 1),
                    state},
        static_cast<pid_t>(parent), static_cast<pid_t>(process_group)});
    }
  }
  return processes;
}

} // namespace

std::vector<GroupMember> group_members(pid_t group)
{
  std::vector<GroupMember> members;
  for (auto& process : all_processes()) {
    if (process.group == group) {
      members.push_back(std::move(process.member));
    }
  }
  return members;
}

std::vector<GroupMember> upstream_processes(pid_t group)
{
  const std::vector<ProcessEntry> processes = all_processes();
  std::unordered_map<pid_t, pid_t> parents;
  for (const auto& process : processes) {
    parents[process.member.pid] = process.parent;
  }
  const auto descends = [&](pid_t pid) {
    // Bounded: a chain of parents cannot be longer than the table.
    for (std::size_t step = 0; step <= parents.size() && pid > 1; ++step) {
      if (pid == group) {
        return true;
      }
      const auto found = parents.find(pid);
      if (found == parents.end()) {
        return false;
      }
      pid = found->second;
    }
    return false;
  };
  std::vector<GroupMember> members;
  for (const auto& process : processes) {
    if (process.group == group || descends(process.member.pid)) {
      members.push_back(process.member);
    }
  }
  return members;
}

std::optional<std::string> group_runs_elsewhere(pid_t group)
{
  const auto own_namespace = proc_link("self", "ns/mnt");
  const auto own_root = proc_link("self", "root");
  for (const auto& member : upstream_processes(group)) {
    if (member.state == 'Z' || member.state == 'X') {
      continue;
    }
    const std::string process =
      "the upstream's process " + std::to_string(member.pid) + " (" + member.name + ")";
    if (auto runner = elsewhere_runner(member.name)) {
      return process + " is " + *runner;
    }
    const std::string pid = std::to_string(member.pid);
    const auto mount_namespace = proc_link(pid, "ns/mnt");
    const auto root = proc_link(pid, "root");
    if (!mount_namespace || !root) {
      if (::kill(member.pid, 0) != 0) {
        continue; // it has exited meanwhile
      }
      return "fsguard cannot read " + process + "'s mount namespace";
    }
    if (mount_namespace != own_namespace) {
      return process + " runs in another mount namespace";
    }
    if (root != own_root) {
      return process + " runs under another root directory (" + *root + ")";
    }
  }
  return std::nullopt;
}

} // namespace fsguard
