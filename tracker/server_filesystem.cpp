#include "tracker/server_filesystem.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "tracker/path.hpp"
#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

// The server's normalizePath() for POSIX: trim, strip one leading and one
// trailing quote, collapse slashes, drop a trailing slash.
std::string server_normalize(std::string_view path)
{
  constexpr std::string_view k_space = " \t\n\v\f\r";
  const auto first = path.find_first_not_of(k_space);
  if (first == std::string_view::npos) {
    return {};
  }
  path = path.substr(first, path.find_last_not_of(k_space) - first + 1);
  if (!path.empty() && (path.front() == '"' || path.front() == '\'')) {
    path.remove_prefix(1);
  }
  if (!path.empty() && (path.back() == '"' || path.back() == '\'')) {
    path.remove_suffix(1);
  }
  std::string normal;
  for (char c : path) {
    if (c == '/' && !normal.empty() && normal.back() == '/') {
      continue;
    }
    normal += c;
  }
  if (normal.size() > 1 && normal.back() == '/') {
    normal.pop_back();
  }
  return normal;
}

// The server's isPathWithinAllowedDirectories() for POSIX.
bool within(const std::string& path, const DirectorySet& allowed)
{
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) {
    return false;
  }
  const std::string normal = lexically_normal(path);
  for (const auto& directory : allowed) {
    if (directory.empty() || directory.front() != '/') {
      continue;
    }
    if (is_within(normal, lexically_normal(directory))) {
      return true;
    }
  }
  return false;
}

bool is_windows_drive_path(std::string_view path)
{
  return path.size() >= 2 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':'
         && (path.size() == 2 || path[2] == '/' || path[2] == '\\');
}

// Node's fileURLToPath() on POSIX: host must be empty or "localhost", and
// the path is percent-decoded (an encoded '/' is an error).
std::optional<std::string> file_url_to_path(std::string_view uri)
{
  std::string_view rest = uri.substr(std::string_view("file://").size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view host = rest.substr(0, slash);
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  std::string host_lower;
  for (char c : host) {
    host_lower += lower(c);
  }
  if (!host.empty() && host_lower != "localhost") {
    return std::nullopt;
  }
  if (uri.find('\\') != std::string_view::npos) {
    return std::nullopt; // the URL parser reads it as "/": fsguard does not guess
  }
  rest = rest.substr(slash);
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::string path;
  for (std::size_t index = 0; index < rest.size(); ++index) {
    if (rest[index] == '%' && index + 2 < rest.size()) {
      const int high = hex_digit(rest[index + 1]);
      const int low = hex_digit(rest[index + 2]);
      if (high >= 0 && low >= 0) {
        const char decoded = static_cast<char>(high * 16 + low);
        if (decoded == '/') {
          return std::nullopt;
        }
        path += decoded;
        index += 2;
        continue;
      }
    }
    path += rest[index];
  }
  return path;
}

std::string join_path(const std::string& base, std::string_view rest)
{
  return lexically_normal(base + "/" + std::string(rest));
}

// Node's path.join(`base`, `rest`) on POSIX, without a trailing slash (the
// server resolves the result, which drops it): "." and ".." resolved,
// leading ".." kept for a relative result, "." for an empty one.
std::string node_join(std::string_view base, std::string_view rest)
{
  std::string joined(base);
  if (!rest.empty()) {
    if (!joined.empty()) {
      joined += '/';
    }
    joined += rest;
  }
  const bool absolute = !joined.empty() && joined.front() == '/';
  std::vector<std::string_view> kept;
  std::string_view remaining = joined;
  while (!remaining.empty()) {
    const auto slash = remaining.find('/');
    const std::string_view name = remaining.substr(0, slash);
    remaining = slash == std::string_view::npos ? std::string_view() : remaining.substr(slash + 1);
    if (name.empty() || name == ".") {
      continue;
    }
    if (name == "..") {
      if (!kept.empty() && kept.back() != "..") {
        kept.pop_back();
      } else if (!absolute) {
        kept.push_back(name);
      }
      continue;
    }
    kept.push_back(name);
  }
  std::string normal = absolute ? "/" : "";
  for (std::size_t index = 0; index < kept.size(); ++index) {
    normal += (index == 0 ? "" : "/");
    normal += kept[index];
  }
  return normal.empty() ? "." : normal;
}

} // namespace

std::optional<std::string> expand_home(std::string_view raw, const HomeDirectory& home)
{
  if (raw != "~" && !raw.starts_with("~/")) {
    return std::string(raw);
  }
  if (!home) {
    return std::nullopt;
  }
  return node_join(*home, raw.substr(1));
}

