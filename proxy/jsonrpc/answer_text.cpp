#include "proxy/jsonrpc/answer_text.hpp"

namespace fsguard {

namespace {

// Where the string of the text in an SDK answer `line` (which begins with
// k_sdk_answer_head) would end, told from the line's other end: the SDK
// writes the text again as structuredContent after it (server-filesystem
// does) or not at all, then the id, `id` (trailing_id(line)). Zero where
// neither shape fits.
std::size_t sdk_answer_text_end(std::string_view line, std::string_view id)
{
  constexpr std::string_view k_then_structured = R"(}],"structuredContent":{"content":)";
  constexpr std::string_view k_structured_end = R"(}},"jsonrpc":"2.0","id":)";
  constexpr std::string_view k_plain_end = R"(}]},"jsonrpc":"2.0","id":)";
  if (id.empty() || id.data() < line.data() || id.data() + id.size() > line.data() + line.size()) {
    return 0;
  }
  const std::string_view before_id =
    line.substr(0, static_cast<std::size_t>(id.data() - line.data()));
  const std::size_t text_at = k_sdk_answer_head.size();
  if (before_id.ends_with(k_structured_end)
      && before_id.size() >= text_at + k_then_structured.size() + k_structured_end.size() + 4) {
    // The head, then the text's string twice, around k_then_structured.
    const std::size_t twice =
      before_id.size() - k_structured_end.size() - k_then_structured.size() - text_at;
    if (twice % 2 == 0) {
      const std::size_t end = text_at + twice / 2;
      if (line.substr(end, k_then_structured.size()) == k_then_structured) {
        return end;
      }
    }
  } else if (before_id.ends_with(k_plain_end) && before_id.size() > k_plain_end.size() + text_at) {
    return before_id.size() - k_plain_end.size();
  }
  return 0;
}

} // namespace

bool decode_sdk_answer_text(std::string_view line, std::string_view id_from_ends,
                            DecodedAnswerText& text, std::size_t max_bytes)
{
  if (!line.starts_with(k_sdk_answer_head) || line.size() <= k_sdk_answer_head.size()
      || line[k_sdk_answer_head.size()] != '"') {
    return false;
  }
  // Decoded into room that fits the text, which must end just there.
  const std::size_t end = sdk_answer_text_end(line, id_from_ends);
  if (end < k_sdk_answer_head.size() + 2 || line[end - 1] != '"'
      || end - k_sdk_answer_head.size() > max_raw_json_string(max_bytes)) {
    return false;
  }
  const char* body = line.data() + k_sdk_answer_head.size() + 1;
  text.end = decode_json_string(body, line.data() + end, text.decoded);
  return text.end == line.data() + end && text.decoded.text.size() <= max_bytes;
}

std::optional<std::string> decoded_json_string(std::string_view raw, std::size_t max_bytes)
{
  if (raw.size() < 2 || raw.front() != '"' || raw.size() > max_raw_json_string(max_bytes)) {
    return std::nullopt;
  }
  std::string text;
  text.reserve(raw.size()); // at most as long as the raw string
  StringSink sink(text);
  const char* end = raw.data() + raw.size();
  if (decode_json_string(raw.data() + 1, end, sink) != end || text.size() > max_bytes) {
    return std::nullopt;
  }
  return text;
}

std::optional<DecodedText> decoded_json_text(std::string_view raw, std::size_t max_bytes)
{
  if (raw.size() < 2 || raw.front() != '"' || raw.size() > max_raw_json_string(max_bytes)) {
    return std::nullopt;
  }
  DecodedText decoded; // decoded in place, into room as long as the raw string
  const char* end = raw.data() + raw.size();
  if (decode_json_string(raw.data() + 1, end, decoded) != end || decoded.text.size() > max_bytes) {
    return std::nullopt;
  }
  return decoded;
}

} // namespace fsguard
