#include "tracker/content_traits.hpp"

#include <cstdint>
#include <cstring>

#include "tracker/cpu_features.hpp"
#include "tracker/unicode.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fsguard {

namespace {

// Which bytes end a run: those past 0x7F, and "\r" too where the run
// must also tell that there is no carriage return.
enum class RunOf { ascii, ascii_but_cr };

#if defined(__x86_64__)
// Where the run from `at` ends, to within 64 bytes (SSE2 is in every
// x86-64 CPU).
template <RunOf k_run>
std::size_t ascii_blocks_sse2(const char* data, std::size_t at, std::size_t size)
{
  const __m128i cr = _mm_set1_epi8('\r');
  while (at + 64 <= size) {
    const auto* block = reinterpret_cast<const __m128i*>(data + at);
    const __m128i b0 = _mm_loadu_si128(block);
    const __m128i b1 = _mm_loadu_si128(block + 1);
    const __m128i b2 = _mm_loadu_si128(block + 2);
    const __m128i b3 = _mm_loadu_si128(block + 3);
    __m128i any = _mm_or_si128(_mm_or_si128(b0, b1), _mm_or_si128(b2, b3));
    if constexpr (k_run == RunOf::ascii_but_cr) {
      any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b0, cr), _mm_cmpeq_epi8(b1, cr)),
                                           _mm_or_si128(_mm_cmpeq_epi8(b2, cr), _mm_cmpeq_epi8(b3, cr))));
    }
    if (_mm_movemask_epi8(any) != 0) {
      break;
    }
    at += 64;
  }
  return at;
}

// The same, to within 128 bytes, on a CPU with AVX2.
template <RunOf k_run>
__attribute__((target("avx2"))) std::size_t ascii_blocks_avx2(const char* data, std::size_t at,
                                                              std::size_t size)
{
  const __m256i cr = _mm256_set1_epi8('\r');
  while (at + 128 <= size) {
    const auto* block = reinterpret_cast<const __m256i*>(data + at);
    const __m256i b0 = _mm256_loadu_si256(block);
    const __m256i b1 = _mm256_loadu_si256(block + 1);
    const __m256i b2 = _mm256_loadu_si256(block + 2);
    const __m256i b3 = _mm256_loadu_si256(block + 3);
    __m256i any = _mm256_or_si256(_mm256_or_si256(b0, b1), _mm256_or_si256(b2, b3));
    if constexpr (k_run == RunOf::ascii_but_cr) {
      any = _mm256_or_si256(
        any, _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(b0, cr), _mm256_cmpeq_epi8(b1, cr)),
                             _mm256_or_si256(_mm256_cmpeq_epi8(b2, cr), _mm256_cmpeq_epi8(b3, cr))));
    }
    if (_mm256_movemask_epi8(any) != 0) {
      break;
    }
    at += 128;
  }
  return at;
}

#endif

// How many bytes from `at` on are ASCII (most text is), and not "\r" for
// RunOf::ascii_but_cr: in vector blocks where the CPU has them (4 KiB of
// ASCII in 400 instructions with AVX2, 900 with SSE2, 2,100 eight bytes at a
// time), then a word, then a byte at a time.
template <RunOf k_run>
std::size_t ascii_run(std::string_view bytes, std::size_t at)
{
  std::size_t end = at;
#if defined(__x86_64__)
  if (cpu_has_avx2()) {
    end = ascii_blocks_avx2<k_run>(bytes.data(), end, bytes.size());
  }
  end = ascii_blocks_sse2<k_run>(bytes.data(), end, bytes.size());
#endif
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
  constexpr std::uint64_t k_high_bits = 0x8080808080808080ULL;
  while (end + 8 <= bytes.size()) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + end, 8);
    std::uint64_t special = word & k_high_bits;
    if constexpr (k_run == RunOf::ascii_but_cr) {
      const std::uint64_t crs = word ^ (k_ones * '\r');
      special |= (crs - k_ones) & ~crs & k_high_bits; // a zero byte: a "\r"
    }
    if (special != 0) {
      break;
    }
    end += 8;
  }
  while (end < bytes.size() && static_cast<unsigned char>(bytes[end]) < 0x80
         && (k_run == RunOf::ascii || bytes[end] != '\r')) {
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
  if (!m_invalid && !m_bare_cr && m_continuations == 0 && !m_ends_with_cr
      && ascii_run<RunOf::ascii_but_cr>(bytes, 0) == bytes.size()) {
    return; // ASCII with no "\r", as most text is: one pass, and neither scan would change a thing
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
      at += ascii_run<RunOf::ascii>(bytes, at);
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
