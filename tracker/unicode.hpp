// Unicode helpers for path names (utf8proc: the maintained standard library
// for normalisation, also used by Julia and PostgreSQL).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fsguard {

// The value of the hexadecimal digit `c`, or -1 (for \uXXXX and %XX).
int hex_digit(char c);

// `text` in Normalization Form C, or nothing if `text` is not valid UTF-8.
std::optional<std::string> to_nfc(std::string_view text);

// `bytes` with each invalid UTF-8 sequence replaced by U+FFFD the way
// WHATWG decoders (and so Node.js) do, or nothing if `bytes` is valid.
std::optional<std::string> replace_invalid_utf8(std::string_view bytes);

// True if `text` begins or ends with a character that JavaScript's
// String.prototype.trim() would remove (ASCII and Unicode white space).
bool has_trimmable_edge(std::string_view text);

} // namespace fsguard
