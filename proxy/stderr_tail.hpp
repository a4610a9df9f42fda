// The last bytes the upstream wrote to stderr, kept to explain a failure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fsguard {

class StderrTail {
public:
  explicit StderrTail(std::size_t capacity = 4096) : m_capacity(capacity) {}

  // Appends `bytes`, dropping the oldest beyond the capacity.
  void append(std::string_view bytes);

  // The kept bytes from the first whole line on, without a trailing newline.
  std::string text() const;

private:
  std::size_t m_capacity;
  std::string m_bytes;
  bool m_dropped = false;
};

} // namespace fsguard
