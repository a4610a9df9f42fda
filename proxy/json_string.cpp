#include "proxy/json_string.hpp"

#include <xxhash.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

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

// Whether any of the 8 bytes needs a closer look: not ASCII, a control
// character, a quote or a backslash.
bool any_special_byte(std::uint64_t word)
{
  const std::uint64_t non_ascii = word & k_highs;
  const std::uint64_t control = (word - k_ones * 0x20) & ~word & k_highs; // a byte below 0x20
  const std::uint64_t quote = any_zero_byte(word ^ (k_ones * '"'));
  const std::uint64_t backslash = any_zero_byte(word ^ (k_ones * '\\'));
  return (non_ascii | control | quote | backslash) != 0;
}

// The length of the valid UTF-8 sequence starting at `at` (before `end`),
// or 0 if it is invalid.
std::size_t utf8_sequence_length(const Byte* at, const Byte* end)
{
  const Utf8Lead lead = utf8_lead(at[0]);
  if (lead.continuation_bytes < 0) {
    return 0;
  }
  const auto length = static_cast<std::size_t>(lead.continuation_bytes) + 1;
  if (end - at < static_cast<std::ptrdiff_t>(length)
      || (length > 1 && (at[1] < lead.second_low || at[1] > lead.second_high))) {
    return 0;
  }
  for (std::size_t index = 2; index < length; ++index) {
    if (at[index] < 0x80 || at[index] > 0xBF) {
      return 0;
    }
  }
  return length;
}

// The UTF-16 code unit of the four hex digits at `at`, or -1.
int hex_unit(const Byte* at, const Byte* end)
{
  if (end - at < 4) {
    return -1;
  }
  int unit = 0;
  for (int index = 0; index < 4; ++index) {
    const int digit = hex_digit(static_cast<char>(at[index]));
    if (digit < 0) {
      return -1;
    }
    unit = unit * 16 + digit;
  }
  return unit;
}

// Appends the UTF-8 form of `code_point` to `out`; returns its length.
std::size_t encode_utf8(std::uint32_t code_point, Byte* out)
{
  if (code_point < 0x80) {
    out[0] = static_cast<Byte>(code_point);
    return 1;
  }
  if (code_point < 0x800) {
    out[0] = static_cast<Byte>(0xC0 | (code_point >> 6));
    out[1] = static_cast<Byte>(0x80 | (code_point & 0x3F));
    return 2;
  }
  if (code_point < 0x10000) {
    out[0] = static_cast<Byte>(0xE0 | (code_point >> 12));
    out[1] = static_cast<Byte>(0x80 | ((code_point >> 6) & 0x3F));
    out[2] = static_cast<Byte>(0x80 | (code_point & 0x3F));
    return 3;
  }
  out[0] = static_cast<Byte>(0xF0 | (code_point >> 18));
  out[1] = static_cast<Byte>(0x80 | ((code_point >> 12) & 0x3F));
  out[2] = static_cast<Byte>(0x80 | ((code_point >> 6) & 0x3F));
  out[3] = static_cast<Byte>(0x80 | (code_point & 0x3F));
  return 4;
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
  const int unit = hex_unit(at + 2, end);
  if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) {
    return 0; // not hex, or a lone low surrogate
  }
  if (unit < 0xD800 || unit > 0xDBFF) {
    written = encode_utf8(static_cast<std::uint32_t>(unit), out);
    return 6;
  }
  // A high surrogate must be followed by a low one.
  if (end - at < 12 || at[6] != '\\' || at[7] != 'u') {
    return 0;
  }
  const int low = hex_unit(at + 8, end);
  if (low < 0xDC00 || low > 0xDFFF) {
    return 0;
  }
  const auto code_point = 0x10000u + ((static_cast<std::uint32_t>(unit) - 0xD800u) << 10)
                          + (static_cast<std::uint32_t>(low) - 0xDC00u);
  written = encode_utf8(code_point, out);
  return 12;
}

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

} // namespace

const char* decode_json_string(const char* begin, const char* end_of_text, ByteSink& sink)
{
  const auto* at = reinterpret_cast<const Byte*>(begin);
  const auto* const end = reinterpret_cast<const Byte*>(end_of_text);
  const Byte* run = at; // the start of bytes passed on as they stand
  const auto pass_run = [&](const Byte* until) {
    if (until > run) {
      sink.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(until - run));
    }
  };
  while (at < end) {
    while (end - at >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, at, sizeof word);
      if (any_special_byte(word)) {
        break;
      }
      at += 8;
    }
    if (at >= end) {
      break;
    }
    const Byte byte = *at;
    if (byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\') {
      ++at;
    } else if (byte == '"') {
      pass_run(at);
      return reinterpret_cast<const char*>(at + 1);
    } else if (byte >= 0x80) {
      const std::size_t length = utf8_sequence_length(at, end);
      if (length == 0) {
        return nullptr;
      }
      at += length;
    } else if (byte == '\\') {
      pass_run(at);
      std::array<Byte, 4> decoded{};
      std::size_t written = 0;
      const std::size_t used = decode_escape(at, end, decoded.data(), written);
      if (used == 0) {
        return nullptr;
      }
      sink.append(reinterpret_cast<const char*>(decoded.data()), written);
      at += used;
      run = at;
    } else {
      return nullptr; // a control character
    }
  }
  return nullptr; // no closing quote
}

std::optional<ContentHash> hash_json_string(std::string_view literal)
{
  if (literal.size() < 2 || literal.front() != '"') {
    return std::nullopt;
  }
  class HashSink final : public ByteSink {
  public:
    explicit HashSink(XXH3_state_t* state) : m_state(state) {}
    void append(const char* bytes, std::size_t size) override
    {
      XXH3_128bits_update(m_state, bytes, size);
    }

  private:
    XXH3_state_t* m_state;
  };
  std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  if (!state) {
    return std::nullopt;
  }
  XXH3_128bits_reset(state.get());
  HashSink sink(state.get());
  const char* const end = literal.data() + literal.size();
  if (decode_json_string(literal.data() + 1, end, sink) != end) {
    return std::nullopt;
  }
  const XXH128_hash_t hash = XXH3_128bits_digest(state.get());
  return ContentHash{hash.high64, hash.low64};
}

} // namespace fsguard
