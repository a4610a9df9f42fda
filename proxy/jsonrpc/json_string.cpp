#include "proxy/jsonrpc/json_string.hpp"

#include <utf8proc.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "tracker/cpu_features.hpp"
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

#if defined(__SSE2__)
// The bytes of `block` that are not plain, one bit each (bit i: byte i).
unsigned special_mask_16(__m128i block)
{
  // Flipping bit 1 makes a quote (0x22) a byte below 0x21 and leaves the
  // control characters below it, and a signed compare counts the bytes
  // from 0x80 up as negative: one compare finds the three kinds. (It asks
  // for the plain ones, "above 0x20": GCC 12 makes "below 0x21" two
  // instructions.)
  const __m128i quote_as_space = _mm_xor_si128(block, _mm_set1_epi8(0x02));
  const __m128i plain = _mm_andnot_si128(_mm_cmpeq_epi8(block, _mm_set1_epi8('\\')),
                                         _mm_cmpgt_epi8(quote_as_space, _mm_set1_epi8(0x20)));
  return ~static_cast<unsigned>(_mm_movemask_epi8(plain)) & 0xFFFFU;
}
#endif

// `special`, the first byte of a string body that is not plain, if it is
// the closing quote; nullptr otherwise.
const Byte* quote_or_null(const Byte* special)
{
  return *special == '"' ? special : nullptr;
}

// The closing quote of the plain string body from `at`, as plain_string_end()
// finds it. A key or a short value ends in the first block, which returns
// at once.
const Byte* plain_closing_quote(const Byte* at, const Byte* end)
{
  static_assert(std::endian::native == std::endian::little, "the first special byte is the lowest");
#if defined(__SSE2__)
  // 16 bytes at a time: SSE2, which every x86-64 CPU has.
  while (end - at >= 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    if (const unsigned mask = special_mask_16(block); mask != 0) {
      return quote_or_null(at + std::countr_zero(mask));
    }
    at += 16;
  }
#endif
  while (end - at >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, at, sizeof word);
    if (const std::uint64_t special = special_bytes(word); special != 0) {
      return quote_or_null(at + std::countr_zero(special) / 8);
    }
    at += 8;
  }
  while (at < end && is_plain(*at)) {
    ++at;
  }
  return at < end ? quote_or_null(at) : nullptr;
}

// Writes the UTF-8 form of `code_point` to `out`; returns its length.
std::size_t encode_utf8(std::int32_t code_point, Byte* out)
{
  return static_cast<std::size_t>(utf8proc_encode_char(code_point, out));
}

