#include "proxy/app/config_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace fsguard {

namespace asio = boost::asio;

namespace {

constexpr auto k_settle = std::chrono::milliseconds(100);

} // namespace

ConfigWatch::ConfigWatch(asio::io_context& context, int fd, std::string file)
  : m_events(context, fd), m_file(std::move(file))
{
}

Result<std::unique_ptr<ConfigWatch>, std::string> ConfigWatch::start(asio::io_context& context,
                                                                     const std::string& file)
{
  std::error_code error;
  const auto absolute = std::filesystem::absolute(file, error);
  if (error) {
    return "cannot watch " + file + ": " + error.message();
  }
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    return "cannot watch " + file + ": " + std::strerror(errno);
  }
  std::unique_ptr<ConfigWatch> watch(new ConfigWatch(context, fd, absolute.string()));
  if (auto watched = watch->watch_chain(); !watched) {
    return watched.error();
  }
  return watch;
}

Result<bool, std::string> ConfigWatch::watch_chain()
{
  namespace fs = std::filesystem;
  constexpr int k_max_links = 40; // as the kernel's ELOOP limit
  fs::path current = m_file;
  for (int hop = 0; hop <= k_max_links; ++hop) {
    const std::string directory = current.parent_path().string();
    const int watch = ::inotify_add_watch(
      m_events.native_handle(), directory.c_str(),
      IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB);
    if (watch < 0) {
      return "cannot watch " + directory + ": " + std::strerror(errno);
    }
    m_names[watch].insert(current.filename().string());
    std::error_code error;
    if (!fs::is_symlink(current, error)) {
      return true;
    }
    const fs::path target = fs::read_symlink(current, error);
    if (error) {
      return true;
    }
    current = (target.is_absolute() ? target : current.parent_path() / target).lexically_normal();
  }
  return true;
}

bool ConfigWatch::names_our_file(const char* events, std::size_t size) const
{
  for (std::size_t at = 0; at + sizeof(inotify_event) <= size;) {
    inotify_event event;
    std::memcpy(&event, events + at, sizeof event);
    const char* name = events + at + sizeof(inotify_event);
    const auto names = m_names.find(event.wd);
    if (event.len > 0 && names != m_names.end()
        && names->second.contains(std::string(name, ::strnlen(name, event.len)))) {
      return true;
    }
    at += sizeof(inotify_event) + event.len;
  }
  return false;
}

Task<bool> ConfigWatch::next_change()
{
  alignas(inotify_event) std::array<char, 8192> buffer;
  for (;;) {
    auto [error, size] = co_await m_events.async_read_some(asio::buffer(buffer), k_use);
    if (error) {
      co_return false;
    }
    if (!names_our_file(buffer.data(), size)) {
      continue;
    }
    // Editors write, rename and chmod in quick succession: let them finish.
    Timer settle(m_events.get_executor(), k_settle);
    co_await settle.async_wait(k_use);
    watch_chain(); // a link may point elsewhere now; a failure keeps the old watches
    co_return true;
  }
}

} // namespace fsguard
