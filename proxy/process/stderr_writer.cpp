#include "proxy/process/stderr_writer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace fsguard {

namespace {

namespace asio = boost::asio;

std::size_t lines_in(std::string_view bytes)
{
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')));
}

} // namespace

StderrWriter::StderrWriter(Executor executor, int fd, std::size_t capacity)
  : m_fd(fd), m_capacity(capacity), m_wake(executor, Timer::time_point::max())
{
  struct ::stat info{};
  if (::fstat(fd, &info) != 0) {
    return;
  }
  if (S_ISSOCK(info.st_mode)) {
    // send() with MSG_DONTWAIT never waits, whatever the descriptor's flags.
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy >= 0) {
      m_ready.emplace(executor, copy);
      m_kind = Kind::socket;
    }
    return;
  }
  if (!S_ISFIFO(info.st_mode) && !::isatty(fd)) {
    return; // a file or a device: a write ends without any reader's help
  }
  // Opened again through /proc, a pipe or terminal gets a file description
  // of its own: O_NONBLOCK on it does not reach the client, or anything else
  // that shares fsguard's stderr (libuv does the same for terminals).
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  int own = ::open(self.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (own < 0 && errno == ENXIO) {
    return; // a pipe nobody reads any more: writes fail at once anyway
  }
  if (own < 0) {
    // No /proc: make the shared description non-blocking, and put it back
    // afterwards. Never blocking the relay matters more.
    own = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int flags = own < 0 ? -1 : ::fcntl(own, F_GETFL);
    if (flags < 0 || ::fcntl(own, F_SETFL, flags | O_NONBLOCK) != 0) {
      if (own >= 0) {
        ::close(own);
      }
      return;
    }
    m_restore_flags = flags;
  }
  m_fd = own;
  m_ready.emplace(executor, own);
  m_kind = Kind::stream;
}

StderrWriter::~StderrWriter()
{
  if (m_restore_flags) {
    ::fcntl(m_fd, F_SETFL, *m_restore_flags);
  }
  // m_ready closes the descriptor it owns.
}

std::optional<std::size_t> StderrWriter::write_some(std::string_view bytes)
{
  for (;;) {
    const ssize_t written = m_kind == Kind::socket
                              ? ::send(m_fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL)
                              : ::write(m_fd, bytes.data(), bytes.size());
    if (written >= 0) {
      return static_cast<std::size_t>(written);
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return 0;
    }
    m_broken = true; // EPIPE and the like: nobody will read what follows
    m_queue.clear();
    m_queued_bytes = 0;
    return std::nullopt;
  }
}

void StderrWriter::write(std::string_view bytes)
{
  if (bytes.empty() || m_broken) {
    return;
  }
  if (m_kind == Kind::direct) {
    write_blocking(bytes);
    return;
  }
  if (m_queue.empty()) {
    const auto written = write_some(bytes);
    if (!written) {
      return;
    }
    bytes.remove_prefix(*written);
    if (bytes.empty()) {
      return;
    }
    if (!m_finished) {
      // The rest of a line already begun must follow it, whatever the
      // capacity, or the next line would continue it.
      m_queue.emplace_back(bytes);
      m_queued_bytes += bytes.size();
      m_front_written = 0;
      wake();
      return;
    }
  }
  if (m_finished || m_queued_bytes + bytes.size() > m_capacity) {
    m_dropped_lines += lines_in(bytes);
    m_dropped_bytes += bytes.size();
    return;
  }
  m_queue.emplace_back(bytes);
  m_queued_bytes += bytes.size();
  wake();
}

void StderrWriter::write_blocking(std::string_view bytes)
{
  while (!bytes.empty()) {
    const ssize_t written = ::write(m_fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      return;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void StderrWriter::write_queued()
{
  while (!m_queue.empty()) {
    const std::string_view front = std::string_view(m_queue.front()).substr(m_front_written);
    const auto written = write_some(front);
    if (!written) {
      return;
    }
    m_front_written += *written;
    if (*written < front.size()) {
      return; // the stream is full again
    }
    m_queued_bytes -= m_queue.front().size();
    m_queue.pop_front();
    m_front_written = 0;
  }
}

void StderrWriter::queue_drop_report()
{
  m_queue.push_back("fsguard: warn: dropped " + std::to_string(m_dropped_lines) + " log line"
                    + (m_dropped_lines == 1 ? "" : "s") + " ("
                    + std::to_string(m_dropped_bytes)
                    + " bytes) because stderr was not being read\n");
  m_queued_bytes += m_queue.back().size();
  m_dropped_lines = 0;
  m_dropped_bytes = 0;
}

Task<void> StderrWriter::drain()
{
  while (m_ready && !m_finished && !m_broken) {
    if (m_queue.empty()) {
      if (m_dropped_lines > 0) {
        queue_drop_report(); // the reader has caught up: say what it missed
        continue;
      }
      co_await m_wake.async_wait(k_use);
      continue;
    }
    auto [error] = co_await m_ready->async_wait(asio::posix::descriptor_base::wait_write, k_use);
    if (error && error != asio::error::operation_aborted) {
      m_broken = true;
      co_return;
    }
    write_queued();
  }
}

void StderrWriter::finish(std::chrono::milliseconds grace)
{
  m_finished = true;
  wake();
  if (!m_ready) {
    return;
  }
  boost::system::error_code ignored;
  m_ready->cancel(ignored);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    write_queued();
    if (m_broken) {
      break;
    }
    if (m_queue.empty()) {
      if (m_dropped_lines == 0) {
        break;
      }
      queue_drop_report();
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      break;
    }
    pollfd ready{m_fd, POLLOUT, 0};
    ::poll(&ready, 1, static_cast<int>(left.count()));
  }
  m_queue.clear(); // a reader that never came back gets nothing more
  m_queued_bytes = 0;
}

} // namespace fsguard
