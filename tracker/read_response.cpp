#include "tracker/read_response.hpp"

#include <algorithm>
#include <span>

namespace fsguard {

namespace {

constexpr std::string_view k_separator = "\n---\n";
constexpr std::string_view k_content_mark = ":\n";
constexpr std::string_view k_error_mark = ": Error - ";

// Bytes compared after separators, allowed per byte of the response (and a
// floor for small ones), before the split gives up and counts nothing as
// read. Only paths that themselves hold "\n---\n" can make walks overlap.
constexpr std::size_t k_work_per_byte = 4;
constexpr std::size_t k_work_floor = 64 * 1024;

enum class Header { none, content, error };

bool marked_at(std::string_view text, std::size_t at, std::string_view mark)
{
  return at <= text.size() && text.substr(at).starts_with(mark);
}

// The header "<path>:\n" (content) or "<path>: Error - " (error) at `at`.
Header header_at(std::string_view text, std::size_t at, std::string_view path)
{
  if (!marked_at(text, at, path)) {
    return Header::none;
  }
  if (marked_at(text, at + path.size(), k_content_mark)) {
    return Header::content;
  }
  return marked_at(text, at + path.size(), k_error_mark) ? Header::error : Header::none;
}

// For each distinct requested path, where the separators that a header of
// it follows are: one walk per separator down the sorted paths, narrowing
// them byte by byte to those the text there begins with. Nothing if that
// takes more than `budget` steps.
class SeparatorIndex {
public:
  explicit SeparatorIndex(const std::vector<std::string>& requested)
    : m_paths(requested.begin(), requested.end())
  {
    std::sort(m_paths.begin(), m_paths.end());
    m_paths.erase(std::unique(m_paths.begin(), m_paths.end()), m_paths.end());
    m_separators.resize(m_paths.size());
    m_cursors.resize(m_paths.size());
  }

  // Indexes every separator in `text`; false if it took over `budget` steps.
  bool build(std::string_view text, std::size_t budget, std::size_t& work)
  {
    for (std::size_t at = text.find(k_separator); at != std::string_view::npos;
         at = text.find(k_separator, at + 1)) {
      if (!index_separator(text, at, budget, work)) {
        return false;
      }
    }
    return true;
  }

  // The separators at or after `from` that a header of `path` follows; call
  // with `from` never decreasing for one path.
  std::span<const std::size_t> separators_from(std::string_view path, std::size_t from)
  {
    const auto found = std::lower_bound(m_paths.begin(), m_paths.end(), path);
    const auto id = static_cast<std::size_t>(found - m_paths.begin());
    const std::vector<std::size_t>& positions = m_separators[id];
    auto& cursor = m_cursors[id];
    while (cursor < positions.size() && positions[cursor] < from) {
      ++cursor;
    }
    return std::span<const std::size_t>(positions).subspan(cursor);
  }

private:
  bool index_separator(std::string_view text, std::size_t separator, std::size_t budget,
                       std::size_t& work)
  {
    const std::size_t start = separator + k_separator.size();
    auto low = m_paths.begin();
    auto high = m_paths.end();
    for (std::size_t depth = 0; low != high; ++depth) {
      // The paths left all begin with the `depth` bytes at `start`; a path
      // of exactly that length sorts first.
      if (low->size() == depth) {
        if (marked_at(text, start + depth, k_content_mark)
            || marked_at(text, start + depth, k_error_mark)) {
          m_separators[static_cast<std::size_t>(low - m_paths.begin())].push_back(separator);
        }
        if (++low == high) {
          break;
        }
      }
      if (start + depth >= text.size()) {
        return true;
      }
      if (++work > budget) {
        return false;
      }
      const auto byte = static_cast<unsigned char>(text[start + depth]);
      const auto byte_at = [depth](std::string_view path) {
        return static_cast<unsigned char>(path[depth]);
      };
      low = std::partition_point(low, high, [&](std::string_view path) { return byte_at(path) < byte; });
      high = std::partition_point(low, high, [&](std::string_view path) { return byte_at(path) == byte; });
    }
    return true;
  }

  std::vector<std::string_view> m_paths; // distinct, sorted
  std::vector<std::vector<std::size_t>> m_separators;
  std::vector<std::size_t> m_cursors; // per path: separators before this are passed
};

} // namespace

std::vector<bool> parts_read(std::string_view text, const std::vector<std::string>& requested,
                             std::size_t* work)
{
  const auto shown = parts_shown(text, requested, work);
  std::vector<bool> read(shown.size());
  std::transform(shown.begin(), shown.end(), read.begin(),
                 [](const auto& part) { return part.has_value(); });
  return read;
}

std::vector<std::optional<std::string_view>>
parts_shown(std::string_view text, const std::vector<std::string>& requested, std::size_t* work)
{
  std::vector<std::optional<std::string_view>> read(requested.size());
  std::size_t steps = 0;
  if (work != nullptr) {
    *work = 0;
  }
  if (requested.empty() || header_at(text, 0, requested.front()) == Header::none) {
    return read;
  }
  SeparatorIndex index(requested);
  const std::size_t budget = k_work_per_byte * text.size() + k_work_floor;
  const bool indexed = index.build(text, budget, steps);
  if (work != nullptr) {
    *work = steps;
  }
  if (!indexed) {
    return read; // too costly to decide: nothing counts as read
  }
  // A content part is "<path>:\n<content>\n": its content lies between.
  const auto content = [&](std::size_t at, const std::string& path,
                           std::size_t end) -> std::optional<std::string_view> {
    const std::size_t begins = at + path.size() + k_content_mark.size();
    if (end < begins + 1 || text[end - 1] != '\n') {
      return std::nullopt;
    }
    return text.substr(begins, end - 1 - begins);
  };
  // Part `i` ends at the one separator after its start that the header of
  // part `i + 1` follows. None, or more than one (a file's content mimics a
  // header, so the split is ambiguous): nothing from there on counts.
  std::size_t at = 0;
  for (std::size_t part = 0; part < requested.size(); ++part) {
    const Header header = header_at(text, at, requested[part]);
    if (header == Header::none) {
      break;
    }
    if (part + 1 == requested.size()) {
      if (header == Header::content) {
        read[part] = content(at, requested[part], text.size());
      }
      break;
    }
    const auto ends = index.separators_from(requested[part + 1], at);
    if (ends.size() != 1) {
      break;
    }
    if (header == Header::content) {
      read[part] = content(at, requested[part], ends.front());
    }
    at = ends.front() + k_separator.size();
  }
  return read;
}

} // namespace fsguard
