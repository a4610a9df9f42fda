// Hashing a JSON string literal without decoding it into memory: a write's
// content can be megabytes, and the guard needs only its hash.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/file_state.hpp"

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
const char* decode_json_string(const char* at, const char* end, ByteSink& sink);

// A ByteSink that appends to a std::string.
class StringSink final : public ByteSink {
public:
  explicit StringSink(std::string& out) : m_out(out) {}
  void append(const char* bytes, std::size_t size) override { m_out.append(bytes, size); }

private:
  std::string& m_out;
};

// The XXH3-128 of the bytes the JSON string literal `literal` (quotes
// included) decodes to: what hash_bytes() gives for the decoded string.
// Nothing unless `literal` is a well-formed JSON string whose bytes are valid
// UTF-8 and whose escapes hold no lone surrogate; the caller then takes the
// full parser's path, which reads such strings as the upstream does.
std::optional<ContentHash> hash_json_string(std::string_view literal);

} // namespace fsguard
