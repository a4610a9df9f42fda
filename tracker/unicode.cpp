#include "tracker/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace fsguard {

int hex_digit(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

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

bool has_unassigned_code_point(std::string_view text)
{
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t at = 0;
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  while (at < size) {
    if (bytes[at] < 0x80) {
      ++at;
      continue;
    }
    utf8proc_int32_t code_point = 0;
    const auto length = utf8proc_iterate(bytes + at, size - at, &code_point);
    if (length <= 0) {
      return true; // not valid UTF-8: nothing can be told
    }
    if (utf8proc_category(code_point) == UTF8PROC_CATEGORY_CN) {
      return true;
    }
    at += length;
  }
  return false;
}

std::string_view unicode_version()
{
  return utf8proc_unicode_version();
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

int escaped_unit(std::string_view text, std::size_t at)
{
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') {
    return -1;
  }
  int unit = 0;
  for (std::size_t index = at + 2; index < at + 6; ++index) {
    const int digit = hex_digit(text[index]);
    if (digit < 0) {
      return -1;
    }
    unit = unit * 16 + digit;
  }
  return unit;
}

Utf8Lead utf8_lead(unsigned char lead)
{
  if (lead <= 0x7F) {
    return Utf8Lead{0};
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    return Utf8Lead{1};
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    return Utf8Lead{2, static_cast<unsigned char>(lead == 0xE0 ? 0xA0 : 0x80),
                    static_cast<unsigned char>(lead == 0xED ? 0x9F : 0xBF)};
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    return Utf8Lead{3, static_cast<unsigned char>(lead == 0xF0 ? 0x90 : 0x80),
                    static_cast<unsigned char>(lead == 0xF4 ? 0x8F : 0xBF)};
  }
  return Utf8Lead{};
}

Utf8Sequence utf8_sequence(std::string_view bytes, std::size_t at)
{
  const Utf8Lead lead = utf8_lead(static_cast<unsigned char>(bytes[at]));
  if (lead.continuation_bytes <= 0) {
    return Utf8Sequence{1, lead.continuation_bytes == 0};
  }
  const auto needed = static_cast<std::size_t>(lead.continuation_bytes);
  unsigned char lower = lead.second_low;
  unsigned char upper = lead.second_high;
  // Continuation bytes are taken while they fit; the first misfit starts
  // over as a new lead byte.
  std::size_t length = 1;
  while (length <= needed && at + length < bytes.size()) {
    const auto next = static_cast<unsigned char>(bytes[at + length]);
    if (next < lower || next > upper) {
      break;
    }
    lower = 0x80;
    upper = 0xBF;
    ++length;
  }
  return Utf8Sequence{length, length == needed + 1};
}

std::optional<std::string> replace_invalid_utf8(std::string_view bytes)
{
  constexpr std::string_view k_replacement = "\xEF\xBF\xBD";
  std::optional<std::string> fixed;
  std::size_t clean_until = 0; // bytes before this are copied into `fixed` already
  std::size_t index = 0;
  while (index < bytes.size()) {
    const Utf8Sequence sequence = utf8_sequence(bytes, index);
    if (!sequence.valid) {
      if (!fixed) {
        fixed.emplace();
        fixed->reserve(bytes.size() + 16);
      }
      fixed->append(bytes.substr(clean_until, index - clean_until));
      fixed->append(k_replacement);
      clean_until = index + sequence.length;
    }
    index += sequence.length;
  }
  if (fixed) {
    fixed->append(bytes.substr(clean_until));
  }
  return fixed;
}

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
