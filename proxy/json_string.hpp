// Hashing a JSON string literal without decoding it into memory: a write's
// content can be megabytes, and the guard needs only its hash.
#pragma once

#include <optional>
#include <string_view>

#include "tracker/file_state.hpp"

namespace fsguard {

// The XXH3-128 of the bytes the JSON string literal `literal` (quotes
// included) decodes to: what hash_bytes() gives for the decoded string.
// Nothing unless `literal` is a well-formed JSON string whose bytes are valid
// UTF-8 and whose escapes hold no lone surrogate; the caller then takes the
// full parser's path, which reads such strings as the upstream does.
std::optional<ContentHash> hash_json_string(std::string_view literal);

} // namespace fsguard
