// The walk over a raw JSON object that the skim of upstream lines and the
// readers of what it found share (Skimmer): members by their raw values,
// strings skipped with memchr, no tree. Internal to proxy/jsonrpc/.
#pragma once

#include <cstring>
#include <string_view>

#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"

namespace fsguard {

class Skimmer {
public:
  // `first_text_end`, if not null, is where the string of the first
  // block's text in the SDK's answer shape ends (see skim_message()).
  explicit Skimmer(std::string_view text, const char* first_text_end = nullptr)
    : m_text(text), m_first_text_end(first_text_end)
  {
  }

  // Walks the members of the object `m_text` holds, calling
  // `visit(key, raw_value)` for each; false if it is not a plain object.
  template <class Visit>
  bool walk(Visit visit)
  {
    return walk(visit, [](std::string_view) { return false; }, [] { return false; });
  }

  // Walks the members of the object that starts at m_at, calling
  // `visit(key)` with m_at at each value, which must move m_at past the
  // value (false if it cannot); leaves m_at after the object's '}'. False if
  // it is not a plain object.
  template <class Visit>
  bool walk_members(Visit visit)
  {
    if (!consume('{')) {
      return false;
    }
    skip_space();
    if (consume('}')) {
      return true;
    }
    for (;;) {
      skip_space();
      const std::size_t key_start = m_at;
      if (!skip_string()) {
        return false;
      }
      const std::string_view key = m_text.substr(key_start + 1, m_at - key_start - 2);
      if (key.find('\\') != std::string_view::npos) {
        return false; // escaped keys: let the full parser decide
      }
      skip_space();
      if (!consume(':')) {
        return false;
      }
      skip_space();
      if (!visit(key)) {
        return false;
      }
      skip_space();
      if (consume(',')) {
        continue;
      }
      return consume('}');
    }
  }

  // The raw text of the first element of the array `m_text` holds; false
  // if it is not an array or is empty.
  bool first_element(std::string_view& element)
  {
    skip_space();
    if (!consume('[')) {
      return false;
    }
    skip_space();
    const std::size_t start = m_at;
    if (at_end() || m_text[m_at] == ']' || !skip_value()) {
      return false;
    }
    element = m_text.substr(start, m_at - start);
    return true;
  }

  // skim_message(): the SDK's answer shape by its fixed bytes, any other
  // line by the generic walk.
  SkimmedMessage run()
  {
    SkimmedMessage skimmed;
    if (run_sdk_answer(skimmed)) {
      return skimmed;
    }
    m_at = 0;
    m_strict_literals = false;
    return run_generic();
  }

  // skim_message_generic(): the walk over any object, member by member.
  SkimmedMessage run_generic()
  {
    SkimmedMessage skimmed;
    int ids = 0;
    const bool object = walk([&](std::string_view key, std::string_view value) {
      if (key == "id") {
        skimmed.raw_id = value;
        ++ids;
      } else if (key == "method") {
        skimmed.has_method = true;
        skimmed.raw_method = value;
      } else if (key == "error") {
        skimmed.has_result_or_error = true;
        skimmed.has_error = true;
      }
    }, [&](std::string_view key) { return key == "result"; }, [&] {
      skimmed.has_result_or_error = true;
      ++skimmed.results;
      const std::size_t start = m_at;
      if (!skim_result(skimmed.result)) {
        return false;
      }
      skimmed.raw_result = m_text.substr(start, m_at - start);
      return true;
    });
    if (!object || ids > 1) {
      return {};
    }
    skimmed.is_json_object = true;
    return skimmed;
  }

