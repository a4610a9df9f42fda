#include "tracker/kept_texts.hpp"

#include <utility>

namespace fsguard {

KeptTexts::KeptTexts(KeptTexts&& other) noexcept
  : m_budget(other.m_budget), m_index(std::move(other.m_index)),
    m_newest(std::exchange(other.m_newest, nullptr)),
    m_oldest(std::exchange(other.m_oldest, nullptr)), m_bytes(std::exchange(other.m_bytes, 0))
{
  other.m_index.clear();
}

KeptTexts& KeptTexts::operator=(KeptTexts&& other) noexcept
{
  if (this != &other) {
    m_budget = other.m_budget;
    m_index = std::move(other.m_index);
    other.m_index.clear();
    m_newest = std::exchange(other.m_newest, nullptr);
    m_oldest = std::exchange(other.m_oldest, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

void KeptTexts::set_budget(KeptTextBudget budget)
{
  m_budget = budget;
  for (Entry* entry = m_newest; entry != nullptr;) {
    Entry* const older = entry->older;
    if (entry->text.size() > m_budget.file_bytes) {
      m_bytes -= cost(entry->text);
      unlink(*entry);
      const ContentHash key = *entry->hash; // not a reference into the node it frees
      m_index.erase(key);
    }
    entry = older;
  }
  shrink_to(m_budget.total_bytes);
}

bool KeptTexts::keep(const ContentHash& hash, TextBytes text)
{
  if (text.capacity() > text.size() + text.size() / 4 + k_spare_bytes) {
    // Decoded into room for its raw JSON (up to 6 bytes an escaped byte) or
    // for a line padded after it: kept in what it needs (glibc shrinks the
    // block in place).
    text.shrink_to_fit();
  }
  if (text.size() > m_budget.file_bytes || cost(text) > m_budget.total_bytes) {
    return false;
  }
  if (const auto found = m_index.find(hash); found != m_index.end()) {
    unlink(found->second); // the same text: just used
    push_newest(found->second);
    return true;
  }
  shrink_to(m_budget.total_bytes - cost(text));
  m_bytes += cost(text);
  const auto added = m_index.try_emplace(hash).first;
  added->second.text = std::move(text);
  added->second.hash = &added->first;
  push_newest(added->second);
  return true;
}

std::optional<std::string_view> KeptTexts::find(const ContentHash& hash)
{
  const auto found = m_index.find(hash);
  if (found == m_index.end()) {
    return std::nullopt;
  }
  unlink(found->second);
  push_newest(found->second);
  return found->second.text.view();
}

void KeptTexts::unlink(Entry& entry)
{
  (entry.newer != nullptr ? entry.newer->older : m_newest) = entry.older;
  (entry.older != nullptr ? entry.older->newer : m_oldest) = entry.newer;
  entry.newer = entry.older = nullptr;
}

void KeptTexts::push_newest(Entry& entry)
{
  entry.older = m_newest;
  entry.newer = nullptr;
  (m_newest != nullptr ? m_newest->newer : m_oldest) = &entry;
  m_newest = &entry;
}

void KeptTexts::drop_oldest()
{
  Entry& oldest = *m_oldest;
  m_bytes -= cost(oldest.text);
  unlink(oldest);
  const ContentHash key = *oldest.hash; // not a reference into the node it frees
  m_index.erase(key);
}

void KeptTexts::shrink_to(std::size_t total)
{
  while (m_bytes > total && m_oldest != nullptr) {
    drop_oldest();
  }
}

} // namespace fsguard
