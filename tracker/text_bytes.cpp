#include "tracker/text_bytes.hpp"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace fsguard {

namespace {

// `size` bytes from malloc(); throws std::bad_alloc as operator new does.
char* allocate(std::size_t size)
{
  auto* bytes = static_cast<char*>(std::malloc(size == 0 ? 1 : size));
  if (bytes == nullptr) {
    throw std::bad_alloc();
  }
  return bytes;
}

} // namespace

void TextBytes::Free::operator()(char* bytes) const
{
  std::free(bytes);
}

TextBytes::TextBytes(TextBytes&& other) noexcept
  : m_bytes(std::move(other.m_bytes)), m_size(std::exchange(other.m_size, 0)),
    m_capacity(std::exchange(other.m_capacity, 0))
{
}

TextBytes& TextBytes::operator=(TextBytes&& other) noexcept
{
  if (this != &other) {
    m_bytes = std::move(other.m_bytes);
    m_size = std::exchange(other.m_size, 0);
    m_capacity = std::exchange(other.m_capacity, 0);
  }
  return *this;
}

TextBytes TextBytes::with_room(std::size_t capacity)
{
  TextBytes text;
  text.m_bytes.reset(allocate(capacity));
  text.m_capacity = capacity;
  return text;
}

TextBytes TextBytes::copy_of(std::string_view text)
{
  TextBytes copy = with_room(text.size());
  if (!text.empty()) {
    std::memcpy(copy.data(), text.data(), text.size());
  }
  copy.m_size = text.size();
  return copy;
}

void TextBytes::set_size(std::size_t size)
{
  assert(size <= m_capacity);
  m_size = size <= m_capacity ? size : m_capacity;
}

void TextBytes::shrink_to_fit()
{
  if (m_bytes == nullptr || m_capacity == m_size) {
    return;
  }
  // realloc() to a smaller size does not fail in glibc; where it would, the
  // larger block stays, as it is.
  if (auto* smaller = static_cast<char*>(std::realloc(m_bytes.get(), m_size == 0 ? 1 : m_size))) {
    static_cast<void>(m_bytes.release());
    m_bytes.reset(smaller);
    m_capacity = m_size;
  }
}

} // namespace fsguard