// Decodes the "\\u" escape at `at` (its backslash) into `out` as UTF-8;
// returns how many input bytes it used (0: invalid) and sets `written`.
// (The two-character escapes are k_simple_escapes'.)
std::size_t decode_unicode_escape(const Byte* at, const Byte* end, Byte* out, std::size_t& written)
{
  if (end - at < 2 || at[1] != 'u') {
    return 0;
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
  return reinterpret_cast<const char*>(plain_closing_quote(reinterpret_cast<const Byte*>(begin),
                                                          reinterpret_cast<const Byte*>(end_of_text)));
}

namespace {

enum class ChunkEnd {
  closed,  // the closing quote was reached
  full,    // `room` bytes were written; more follow
  invalid, // the string is malformed or needs the full parser
};

struct Chunk {
  const Byte* at = nullptr; // where decoding stopped (past the quote if closed)
  std::size_t written = 0;
  ChunkEnd end = ChunkEnd::invalid;
};

// What each two-character escape ("\\n") stands for, by its second
// character; 0 where it is not one ("\\u" has four hex digits to read).
constexpr std::array<Byte, 256> k_simple_escapes = [] {
  std::array<Byte, 256> table{};
  table['"'] = '"';
  table['\\'] = '\\';
  table['/'] = '/';
  table['b'] = '\b';
  table['f'] = '\f';
  table['n'] = '\n';
  table['r'] = '\r';
  table['t'] = '\t';
  return table;
}();

// Notes in `facts` what the UTF-8 of a "\\u" escape, which begins with
// `lead`, wrote: a code point from 0x80 up begins with a byte from 0x80 up,
// and "\\u000d" is a carriage return.
void note_unicode_escape(Byte lead, DecodedFacts& facts)
{
  if (lead >= 0x80) {
    facts.non_ascii = true;
  } else if (lead == '\r') {
    facts.carriage_return = true;
  }
}

// Bytes a chunk may write past `room`: a whole block, stored before it is
// known how much of it is plain.
constexpr std::size_t k_slack = 32;

// Each byte's Utf8Lead (tracker/unicode.hpp), looked up once: a UTF-8
// sequence in a text is checked without a call.
const std::array<Utf8Lead, 256> k_utf8_leads = [] {
  std::array<Utf8Lead, 256> table{};
  for (std::size_t byte = 0; byte < table.size(); ++byte) {
    table[byte] = utf8_lead(static_cast<unsigned char>(byte));
  }
  return table;
}();

// The length of the UTF-8 sequence whose lead byte (from 0x80 up) is at
// `at`, if it is whole and valid before `end`, as utf8_sequence() finds it;
// 0 otherwise. Where 4 bytes are left, without a call or a check of the
// end: prose holds a non-ASCII character every few words.
std::size_t valid_utf8_length(const Byte* at, const Byte* end)
{
  if (end - at < 4) {
    const Utf8Sequence sequence = utf8_sequence(
      std::string_view(reinterpret_cast<const char*>(at), static_cast<std::size_t>(end - at)), 0);
    return sequence.valid ? sequence.length : 0;
  }
  const Utf8Lead& lead = k_utf8_leads[at[0]];
  if (lead.continuation_bytes <= 0 || at[1] < lead.second_low || at[1] > lead.second_high) {
    return 0;
  }
  for (int index = 2; index <= lead.continuation_bytes; ++index) {
    if ((at[index] & 0xC0) != 0x80) {
      return 0;
    }
  }
  return static_cast<std::size_t>(lead.continuation_bytes) + 1;
}

// Copies the UTF-8 sequence at `at` (its lead byte, from 0x80 up) to `out`
// if it is whole and valid before `end`; returns its length, or 0 (nothing
// copied). Where 4 bytes are there to read, copied as 4 (one move): `out`
// must hold 4.
std::size_t copy_utf8_sequence(const Byte* at, const Byte* end, Byte* out)
{
  const std::size_t length = valid_utf8_length(at, end);
  if (length != 0 && end - at >= 4) {
    std::memcpy(out, at, 4); // a constant size: a move, not a call
  } else if (length != 0) {
    std::memcpy(out, at, length);
  }
  return length;
}

#if defined(__SSE2__)
// Copies the 16 bytes at `at` to `out` and tells which are not plain, one
// bit each (bit i: byte i).
unsigned copy_block_16(const Byte* at, Byte* out)
{
  const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), block);
  return special_mask_16(block);
}
#endif

#if defined(__x86_64__)
// The same for 32 bytes, on a CPU with AVX2 (see decode_chunk_avx2); 0 at
// once when all are plain: a vptest, not a movemask and a compare, a block
// of text.
__attribute__((target("avx2"))) unsigned copy_block_32(const Byte* at, Byte* out)
{
  const __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), block);
  const __m256i quote_as_space = _mm256_xor_si256(block, _mm256_set1_epi8(0x02)); // as special_mask_16
  const __m256i plain = _mm256_andnot_si256(_mm256_cmpeq_epi8(block, _mm256_set1_epi8('\\')),
                                            _mm256_cmpgt_epi8(quote_as_space, _mm256_set1_epi8(0x20)));
  if (_mm256_testc_si256(plain, _mm256_set1_epi8(-1)) != 0) {
    return 0; // all bits of `plain` set
  }
  const unsigned mask = ~static_cast<unsigned>(_mm256_movemask_epi8(plain));
  if (mask == 0) {
    __builtin_unreachable(); // vptest found a byte not plain: the caller need not check again
  }
  return mask;
}
#endif

// The two-character escapes whose byte leaves no fact to note: all but
// "\\r" (DecodedFacts::carriage_return), the one the block loop below
// leaves to decode_chunk, as "\\u".
constexpr std::array<Byte, 256> k_escapes_without_facts = [] {
  std::array<Byte, 256> table = k_simple_escapes;
  table['r'] = 0;
  return table;
}();

