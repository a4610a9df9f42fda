// How much fsguard says on stderr: the levels its lines are written at.
// The guard names a level for each line it puts in its Outbox; the app's
// Log (proxy/app/log.hpp) writes the lines its level enables.
#pragma once

#include <optional>
#include <string_view>

namespace fsguard {

enum class LogLevel { error, warn, info, debug };

// Parses "error", "warn", "info" or "debug".
std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view to_string(LogLevel level);

} // namespace fsguard
