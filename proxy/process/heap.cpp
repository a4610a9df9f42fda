#include "proxy/process/heap.hpp"

#include <malloc.h>

#include <chrono>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace fsguard {

namespace {

constexpr auto k_idle = std::chrono::seconds(2);
constexpr int k_mmap_threshold = 32 * 1024 * 1024; // glibc's largest allowed value
constexpr int k_trim_threshold = 64 * 1024 * 1024;
// The heap grows by at least this much at a time: texts kept a read at a
// time then cost a brk per few hundred reads instead of one per ten or so.
// Untouched, the pages cost no memory.
constexpr int k_top_pad = 1024 * 1024;

} // namespace

void keep_large_blocks_on_heap()
{
  ::mallopt(M_MMAP_THRESHOLD, k_mmap_threshold);
  ::mallopt(M_TRIM_THRESHOLD, k_trim_threshold);
  ::mallopt(M_TOP_PAD, k_top_pad);
}

void HeapTrimmer::on_message(std::size_t bytes)
{
  if (bytes < k_large_message) {
    return;
  }
  m_timer.expires_after(k_idle); // a waiting trim_when_idle() waits again
  if (!m_waiting) {
    m_waiting = true;
    boost::asio::co_spawn(m_timer.get_executor(), trim_when_idle(), boost::asio::detached);
  }
}

void HeapTrimmer::watch(std::weak_ptr<LineBuffer> buffer, std::size_t keep)
{
  m_buffers.emplace_back(std::move(buffer), keep);
}

Task<void> HeapTrimmer::trim_when_idle()
{
  // Wait until the deadline, however often on_message() moved it (a move
  // cancels the wait, or comes after the wait ended but before this resumed).
  while (m_timer.expiry() > std::chrono::steady_clock::now()) {
    co_await m_timer.async_wait(k_use);
  }
  ::malloc_trim(0);
  std::erase_if(m_buffers, [](const auto& watched) { return watched.first.expired(); });
  for (const auto& [buffer, keep] : m_buffers) {
    buffer.lock()->release_unused(keep);
  }
  m_waiting = false;
}

} // namespace fsguard
