#include "proxy/log.hpp"

#include <unistd.h>

#include <string>

namespace fsguard {

std::optional<LogLevel> parse_log_level(std::string_view name)
{
  if (name == "error") return LogLevel::error;
  if (name == "warn") return LogLevel::warn;
  if (name == "info") return LogLevel::info;
  if (name == "debug") return LogLevel::debug;
  return std::nullopt;
}

std::string_view to_string(LogLevel level)
{
  switch (level) {
  case LogLevel::error: return "error";
  case LogLevel::warn: return "warn";
  case LogLevel::info: return "info";
  case LogLevel::debug: return "debug";
  }
  return "warn";
}

void Log::write(LogLevel level, std::string_view message) const
{
  if (!enabled(level)) {
    return;
  }
  // One write() per line, so lines from fsguard and the upstream's stderr
  // (which fsguard relays) never interleave mid-line.
  std::string line = "fsguard: ";
  if (level == LogLevel::error || level == LogLevel::warn) {
    line += to_string(level);
    line += ": ";
  }
  line += message;
  line += '\n';
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t written = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (written <= 0) {
      return;
    }
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
}

} // namespace fsguard
