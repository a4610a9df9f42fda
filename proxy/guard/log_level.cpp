#include "proxy/guard/log_level.hpp"

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

} // namespace fsguard
