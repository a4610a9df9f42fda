#include "proxy/stderr_tail.hpp"

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

} // namespace fsguard
