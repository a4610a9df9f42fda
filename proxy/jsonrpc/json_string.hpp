// Decoding JSON strings piece by piece, into a string or straight into a
// hash: a write's content can be megabytes, and the guard needs only its
// hash.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/content_traits.hpp"
#include "tracker/text_bytes.hpp"

namespace fsguard {

// Where decode_json_string() puts the bytes it decodes, piece by piece.
class ByteSink {
public:
  virtual void append(const char* bytes, std::size_t size) = 0;

protected:
  ~ByteSink() = default;
};

// Decodes the body of a JSON string starting at `at` (just past its opening
// quote) up to `end`, passing the decoded bytes to `sink`. Returns the
// position just past the closing quote, or nullptr if the string is
// malformed or needs the full parser: invalid UTF-8 or a lone surrogate
// escape (which the upstream reads as U+FFFD), a control character, a bad
// escape, or no closing quote.
// `simd` picks how wide a scan may go: the widest the CPU runs (best), SSE2
// at most, or a byte at a time (none); the result is the same (the tests
// compare them).
enum class Simd { best, sse2, none };
const char* decode_json_string(const char* at, const char* end, ByteSink& sink,
                               Simd simd = Simd::best);

// The closing quote of the JSON string body starting at `at` (just past its
// opening quote), when everything up to it is printable ASCII with no
// escape: then the body is the string, as it stands. Nullptr otherwise
// (decode it with decode_json_string()), or if there is no quote before `end`.
const char* plain_string_end(const char* at, const char* end);

// What the decoder saw of the bytes it wrote, on its way: enough to know
// the ContentTraits of most texts without scanning them again.
struct DecodedFacts {
  bool non_ascii = false;       // a byte from 0x80 up was written
  bool carriage_return = false; // a "\r" was written (only an escape writes
                                // one: a raw control character is invalid)

  bool operator==(const DecodedFacts&) const = default;
};

// Decodes as decode_json_string() above, passing the bytes to `sink` and
// noting in `facts` what it saw of them.
const char* decode_json_string(const char* at, const char* end, ByteSink& sink,
                               DecodedFacts& facts, Simd simd = Simd::best);

// The ContentTraits of a text decode_json_string() decoded, from the
// `facts` it noted, when they tell them: the decoder refuses all but valid
// UTF-8, and a text with no "\r" has no bare one. Nothing when a "\r" was
// written: only a scan of the text tells whether a "\n" follows each.
std::optional<ContentTraits> traits_from_facts(const DecodedFacts& facts);

// A JSON string decoded, and what the decoder saw of it.
struct DecodedText {
  TextBytes text;
  DecodedFacts facts;
};

// Decodes as decode_json_string() above, into `out`, which it replaces: the
// bytes go straight into `out.text`, whose room is the body's length up to
// `end` (no text is longer than its JSON) and a few bytes of slack, as
// KeptTexts keeps it (it gives back a large spare room). Nothing of `out`
// is to be read when it returns nullptr.
const char* decode_json_string(const char* at, const char* end, DecodedText& out,
                               Simd simd = Simd::best);

// The ContentTraits of `decoded.text`: from its facts (traits_from_facts)
// when it holds no "\r", as most text does; else from a scan.
ContentTraits content_traits(const DecodedText& decoded);

// Whether `decoded.text` holds U+FFFD, which only a non-ASCII text can.
bool holds_replacement_character(const DecodedText& decoded);

// A ByteSink that appends to a std::string.
class StringSink final : public ByteSink {
public:
  explicit StringSink(std::string& out) : m_out(out) {}
  void append(const char* bytes, std::size_t size) override { m_out.append(bytes, size); }

private:
  std::string& m_out;
};

} // namespace fsguard
