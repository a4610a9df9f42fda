#include "tracker/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace fsguard {

std::optional<std::string> to_nfc(std::string_view text)
{
  utf8proc_uint8_t* normalized = nullptr;
  const auto length = utf8proc_map(
    reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
    static_cast<utf8proc_ssize_t>(text.size()), &normalized,
    static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  if (length < 0) {
    return std::nullopt;
  }
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(normalized, &std::free);
  return std::string(reinterpret_cast<const char*>(normalized),
                     static_cast<std::size_t>(length));
}

namespace {

// ECMAScript WhiteSpace and LineTerminator code points.
bool is_js_trimmed(utf8proc_int32_t code_point)
{
  switch (code_point) {
  case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
  case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
  case 0x205F: case 0x3000: case 0xFEFF:
    return true;
  default:
    return code_point >= 0x2000 && code_point <= 0x200A;
  }
}

} // namespace

bool has_trimmable_edge(std::string_view text)
{
  if (text.empty()) {
    return false;
  }
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_int32_t first = -1;
  utf8proc_iterate(bytes, static_cast<utf8proc_ssize_t>(text.size()), &first);
  if (is_js_trimmed(first)) {
    return true;
  }
  // Walk back to the start of the last code point (at most 4 bytes).
  std::size_t start = text.size() - 1;
  while (start > 0 && text.size() - start < 4
         && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
    --start;
  }
  utf8proc_int32_t last = -1;
  utf8proc_iterate(bytes + start, static_cast<utf8proc_ssize_t>(text.size() - start), &last);
  return is_js_trimmed(last);
}

} // namespace fsguard
