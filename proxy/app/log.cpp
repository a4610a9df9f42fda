#include "proxy/app/log.hpp"

#include <unistd.h>

#include <string>

namespace fsguard {

void write_to_stderr(std::string_view bytes)
{
  while (!bytes.empty()) {
    const ssize_t written = ::write(STDERR_FILENO, bytes.data(), bytes.size());
    if (written <= 0) {
      return;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

// One write() per line, so lines from fsguard and the upstream's stderr
// (which fsguard relays) never interleave mid-line.
void Log::write_line(std::string_view tag, std::string_view message) const
{
  std::string line = "fsguard: ";
  line += tag;
  line += message;
  line += '\n';
  pass_through(line);
}

void Log::pass_through(std::string_view bytes) const
{
  if (m_sink != nullptr) {
    m_sink->write(bytes);
  } else {
    write_to_stderr(bytes);
  }
}

void Log::write(LogLevel level, std::string_view message) const
{
  if (!enabled(level)) {
    return;
  }
  if (level == LogLevel::error) {
    write_line("error: ", message);
  } else if (level == LogLevel::warn) {
    write_line("warn: ", message);
  } else {
    write_line("", message);
  }
}

} // namespace fsguard
