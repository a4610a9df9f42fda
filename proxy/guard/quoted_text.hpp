// Text that came from the agent (a path, a tool's name) or from a file,
// shown to the person inside fsguard's own words: every character that could
// end a quotation, start a line, or hide or reorder text is shown as an
// escape, so the agent cannot make its text read as fsguard's.
#pragma once

#include <string>
#include <string_view>

namespace fsguard {

// `text` between double quotes, escaped as in a JSON string: `"` and `\`,
// every control character (\n, \t, \u001b), line and paragraph separators,
// and invisible or bidirectional format characters (\u202e, \u200b, tag
// characters); a byte of invalid UTF-8 as \xHH.
std::string in_quotes(std::string_view text);

// `text` (a file's lines) with the same characters shown as escapes, except
// the line breaks and tabs that lay it out: "\n", "\r\n" and "\t" stay.
std::string with_controls_shown(std::string_view text);

} // namespace fsguard
