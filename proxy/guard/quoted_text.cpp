#include "proxy/guard/quoted_text.hpp"

#include <cstdint>

#include "tracker/unicode.hpp"

namespace fsguard {

namespace {

constexpr char k_hex[] = "0123456789abcdef";

// The code point of the valid UTF-8 sequence of `length` bytes at `at`.
char32_t code_point(std::string_view bytes, std::size_t at, std::size_t length)
{
  const auto lead = static_cast<unsigned char>(bytes[at]);
  char32_t point = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t index = 1; index < length; ++index) {
    point = (point << 6) | (static_cast<unsigned char>(bytes[at + index]) & 0x3F);
  }
  return point;
}

// Characters that are not shown as themselves: controls (C0, DEL, C1), and
// those that are invisible or move text: separators, bidirectional marks and
// overrides, zero-width characters, the byte order mark, tag characters.
bool is_hidden(char32_t point)
{
  return point < 0x20 || (point >= 0x7F && point <= 0x9F) || point == 0xAD || point == 0x061C
         || point == 0x180E || (point >= 0x200B && point <= 0x200F)
         || (point >= 0x2028 && point <= 0x202E) || (point >= 0x2060 && point <= 0x206F)
         || point == 0xFEFF || (point >= 0xFFF9 && point <= 0xFFFB)
         || (point >= 0xE0000 && point <= 0xE007F);
}

void append_unit(std::string& out, std::uint32_t unit)
{
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += k_hex[(unit >> shift) & 0xF];
  }
}

// `point` as a JSON escape (a surrogate pair above U+FFFF).
void append_escape(std::string& out, char32_t point)
{
  switch (point) {
  case '\n': out += "\\n"; return;
  case '\r': out += "\\r"; return;
  case '\t': out += "\\t"; return;
  default: break;
  }
  if (point > 0xFFFF) {
    const char32_t offset = point - 0x10000;
    append_unit(out, 0xD800 + (offset >> 10));
    append_unit(out, 0xDC00 + (offset & 0x3FF));
    return;
  }
  append_unit(out, point);
}

enum class Layout { escaped, kept };

// `text` with its hidden characters escaped; with Layout::kept, the line
// breaks and tabs stay as they are.
std::string shown(std::string_view text, Layout layout)
{
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t at = 0; at < text.size();) {
    const Utf8Sequence sequence = utf8_sequence(text, at);
    if (!sequence.valid) {
      for (std::size_t index = 0; index < sequence.length; ++index) {
        const auto byte = static_cast<unsigned char>(text[at + index]);
        out += "\\x";
        out += k_hex[byte >> 4];
        out += k_hex[byte & 0xF];
      }
      at += sequence.length;
      continue;
    }
    const char32_t point = code_point(text, at, sequence.length);
    const bool layout_kept =
      layout == Layout::kept
      && (point == '\n' || point == '\t'
          || (point == '\r' && at + 1 < text.size() && text[at + 1] == '\n'));
    if (layout == Layout::escaped && (point == '"' || point == '\\')) {
      out += '\\';
      out += static_cast<char>(point);
    } else if (is_hidden(point) && !layout_kept) {
      append_escape(out, point);
    } else {
      out.append(text.substr(at, sequence.length));
    }
    at += sequence.length;
  }
  return out;
}

} // namespace

std::string in_quotes(std::string_view text)
{
  return "\"" + shown(text, Layout::escaped) + "\"";
}

std::string with_controls_shown(std::string_view text)
{
  return shown(text, Layout::kept);
}

} // namespace fsguard