std::optional<std::string> server_absolute_path(std::string_view raw, const HomeDirectory& home,
                                                const std::string& cwd,
                                                const DirectorySet& allowed)
{
  const auto expansion = expand_home(raw, home);
  if (!expansion) {
    return std::nullopt;
  }
  const std::string& expanded = *expansion;
  if (is_windows_drive_path(expanded)) {
    return std::nullopt;
  }
  if (!expanded.empty() && expanded.front() == '/') {
    return lexically_normal(expanded);
  }
  if (allowed.empty()) {
    return join_path(cwd, expanded);
  }
  for (const auto& directory : allowed) {
    std::string candidate = join_path(directory, expanded);
    if (within(server_normalize(candidate), allowed)) {
      return candidate;
    }
  }
  return join_path(allowed.front(), expanded);
}

std::optional<DirectorySet> parse_allowed_directories(std::string_view text)
{
  constexpr std::string_view k_header = "Allowed directories:";
  if (!text.starts_with(k_header)) {
    return std::nullopt;
  }
  text.remove_prefix(k_header.size());
  DirectorySet directories;
  while (!text.empty()) {
    if (text.front() != '\n') {
      return std::nullopt;
    }
    text.remove_prefix(1);
    const auto end = text.find('\n');
    const std::string_view directory = text.substr(0, end);
    if (!directory.empty()) {
      directories.emplace_back(directory);
    }
    text = end == std::string_view::npos ? std::string_view() : text.substr(end);
  }
  return directories;
}

std::optional<DirectorySet> predict_root_directories(const nlohmann::json& result,
                                                     const DirectorySet& current,
                                      Disk& disk, const HomeDirectory& home,
                                      const std::string& cwd)
{
  const auto roots = result.is_object() ? result.find("roots") : result.end();
  if (!result.is_object() || roots == result.end() || !roots->is_array()) {
    return current;
  }
  DirectorySet adopted;
  for (const auto& root : *roots) {
    const auto uri = root.is_object() ? root.find("uri") : root.end();
    if (!root.is_object() || uri == root.end() || !uri->is_string()
        || !uri->get_ref<const std::string&>().starts_with("file://")) {
      return current;
    }
    const auto path = file_url_to_path(uri->get_ref<const std::string&>());
    if (!path) {
      // Node's URL parser may read it another way than fsguard: which
      // directories the server adopts cannot be predicted.
      return std::nullopt;
    }
    const auto absolute = server_absolute_path(*path, home, cwd, {});
    if (!absolute) {
      continue;
    }
    auto real = disk.real_path(*absolute);
    if (!real) {
      continue;
    }
    auto stat = disk.stat(*real);
    if (stat && stat->is_directory()) {
      adopted.push_back(server_normalize(*real));
    }
  }
  return adopted.empty() ? current : adopted;
}

std::optional<std::int64_t> javascript_date_seconds(const std::string& text)
{
  char weekday[4] = {};
  char month_name[4] = {};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0, offset = 0;
  char sign = '+';
  if (std::sscanf(text.c_str(), "%3s %3s %d %d %d:%d:%d GMT%c%4d", weekday, month_name, &day,
                  &year, &hour, &minute, &second, &sign, &offset)
      != 9) {
    return std::nullopt;
  }
  static constexpr std::string_view k_months = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const auto at = k_months.find(month_name);
  if (at == std::string_view::npos || at % 3 != 0) {
    return std::nullopt;
  }
  std::tm when{};
  when.tm_year = year - 1900;
  when.tm_mon = static_cast<int>(at / 3);
  when.tm_mday = day;
  when.tm_hour = hour;
  when.tm_min = minute;
  when.tm_sec = second;
  const std::int64_t offset_seconds = (offset / 100) * 3600 + (offset % 100) * 60;
  return static_cast<std::int64_t>(timegm(&when)) - (sign == '-' ? -offset_seconds : offset_seconds);
}

std::optional<std::string> file_info_value(std::string_view info, const std::string& key)
{
  const std::string prefix = key + ": ";
  for (std::size_t at = 0; at < info.size();) {
    const auto end = info.find('\n', at);
    const std::string_view line =
      info.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.starts_with(prefix)) {
      return std::string(line.substr(prefix.size()));
    }
    at = end == std::string_view::npos ? info.size() : end + 1;
  }
  return std::nullopt;
}

std::int64_t node_shown_millisecond(std::int64_t seconds, std::int64_t nanoseconds)
{
  // Node's msFromTimeSpec() and dateFromMs(), in doubles as there.
  const double ms = static_cast<double>(seconds) * 1e3 + static_cast<double>(nanoseconds) / 1e6;
  const double whole = std::floor(ms);
  return static_cast<std::int64_t>(whole) + (ms - whole >= 0.5 ? 1 : 0); // Math.round: ties up
}

std::int64_t node_shown_second(std::int64_t seconds, std::int64_t nanoseconds)
{
  const std::int64_t ms = node_shown_millisecond(seconds, nanoseconds);
  return ms / 1000 - (ms % 1000 < 0 ? 1 : 0); // the floor, before 1970 too
}

std::optional<std::int64_t> parse_created_seconds(std::string_view info)
{
  const auto created = file_info_value(info, "created");
  return created ? javascript_date_seconds(*created) : std::nullopt;
}

} // namespace fsguard
