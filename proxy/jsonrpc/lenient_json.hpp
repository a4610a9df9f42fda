// JSON as the server reads it: how deep fsguard lets a message nest, and
// what Node's JSON.parse (which the MCP SDK reads each line with) reads
// otherwise than nlohmann's parser, so that fsguard judges the message the
// server will actually see.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fsguard {

// The deepest nesting of arrays and objects fsguard accepts in a message.
// MCP messages are shallow; the limit keeps recursion in the JSON library
// bounded whatever a peer sends.
inline constexpr std::size_t k_max_nesting = 128;

// The deepest nesting of arrays and objects in `text` (strings skipped).
std::size_t nesting_depth(std::string_view text);

// Why Node's JSON.parse, which the MCP SDK reads each line with, rejects
// `line`, which nlohmann's parser reads: it begins with a UTF-8 byte-order
// mark (which nlohmann skips), or holds a NUL byte (where nlohmann stops
// reading). "" if neither.
std::string_view json_parse_rejects(std::string_view line);

// `text` with each "\uXXXX" escape of a lone UTF-16 surrogate replaced by
// "\ufffd": JSON.parse accepts them, and Node turns them into U+FFFD when a
// string becomes a file name; nlohmann rejects them. Nothing if none.
std::optional<std::string> replace_lone_surrogates(std::string_view text);

// `text` with each number too large for a double (1e400, which JSON.parse
// reads as Infinity and nlohmann rejects) written as the largest double of
// its sign. Nothing if none.
std::optional<std::string> replace_infinite_numbers(std::string_view text);

} // namespace fsguard
