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

std::string described(const ServerFileReport& report)
{
  if (report.is_directory) {
    return "a directory";
  }
  return "a file of " + std::to_string(report.size) + " bytes modified at second "
         + std::to_string(report.modified_s);
}

std::string described(const FileStat& stat)
{
  if (stat.is_directory()) {
    return "a directory";
  }
  return "a file of " + std::to_string(stat.size) + " bytes modified at second "
         + std::to_string(node_shown_second(stat.mtime_ns / 1'000'000'000,
                                            stat.mtime_ns % 1'000'000'000));
}

} // namespace

ServerFileReport parse_server_file_report(std::string_view text, bool is_error)
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
  const auto size = whole_number(file_info_value(text, "size"));
  const auto modified = file_info_value(text, "modified");
  const auto modified_s = modified ? javascript_date_seconds(*modified) : std::nullopt;
  const auto directory = file_info_value(text, "isDirectory");
  if (!size || !modified_s || !directory || (*directory != "true" && *directory != "false")) {
    report.reason = "fsguard could not read the server's get_file_info answer";
    return report;
  }
  report.outcome = ServerFileReport::Outcome::exists;
  report.size = *size;
  report.modified_s = *modified_s;
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
    return "the server has no file there, fsguard sees " + described(*local);
  case ServerFileReport::Outcome::exists:
    break;
  }
  if (local_missing) {
    return "the server has " + described(report) + " there, fsguard sees none";
  }
  const std::int64_t local_second =
    node_shown_second(local->mtime_ns / 1'000'000'000, local->mtime_ns % 1'000'000'000);
  const bool same_file = report.size == local->size && report.modified_s == local_second;
  if (report.is_directory != local->is_directory() || (!report.is_directory && !same_file)) {
    return "the server has " + described(report) + " there, fsguard sees " + described(*local);
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
