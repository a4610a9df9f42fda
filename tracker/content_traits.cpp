#include "tracker/content_traits.hpp"

#include <cstdint>
#include <cstring>

#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

// How many bytes from `at` on are ASCII, 32 at a time (most text is).
std::size_t ascii_run(std::string_view bytes, std::size_t at)
{
  constexpr std::uint64_t k_high_bits = 0x8080808080808080ULL;
  std::size_t end = at;
  while (end + 32 <= bytes.size()) {
    std::uint64_t words[4];
    std::memcpy(words, bytes.data() + end, sizeof words);
    if (((words[0] | words[1] | words[2] | words[3]) & k_high_bits) != 0) {
      break;
    }
    end += 32;
  }
  while (end + 8 <= bytes.size()) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + end, 8);
    if ((word & k_high_bits) != 0) {
      break;
    }
    end += 8;
  }
  while (end < bytes.size() && static_cast<unsigned char>(bytes[end]) < 0x80) {
    ++end;
  }
  return end - at;
}

bool is_continuation(unsigned char byte)
{
  return (byte & 0xC0) == 0x80;
}

} // namespace

void ContentScanner::append(std::string_view bytes)
{
  if (bytes.empty()) {
    return;
  }
  if (!m_invalid) {
    scan_utf8(bytes);
  }
  if (!m_bare_cr) {
    scan_carriage_returns(bytes);
  }
}

void ContentScanner::scan_utf8(std::string_view bytes)
{
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[at]);
    if (m_continuations > 0) {
      if (byte < m_next_low || byte > m_next_high) {
        m_invalid = true;
        return;
      }
      --m_continuations;
      m_next_low = 0x80;
      m_next_high = 0xBF;
      ++at;
      continue;
    }
    if (byte < 0x80) {
      at += ascii_run(bytes, at);
      continue;
    }
    const Utf8Lead lead = utf8_lead(byte);
    if (lead.continuation_bytes <= 0) {
      m_invalid = true;
      return;
    }
    const auto count = static_cast<std::size_t>(lead.continuation_bytes);
    if (at + count < bytes.size()) {
      // The whole sequence is in this piece: check it at once.
      const auto second = static_cast<unsigned char>(bytes[at + 1]);
      bool valid = second >= lead.second_low && second <= lead.second_high;
      for (std::size_t next = 2; valid && next <= count; ++next) {
        valid = is_continuation(static_cast<unsigned char>(bytes[at + next]));
      }
      if (!valid) {
        m_invalid = true;
        return;
      }
      at += count + 1;
      continue;
    }
    m_continuations = lead.continuation_bytes;
    m_next_low = lead.second_low;
    m_next_high = lead.second_high;
    ++at;
  }
}

void ContentScanner::scan_carriage_returns(std::string_view bytes)
{
  if (m_ends_with_cr && bytes.front() != '\n') {
    m_bare_cr = true;
    return;
  }
  for (const char* cr = static_cast<const char*>(std::memchr(bytes.data(), '\r', bytes.size()));
       cr != nullptr;) {
    const std::size_t after = static_cast<std::size_t>(cr - bytes.data()) + 1;
    if (after == bytes.size()) {
      m_ends_with_cr = true;
      return;
    }
    if (bytes[after] != '\n') {
      m_bare_cr = true;
      return;
    }
    cr = static_cast<const char*>(std::memchr(bytes.data() + after, '\r', bytes.size() - after));
  }
  m_ends_with_cr = false;
}

ContentTraits ContentScanner::traits() const
{
  return ContentTraits{!m_invalid && m_continuations == 0, m_bare_cr || m_ends_with_cr};
}

ContentTraits content_traits(std::string_view bytes)
{
  ContentScanner scanner;
  scanner.append(bytes);
  return scanner.traits();
}

} // namespace fsguard
