// Applying the unified diff that server-filesystem's edit_file returns, so
// that fsguard knows exactly what the edit should have left on disk.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fsguard {

// `original` with the hunks of the unified diff in `text` applied (text
// before the first "@@" hunk header, such as a ```diff fence and the
// ---/+++ header, is skipped). Nothing when a hunk does not fit `original`
// or `text` holds no well-formed diff, so the caller can fail closed.
std::optional<std::string> apply_unified_diff(std::string_view original, std::string_view text);

// `text` with every "\r\n" turned into "\n", as server-filesystem's
// edit_file normalizes a file before it edits it.
std::string without_carriage_returns(std::string_view text);

} // namespace fsguard
