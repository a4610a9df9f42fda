// How fsguard's memory treats large messages. Memory that comes from the
// system and goes back at once makes every large message pay a page fault
// per 4 KiB (about half of fsguard's CPU on an 8 MiB read, when lines were
// joined into fresh strings). So large blocks stay on the heap, and the line
// buffers keep their size, to be reused by the next large message; both are
// handed back to the system once the session has been idle for a moment.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "proxy/process/executor.hpp"
#include "proxy/process/line_buffer.hpp"

namespace fsguard {

// Serves blocks up to 32 MiB from the heap, keeps up to 64 MiB of freed
// memory for reuse, and grows the heap a megabyte at a time. Call once,
// before the session starts.
void keep_large_blocks_on_heap();

// Hands freed heap memory, and the unused memory of the line buffers it
// watches, back to the system `k_idle` after the last large message, so an
// idle fsguard holds no more than it needs.
class HeapTrimmer {
public:
  explicit HeapTrimmer(Executor executor) : m_timer(executor) {}

  // Messages at least this large schedule a trim.
  static constexpr std::size_t k_large_message = 256 * 1024;

  // Notes that a message of `bytes` was relayed.
  void on_message(std::size_t bytes);

  // Also gives back what `buffer` does not use beyond its first `keep`
  // bytes, for as long as the buffer lives.
  void watch(std::weak_ptr<LineBuffer> buffer, std::size_t keep);

private:
  Task<void> trim_when_idle();

  Timer m_timer;
  bool m_waiting = false;
  std::vector<std::pair<std::weak_ptr<LineBuffer>, std::size_t>> m_buffers;
};

} // namespace fsguard
