// Levelled log lines on stderr, each prefixed "fsguard: ". Never stdout.
#pragma once

#include <optional>
#include <string_view>

#include "proxy/guard/log_level.hpp"

namespace fsguard {

// Writes all of `bytes` to stderr with as few write() calls as the pipe
// allows, so whole lines from fsguard and the upstream never interleave.
void write_to_stderr(std::string_view bytes);

// Where a Log's lines go during a session instead of a plain write() (see
// StderrWriter, which never waits for a reader).
class StderrSink {
public:
  virtual ~StderrSink() = default;
  // Takes `bytes`: whole lines, or a piece of the upstream's stderr.
  virtual void write(std::string_view bytes) = 0;
};

class Log {
public:
  explicit Log(LogLevel level = LogLevel::warn) : m_level(level) {}

  void set_level(LogLevel level) { m_level = level; }
  // Sends every line to `sink` from now on (nullptr: write() to stderr).
  void set_sink(StderrSink* sink) { m_sink = sink; }
  bool enabled(LogLevel level) const { return level <= m_level; }

  // Writes `message` as one stderr line if `level` is enabled.
  void write(LogLevel level, std::string_view message) const;

  void error(std::string_view message) const { write(LogLevel::error, message); }
  void warn(std::string_view message) const { write(LogLevel::warn, message); }
  void info(std::string_view message) const { write(LogLevel::info, message); }
  void debug(std::string_view message) const { write(LogLevel::debug, message); }

  // Passes the upstream's stderr `bytes` on as they are, at every level.
  void pass_through(std::string_view bytes) const;

private:
  void write_line(std::string_view tag, std::string_view message) const;

  LogLevel m_level;
  StderrSink* m_sink = nullptr;
};

} // namespace fsguard
