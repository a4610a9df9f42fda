// Decoding the text an upstream answer shows: a JSON string decoded into a
// string or a TextBytes, and the first content block's text of an answer in
// the MCP SDK's bytes, decoded as the answer is skimmed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/jsonrpc/json_string.hpp"

namespace fsguard {

// How the MCP SDK's answer to a tool call begins, up to its first
// content block's text.
inline constexpr std::string_view k_sdk_answer_head =
  R"({"result":{"content":[{"type":"text","text":)";

// The text of an answer's first content block, decoded as the answer was
// skimmed (decode_sdk_answer_text()).
struct DecodedAnswerText {
  DecodedText decoded;
  const char* end = nullptr; // just past the string's closing quote in the line
};

// Decodes into `text` the text of the first content block of `line`, an
// answer written in the MCP SDK's bytes (skim_message() reads that shape by
// them), with the text's string at most max_raw_json_string(`max_bytes`)
// long; its end is told from the line's other end (the SDK writes the text
// once more, as structuredContent, or not at all), so that it is decoded
// into room that fits it, and the string must end there. True, and
// `text.end` set for skim_message(), if it did; false (`text` unspecified)
// otherwise, or when the string needs the full parser.
// `id_from_ends` is the line's answer_id_from_ends().
bool decode_sdk_answer_text(std::string_view line, std::string_view id_from_ends,
                            DecodedAnswerText& text, std::size_t max_bytes);

// The raw JSON string `raw` (quotes included) decoded, when it decodes to at
// most `max_bytes` bytes; nothing if it is longer, malformed, or needs the
// full parser (invalid UTF-8, lone surrogates: see decode_json_string).
std::optional<std::string> decoded_json_string(std::string_view raw, std::size_t max_bytes);

// The same, with what the decoder saw of the text (DecodedFacts), which
// tells the text's ContentTraits without a scan for most texts.
std::optional<DecodedText> decoded_json_text(std::string_view raw, std::size_t max_bytes);

// The most bytes the raw JSON string of a text decoding to `max_bytes`
// bytes can take (an escape takes at most 6 bytes for 1).
constexpr std::size_t max_raw_json_string(std::size_t max_bytes)
{
  return 6 * max_bytes + 2;
}

} // namespace fsguard
