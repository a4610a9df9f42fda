// Where each member of a JSON text lies, so that fsguard adopt can change
// a few values in place and leave every other byte of a client's config as
// it was (its layout, its number spellings, and comments where the client
// allows them).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/result.hpp"

namespace fsguard {

// One member of an object, outside arrays: its keys from the root, and
// where its key and its value lie in the text.
struct JsonMemberSpan {
  std::vector<std::string> path;
  std::size_t key_begin = 0;   // the key's opening quote
  std::size_t key_end = 0;     // just past its closing quote
  std::size_t value_begin = 0;
  std::size_t value_end = 0;
};

struct JsonSpans {
  std::vector<JsonMemberSpan> members; // in the order they appear
  std::string plain; // the text with its comments and trailing commas blanked out: plain JSON
};

// The members of the JSON `text`, which may hold // and /* */ comments and
// trailing commas, as VS Code's and Gemini CLI's settings may. An error for
// text it cannot read, or nested deeper than 512.
Result<JsonSpans, std::string> json_member_spans(std::string_view text);

} // namespace fsguard
