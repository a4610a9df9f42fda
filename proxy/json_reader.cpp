#include "proxy/json_reader.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include "proxy/content_hash.hpp"
#include "proxy/json_string.hpp"

namespace fsguard {

namespace {

// Where an object sits on the way to params.arguments.content.
enum class Place { elsewhere, top, params, arguments };

// Deeper than this, the full parser decides (callers check k_max_nesting
// before either runs).
constexpr int k_max_depth = 512;

// Feeds decoded content to a ContentHasher in blocks. A text with an escape
// on every line ("\n") is decoded in pieces of tens of bytes, and each call
// of XXH3's streaming update costs about as much as hashing 100 bytes.
class HashSink final : public ByteSink {
public:
  void append(const char* bytes, std::size_t size) override
  {
    if (size >= k_block - m_used) {
      flush();
      if (size >= k_block) {
        m_hasher.append(bytes, size);
        return;
      }
    }
    std::memcpy(m_block.data() + m_used, bytes, size);
    m_used += size;
  }

  ContentHash digest()
  {
    flush();
    return m_hasher.digest();
  }

private:
  static constexpr std::size_t k_block = 4096;

  void flush()
  {
    if (m_used > 0) {
      m_hasher.append(m_block.data(), m_used);
      m_used = 0;
    }
  }

  std::array<char, k_block> m_block;
  std::size_t m_used = 0;
  ContentHasher m_hasher;
};

class Reader {
public:
  Reader(std::string_view text, std::optional<ContentHash>& content_hash)
    : m_at(text.data()), m_end(text.data() + text.size()), m_content_hash(content_hash)
  {
  }

  bool read_document(nlohmann::json& out)
  {
    skip_space();
    if (!read_value(out, Place::top, 0)) {
      return false;
    }
    skip_space();
    return m_at == m_end;
  }

private:
  bool read_value(nlohmann::json& out, Place place, int depth)
  {
    if (m_at == m_end || depth > k_max_depth) {
      return false;
    }
    switch (*m_at) {
    case '{':
      return read_object(out, place, depth + 1);
    case '[':
      return read_array(out, depth + 1);
    case '"': {
      std::string text;
      if (!read_string(text)) {
        return false;
      }
      out = std::move(text);
      return true;
    }
    case 't':
      return read_literal("true", out, nlohmann::json(true));
    case 'f':
      return read_literal("false", out, nlohmann::json(false));
    case 'n':
      return read_literal("null", out, nlohmann::json(nullptr));
    default:
      return read_number(out);
    }
  }

  bool read_object(nlohmann::json& out, Place place, int depth)
  {
    ++m_at; // '{'
    out = nlohmann::json::object();
    skip_space();
    if (consume('}')) {
      return true;
    }
    for (;;) {
      skip_space();
      std::string key;
      if (!read_string(key)) {
        return false;
      }
      skip_space();
      if (!consume(':')) {
        return false;
      }
      skip_space();
      const Place inner = place == Place::top && key == "params"         ? Place::params
                          : place == Place::params && key == "arguments" ? Place::arguments
                                                                         : Place::elsewhere;
      if (inner != Place::elsewhere) {
        m_content_hash.reset(); // a repeated key replaces what the earlier one held
      }
      if (place == Place::arguments && key == "content") {
        if (!read_content()) {
          return false;
        }
      } else {
        nlohmann::json value;
        if (!read_value(value, inner, depth)) {
          return false;
        }
        out[std::move(key)] = std::move(value); // the last of repeated keys wins
      }
      skip_space();
      if (consume(',')) {
        continue;
      }
      return consume('}');
    }
  }

  // params.arguments.content: hashed if a string, never kept.
  bool read_content()
  {
    m_content_hash.reset();
    if (m_at != m_end && *m_at == '"') {
      HashSink sink;
      const char* after = decode_json_string(m_at + 1, m_end, sink);
      if (after == nullptr) {
        return false;
      }
      m_at = after;
      m_content_hash = sink.digest();
      return true;
    }
    nlohmann::json ignored;
    return read_value(ignored, Place::elsewhere, 0);
  }

  bool read_array(nlohmann::json& out, int depth)
  {
    ++m_at; // '['
    out = nlohmann::json::array();
    skip_space();
    if (consume(']')) {
      return true;
    }
    for (;;) {
      skip_space();
      nlohmann::json value;
      if (!read_value(value, Place::elsewhere, depth)) {
        return false;
      }
      out.push_back(std::move(value));
      skip_space();
      if (consume(',')) {
        continue;
      }
      return consume(']');
    }
  }

  bool read_string(std::string& out)
  {
    if (!consume('"')) {
      return false;
    }
    StringSink sink(out);
    const char* after = decode_json_string(m_at, m_end, sink);
    if (after == nullptr) {
      return false;
    }
    m_at = after;
    return true;
  }

  bool read_literal(std::string_view word, nlohmann::json& out, nlohmann::json value)
  {
    if (static_cast<std::size_t>(m_end - m_at) < word.size()
        || std::memcmp(m_at, word.data(), word.size()) != 0) {
      return false;
    }
    m_at += word.size();
    out = std::move(value);
    return true;
  }

  // JSON's number grammar; integers become int64 (negative) or uint64, the
  // rest double, as nlohmann stores them. Out of range: the full parser.
  bool read_number(nlohmann::json& out)
  {
    const char* start = m_at;
    const bool negative = consume('-');
    if (consume('0')) {
      // no more digits may follow a leading zero
    } else if (m_at != m_end && *m_at >= '1' && *m_at <= '9') {
      skip_digits();
    } else {
      return false;
    }
    bool integer = true;
    if (consume('.')) {
      integer = false;
      if (!skip_digits()) {
        return false;
      }
    }
    if (consume('e') || consume('E')) {
      integer = false;
      if (!consume('+')) {
        consume('-');
      }
      if (!skip_digits()) {
        return false;
      }
    }
    if (integer && negative) {
      std::int64_t value = 0;
      if (std::from_chars(start, m_at, value).ec != std::errc()) {
        return false;
      }
      out = value;
    } else if (integer) {
      std::uint64_t value = 0;
      if (std::from_chars(start, m_at, value).ec != std::errc()) {
        return false;
      }
      out = value;
    } else {
      double value = 0;
      if (std::from_chars(start, m_at, value).ec != std::errc()) {
        return false;
      }
      out = value;
    }
    return true;
  }

  bool skip_digits()
  {
    const char* start = m_at;
    while (m_at != m_end && *m_at >= '0' && *m_at <= '9') {
      ++m_at;
    }
    return m_at != start;
  }

  bool consume(char expected)
  {
    if (m_at != m_end && *m_at == expected) {
      ++m_at;
      return true;
    }
    return false;
  }

  void skip_space()
  {
    while (m_at != m_end && (*m_at == ' ' || *m_at == '\t' || *m_at == '\n' || *m_at == '\r')) {
      ++m_at;
    }
  }

  const char* m_at;
  const char* m_end;
  std::optional<ContentHash>& m_content_hash;
};

} // namespace

std::optional<nlohmann::json> read_json_fast(std::string_view text,
                                             std::optional<ContentHash>& content_hash)
{
  content_hash.reset();
  nlohmann::json out;
  if (!Reader(text, content_hash).read_document(out)) {
    content_hash.reset();
    return std::nullopt;
  }
  return out;
}

} // namespace fsguard
