// A place in a JSON text and the small steps each reader of client lines
// takes over it (the tree reader, json_reader.cpp, and the plain-call scan,
// plain_tool_call.cpp): one copy of the grammar's smallest pieces.
#pragma once

#include <cstring>
#include <string_view>

namespace fsguard {

class JsonCursor {
public:
  explicit JsonCursor(std::string_view text) : m_at(text.data()), m_end(text.data() + text.size()) {}

protected:
  // Takes `expected` if it is next.
  bool consume(char expected)
  {
    if (m_at != m_end && *m_at == expected) {
      ++m_at;
      return true;
    }
    return false;
  }

  // Takes JSON's whitespace. Most lines have none between tokens: one test
  // says so.
  void skip_space()
  {
    while (m_at != m_end && static_cast<unsigned char>(*m_at) <= ' '
           && (*m_at == ' ' || *m_at == '\t' || *m_at == '\n' || *m_at == '\r')) {
      ++m_at;
    }
  }

  // Takes the digits next; false if there are none.
  bool skip_digits()
  {
    const char* start = m_at;
    while (m_at != m_end && *m_at >= '0' && *m_at <= '9') {
      ++m_at;
    }
    return m_at != start;
  }

  // Takes a number's integer digits, after its sign: "0", or digits that
  // do not begin with 0.
  bool skip_integer_digits()
  {
    if (consume('0')) {
      return true; // no more digits may follow a leading zero
    }
    if (m_at == m_end || *m_at < '1' || *m_at > '9') {
      return false;
    }
    skip_digits();
    return true;
  }

  // Walks the object whose '{' is next: `read_key(key)` reads each key into
  // a string_view, `read_value(key)` the value after its ':'. Leaves m_at
  // after the '}'; false where the text is not such an object (or a reader
  // said no).
  template <class ReadKey, class ReadValue>
  bool walk_members(ReadKey read_key, ReadValue read_value)
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
      std::string_view key;
      if (!read_key(key)) {
        return false;
      }
      skip_space();
      if (!consume(':')) {
        return false;
      }
      skip_space();
      if (!read_value(key)) {
        return false;
      }
      skip_space();
      if (consume(',')) {
        continue;
      }
      return consume('}');
    }
  }

  // Walks the array whose '[' is next, calling `read_element()` at each
  // element; as walk_members().
  template <class ReadElement>
  bool walk_elements(ReadElement read_element)
  {
    if (!consume('[')) {
      return false;
    }
    skip_space();
    if (consume(']')) {
      return true;
    }
    for (;;) {
      skip_space();
      if (!read_element()) {
        return false;
      }
      skip_space();
      if (consume(',')) {
        continue;
      }
      return consume(']');
    }
  }

  // Takes `word` (a literal such as "true", or any exact bytes) if it is next.
  bool consume_word(std::string_view word)
  {
    if (static_cast<std::size_t>(m_end - m_at) < word.size()
        || std::memcmp(m_at, word.data(), word.size()) != 0) {
      return false;
    }
    m_at += word.size();
    return true;
  }

  const char* m_at;
  const char* m_end;
};

} // namespace fsguard
