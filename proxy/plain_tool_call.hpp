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
// in the plainest shape (plain_tool_call.cpp has the grammar), which the
// server accepts and whose id is its own id key (id_key_of_raw); nothing
// for anything else, which the full parse decides. `wanted(name)` is asked
// once params.name is read: when it says no, the scan stops there.
std::optional<PlainToolCall>
scan_plain_tool_call(std::string_view line, const std::function<bool(std::string_view)>& wanted);

// The id whose JSON text is a PlainToolCall's `raw_id`, as the full parse
// reads it (a non-negative integer unsigned).
nlohmann::json plain_id(std::string_view raw_id);

} // namespace fsguard
