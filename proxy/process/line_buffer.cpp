#include "proxy/process/line_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace fsguard {

namespace {

std::size_t whole_pages(std::size_t bytes)
{
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

} // namespace

LineBuffer::LineBuffer(std::size_t bytes) : m_size(whole_pages(std::max<std::size_t>(bytes, 1)))
{
  void* data = ::mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    throw std::bad_alloc();
  }
  m_data = static_cast<char*>(data);
}

LineBuffer::~LineBuffer()
{
  ::munmap(m_data, m_size);
}

void LineBuffer::grow(std::size_t bytes)
{
  const std::size_t size = whole_pages(bytes);
  if (size <= m_size) {
    return;
  }
  void* data = ::mremap(m_data, m_size, size, MREMAP_MAYMOVE);
  if (data == MAP_FAILED) {
    throw std::bad_alloc();
  }
  m_data = static_cast<char*>(data);
  m_size = size;
}

void LineBuffer::release_unused(std::size_t keep)
{
  const std::size_t from = whole_pages(std::max(keep, m_used + m_reading));
  if (from < m_size) {
    ::madvise(m_data + from, m_size - from, MADV_DONTNEED);
  }
}

} // namespace fsguard
