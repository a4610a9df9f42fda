// Classifying JSON-RPC lines: fully for client lines (the guard must see
// exactly what the upstream will see), by a cheap skim for upstream lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/json_string.hpp"
#include "tracker/file_state.hpp"

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

// Why Node's JSON.parse, which the MCP SDK reads each line with, rejects
// `line`, which nlohmann's parser reads: it begins with a UTF-8 byte-order
// mark (which nlohmann skips), or holds a NUL byte (where nlohmann stops
// reading). "" if neither.
std::string_view json_parse_rejects(std::string_view line);

// Ids of fsguard's own requests start with this; clients may not use it.
inline constexpr std::string_view k_own_id_prefix = "fsguard/";

// The deepest nesting of arrays and objects fsguard accepts in a message.
// MCP messages are shallow; the limit keeps recursion in the JSON library
// bounded whatever a peer sends.
inline constexpr std::size_t k_max_nesting = 128;

// The deepest nesting of arrays and objects in `text` (strings skipped).
std::size_t nesting_depth(std::string_view text);

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

// Frees `tree` (nested at most k_max_nesting deep, as a parsed message is),
// leaving it null. Cheaper than assigning null: nlohmann's destructor moves
// every member of every array and object onto a heap-allocated stack first.
void release_tree(nlohmann::json& tree);

// The `method` of a parsed request or notification, or "" if absent.
std::string_view method_of(const nlohmann::json& body);

// A canonical text for a JSON-RPC id, equal for ids that the peer would
// echo back as equal (1 and 1.0 are the same id; "1" is another).
std::string id_key(const nlohmann::json& id);

// id_key() of the id whose JSON text is `raw_id` (as skimmed from an
// upstream line), or "" if it is not JSON. Plain integers and plain ASCII
// strings, which are the ids clients send, are their own key and are not
// parsed.
std::string id_key_of_raw(std::string_view raw_id);

// What a cheap skim of an upstream line finds at its top level.
struct SkimmedMessage {
  bool is_json_object = false; // false: not JSON (or too odd to skim)
  bool has_method = false;
  bool has_result_or_error = false;
  std::string_view raw_id;     // the id's JSON text, empty if none
  std::string_view raw_method; // the method's JSON text, empty if none
  std::string_view raw_result; // the result's JSON text, if exactly one
  bool has_error = false;
  int results = 0;             // how many "result" members
  // What the same pass found inside the (last) result, when it is a plain
  // object: the skim_* functions below answer from here rather than skim the
  // result again (it holds megabytes of file content, twice, on a read).
  struct Result {
    bool walked = false;        // false: the functions skim raw_result themselves
    int is_error_members = 0;
    std::string_view raw_is_error;
    int content_members = 0;
    std::string_view raw_content;
    bool first_block_walked = false; // content[0] is an object, its members counted
    int type_members = 0;       // in content[0]
    std::string_view raw_type;
    int text_members = 0;
    std::string_view raw_text;

    // Whether `a` and `b` found the same (views compared by their bytes).
    friend bool operator==(const Result& a, const Result& b) = default;
  } result;

  // Whether `a` and `b` found the same (views compared by their bytes).
  friend bool operator==(const SkimmedMessage& a, const SkimmedMessage& b) = default;
};

// Skims `line` without building a DOM: finds the top-level keys and the raw
// id, and in the same pass what the skim_* functions below need of the
// result. Returns is_json_object=false for anything that is not a
// well-formed looking object; callers then fall back to a full parse.
SkimmedMessage skim_message(std::string_view line);

// skim_message() of `line`, whose first content block's text ends just
// before `first_text_end` (past its closing quote), as
// decode_sdk_answer_text() found it: the string is not scanned again.
SkimmedMessage skim_message(std::string_view line, const char* first_text_end);

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

// skim_message() by the walk over any object alone, without its fast path
// for the bytes of the MCP SDK's answers; for tests, which check that both
// find the same in `line`.
SkimmedMessage skim_message_generic(std::string_view line);

// Whether the skimmed tool-call response succeeded (a result without
// "isError": true); nothing when only a full parse can tell (escaped or
// repeated keys, odd shapes).
std::optional<bool> skim_tool_succeeded(const SkimmedMessage& response);

