#include "tracker/kept_texts.hpp"

namespace fsguard {

void KeptTexts::set_budget(KeptTextBudget budget)
{
  m_budget = budget;
  for (auto entry = m_order.begin(); entry != m_order.end();) {
    if (entry->text.size() > m_budget.file_bytes) {
      m_bytes -= cost(entry->text);
      m_index.erase(entry->hash);
      entry = m_order.erase(entry);
    } else {
      ++entry;
    }
  }
  shrink_to(m_budget.total_bytes);
}

bool KeptTexts::keep(const ContentHash& hash, std::string text)
{
  if (text.capacity() > text.size() + text.size() / 4 + k_spare_bytes) {
    // Decoded into room for its raw JSON (up to 6 bytes an escaped byte) or
    // for a line padded after it: kept in what it needs.
    text.shrink_to_fit();
  }
  if (text.size() > m_budget.file_bytes || cost(text) > m_budget.total_bytes) {
    return false;
  }
  if (const auto found = m_index.find(hash); found != m_index.end()) {
    m_order.splice(m_order.begin(), m_order, found->second); // the same text: just used
    return true;
  }
  shrink_to(m_budget.total_bytes - cost(text));
  m_bytes += cost(text);
  m_order.push_front(Entry{hash, std::move(text)});
  m_index.emplace(hash, m_order.begin());
  return true;
}

const std::string* KeptTexts::find(const ContentHash& hash)
{
  const auto found = m_index.find(hash);
  if (found == m_index.end()) {
    return nullptr;
  }
  m_order.splice(m_order.begin(), m_order, found->second);
  return &found->second->text;
}

void KeptTexts::shrink_to(std::size_t total)
{
  while (m_bytes > total && !m_order.empty()) {
    m_bytes -= cost(m_order.back().text);
    m_index.erase(m_order.back().hash);
    m_order.pop_back();
  }
}

} // namespace fsguard
