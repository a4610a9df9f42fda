#include "proxy/json_string.hpp"

#include <utf8proc.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

using Byte = unsigned char;

constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
constexpr std::uint64_t k_highs = 0x8080808080808080ULL;

// Whether any of the 8 bytes in `word` is zero (may also flag a byte after
// a zero one, which only sends the caller to its byte loop).
constexpr std::uint64_t any_zero_byte(std::uint64_t word)
{
  return (word - k_ones) & ~word & k_highs;
}

// The bytes of `word` that need a closer look: not ASCII, a control
// character, a quote or a backslash. Each such byte has its high bit set in
// the mask; so may bytes after the first one, never bytes before it.
std::uint64_t special_bytes(std::uint64_t word)
{
  const std::uint64_t non_ascii = word & k_highs;
  const std::uint64_t control = (word - k_ones * 0x20) & ~word & k_highs; // a byte below 0x20
  const std::uint64_t quote = any_zero_byte(word ^ (k_ones * '"'));
  const std::uint64_t backslash = any_zero_byte(word ^ (k_ones * '\\'));
  return non_ascii | control | quote | backslash;
}

// Whether `byte` stands for itself in a JSON string and in UTF-8 alike:
// printable ASCII other than a quote or a backslash.
bool is_plain(Byte byte)
{
  return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
}

// Skips plain bytes 16 at a time (SSE2, which every x86-64 CPU has); stops
// at the first byte that is not plain, or where fewer than 16 are left.
const Byte* skip_plain_blocks(const Byte* at, const Byte* end)
{
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - at >= 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    // A signed compare: bytes from 0x80 up are negative, so "below a space"
    // finds control characters and non-ASCII bytes at once.
    const __m128i special = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash)),
      _mm_cmplt_epi8(block, space));
    if (const int mask = _mm_movemask_epi8(special); mask != 0) {
      return at + std::countr_zero(static_cast<unsigned>(mask));
    }
    at += 16;
  }
#endif
  return at;
}

// The first byte from `at` that is not plain, or `end`.
const Byte* next_special_byte(const Byte* at, const Byte* end)
{
  static_assert(std::endian::native == std::endian::little, "the first special byte is the lowest");
  at = skip_plain_blocks(at, end);
  while (end - at >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, at, sizeof word);
    if (const std::uint64_t special = special_bytes(word); special != 0) {
      return at + std::countr_zero(special) / 8;
    }
    at += 8;
  }
  while (at < end && is_plain(*at)) {
    ++at;
  }
  return at;
}

// Writes the UTF-8 form of `code_point` to `out`; returns its length.
std::size_t encode_utf8(std::int32_t code_point, Byte* out)
{
  return static_cast<std::size_t>(utf8proc_encode_char(code_point, out));
}

// Decodes the escape at `at` (its backslash) into `out`; returns how many
// input bytes it used (0: invalid) and sets `written`.
std::size_t decode_escape(const Byte* at, const Byte* end, Byte* out, std::size_t& written)
{
  if (end - at < 2) {
    return 0;
  }
  written = 1;
  switch (at[1]) {
  case '"': out[0] = '"'; return 2;
  case '\\': out[0] = '\\'; return 2;
  case '/': out[0] = '/'; return 2;
  case 'b': out[0] = '\b'; return 2;
  case 'f': out[0] = '\f'; return 2;
  case 'n': out[0] = '\n'; return 2;
  case 'r': out[0] = '\r'; return 2;
  case 't': out[0] = '\t'; return 2;
  case 'u': break;
  default: return 0;
  }
  const std::string_view escapes(reinterpret_cast<const char*>(at), static_cast<std::size_t>(end - at));
  const int unit = escaped_unit(escapes, 0);
  if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) {
    return 0; // not hex, or a lone low surrogate
  }
  if (unit < 0xD800 || unit > 0xDBFF) {
    written = encode_utf8(unit, out);
    return 6;
  }
  // A high surrogate must be followed by a low one.
  const int low = escaped_unit(escapes, 6);
  if (low < 0xDC00 || low > 0xDFFF) {
    return 0;
  }
  const int code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  written = encode_utf8(code_point, out);
  return 12;
}

} // namespace

const char* plain_string_end(const char* begin, const char* end_of_text)
{
  const auto* const end = reinterpret_cast<const Byte*>(end_of_text);
  const Byte* at = next_special_byte(reinterpret_cast<const Byte*>(begin), end);
  return at != end && *at == '"' ? reinterpret_cast<const char*>(at) : nullptr;
}

namespace {

// Gathers the pieces a decoded string comes in (runs of plain bytes between
// escapes, and the escapes' bytes) and hands them on in blocks: a sink that
// hashes pays per call, and a text with a newline every 80 bytes would
// otherwise call it twice per line.
class StagedSink {
public:
  explicit StagedSink(ByteSink& sink) : m_sink(sink) {}
  StagedSink(const StagedSink&) = delete;
  StagedSink& operator=(const StagedSink&) = delete;
  ~StagedSink() = default;

  void append(const Byte* bytes, std::size_t size)
  {
    if (m_used + size > m_block.size()) {
      flush();
      if (size > m_block.size() / 2) {
        m_sink.append(reinterpret_cast<const char*>(bytes), size);
        return;
      }
    }
    std::memcpy(m_block.data() + m_used, bytes, size);
    m_used += size;
  }

  void flush()
  {
    if (m_used > 0) {
      m_sink.append(reinterpret_cast<const char*>(m_block.data()), m_used);
      m_used = 0;
    }
  }

private:
  ByteSink& m_sink;
  std::array<Byte, 4096> m_block;
  std::size_t m_used = 0;
};

} // namespace

const char* decode_json_string(const char* begin, const char* end_of_text, ByteSink& sink)
{
  const auto* at = reinterpret_cast<const Byte*>(begin);
  const auto* const end = reinterpret_cast<const Byte*>(end_of_text);
  StagedSink staged(sink);
  const Byte* run = at; // the start of bytes passed on as they stand
  const auto pass_run = [&](const Byte* until) {
    if (until > run) {
      staged.append(run, static_cast<std::size_t>(until - run));
    }
  };
  for (;;) {
    at = next_special_byte(at, end);
    if (at == end) {
      return nullptr; // no closing quote
    }
    const Byte byte = *at;
    if (byte == '"') {
      pass_run(at);
      staged.flush();
      return reinterpret_cast<const char*>(at + 1);
    }
    if (byte >= 0x80) {
      const Utf8Sequence sequence = utf8_sequence(
        std::string_view(reinterpret_cast<const char*>(at), static_cast<std::size_t>(end - at)), 0);
      if (!sequence.valid) {
        return nullptr;
      }
      at += sequence.length;
    } else if (byte == '\\') {
      pass_run(at);
      std::array<Byte, 4> decoded{};
      std::size_t written = 0;
      const std::size_t used = decode_escape(at, end, decoded.data(), written);
      if (used == 0) {
        return nullptr;
      }
      staged.append(decoded.data(), written);
      at += used;
      run = at;
    } else {
      return nullptr; // a control character
    }
  }
}

} // namespace fsguard
