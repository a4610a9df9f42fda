#include "proxy/jsonrpc/lenient_json.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tracker/unicode.hpp"

namespace fsguard {

// `text` with each "\uXXXX" escape of a lone UTF-16 surrogate replaced by
// "\ufffd": JSON.parse accepts them, and Node turns them into U+FFFD when a
// string becomes a file name; nlohmann rejects them. Nothing if none.
std::optional<std::string> replace_lone_surrogates(std::string_view text)
{
  std::optional<std::string> fixed;
  std::size_t copied = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] != '\\') {
      continue;
    }
    const int unit = escaped_unit(text, at);
    if (unit < 0xD800 || unit > 0xDFFF) {
      ++at; // skip the escaped character, e.g. the second \ of "\\"
      continue;
    }
    const int next = escaped_unit(text, at + 6);
    if (unit <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF) {
      at += 11; // a proper pair
      continue;
    }
    if (!fixed) {
      fixed.emplace();
    }
    fixed->append(text.substr(copied, at - copied));
    fixed->append("\\ufffd");
    copied = at + 6;
    at += 5;
  }
  if (fixed) {
    fixed->append(text.substr(copied));
  }
  return fixed;
}

// `text` with each number too large for a double (1e400, which JSON.parse
// reads as Infinity and nlohmann rejects) written as the largest double of
// its sign, so that fsguard reads the message the upstream sees: an id or a
// code of that size is no safe integer either way. Nothing if none.
std::optional<std::string> replace_infinite_numbers(std::string_view text)
{
  std::optional<std::string> fixed;
  std::size_t copied = 0;
  bool in_string = false;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (in_string) {
      at += c == '\\' ? 1 : 0;
      in_string = c != '"';
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      continue;
    }
    std::size_t end = at + 1;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) != 0
                                 || text[end] == '.' || text[end] == 'e' || text[end] == 'E'
                                 || text[end] == '+' || text[end] == '-')) {
      ++end;
    }
    const std::string number(text.substr(at, end - at));
    if (std::isinf(std::strtod(number.c_str(), nullptr))) {
      if (!fixed) {
        fixed.emplace();
      }
      fixed->append(text.substr(copied, at - copied));
      fixed->append(c == '-' ? "-1.7976931348623157e308" : "1.7976931348623157e308");
      copied = end;
    }
    at = end - 1;
  }
  if (fixed) {
    fixed->append(text.substr(copied));
  }
  return fixed;
}

std::size_t nesting_depth(std::string_view text)
{
  std::size_t depth = 0;
  std::size_t deepest = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '"') {
      // Skip the string: find its closing quote, not preceded by an odd
      // number of backslashes.
      for (;;) {
        const void* quote = std::memchr(text.data() + at + 1, '"', text.size() - at - 1);
        if (quote == nullptr) {
          return deepest;
        }
        at = static_cast<std::size_t>(static_cast<const char*>(quote) - text.data());
        std::size_t backslashes = 0;
        while (backslashes < at && text[at - 1 - backslashes] == '\\') {
          ++backslashes;
        }
        if (backslashes % 2 == 0) {
          break;
        }
      }
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string_view json_parse_rejects(std::string_view line)
{
  if (line.starts_with("\xEF\xBB\xBF")) {
    return "it begins with a byte-order mark";
  }
  if (line.find('\0') != std::string_view::npos) {
    return "it holds a NUL byte";
  }
  return {};
}

} // namespace fsguard
