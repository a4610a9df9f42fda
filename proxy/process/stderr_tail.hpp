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

  // The line that best says why the process failed: the last that speaks of
  // an error (node's last line is its version), else the last that is not
  // blank; trimmed, at most `limit` bytes; "" if there is none.
  std::string last_words(std::size_t limit = 300) const;

private:
  std::size_t m_capacity;
  std::string m_bytes;
  bool m_dropped = false;
};

} // namespace fsguard