// The byte the two-character escape at `at` stands for, if it is one of
// k_escapes_without_facts; 0 otherwise (no backslash at `at`, or another
// escape). "\\n", one a line of text, is told by one 16-bit compare, not
// two bytes and a table. `at` + 1 must be there to read.
Byte escape_without_facts(const Byte* at)
{
  static_assert(std::endian::native == std::endian::little, "the backslash is the low byte");
  constexpr std::uint16_t k_newline_escape = '\\' | ('n' << 8);
  std::uint16_t pair = 0;
  std::memcpy(&pair, at, sizeof pair);
  if (pair == k_newline_escape) [[likely]] {
    return '\n';
  }
  return at[0] == '\\' ? k_escapes_without_facts[at[1]] : 0;
}

// How far decode_plain_blocks() went: input bytes read, bytes written;
// and whether it wrote a UTF-8 sequence (DecodedFacts::non_ascii).
struct BlockRun {
  std::size_t read = 0;
  std::size_t written = 0;
  bool non_ascii = false;
};

// Decodes from `at` a block of `k_width` at a time: plain bytes, the
// two-character escapes in k_escapes_without_facts ("\\n" and its kind, one
// every line of a text file) and valid UTF-8 sequences (a few a line of
// prose, written as they stand), without leaving the loop. Stops at any
// other special byte, where fewer than k_width + 1 bytes are left before `end`, or
// once the input read reaches `room`. A block is stored whole before its
// first special byte is found, so `out` must hold `room` + k_slack bytes.
// The loop makes no call, so the compare's constants stay in registers from
// one block to the next; a plain block costs 11 instructions with AVX2 (a
// load, a store, four to find the special bytes, a vptest and the loop's
// three), a "\\n" some 14 more.
template <std::size_t k_width>
BlockRun decode_plain_blocks(const Byte* at, const Byte* end, Byte* out, std::size_t room)
{
  const auto left = static_cast<std::size_t>(end - at);
  if (left <= k_width) {
    return {};
  }
  // Blocks start before `stop`. A byte is left after each block, so the one
  // after a backslash in it is there to read without a check. A byte read
  // is written once at most, so fewer than `room` are written wherever a
  // block starts: what it stores stays within the slack.
  const std::size_t stop = std::min(room, left - k_width);
  // Byte `read` goes to `shifted` + `read`, where `shifted` is `out` less
  // the escapes so far as an address: each, two bytes read for one written,
  // sets the rest of the output a byte back. One count moves on a block,
  // and the store takes one register and that count.
  std::size_t read = 0;
  auto shifted = reinterpret_cast<std::uintptr_t>(out);
  const std::uintptr_t room_end = reinterpret_cast<std::uintptr_t>(out) + room;
  bool non_ascii = false;
  while (read < stop) {
    unsigned mask = 0;
    Byte* const stored = reinterpret_cast<Byte*>(shifted + read);
    if constexpr (k_width == 32) {
#if defined(__x86_64__)
      mask = copy_block_32(at + read, stored); // only instantiated there
#endif
    } else {
#if defined(__SSE2__)
      mask = copy_block_16(at + read, stored); // only instantiated there
#endif
    }
    if (mask == 0) {
      read += k_width;
      continue;
    }
    read += static_cast<unsigned>(std::countr_zero(mask));
    const Byte escaped = escape_without_facts(at + read);
    if (escaped == 0) {
      if (at[read] < 0x80) {
        break; // for decode_chunk's byte by byte path
      }
      // A UTF-8 sequence: the output keeps its place, and the next block
      // starts after it. Its bytes past the block are copied here, 4 at
      // once: only below `room`, as a block starts, so that they stay within
      // the slack (a block may start just below `room`, and the sequence be
      // its last byte).
      const std::uintptr_t written_at = shifted + read;
      const std::size_t length =
        written_at >= room_end ? 0 : copy_utf8_sequence(at + read, end, reinterpret_cast<Byte*>(written_at));
      if (length == 0) {
        break; // invalid, cut short by `end`, or at `room`: decode_chunk tells which
      }
      non_ascii = true;
      read += length;
      continue;
    }
    // The block's bytes after the escape were stored a byte too far on: the
    // next block, stored from just past the escaped byte, overwrites them.
    *reinterpret_cast<Byte*>(shifted + read) = escaped;
    read += 2;
    --shifted;
  }
  return {read, shifted + read - reinterpret_cast<std::uintptr_t>(out), non_ascii};
}

