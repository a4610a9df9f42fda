// A text's bytes in a buffer of their own, which a decoder writes straight
// into: std::string gives no room without filling it first (C++20 has no
// resize_and_overwrite), and a text decoded elsewhere and then appended
// costs an allocation's worth of copying.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace fsguard {

class TextBytes {
public:
  // An empty text with no room.
  TextBytes() = default;
  // Takes `other`'s bytes, leaving it empty with no room.
  TextBytes(TextBytes&& other) noexcept;
  TextBytes& operator=(TextBytes&& other) noexcept;
  TextBytes(const TextBytes&) = delete; // copied only on purpose: copy_of()
  TextBytes& operator=(const TextBytes&) = delete;
  ~TextBytes() = default;

  // An empty text with room for `capacity` bytes, none of them set.
  static TextBytes with_room(std::size_t capacity);
  // A text holding a copy of `text`, in no more room than it needs.
  static TextBytes copy_of(std::string_view text);

  // The room, for a writer to fill before set_size().
  char* data() { return m_bytes.get(); }
  const char* data() const { return m_bytes.get(); }
  // The text's length; the room it holds (what a budget counts).
  std::size_t size() const { return m_size; }
  std::size_t capacity() const { return m_capacity; }
  bool empty() const { return m_size == 0; }
  // The text, valid until it is changed or moved from.
  std::string_view view() const { return {m_bytes.get(), m_size}; }

  // Whether the text is `other`, byte for byte.
  bool operator==(std::string_view other) const { return view() == other; }
  bool operator==(const TextBytes& other) const { return view() == other.view(); }

  // Takes the first `size` bytes of the room, written through data(), as
  // the text; `size` is at most capacity().
  void set_size(std::size_t size);
  // Gives back the room past size() (glibc shrinks a block in place).
  void shrink_to_fit();

private:
  struct Free {
    void operator()(char* bytes) const;
  };

  std::unique_ptr<char, Free> m_bytes;
  std::size_t m_size = 0;
  std::size_t m_capacity = 0;
};

} // namespace fsguard