// Whether the skimmed tool-call response's result has a non-empty
// "content" array; nothing when only a full parse can tell.
std::optional<bool> skim_shows_content(const SkimmedMessage& response);

// The raw id at the end of `tail`, the last bytes of an answer serialized
// as the MCP SDK does ({"result":...,"jsonrpc":"2.0","id":ID}), or "" if
// the tail does not end that way.
std::string_view trailing_id(std::string_view tail);

// The id key of a successful answer written as the MCP SDK writes one,
// from its ends alone: a line that begins {"result": and ends with its id
// (trailing_id). Empty if the line is not of that shape. For a line that is
// JSON, the member before the last closing brace is the top-level
// object's, so the key is the answer's; the bytes between are not read,
// so use it only where a line that is not JSON may go on as it is.
std::string answer_key_from_ends(std::string_view line);

// The raw id answer_key_from_ends() reads the key from, where it lies in
// `line`; empty where that gives no key.
std::string_view answer_id_from_ends(std::string_view line);

// The raw JSON string (quotes included) of T, when the first block of the
// skimmed tool result's content array is {"type": "text", "text": T};
// nothing otherwise, or when only a full parse could tell (escaped or
// repeated keys). Decode it with decoded_json_string().
std::optional<std::string_view> skim_first_text(const SkimmedMessage& response);

// The raw JSON string of params.arguments.content in the client request
// `line` (with or without its newline), when it is a string; as for
// skim_first_text().
std::optional<std::string_view> skim_content_argument(std::string_view line);

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

// The null value that lookups of absent members refer to.
const nlohmann::json& null_value();

// The member `key` of `object`, or a null value if `object` is not an
// object or has no such member (never inserts, unlike operator[]).
const nlohmann::json& member(const nlohmann::json& object, const char* key);

// `words` joined with `separator` (paths in messages, a command line).
std::string joined(const std::vector<std::string>& words, std::string_view separator);

// The JSON-RPC error codes fsguard answers with.
enum class RpcError {
  parse_error = -32700,
  invalid_request = -32600,
  internal_error = -32603, // fsguard cannot relay the upstream's answer
  server_error = -32000, // the upstream is gone
};

// A JSON-RPC error response line (with trailing newline) for `id` (a JSON
// value; null if unknown).
std::string error_response(const nlohmann::json& id, RpcError code, std::string_view message);

// The top-level members of a request that fsguard reads, found in one walk
// over its members. An absent one points to a null value, except `params`,
// which is then nullptr (a present "params": null is refused).
struct RequestMembers {
  const nlohmann::json* version; // "jsonrpc"
  const nlohmann::json* id;
  const nlohmann::json* method;
  const nlohmann::json* params = nullptr;
  bool answer_member = false; // "result" or "error" beside them
  bool other_member = false;  // a member of any other name
};

// The members of the parsed message `request` (none if it is not an object).
RequestMembers request_members(const nlohmann::json& request);

// request_the_server_drops() of the request whose `members` these are.
std::string request_the_server_drops(const RequestMembers& members);

// Why the MCP SDK's schema would reject `request` (a parsed request), so
// that the server drops it without an answer: a missing or wrong "jsonrpc",
// an id that is neither a string nor a safe integer, a method that is not
// a string, params or params._meta that are not objects, a progressToken
// that is neither a string nor a safe integer, "result"/"error" beside
// "method", or any other member (the schema is strict). "" if none. A
// number is an integer as JSON.parse reads it: 7.0 and 9e0 are.
std::string request_the_server_drops(const nlohmann::json& request);

// Why the MCP SDK's schema (JSONRPCMessageSchema) would reject `message`, a
// parsed line of any kind, so that the server drops it unanswered: a
// request as request_the_server_drops() says; a notification with a wrong
// "jsonrpc", "method" or "params"; an answer with a wrong "jsonrpc" or id,
// a "result" that is not an object, an "error" without an integer code and
// a string message, or both; any other member; or no "method", "result"
// or "error" at all. "" if none.
std::string message_the_server_drops(const nlohmann::json& message);

} // namespace fsguard
