// The shortcut for the client's most common line: a tools/call in the plain
// shape every SDK writes, read from its text without building a tree, so
// that a call the guard only relays costs no parse, and a call it guards
// only the parse of its arguments.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/client_message.hpp"

namespace fsguard {

// What the caller does with a plain call of a tool, asked once its name is
// read.
enum class PlainCallUse {
  relay, // forwards it as it is: the scan only checks the arguments
  guard, // guards it: the scan reads the arguments too (PlainCallArguments)
  none,  // neither: the scan stops, and the full parse takes the line
};

// Decides the PlainCallUse of a tool by its name.
class PlainCallFilter {
public:
  // The use of a plain call of the tool `name` (params.name).
  virtual PlainCallUse use_of(std::string_view name) = 0;

protected:
  ~PlainCallFilter() = default;
};

// What fsguard needs of a plain tools/call to relay or guard it.
struct PlainToolCall {
  std::string_view raw_id; // the id's JSON text: a safe integer or a plain string
  std::string_view name;   // params.name, a plain string's body
  PlainCallUse use = PlainCallUse::relay; // as the filter said
  // params._meta's JSON text when it carries the 2026 era's envelope (a
  // member named io.modelcontextprotocol/...), for the caller to read; ""
  // otherwise.
  std::string_view envelope;
};

// params.arguments of a plain call to guard, read as the full parse reads
// them (read_arguments_fast): the tree without a write's content, and
// that content apart. Reused from call to call, as a ClientMessage is.
struct PlainCallArguments {
  nlohmann::json tree;     // null when the call has no arguments
  ContentArgument content; // as in ClientMessage
};

// The tools/call request `line` (without its newline) when it is valid JSON
// in the plainest shape (plain_tool_call.cpp has the grammar), which the
// server accepts and whose id is its own id key (id_key_of_raw); nothing
// for anything else, which the full parse decides. `filter` is asked once
// params.name is read: PlainCallUse::none stops the scan there, and
// PlainCallUse::guard has the arguments read into `arguments` (none given:
// as none). The scan refuses (nothing) where read_arguments_fast() refuses
// the arguments; what it leaves in `arguments` then is unspecified.
std::optional<PlainToolCall> scan_plain_tool_call(std::string_view line, PlainCallFilter& filter,
                                                  PlainCallArguments* arguments = nullptr);

// The id whose JSON text is a PlainToolCall's `raw_id`, as the full parse
// reads it (a non-negative integer unsigned).
nlohmann::json plain_id(std::string_view raw_id);

} // namespace fsguard
