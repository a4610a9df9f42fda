#include "tracker/file_info.hpp"

#include <chrono>

#include "tracker/server_filesystem.hpp"

namespace fsguard {

namespace {

// The number in the `count` digits of `text` at `at`; nothing if one is not a digit.
std::optional<int> digits(std::string_view text, std::size_t at, std::size_t count)
{
  int value = 0;
  for (std::size_t index = at; index < at + count; ++index) {
    if (text[index] < '0' || text[index] > '9') {
      return std::nullopt;
    }
    value = value * 10 + (text[index] - '0');
  }
  return value;
}

} // namespace

std::optional<std::int64_t> iso_date_milliseconds(std::string_view text)
{
  constexpr std::string_view k_shape = "YYYY-MM-DDTHH:MM:SS.mmmZ";
  if (text.size() != k_shape.size()) {
    return std::nullopt;
  }
  if (text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':'
      || text[19] != '.' || text[23] != 'Z') {
    return std::nullopt;
  }
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2);
  const auto minute = digits(text, 14, 2);
  const auto second = digits(text, 17, 2);
  const auto millisecond = digits(text, 20, 3);
  if (!year || !month || !day || !hour || !minute || !second || !millisecond || *hour > 23
      || *minute > 59 || *second > 59) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) {
    return std::nullopt;
  }
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  return ((days * 24 + *hour) * 60 + *minute) * 60'000LL + *second * 1000LL + *millisecond;
}

std::optional<ShownTime> file_info_time(std::string_view info, const std::string& key,
                                        FileInfoFormat format)
{
  const auto value = file_info_value(info, key);
  if (!value) {
    return std::nullopt;
  }
  switch (format) {
  case FileInfoFormat::none:
    return std::nullopt;
  case FileInfoFormat::date_text: {
    const auto seconds = javascript_date_seconds(*value);
    if (!seconds) {
      return std::nullopt;
    }
    return ShownTime{*seconds * 1000, ShownTime::Precision::second};
  }
  case FileInfoFormat::iso_json: {
    const std::string_view quoted = *value;
    if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') {
      return std::nullopt;
    }
    const auto ms = iso_date_milliseconds(quoted.substr(1, quoted.size() - 2));
    if (!ms) {
      return std::nullopt;
    }
    return ShownTime{*ms, ShownTime::Precision::millisecond};
  }
  }
  return std::nullopt;
}

} // namespace fsguard
