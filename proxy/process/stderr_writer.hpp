// fsguard's stderr during a session, which must never stop the relay: bytes
// go out at once when the stream takes them, wait in a bounded queue when it
// does not, and are dropped (and counted) when the queue is full. One
// coroutine drains the queue and reports what was dropped once it has.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/process/executor.hpp"
#include "proxy/app/log.hpp"

namespace fsguard {

class StderrWriter final : public StderrSink {
public:
  // How many bytes may wait for a stderr that is not being read.
  static constexpr std::size_t k_default_capacity = 256 * 1024;

  // Writes to `fd` (fsguard's stderr, or a pipe in tests), which it neither
  // closes nor makes non-blocking for other processes; at most `capacity`
  // bytes wait, on `executor`'s event loop.
  StderrWriter(Executor executor, int fd = STDERR_FILENO,
               std::size_t capacity = k_default_capacity);
  ~StderrWriter() override;
  StderrWriter(const StderrWriter&) = delete;
  StderrWriter& operator=(const StderrWriter&) = delete;

  // Writes `bytes` (whole lines, or a piece of the upstream's stderr) without
  // ever waiting: at once, or queued behind earlier bytes, or dropped and
  // counted when the queue is full.
  void write(std::string_view bytes) override;

  // Drains the queue as the stream takes it, and writes the drop report once
  // it is empty. Spawn it once; it returns after finish().
  Task<void> drain();

  // Ends the session's writing: gives what is still queued (and the drop
  // report) up to `grace` to go out. Later bytes go out only if the stream
  // takes them at once.
  void finish(std::chrono::milliseconds grace);

  // Lines dropped (and not yet reported) because the queue was full.
  std::size_t dropped_lines() const { return m_dropped_lines; }

  // Bytes waiting in the queue.
  std::size_t queued_bytes() const { return m_queued_bytes; }

private:
  enum class Kind {
    direct,   // a file or /dev/null: a write never waits for a reader
    stream,   // a pipe or terminal, opened again non-blocking
    socket,   // a socket: each send() is non-blocking on its own
  };

  // Writes as much of the queue as the stream takes now.
  void write_queued();
  // Writes `bytes` without waiting: how many went, or nothing after an error
  // other than "would block" (the reader is gone).
  std::optional<std::size_t> write_some(std::string_view bytes);
  // Writes all of `bytes`, waiting as long as it takes (Kind::direct).
  void write_blocking(std::string_view bytes);
  // Queues the report of dropped lines, and forgets them.
  void queue_drop_report();
  void wake() { m_wake.cancel(); }

  Kind m_kind = Kind::direct;
  int m_fd;            // where bytes go
  std::optional<int> m_restore_flags; // no /proc: the shared flags to put back
  std::size_t m_capacity;
  std::optional<Descriptor> m_ready; // to wait until writable
  Timer m_wake; // never expires: cancel() wakes drain()
  std::deque<std::string> m_queue;
  std::size_t m_queued_bytes = 0;
  std::size_t m_front_written = 0; // bytes of m_queue.front() already written
  std::size_t m_dropped_lines = 0;
  std::size_t m_dropped_bytes = 0;
  bool m_broken = false;   // the reader is gone: everything is dropped silently
  bool m_finished = false;
};

// Sends `log`'s lines to `sink` for as long as it lives.
class LogSinkScope {
public:
  LogSinkScope(Log& log, StderrSink& sink) : m_log(log) { m_log.set_sink(&sink); }
  ~LogSinkScope() { m_log.set_sink(nullptr); }
  LogSinkScope(const LogSinkScope&) = delete;
  LogSinkScope& operator=(const LogSinkScope&) = delete;

private:
  Log& m_log;
};

// How long fsguard waits at exit for a stderr that is not being read.
inline constexpr std::chrono::milliseconds k_stderr_grace{500};

} // namespace fsguard
