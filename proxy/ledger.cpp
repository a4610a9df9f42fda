#include "proxy/ledger.hpp"

#include <algorithm>

namespace fsguard {

PendingRequest* Ledger::open(const std::string& key, PendingRequest request)
{
  auto& table = request.from == Peer::upstream ? m_toward_client : m_toward_upstream;
  const bool initialize = request.from == Peer::client && request.method == "initialize";
  PendingRequest* opened = nullptr;
  if (m_spare.empty()) {
    const auto [entry, added] = table.try_emplace(key, std::move(request));
    opened = added ? &entry->second : nullptr;
  } else {
    m_spare.key() = key;
    m_spare.mapped() = std::move(request);
    auto added = table.insert(std::move(m_spare));
    if (!added.inserted) {
      m_spare = std::move(added.node);
    }
    opened = added.inserted ? &added.position->second : nullptr;
  }
  if (opened == nullptr) {
    return nullptr; // refused for its id: the session is no more initialized than before
  }
  if (initialize) {
    m_initialize_seen = true;
  }
  return opened;
}

PendingRequest* Ledger::find(Peer answering, const std::string& key)
{
  auto& table = answered_by(answering);
  const auto found = table.find(key);
  return found == table.end() ? nullptr : &found->second;
}

const PendingRequest* Ledger::find(Peer answering, const std::string& key) const
{
  const auto& table = answered_by(answering);
  const auto found = table.find(key);
  return found == table.end() ? nullptr : &found->second;
}

Ledger::Closed Ledger::close(Peer answering, const std::string& key)
{
  auto& table = answered_by(answering);
  // Found first: among the few requests usually pending, without hashing
  // the key (extract() by key always hashes it).
  const auto found = table.find(key);
  return found == table.end() ? Closed() : table.extract(found);
}

bool Ledger::close_if(Peer answering, const std::string& key, Expectation expect)
{
  auto& table = answered_by(answering);
  const auto found = table.find(key);
  if (found == table.end() || found->second.expect != expect) {
    return false;
  }
  m_spare = table.extract(found);
  return true;
}

PendingRequest* Ledger::cancel(const std::string& key)
{
  const auto found = m_toward_upstream.find(key);
  if (found == m_toward_upstream.end() || found->second.from != Peer::client) {
    return nullptr;
  }
  if (!found->second.cancelled) {
    found->second.cancelled = true;
    m_cancelled.push_back(key);
  }
  PendingRequest* cancelled = &found->second;
  while (m_cancelled.size() > k_max_cancelled) {
    const auto oldest = m_toward_upstream.find(m_cancelled.front());
    if (oldest != m_toward_upstream.end() && oldest->second.cancelled
        && &oldest->second != cancelled) {
      m_toward_upstream.erase(oldest);
    }
    m_cancelled.pop_front();
  }
  return cancelled;
}

std::vector<PendingRequest> Ledger::take_client_requests()
{
  std::vector<PendingRequest> taken;
  for (auto entry = m_toward_upstream.begin(); entry != m_toward_upstream.end();) {
    if (entry->second.from == Peer::client) {
      if (!entry->second.cancelled) {
        taken.push_back(std::move(entry->second));
      }
      entry = m_toward_upstream.erase(entry);
    } else {
      ++entry;
    }
  }
  return taken;
}

} // namespace fsguard
