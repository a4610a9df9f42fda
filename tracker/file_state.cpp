#include "tracker/file_state.hpp"

#include <cstdio>
#include <ctime>

namespace fsguard {

std::string to_hex(const ContentHash& hash)
{
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx",
                static_cast<unsigned long long>(hash[0]),
                static_cast<unsigned long long>(hash[1]));
  return text;
}

bool racy(const Fingerprint& fingerprint)
{
  const std::int64_t safe_before = fingerprint.taken_at_ns - k_racy_window_ns;
  return fingerprint.stat.mtime_ns >= safe_before
         || fingerprint.stat.ctime_ns >= safe_before;
}

std::string format_time(std::int64_t epoch_ns)
{
  std::int64_t seconds = epoch_ns / 1'000'000'000;
  std::int64_t millis = (epoch_ns % 1'000'000'000) / 1'000'000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const std::time_t as_time_t = static_cast<std::time_t>(seconds);
  std::tm parts{};
  gmtime_r(&as_time_t, &parts);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(millis));
  return text;
}

} // namespace fsguard
