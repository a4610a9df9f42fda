// How fsguard's heap treats large messages. A megabyte line is copied into
// fresh memory as it is framed; with glibc's defaults that memory comes
// from the system and goes back at once, so every large message pays a page
// fault per 4 KiB (about half of fsguard's CPU on an 8 MiB read). Kept on
// the heap, it is reused by the next large message, and handed back to the
// system once the session has been idle for a moment.
#pragma once

#include <cstddef>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

namespace fsguard {

// Serves blocks up to 32 MiB from the heap and keeps up to 64 MiB of freed
// memory for reuse. Call once, before the session starts.
void keep_large_blocks_on_heap();

// Hands freed heap memory back to the system `k_idle` after the last large
// message, so an idle fsguard holds no more than it needs.
class HeapTrimmer {
public:
  explicit HeapTrimmer(boost::asio::any_io_executor executor) : m_timer(executor) {}

  // Messages at least this large schedule a trim.
  static constexpr std::size_t k_large_message = 1024 * 1024;

  // Notes that a message of `bytes` was relayed.
  void on_message(std::size_t bytes);

private:
  boost::asio::awaitable<void> trim_when_idle();

  boost::asio::steady_timer m_timer;
  bool m_waiting = false;
};

} // namespace fsguard
