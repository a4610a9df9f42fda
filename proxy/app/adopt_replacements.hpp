// Byte ranges of a config file's text replaced by fsguard adopt, shared by
// the JSON and the TOML rewrite: every other byte of the file stays.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace fsguard {

// The bytes [`begin`, `end`) of a text, to be replaced by `text`.
struct Replacement {
  std::size_t begin;
  std::size_t end;
  std::string text;
};

// Replaces each of `replacements` (which do not overlap) in `text`, the
// last first, so the offsets of the others still hold.
inline void apply_replacements(std::string& text, std::vector<Replacement> replacements)
{
  std::sort(replacements.begin(), replacements.end(),
            [](const Replacement& a, const Replacement& b) { return a.begin > b.begin; });
  for (const auto& replacement : replacements) {
    text.replace(replacement.begin, replacement.end - replacement.begin, replacement.text);
  }
}

} // namespace fsguard