  // Fills `skimmed` as run_generic() would for a line in the very bytes the
  // MCP SDK writes a tool's answer in (read_text_file, write_file, ...):
  //   {"result":{"content":[{"type":"text","text":T}]<,"structuredContent":V>},"jsonrpc":"2.0","id":ID}
  // The fixed parts are compared as bytes; T, V and ID are skipped by the
  // walk's own skip_string() and skip_value(), so each ends where the walk
  // would end it. False on any other byte (whitespace, another member or
  // order, "isError"): the caller then starts over with the generic walk.
  bool run_sdk_answer(SkimmedMessage& skimmed)
  {
    constexpr std::string_view k_head = k_sdk_answer_head;
    constexpr std::size_t k_result_at = k_head.find(R"({"content")");
    constexpr std::size_t k_content_at = k_head.find('[');
    constexpr std::size_t k_type_at = k_head.find(R"("text")");
    const std::size_t start = m_at;
    if (!consume_bytes(k_head)) {
      return false;
    }
    const std::size_t text_at = m_at;
    if (m_first_text_end != nullptr && start == 0 && m_first_text_end > m_text.data() + text_at + 1
        && m_first_text_end <= m_text.data() + m_text.size() && m_first_text_end[-1] == '"') {
      m_at = static_cast<std::size_t>(m_first_text_end - m_text.data()); // decoded already
    } else if (!skip_string()) {
      return false;
    }
    auto& result = skimmed.result;
    result.raw_text = m_text.substr(text_at, m_at - text_at);
    if (!consume_bytes("}]")) {
      return false;
    }
    result.raw_content = m_text.substr(start + k_content_at, m_at - start - k_content_at);
    if (consume_bytes(R"(,"structuredContent":)")) {
      m_strict_literals = true; // as inside skim_result()
      const bool skipped = skip_value();
      m_strict_literals = false;
      if (!skipped) {
        return false;
      }
    }
    if (!consume('}')) {
      return false;
    }
    skimmed.raw_result = m_text.substr(start + k_result_at, m_at - start - k_result_at);
    if (!consume_bytes(R"(,"jsonrpc":"2.0","id":)")) {
      return false;
    }
    const std::size_t id_at = m_at;
    if (!skip_value()) {
      return false;
    }
    skimmed.raw_id = m_text.substr(id_at, m_at - id_at);
    if (!consume('}') || !at_end_after_space()) {
      return false;
    }
    skimmed.is_json_object = true;
    skimmed.has_result_or_error = true;
    skimmed.results = 1;
    result.walked = true;
    result.content_members = 1;
    result.first_block_walked = true;
    result.type_members = 1;
    result.raw_type = m_text.substr(start + k_type_at, std::string_view(R"("text")").size());
    result.text_members = 1;
    return true;
  }

  // walk(), except that a member whose key `special(key)` picks is handed
  // to `take()` (at m_at, its value; it moves past it) rather than skipped.
  template <class Visit, class Special, class Take>
  bool walk(Visit visit, Special special, Take take)
  {
    skip_space();
    return walk_members([&](std::string_view key) {
             if (special(key)) {
               return take();
             }
             const std::size_t value_start = m_at;
             if (!skip_value()) {
               return false;
             }
             visit(key, m_text.substr(value_start, m_at - value_start));
             return true;
           })
           && at_end_after_space();
  }

  // Moves past the result value at m_at, noting in `result` what the
  // skim_* functions need from it when it is a plain object. Where the
  // strict walk fails, the value is skipped as skip_value() would, and
  // `result` says it was not walked.
  bool skim_result(SkimmedMessage::Result& result)
  {
    const std::size_t start = m_at;
    result = SkimmedMessage::Result{};
    m_strict_literals = true;
    result.walked = walk_members([&](std::string_view key) {
      const std::size_t value_start = m_at;
      if (key == "content") {
        ++result.content_members;
        if (!skim_content(result)) {
          return false;
        }
      } else if (!skip_value()) {
        return false;
      } else if (key == "isError") {
        ++result.is_error_members;
        result.raw_is_error = m_text.substr(value_start, m_at - value_start);
        return true;
      } else {
        return true;
      }
      result.raw_content = m_text.substr(value_start, m_at - value_start);
      return true;
    });
    m_strict_literals = false;
    if (result.walked) {
      return true;
    }
    result = SkimmedMessage::Result{};
    m_at = start;
    return skip_value();
  }

