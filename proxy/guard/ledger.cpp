#include "proxy/guard/ledger.hpp"

#include <algorithm>

namespace fsguard {

PendingRequest* Ledger::open(const std::string& key, PendingRequest&& request)
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

Ledger::Answered Ledger::find_answered(Peer answering, const std::string& key)
{
  Answered answered;
  answered.m_table = &answered_by(answering);
  // Among the few requests usually pending, find() compares keys without
  // hashing them (extract() by key always hashes).
  answered.m_at = answered.m_table->find(key);
  if (answered.m_at != answered.m_table->end()) {
    answered.m_request = &answered.m_at->second;
  }
  return answered;
}

Ledger::Closed Ledger::close(Answered& answered)
{
  if (answered.m_request == nullptr) {
    return Closed();
  }
  answered.m_request = nullptr;
  return answered.m_table->extract(answered.m_at);
}

bool Ledger::close_if(Answered& answered, Expectation expect)
{
  if (answered.m_request == nullptr || answered.m_request->expect != expect) {
    return false;
  }
  m_spare = close(answered);
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