// Decodes the last bytes before `end`, no more than a block, as
// decode_plain_blocks() does, from a copy padded with zero bytes: a block
// cannot be read past `end`, and decode_chunk's byte by byte path costs
// some 30 instructions a byte where a block costs 14 (callgrind). A zero
// byte is a control character, so the blocks stop at the padding as at any
// special byte, and decode_chunk meets the real end (a backslash just before
// it is no escape either: k_escapes_without_facts[0] is 0).
template <std::size_t k_width>
BlockRun decode_plain_tail(const Byte* at, const Byte* end, Byte* out, std::size_t room)
{
  // Two blocks: decode_plain_blocks starts blocks in the first only.
  std::array<Byte, 2 * k_width> padded{};
  std::memcpy(padded.data(), at, static_cast<std::size_t>(end - at));
  return decode_plain_blocks<k_width>(padded.data(), padded.data() + padded.size(), out, room);
}

// Decodes the string body from `at` into `out` until its closing quote, or
// until `room` bytes are written, and notes in `facts` what it wrote. `out`
// holds `room` + k_slack bytes: plain bytes and the common escapes are
// decoded a block of `k_width` at a time (decode_plain_blocks), so a line of
// text costs no call and no byte loop; the bytes short of a block at the
// end, from a padded copy (decode_plain_tail).
// (k_width 1: all a byte at a time.) Facts are only ever set: a plain block
// has none to note.
template <std::size_t k_width>
Chunk decode_chunk(const Byte* at, const Byte* end, Byte* out, std::size_t room,
                   DecodedFacts& facts)
{
  static_assert(k_width <= k_slack && 4 <= k_slack, "a block, or an escape's 4 bytes, fit the slack");
  std::size_t written = 0;
  for (;;) {
    if (written >= room) {
      return {at, written, ChunkEnd::full};
    }
    if constexpr (k_width > 1) {
      const BlockRun run = static_cast<std::size_t>(end - at) > k_width
                             ? decode_plain_blocks<k_width>(at, end, out + written, room - written)
                             : decode_plain_tail<k_width>(at, end, out + written, room - written);
      at += run.read;
      written += run.written;
      if (run.non_ascii) {
        facts.non_ascii = true;
      }
      if (written >= room) {
        return {at, written, ChunkEnd::full}; // the block ran past `room`: the rest in the next chunk
      }
    }
    // A plain byte here is where the blocks stopped short of the tail, or at
    // `room` in input bytes before the output reached it: one byte on, and
    // the blocks again (for k_width 1, every byte).
    if (at < end && is_plain(*at)) {
      out[written++] = *at++;
      continue;
    }
    if (at == end) {
      return {at, written, ChunkEnd::invalid}; // no closing quote
    }
    const Byte byte = *at;
    if (byte == '"') {
      return {at + 1, written, ChunkEnd::closed};
    }
    if (byte >= 0x80) {
      // A sequence is 4 bytes at most: within the slack.
      const std::size_t length = copy_utf8_sequence(at, end, out + written);
      if (length == 0) {
        return {at, written, ChunkEnd::invalid};
      }
      facts.non_ascii = true;
      at += length;
      written += length;
    } else if (byte == '\\') {
      if (end - at >= 2) {
        if (const Byte simple = k_simple_escapes[at[1]]; simple != 0) {
          out[written++] = simple; // "\n" and its kind: by far the most common
          if (simple == '\r') {
            facts.carriage_return = true;
          }
          at += 2;
          continue;
        }
      }
      std::size_t decoded = 0;
      const std::size_t used = decode_unicode_escape(at, end, out + written, decoded);
      if (used == 0) {
        return {at, written, ChunkEnd::invalid};
      }
      note_unicode_escape(out[written], facts);
      at += used;
      written += decoded;
    } else {
      return {at, written, ChunkEnd::invalid}; // a control character
    }
  }
}

#if defined(__x86_64__)
// decode_chunk with 32-byte blocks, built for AVX2: flatten inlines the
// template and copy_block_32 into this one AVX2 function.
__attribute__((target("avx2"), flatten)) Chunk decode_chunk_avx2(const Byte* at, const Byte* end,
                                                                 Byte* out, std::size_t room,
                                                                 DecodedFacts& facts)
{
  return decode_chunk<32>(at, end, out, room, facts);
}
#endif

