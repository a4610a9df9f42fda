// The buffer that line framing reads into: one block of anonymous memory
// that grows by remapping its pages (mremap), never by copying them, so a
// line of megabytes lies whole in one place where it is skimmed and written
// from, and memory that a long line used is given back when idle.
#pragma once

#include <cstddef>

namespace fsguard {

class LineBuffer {
public:
  // Maps `bytes` (rounded up to whole pages). Throws std::bad_alloc.
  explicit LineBuffer(std::size_t bytes);
  ~LineBuffer();
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  char* data() { return m_data; }
  const char* data() const { return m_data; }
  std::size_t size() const { return m_size; }

  // Grows to at least `bytes`, keeping the content (the pages move, the
  // bytes are not copied; data() may change). Throws std::bad_alloc.
  void grow(std::size_t bytes);

  // Notes that only the first `bytes` bytes hold data now, and that a read
  // may be putting up to `reading` bytes right after them (see
  // release_unused).
  void set_used(std::size_t bytes, std::size_t reading = 0)
  {
    m_used = bytes;
    m_reading = reading;
  }

  // Gives the memory of the pages past the first `keep` bytes, past the
  // bytes in use and past those a read may be putting after them, back to
  // the system; the mapping stays, and a page reads as zeros when next
  // touched. A read's bytes are left be until set_used() counts them: Asio
  // reads in its reactor and resumes the reader later, and a release in
  // between would zero bytes already read.
  void release_unused(std::size_t keep);

private:
  char* m_data = nullptr;
  std::size_t m_size = 0;
  std::size_t m_used = 0;
  std::size_t m_reading = 0;
};

} // namespace fsguard
