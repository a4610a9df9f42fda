// The skim of upstream lines: what an answer's top level and its result
// hold, found without building a tree (the result can hold megabytes of a
// file's text, twice), and what the skim tells of a tool's answer.
#pragma once

#include <optional>
#include <string_view>

namespace fsguard {

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

// The raw JSON string (quotes included) of T, when the first block of the
// skimmed tool result's content array is {"type": "text", "text": T};
// nothing otherwise, or when only a full parse could tell (escaped or
// repeated keys). Decode it with decoded_json_string().
std::optional<std::string_view> skim_first_text(const SkimmedMessage& response);

// The raw value of member `key` of the raw JSON object `object`, when it
// has exactly one such member; nothing otherwise, or when only a full parse
// could tell (escaped keys).
std::optional<std::string_view> skim_member(std::string_view object, std::string_view key);

// The raw JSON string of params.arguments.content in the client request
// `line` (with or without its newline), when it is a string; as for
// skim_first_text().
std::optional<std::string_view> skim_content_argument(std::string_view line);

} // namespace fsguard