using ChunkDecoder = Chunk (*)(const Byte*, const Byte*, Byte*, std::size_t, DecodedFacts&);

// The decoder for `simd` on this CPU.
ChunkDecoder chunk_decoder(Simd simd)
{
#if defined(__x86_64__)
  if (simd == Simd::best && cpu_has_avx2()) {
    return decode_chunk_avx2;
  }
#endif
#if defined(__SSE2__)
  if (simd != Simd::none) {
    return decode_chunk<16>;
  }
#endif
  return decode_chunk<1>;
}

// Decodes the string body from `begin` a block at a time, handing each
// block to `sink` and noting in `facts` what the decoder saw.
const char* decode_in_blocks(const char* begin, const char* end_of_text, ByteSink& sink,
                             Simd simd, DecodedFacts& facts)
{
  // Decoded a block at a time and handed on in blocks: a sink that hashes
  // pays per call, and a text with a newline every 80 bytes would otherwise
  // call it twice per line. 6 KiB on the stack: a file of up to 6 KiB, as
  // most that an agent reads, decodes in one chunk and one call. Not more:
  // here glibc's memcpy copies a chunk of 8 KiB or more into the sink
  // another way, which callgrind counts at about an instruction a byte (a
  // 1 MiB read 2.55 M instructions with 8 or 16 KiB, 1.62 M with 6 KiB),
  // and a smaller chunk stays in L1 while it is handed on.
  constexpr std::size_t k_room = 6144;
  std::array<Byte, k_room + k_slack> block;
  const auto decode = chunk_decoder(simd);
  const auto* at = reinterpret_cast<const Byte*>(begin);
  const auto* const end = reinterpret_cast<const Byte*>(end_of_text);
  for (;;) {
    const Chunk chunk = decode(at, end, block.data(), k_room, facts);
    if (chunk.end == ChunkEnd::invalid) {
      return nullptr;
    }
    if (chunk.written > 0) {
      sink.append(reinterpret_cast<const char*>(block.data()), chunk.written);
    }
    if (chunk.end == ChunkEnd::closed) {
      return reinterpret_cast<const char*>(chunk.at);
    }
    at = chunk.at;
  }
}

} // namespace

const char* decode_json_string(const char* begin, const char* end_of_text, ByteSink& sink,
                               Simd simd)
{
  DecodedFacts unused;
  return decode_in_blocks(begin, end_of_text, sink, simd, unused);
}

const char* decode_json_string(const char* begin, const char* end_of_text, ByteSink& sink,
                               DecodedFacts& facts, Simd simd)
{
  return decode_in_blocks(begin, end_of_text, sink, simd, facts);
}

const char* decode_json_string(const char* begin, const char* end_of_text, DecodedText& out,
                               Simd simd)
{
  // One chunk, in the text's own room: no copy from a block on the stack.
  // The body decodes to no more bytes than it takes (an escape is shorter
  // than what it stands for, a UTF-8 sequence as long), so a chunk that
  // fills `room` has met no closing quote.
  const auto room = static_cast<std::size_t>(end_of_text - begin);
  out.text = TextBytes::with_room(room + k_slack);
  out.facts = {};
  const Chunk chunk = chunk_decoder(simd)(reinterpret_cast<const Byte*>(begin),
                                          reinterpret_cast<const Byte*>(end_of_text),
                                          reinterpret_cast<Byte*>(out.text.data()), room, out.facts);
  if (chunk.end != ChunkEnd::closed) {
    return nullptr;
  }
  out.text.set_size(chunk.written);
  return reinterpret_cast<const char*>(chunk.at);
}

std::optional<ContentTraits> traits_from_facts(const DecodedFacts& facts)
{
  if (facts.carriage_return) {
    return std::nullopt;
  }
  return ContentTraits{.valid_utf8 = true, .bare_cr = false};
}

ContentTraits content_traits(const DecodedText& decoded)
{
  if (const auto traits = traits_from_facts(decoded.facts)) {
    return *traits;
  }
  return content_traits(decoded.text.view());
}

bool holds_replacement_character(const DecodedText& decoded)
{
  constexpr std::string_view k_replacement = "\xEF\xBF\xBD"; // U+FFFD in UTF-8
  return decoded.facts.non_ascii && decoded.text.view().find(k_replacement) != std::string_view::npos;
}

} // namespace fsguard
