// A fast reader for client lines. nlohmann's parser spends about a hundred
// instructions a byte and builds every string a character at a time; this
// one builds the same DOM in one pass, and leaves a write's content out of
// it (hashed instead), so a megabyte write is never copied into a string.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracker/file_state.hpp"
#include "tracker/text_bytes.hpp"

namespace fsguard {

// The DOM nlohmann::json::parse builds for `text`, except that
// params.arguments.content is left out; when it is a string (the last one,
// if repeated, as JSON.parse reads it), `content_hash` is set to the hash of
// its bytes, and reset otherwise. Nothing if `text` is not plain JSON, or
// holds anything the full parser must judge (invalid UTF-8 or lone
// surrogates, which the upstream reads as U+FFFD; numbers out of range; a
// byte order mark): the caller then falls back to the full parser. Nothing
// too if arrays and objects nest deeper than k_max_nesting, so a text it
// reads needs no nesting_depth() check.
std::optional<nlohmann::json> read_json_fast(std::string_view text,
                                             std::optional<ContentHash>& content_hash);

// The longest content read_json_fast() decodes into `content_text`: the
// most of a written file the guard keeps by default (KeptTextBudget).
inline constexpr std::size_t k_decoded_content_bytes = 1024 * 1024;

// The same, read into `tree`, which may hold the last message read: its
// objects, arrays and strings are reused where the new message has the same
// shape, so that a client's requests, which look alike, cost no allocation.
// The tree is then equal to the one read_json_fast() above returns. On
// false, `tree` holds anything (the caller replaces it).
//
// If `content_text` is given, it is set to params.arguments.content decoded
// (the bytes `content_hash` hashes) when that is a string of at most
// k_decoded_content_bytes bytes, and reset otherwise. If `content_traits`
// is given too, it is set with `content_text` to that text's ContentTraits
// where what the decoder saw tells them (traits_from_facts in
// json_string.hpp), and reset otherwise: then scan the text for them.
bool read_json_fast(std::string_view text, nlohmann::json& tree,
                    std::optional<ContentHash>& content_hash,
                    std::optional<TextBytes>* content_text = nullptr,
                    std::optional<ContentTraits>* content_traits = nullptr);

// The JSON value at the start of `text`, params.arguments of a client
// request, read into `tree` (reused) exactly as read_json_fast() reads it
// inside a request: the same tree, content left out and hashed
// (`content_hash`, `content_text`, `content_traits` as there), the same
// refusals, nested no deeper than it may be there. Returns the byte after the value, or
// nullptr where read_json_fast() would give up on the request (the caller
// then takes the full path). The bytes after the value are not read.
const char* read_arguments_fast(std::string_view text, nlohmann::json& tree,
                                std::optional<ContentHash>& content_hash,
                                std::optional<TextBytes>* content_text,
                                std::optional<ContentTraits>* content_traits = nullptr);

} // namespace fsguard