  // Moves past the content value at m_at, walking its first element when
  // it is an array whose first element is an object.
  bool skim_content(SkimmedMessage::Result& result)
  {
    const std::size_t start = m_at;
    result.first_block_walked = false;
    result.type_members = result.text_members = 0;
    result.raw_type = result.raw_text = {};
    if (!consume('[')) {
      return skip_value();
    }
    skip_space();
    if (at_end() || m_text[m_at] != '{') {
      m_at = start;
      return skip_value();
    }
    const std::size_t block = m_at;
    result.first_block_walked = walk_members([&](std::string_view key) {
      const std::size_t value_start = m_at;
      if (!skip_value()) {
        return false;
      }
      if (key == "type") {
        ++result.type_members;
        result.raw_type = m_text.substr(value_start, m_at - value_start);
      } else if (key == "text") {
        ++result.text_members;
        result.raw_text = m_text.substr(value_start, m_at - value_start);
      }
      return true;
    });
    if (!result.first_block_walked) {
      // Skipped as skip_value() does, and its members found as a walk of
      // that text finds them.
      m_at = block;
      if (!skip_value()) {
        return false;
      }
      result.type_members = result.text_members = 0;
      result.raw_type = result.raw_text = {};
      const bool object =
        Skimmer(m_text.substr(block, m_at - block)).walk([&](std::string_view key, std::string_view value) {
          if (key == "type") {
            ++result.type_members;
            result.raw_type = value;
          } else if (key == "text") {
            ++result.text_members;
            result.raw_text = value;
          }
        });
      if (!object) {
        result.type_members = result.text_members = 0;
      }
      result.first_block_walked = true;
    }
    return skip_rest(1);
  }

  // Moves past the `depth` arrays and objects m_at is inside, as
  // skip_value() does.
  bool skip_rest(int depth)
  {
    while (!at_end()) {
      const char c = m_text[m_at];
      if (c == '"') {
        if (!skip_string()) return false;
        continue;
      }
      ++m_at;
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return true;
      }
    }
    return false;
  }

private:
  bool at_end() const { return m_at >= m_text.size(); }

  bool consume(char expected)
  {
    if (!at_end() && m_text[m_at] == expected) {
      ++m_at;
      return true;
    }
    return false;
  }

  // Moves past `expected` if the text at m_at begins with it.
  bool consume_bytes(std::string_view expected)
  {
    if (m_text.size() - m_at < expected.size()
        || std::memcmp(m_text.data() + m_at, expected.data(), expected.size()) != 0) {
      return false;
    }
    m_at += expected.size();
    return true;
  }

  void skip_space()
  {
    while (!at_end() && (m_text[m_at] == ' ' || m_text[m_at] == '\t'
                         || m_text[m_at] == '\r' || m_text[m_at] == '\n')) {
      ++m_at;
    }
  }

  bool at_end_after_space()
  {
    skip_space();
    return at_end();
  }

  // Skips a string starting at m_at (a '"'); memchr keeps this fast on the
  // megabytes of file content inside read responses.
  bool skip_string()
  {
    if (!consume('"')) {
      return false;
    }
    for (;;) {
      const char* begin = m_text.data() + m_at;
      const auto* quote = static_cast<const char*>(std::memchr(begin, '"', m_text.size() - m_at));
      if (quote == nullptr) {
        return false;
      }
      std::size_t backslashes = 0;
      for (const char* p = quote; p > begin && p[-1] == '\\'; --p) {
        ++backslashes;
      }
      m_at = static_cast<std::size_t>(quote - m_text.data()) + 1;
      if (backslashes % 2 == 0) {
        return true;
      }
    }
  }

  bool skip_value()
  {
    if (at_end()) {
      return false;
    }
    const char first = m_text[m_at];
    if (first == '"') {
      return skip_string();
    }
    if (first == '{' || first == '[') {
      ++m_at;
      return skip_rest(1);
    }
    const std::size_t start = m_at;
    while (!at_end() && !ends_literal(m_text[m_at])) {
      ++m_at;
    }
    return m_at > start;
  }

  // Whether `c` ends a literal (a number, true, false, null): a separator,
  // white space or NUL; in a strict walk also a quote or a bracket, so that
  // the walk ends where skip_value() over the whole would (or fails).
  bool ends_literal(char c) const
  {
    switch (c) {
    case ',':
    case '}':
    case ']':
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case '\0':
      return true;
    case '"':
    case '[':
    case '{':
      return m_strict_literals;
    default:
      return false;
    }
  }

  std::string_view m_text;
  const char* m_first_text_end = nullptr;
  std::size_t m_at = 0;
  bool m_strict_literals = false; // inside skim_result()
};

} // namespace fsguard
