// The shortcut for the client's most common line: a tools/call in the plain
// shape every SDK writes, read from its text without building a tree, so
// that a call the guard only relays costs no parse.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fsguard {

// What fsguard needs of a plain tools/call to relay it.
struct PlainToolCall {
  std::string_view raw_id; // the id's JSON text: a safe integer or a plain string
  std::string_view name;   // params.name, a plain string's body
};

// The tools/call request `line` (without its newline) when it is valid JSON
// of the plainest shape: an object whose members are "jsonrpc": "2.0",
// "method": "tools/call", "id" and "params", each once and nothing else;
// the id an integer of at most 2^53-1 in size (no leading zero, no "-0") or
// a string of printable ASCII without escapes that does not begin with
// fsguard's own prefix (k_own_id_prefix); params an object with a
// "name" of printable ASCII without escapes and, optionally, "arguments"
// (any JSON value nested no deeper than k_max_nesting), each once. Such a
// request is one the server accepts, and its id is its own id key
// (id_key_of_raw).
// Nothing for anything else, however valid: the full parse decides those.
// `wanted(name)` is asked once params.name is read; when it says no, the
// scan stops there with nothing (a call that needs the full parse anyway
// is not scanned to its end).
std::optional<PlainToolCall>
scan_plain_tool_call(std::string_view line, const std::function<bool(std::string_view)>& wanted);

// The id whose JSON text is a PlainToolCall's `raw_id`, as the full parse
// reads it (a non-negative integer unsigned).
nlohmann::json plain_id(std::string_view raw_id);

} // namespace fsguard
