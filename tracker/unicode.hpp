// Unicode helpers for path names (utf8proc: the maintained standard library
// for normalisation, also used by Julia and PostgreSQL).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fsguard {

// The value of the hexadecimal digit `c`, or -1 (for \uXXXX and %XX).
int hex_digit(char c);

// The UTF-16 code unit of the JSON escape "\uXXXX" at `at` in `text`, or -1
// if there is none.
int escaped_unit(std::string_view text, std::size_t at);

// What a UTF-8 sequence that starts with the byte `lead` must hold (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF): how many
// continuation bytes follow (-1 if `lead` cannot start one, 0 for ASCII),
// and the range the first of them must fall in (the rest: 0x80 to 0xBF).
struct Utf8Lead {
  int continuation_bytes = -1;
  unsigned char second_low = 0x80;
  unsigned char second_high = 0xBF;
};
Utf8Lead utf8_lead(unsigned char lead);

// The UTF-8 sequence that starts at `at` in `bytes`: how many bytes of it
// fit its lead byte (at least 1; for an invalid one, its "maximal subpart",
// which WHATWG decoders replace by one U+FFFD), and whether they make a
// whole, valid sequence.
struct Utf8Sequence {
  std::size_t length = 1;
  bool valid = false;
};
Utf8Sequence utf8_sequence(std::string_view bytes, std::size_t at);

// `text` in Normalization Form C, or nothing if `text` is not valid UTF-8.
std::optional<std::string> to_nfc(std::string_view text);

// True if `text` (valid UTF-8) holds a code point that fsguard's Unicode
// tables do not assign: Node's newer tables may normalize it differently.
bool has_unassigned_code_point(std::string_view text);

// The Unicode version of fsguard's tables, e.g. "15.0.0".
std::string_view unicode_version();

// `bytes` with each invalid UTF-8 sequence replaced by U+FFFD the way
// WHATWG decoders (and so Node.js) do, or nothing if `bytes` is valid.
std::optional<std::string> replace_invalid_utf8(std::string_view bytes);

// True if `text` begins or ends with a character that JavaScript's
// String.prototype.trim() would remove (ASCII and Unicode white space).
bool has_trimmable_edge(std::string_view text);

} // namespace fsguard
