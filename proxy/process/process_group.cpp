#include "proxy/process/process_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <memory>
#include <unordered_map>

#include "tracker/server_runners.hpp"

namespace fsguard {

namespace {

struct ProcessEntry {
  ProcessInfo info;
  pid_t parent = 0;
  pid_t group = 0;
};

struct DirectoryCloser {
  void operator()(DIR* directory) const { ::closedir(directory); }
};
using Directory = std::unique_ptr<DIR, DirectoryCloser>;

// The link `path` points at; nothing if it cannot be read.
std::optional<std::string> link_target(const std::string& path)
{
  std::array<char, 256> buffer{};
  const ssize_t count = ::readlink(path.c_str(), buffer.data(), buffer.size());
  if (count < 0 || static_cast<std::size_t>(count) == buffer.size()) {
    return std::nullopt;
  }
  return std::string(buffer.data(), static_cast<std::size_t>(count));
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

std::optional<long> whole_number(std::string_view text)
{
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The process /proc/<pid>/stat describes: "pid (comm) state ppid pgrp ...",
// where comm may hold spaces and parentheses.
std::optional<ProcessEntry> read_process(pid_t pid)
{
  const std::string stat = first_bytes("/proc/" + std::to_string(pid) + "/stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open
      || close + 2 >= stat.size()) {
    return std::nullopt;
  }
  std::string_view fields = std::string_view(stat).substr(close + 2);
  std::array<std::string_view, 3> first{}; // state, ppid, pgrp
  for (auto& field : first) {
    const auto space = fields.find(' ');
    if (space == std::string_view::npos) {
      return std::nullopt;
    }
    field = fields.substr(0, space);
    fields.remove_prefix(space + 1);
  }
  const auto parent = whole_number(first[1]);
  const auto group = whole_number(first[2]);
  if (first[0].size() != 1 || !parent || !group) {
    return std::nullopt;
  }
  return ProcessEntry{ProcessInfo{pid, stat.substr(open + 1, close - open - 1), first[0][0]},
                      static_cast<pid_t>(*parent), static_cast<pid_t>(*group)};
}

// Every process /proc shows; nothing if /proc cannot be read.
std::optional<std::vector<ProcessEntry>> all_processes()
{
  const Directory proc(::opendir("/proc"));
  if (!proc) {
    return std::nullopt;
  }
  std::vector<ProcessEntry> processes;
  while (const dirent* entry = ::readdir(proc.get())) {
    if (const auto pid = whole_number(entry->d_name); pid && *pid > 0) {
      if (auto process = read_process(static_cast<pid_t>(*pid))) {
        processes.push_back(std::move(*process));
      }
    }
  }
  return processes;
}

} // namespace

std::vector<ProcessInfo> group_members(pid_t group)
{
  std::vector<ProcessInfo> members;
  for (auto& process : all_processes().value_or(std::vector<ProcessEntry>{})) {
    if (process.group == group) {
      members.push_back(std::move(process.info));
    }
  }
  return members;
}

std::vector<ProcessInfo> upstream_processes(pid_t group)
{
  const std::vector<ProcessEntry> processes = all_processes().value_or(std::vector<ProcessEntry>{});
  std::unordered_map<pid_t, pid_t> parents;
  for (const auto& process : processes) {
    parents[process.info.pid] = process.parent;
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
  std::vector<ProcessInfo> members;
  for (const auto& process : processes) {
    if (process.group == group || descends(process.info.pid)) {
      members.push_back(process.info);
    }
  }
  return members;
}

std::optional<std::string> group_runs_elsewhere(pid_t group)
{
  const auto own_namespace = link_target("/proc/self/ns/mnt");
  const auto own_root = link_target("/proc/self/root");
  if (!own_namespace || !own_root) {
    return std::string("fsguard cannot read /proc to tell where the upstream runs");
  }
  for (const auto& member : upstream_processes(group)) {
    if (member.state == 'Z' || member.state == 'X') {
      continue;
    }
    const std::string process =
      "the upstream's process " + std::to_string(member.pid) + " (" + member.name + ")";
    if (auto runner = elsewhere_runner(member.name)) {
      return process + " is " + *runner;
    }
    const std::string proc = "/proc/" + std::to_string(member.pid);
    const auto mount_namespace = link_target(proc + "/ns/mnt");
    const auto root = link_target(proc + "/root");
    if (!mount_namespace || !root) {
      if (::kill(member.pid, 0) != 0 && errno == ESRCH) {
        continue; // it has exited meanwhile (EPERM: alive, another user's)
      }
      return "fsguard cannot read " + process + "'s mount namespace (another user's process)";
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
