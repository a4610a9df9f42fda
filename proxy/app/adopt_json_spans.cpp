#include "proxy/app/adopt_json_spans.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

namespace fsguard {

namespace {

constexpr int k_max_depth = 512;

class SpanReader {
public:
  explicit SpanReader(std::string_view text) : m_text(text), m_plain(text) {}

  Result<JsonSpans, std::string> read()
  {
    if (m_text.starts_with("\xEF\xBB\xBF")) {
      m_at = 3;
    }
    skip_space();
    if (!value({}, true, 0)) {
      return m_error;
    }
    skip_space();
    if (m_at != m_text.size()) {
      return std::string("more after the JSON value");
    }
    return JsonSpans{std::move(m_members), std::move(m_plain)};
  }

private:
  char peek() const { return m_at < m_text.size() ? m_text[m_at] : '\0'; }

  bool fail(std::string what)
  {
    if (m_error.empty()) {
      m_error = std::move(what) + " at byte " + std::to_string(m_at);
    }
    return false;
  }

  void skip_space()
  {
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++m_at;
      } else if (m_text.substr(m_at).starts_with("//")) {
        const auto end = m_text.find('\n', m_at);
        blank(end == std::string_view::npos ? m_text.size() : end);
      } else if (m_text.substr(m_at).starts_with("/*")) {
        const auto end = m_text.find("*/", m_at + 2);
        blank(end == std::string_view::npos ? m_text.size() : end + 2);
      } else {
        return;
      }
    }
  }

  // Blanks the plain text out up to `end` (line ends kept), and moves there.
  void blank(std::size_t end)
  {
    for (; m_at < end; ++m_at) {
      if (m_plain[m_at] != '\n' && m_plain[m_at] != '\r') {
        m_plain[m_at] = ' ';
      }
    }
  }

  bool string()
  {
    ++m_at; // the opening quote
    while (m_at < m_text.size() && m_text[m_at] != '"') {
      m_at += m_text[m_at] == '\\' ? 2 : 1;
    }
    if (m_at >= m_text.size()) {
      return fail("a string that does not end");
    }
    ++m_at;
    return true;
  }

  // A value; members of objects outside arrays are recorded under `path`.
  bool value(const std::vector<std::string>& path, bool record, int depth)
  {
    if (depth > k_max_depth) {
      return fail("nesting too deep");
    }
    const char c = peek();
    if (c == '"') {
      return string();
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++m_at;
      for (;;) {
        skip_space();
        if (peek() == close) {
          ++m_at;
          return true;
        }
        if (c == '{' && !member(path, record, depth)) {
          return false;
        }
        if (c == '[' && !value(path, false, depth + 1)) {
          return false;
        }
        skip_space();
        if (peek() == ',') {
          const std::size_t comma = m_at++;
          skip_space();
          if (peek() == close) {
            m_plain[comma] = ' '; // a trailing comma
          }
        } else if (peek() != close) {
          return fail(c == '{' ? "an object that does not end" : "an array that does not end");
        }
      }
    }
    const std::size_t begin = m_at;
    while (m_at < m_text.size()
           && (std::isalnum(static_cast<unsigned char>(m_text[m_at])) != 0
               || m_text[m_at] == '-' || m_text[m_at] == '+' || m_text[m_at] == '.')) {
      ++m_at;
    }
    return m_at > begin || fail("a value fsguard cannot read");
  }

  bool member(const std::vector<std::string>& path, bool record, int depth)
  {
    if (peek() != '"') {
      return fail("a key that is not a string");
    }
    JsonMemberSpan span;
    span.key_begin = m_at;
    if (!string()) {
      return false;
    }
    span.key_end = m_at;
    const auto key = nlohmann::json::parse(
      m_text.substr(span.key_begin, span.key_end - span.key_begin), nullptr, false);
    if (!key.is_string()) {
      return fail("a key fsguard cannot read");
    }
    skip_space();
    if (peek() != ':') {
      return fail("a key without :");
    }
    ++m_at;
    skip_space();
    span.path = path;
    span.path.push_back(key.get<std::string>());
    span.value_begin = m_at;
    const std::size_t index = m_members.size();
    if (record) {
      m_members.push_back(span);
    }
    if (!value(span.path, record, depth + 1)) {
      return false;
    }
    if (record) {
      m_members[index].value_end = m_at;
    }
    return true;
  }

  std::string_view m_text;
  std::size_t m_at = 0;
  std::string m_plain;
  std::vector<JsonMemberSpan> m_members;
  std::string m_error;
};

} // namespace

Result<JsonSpans, std::string> json_member_spans(std::string_view text)
{
  return SpanReader(text).read();
}

} // namespace fsguard
