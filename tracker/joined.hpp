// Joining words into one text (lists of paths in messages, a command line).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fsguard {

// `words` joined with `separator`.
inline std::string joined(const std::vector<std::string>& words, std::string_view separator)
{
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) {
      text += separator;
    }
    text += word;
  }
  return text;
}

} // namespace fsguard
