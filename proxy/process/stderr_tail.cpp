#include "proxy/process/stderr_tail.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace fsguard {

void StderrTail::append(std::string_view bytes)
{
  if (bytes.size() >= m_capacity) {
    m_bytes.assign(bytes.substr(bytes.size() - m_capacity));
    m_dropped = true;
    return;
  }
  m_bytes.append(bytes);
  if (m_bytes.size() > m_capacity) {
    m_bytes.erase(0, m_bytes.size() - m_capacity);
    m_dropped = true;
  }
}

std::string StderrTail::text() const
{
  std::string_view kept = m_bytes;
  if (m_dropped) {
    const auto newline = kept.find('\n');
    kept.remove_prefix(newline == std::string_view::npos ? 0 : newline + 1);
  }
  while (!kept.empty() && (kept.back() == '\n' || kept.back() == '\r')) {
    kept.remove_suffix(1);
  }
  return std::string(kept);
}

namespace {

std::string_view trimmed(std::string_view line)
{
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
    line.remove_prefix(1);
  }
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
    line.remove_suffix(1);
  }
  return line;
}

bool speaks_of_error(std::string_view line)
{
  std::string lower(line);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("error") != std::string::npos;
}

} // namespace

std::string StderrTail::last_words(std::size_t limit) const
{
  const std::string kept = text();
  std::string_view rest = kept;
  std::optional<std::string_view> last;
  std::optional<std::string_view> last_error;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    const std::string_view line = trimmed(rest.substr(0, newline));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (line.empty()) {
      continue;
    }
    last = line;
    if (speaks_of_error(line)) {
      last_error = line;
    }
  }
  const std::string_view chosen = last_error.value_or(last.value_or(""));
  return std::string(chosen.substr(0, limit));
}

} // namespace fsguard
