#include "tracker/unified_diff.hpp"

#include <charconv>
#include <vector>

namespace fsguard {

namespace {

// The lines of `text`, each with its "\n" if it has one.
std::vector<std::string_view> lines_of(std::string_view text)
{
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::size_t length = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return lines;
}

// Reads a number at the front of `text`, moving past it.
std::optional<std::size_t> read_number(std::string_view& text)
{
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) {
    return std::nullopt;
  }
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

struct HunkHeader {
  std::size_t old_start = 0;
  std::size_t old_count = 1;
  std::size_t new_count = 1;
};

// Parses "@@ -a[,b] +c[,d] @@...".
std::optional<HunkHeader> parse_header(std::string_view line)
{
  if (!line.starts_with("@@ -")) {
    return std::nullopt;
  }
  line.remove_prefix(4);
  HunkHeader header;
  const auto old_start = read_number(line);
  if (!old_start) {
    return std::nullopt;
  }
  header.old_start = *old_start;
  if (line.starts_with(',')) {
    line.remove_prefix(1);
    const auto count = read_number(line);
    if (!count) {
      return std::nullopt;
    }
    header.old_count = *count;
  }
  if (!line.starts_with(" +")) {
    return std::nullopt;
  }
  line.remove_prefix(2);
  if (!read_number(line)) {
    return std::nullopt;
  }
  if (line.starts_with(',')) {
    line.remove_prefix(1);
    const auto count = read_number(line);
    if (!count) {
      return std::nullopt;
    }
    header.new_count = *count;
  }
  return line.starts_with(" @@") ? std::optional(header) : std::nullopt;
}

} // namespace

std::string without_carriage_returns(std::string_view text)
{
  std::string result;
  result.reserve(text.size());
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n') {
      continue;
    }
    result += text[at];
  }
  return result;
}

std::optional<std::string> apply_unified_diff(std::string_view original, std::string_view text)
{
  const auto old_lines = lines_of(original);
  const auto patch = lines_of(text);
  std::string result;
  std::size_t cursor = 0; // next line of `original` to copy
  std::size_t at = 0;
  bool any_header = false;
  while (at < patch.size() && !patch[at].starts_with("@@ ")) {
    any_header = any_header || patch[at].starts_with("+++ ");
    ++at;
  }
  if (!any_header) {
    return std::nullopt; // not a diff at all
  }
  while (at < patch.size() && patch[at].starts_with("@@ ")) {
    const auto header = parse_header(patch[at]);
    if (!header) {
      return std::nullopt;
    }
    ++at;
    // A hunk of an empty side starts "before" line 1: -0,0.
    const std::size_t first = header->old_count == 0 ? header->old_start : header->old_start - 1;
    if (header->old_count > 0 && header->old_start == 0) {
      return std::nullopt;
    }
    if (first < cursor || first > old_lines.size()) {
      return std::nullopt;
    }
    for (; cursor < first; ++cursor) {
      result += old_lines[cursor];
    }
    std::size_t old_left = header->old_count;
    std::size_t new_left = header->new_count;
    while (old_left > 0 || new_left > 0) {
      if (at >= patch.size()) {
        return std::nullopt;
      }
      std::string_view line = patch[at++];
      if (line.starts_with('\\')) {
        continue; // marks only the previous line; handled where it is read
      }
      const char kind = line.empty() ? ' ' : line.front();
      std::string_view body = line.empty() ? line : line.substr(1);
      const bool no_newline = at < patch.size() && patch[at].starts_with('\\');
      std::string content(body);
      if (no_newline && !content.empty() && content.back() == '\n') {
        content.pop_back();
      }
      if (kind == ' ' || kind == '-') {
        if (old_left == 0 || cursor >= old_lines.size() || old_lines[cursor] != content) {
          return std::nullopt;
        }
        ++cursor;
        --old_left;
      }
      if (kind == ' ' || kind == '+') {
        if (new_left == 0) {
          return std::nullopt;
        }
        result += content;
        --new_left;
      }
      if (kind != ' ' && kind != '-' && kind != '+') {
        return std::nullopt;
      }
    }
    while (at < patch.size() && patch[at].starts_with('\\')) {
      ++at;
    }
  }
  for (; cursor < old_lines.size(); ++cursor) {
    result += old_lines[cursor];
  }
  return result;
}

} // namespace fsguard
