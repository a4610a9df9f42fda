#include "tracker/file_identity.hpp"

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <vector>

#include "tracker/server_filesystem.hpp"

namespace fsguard {

namespace {

std::optional<std::int64_t> whole_number(const std::optional<std::string>& text)
{
  std::int64_t value = 0;
  if (!text || text->empty()) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) {
    return std::nullopt;
  }
  return value;
}

// The modification time of `stat` as Node shows it, to `precision`.
ShownTime shown_modified(const FileStat& stat, ShownTime::Precision precision)
{
  std::int64_t ms = node_shown_millisecond(stat.mtime_ns / 1'000'000'000,
                                           stat.mtime_ns % 1'000'000'000);
  if (precision == ShownTime::Precision::second) {
    ms -= ((ms % 1000) + 1000) % 1000; // the floor, before 1970 too
  }
  return ShownTime{ms, precision};
}

// "second 1795419597", or "second 1795419597.123" to the millisecond.
std::string described(const ShownTime& time)
{
  const std::int64_t second = time.ms / 1000 - (time.ms % 1000 < 0 ? 1 : 0);
  std::string text = "second " + std::to_string(second);
  if (time.precision == ShownTime::Precision::millisecond) {
    const std::string fraction = std::to_string(1000 + time.ms - second * 1000);
    text += "." + fraction.substr(1);
  }
  return text;
}

std::string described(const ServerFileReport& report)
{
  if (report.is_directory) {
    return "a directory";
  }
  return "a file of " + std::to_string(report.size) + " bytes modified at "
         + described(report.modified);
}

std::string described(const FileStat& stat, ShownTime::Precision precision)
{
  if (stat.is_directory()) {
    return "a directory";
  }
  return "a file of " + std::to_string(stat.size) + " bytes modified at "
         + described(shown_modified(stat, precision));
}

} // namespace

ServerFileReport parse_server_file_report(std::string_view text, bool is_error,
                                          FileInfoFormat format)
{
  ServerFileReport report;
  if (is_error) {
    // Node's error ("ENOENT: no such file or directory, stat '…'"), or the
    // server's refusal of a file whose directory is missing; only at the
    // start, as a path may itself hold such words.
    const std::string_view message = text.starts_with("Error: ") ? text.substr(7) : text;
    if (message.starts_with("ENOENT:") || message.starts_with("Parent directory does not exist")) {
      report.outcome = ServerFileReport::Outcome::missing;
    } else {
      report.reason = std::string(message);
    }
    return report;
  }
  if (format == FileInfoFormat::none) {
    report.reason = "fsguard does not know how this server's get_file_info shows a file";
    return report;
  }
  // The first line of each key: desktop-commander appends a file's own
  // metadata (a PDF's title, say) after these, where a line could repeat one.
  const auto size = whole_number(file_info_value(text, "size"));
  const auto modified = file_info_time(text, "modified", format);
  const auto directory = file_info_value(text, "isDirectory");
  if (!size || !modified || !directory || (*directory != "true" && *directory != "false")) {
    report.reason = "fsguard could not read the server's get_file_info answer";
    return report;
  }
  report.outcome = ServerFileReport::Outcome::exists;
  report.size = *size;
  report.modified = *modified;
  report.is_directory = *directory == "true";
  return report;
}

std::optional<std::string> identity_difference(const ServerFileReport& report,
                                               const Result<FileStat, DiskError>& local)
{
  const bool local_missing = !local && local.error().error_number == ENOENT;
  if (!local && !local_missing) {
    return "fsguard cannot stat its own copy of it: " + local.error().detail;
  }
  switch (report.outcome) {
  case ServerFileReport::Outcome::unknown:
    return "the server did not say what it holds there: " + report.reason;
  case ServerFileReport::Outcome::missing:
    if (local_missing) {
      return std::nullopt;
    }
    return "the server has no file there, fsguard sees "
           + described(*local, ShownTime::Precision::second);
  case ServerFileReport::Outcome::exists:
    break;
  }
  if (local_missing) {
    return "the server has " + described(report) + " there, fsguard sees none";
  }
  const ShownTime::Precision precision = report.modified.precision;
  const bool same_file =
    report.size == local->size && report.modified.ms == shown_modified(*local, precision).ms;
  if (report.is_directory != local->is_directory() || (!report.is_directory && !same_file)) {
    return "the server has " + described(report) + " there, fsguard sees "
           + described(*local, precision);
  }
  return std::nullopt;
}

std::optional<DirectoryEntries> parse_directory_listing(std::string_view text)
{
  DirectoryEntries entries;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("[DIR] ")) {
      entries[std::string(line.substr(6))] = true;
    } else if (line.starts_with("[FILE] ")) {
      entries[std::string(line.substr(7))] = false;
    } else if (!line.empty()) {
      return std::nullopt;
    }
  }
  return entries;
}

std::optional<std::string> listing_difference(const DirectoryEntries& server,
                                              const DirectoryEntries& local)
{
  std::vector<std::string> differences;
  std::size_t count = 0;
  const auto note = [&](std::string text) {
    if (++count <= 3) {
      differences.push_back(std::move(text));
    }
  };
  for (const auto& [name, directory] : server) {
    const auto found = local.find(name);
    if (found == local.end()) {
      note("the server has " + name + ", fsguard's has not");
    } else if (found->second != directory) {
      note(name + " is a " + (directory ? "directory" : "file") + " on the server's side only");
    }
  }
  for (const auto& [name, directory] : local) {
    if (!server.contains(name)) {
      note("fsguard's has " + name + ", the server's has not");
    }
  }
  if (count == 0) {
    return std::nullopt;
  }
  std::string text;
  for (const auto& difference : differences) {
    text += (text.empty() ? "" : "; ") + difference;
  }
  if (count > differences.size()) {
    text += "; and " + std::to_string(count - differences.size()) + " more";
  }
  return text;
}

} // namespace fsguard
