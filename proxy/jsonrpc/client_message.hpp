// Classifying the client's lines: each is parsed completely (the guard must
// see exactly what the upstream will see), except for the bulk of a
// write's content, which is hashed where it lies.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracker/file_state.hpp"
#include "tracker/text_bytes.hpp"

namespace fsguard {

enum class MessageKind {
  request,      // has "method" and "id"
  notification, // has "method", no "id"
  response,     // has "result" or "error", and "id"
  batch,        // a JSON array
  other,        // JSON, but not a JSON-RPC message
  invalid,      // not JSON
  too_deep,     // nested deeper than k_max_nesting: refused, never parsed
  bad_id,       // a request whose id is not a string or a number
  unreadable,   // JSON to fsguard, but not to the server's JSON.parse (json_parse_rejects)
};

// params.arguments.content of a client request, as the reader found it.
struct ContentArgument {
  std::optional<ContentHash> hash{}; // of its UTF-8 bytes, when it is a string
  // Those bytes, when at most k_decoded_content_bytes (see read_json_fast):
  // what a write puts in the file, for the guard to keep once written.
  std::optional<TextBytes> text{};
  // The traits of `text`, when what the decoder saw tells them (see
  // read_json_fast); nothing: scan it.
  std::optional<ContentTraits> traits{};
};

struct ClientMessage {
  MessageKind kind = MessageKind::invalid;
  nlohmann::json body; // discarded unless kind is request/notification/response/other
  // params.arguments.content, which can be megabytes, is not kept in `body`:
  // only its hash (XXH3-128 of its UTF-8 bytes) when it is a string, and
  // the bytes too when they are few enough.
  ContentArgument content;
};

// Parses a client `line` completely, except for the bulk of a write's
// content (see ClientMessage::content).
ClientMessage parse_client_message(std::string_view line);

// The same into `message`, whose body (the last line's) is reused where the
// new line has the same shape (see read_json_fast).
void parse_client_message(std::string_view line, ClientMessage& message);

// The id of the client's `line`, refused unparsed (nested too deep), found
// by a skim, if it is a plain string or number; null otherwise.
nlohmann::json shallow_id(std::string_view line);

// Frees `tree` (nested at most k_max_nesting deep, as a parsed message is),
// leaving it null. Cheaper than assigning null: nlohmann's destructor moves
// every member of every array and object onto a heap-allocated stack first.
void release_tree(nlohmann::json& tree);

} // namespace fsguard
