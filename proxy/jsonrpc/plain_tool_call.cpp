#include "proxy/jsonrpc/plain_tool_call.hpp"

#include <charconv>
#include <cstdint>

#include "proxy/jsonrpc/json_cursor.hpp"
#include "proxy/jsonrpc/json_reader.hpp"
#include "proxy/jsonrpc/json_string.hpp"
#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"

namespace fsguard {

namespace {

// The prefix of the _meta keys of MCP's 2026-07-28 envelope.
constexpr std::string_view k_envelope_prefix = "io.modelcontextprotocol/";

// Discards what decode_json_string() decodes: a string inside the
// arguments is only checked, not kept.
class DiscardSink final : public ByteSink {
public:
  void append(const char*, std::size_t) override {}
};

// Reads a line in the plain shape: an object whose members are
// "jsonrpc": "2.0", "method": "tools/call", "id" and "params", each once and
// nothing else; the id an integer of at most 2^53-1 in size (no leading
// zero, no "-0") or a string of ASCII without escapes or control characters
// that does not begin with fsguard's own prefix (k_own_id_prefix); params
// an object with a "name" string of the same kind and, optionally,
// "arguments" (any JSON nested no deeper than k_max_nesting) and "_meta"
// (read_meta), each once. Each read_* moves past what it read and returns
// false where the line leaves that shape (or is not JSON). The arguments of
// a call to guard are read into a tree (read_arguments_fast) where they
// are, or, if they come before the name, once the line is scanned.
class Scanner : JsonCursor {
public:
  Scanner(std::string_view line, PlainCallFilter& filter, PlainCallArguments* arguments)
    : JsonCursor(line), m_filter(filter), m_arguments(arguments)
  {
  }

  std::optional<PlainToolCall> run()
  {
    PlainToolCall call;
    bool version = false;
    bool method = false;
    bool params = false;
    const bool members_read = read_members([&](std::string_view key) {
      if (key == "jsonrpc" && !version) {
        return version = consume_word("\"2.0\"");
      }
      if (key == "method" && !method) {
        return method = consume_word("\"tools/call\"");
      }
      if (key == "id" && call.raw_id.empty()) {
        return read_id(call.raw_id);
      }
      if (key == "params" && !params) {
        return params = read_params(call.name);
      }
      return false; // another member, or one repeated
    });
    skip_space();
    if (!members_read || m_at != m_end || !version || !method || !params || call.raw_id.empty()) {
      return std::nullopt;
    }
    call.use = m_use;
    call.envelope = m_envelope;
    if (m_use == PlainCallUse::guard && !m_arguments_read && !read_arguments_later()) {
      return std::nullopt;
    }
    return call;
  }

private:
  // Reads an object's members, calling `read_value(key)` at each value.
  // Keys must be plain strings.
  template <class ReadValue>
  bool read_members(ReadValue read_value)
  {
    skip_space();
    return walk_members([this](std::string_view& key) { return read_plain_string(key); },
                        read_value);
  }

  bool read_params(std::string_view& name)
  {
    bool arguments = false;
    bool meta = false;
    return read_members([&](std::string_view key) {
             if (key == "name" && name.data() == nullptr) {
               return read_plain_string(name) && take_use(name);
             }
             if (key == "arguments" && !arguments) {
               arguments = true;
               if (m_use == PlainCallUse::guard) {
                 return read_arguments();
               }
               const char* const start = m_at;
               if (!skip_value(2)) {
                 return false;
               }
               m_raw_arguments = std::string_view(start, static_cast<std::size_t>(m_at - start));
               return true;
             }
             if (key == "_meta" && !meta) {
               meta = true;
               const char* const start = m_at;
               m_envelope_key = false;
               if (!read_meta()) {
                 return false;
               }
               if (m_envelope_key) {
                 m_envelope = std::string_view(start, static_cast<std::size_t>(m_at - start));
               }
               return true;
             }
             return false; // another member, or one repeated
           })
           && name.data() != nullptr;
  }

  // Asks the filter what the call of `name` is for; false: the scan stops.
  bool take_use(std::string_view name)
  {
    m_use = m_filter.use_of(name);
    if (m_use == PlainCallUse::guard && m_arguments == nullptr) {
      m_use = PlainCallUse::none; // no place to read the arguments into
    }
    return m_use != PlainCallUse::none;
  }

  // Reads the arguments of a call to guard, which are next, into m_arguments.
  bool read_arguments()
  {
    const char* const after =
      read_arguments_fast(std::string_view(m_at, static_cast<std::size_t>(m_end - m_at)),
                          m_arguments->tree, m_arguments->content.hash, &m_arguments->content.text,
                          &m_arguments->content.traits);
    if (after == nullptr) {
      return false;
    }
    m_at = after;
    m_arguments_read = true;
    return true;
  }

  // The arguments of a call to guard, scanned before its name was known
  // (m_raw_arguments) or absent, read once the line is scanned.
  bool read_arguments_later()
  {
    if (m_raw_arguments.data() == nullptr) {
      release_tree(m_arguments->tree); // no arguments: null, as the full parse finds
      m_arguments->content = ContentArgument{};
      return true;
    }
    const char* const after = read_arguments_fast(m_raw_arguments, m_arguments->tree,
                                                  m_arguments->content.hash,
                                                  &m_arguments->content.text,
                                                  &m_arguments->content.traits);
    return after == m_raw_arguments.data() + m_raw_arguments.size();
  }

  // params._meta as the SDK's client sends it with a progress callback: an
  // object whose "progressToken", if there, is a plain string or a safe
  // integer (request_the_server_drops() refuses other kinds); its other
  // members any JSON but a related task's, which the full path checks. Notes in
  // m_envelope_key whether one of them is the 2026 era's envelope.
  bool read_meta()
  {
    bool token = false;
    return read_members([&](std::string_view key) {
             if (key == "io.modelcontextprotocol/related-task") {
               return false; // the schema takes only {"taskId": string}
             }
             if (key != "progressToken") {
               m_envelope_key = m_envelope_key || key.starts_with(k_envelope_prefix);
               return skip_value(3);
             }
             if (token) {
               return false; // repeated: the full parse decides which counts
             }
             token = true;
             std::string_view body;
             return m_at != m_end && *m_at == '"' ? read_plain_string(body) : read_safe_integer();
           });
  }

  // An id that is its own key: a safe integer as JSON writes it, or a
  // plain string.
  bool read_id(std::string_view& raw_id)
  {
    const char* start = m_at;
    if (m_at != m_end && *m_at == '"') {
      std::string_view body;
      if (!read_plain_string(body) || body.starts_with(k_own_id_prefix)) {
        return false; // fsguard's own ids are refused by the full path
      }
    } else if (!read_safe_integer()) {
      return false;
    }
    raw_id = std::string_view(start, static_cast<std::size_t>(m_at - start));
    return true;
  }

  bool read_safe_integer()
  {
    constexpr std::uint64_t k_max_safe_integer = (std::uint64_t{1} << 53) - 1;
    const bool negative = consume('-');
    if (m_at == m_end || *m_at < '1' || *m_at > '9') {
      return !negative && consume('0') && !(m_at != m_end && is_number_byte(*m_at));
    }
    std::uint64_t value = 0;
    int digits = 0;
    while (m_at != m_end && *m_at >= '0' && *m_at <= '9') {
      if (++digits > 16) {
        return false;
      }
      value = value * 10 + static_cast<std::uint64_t>(*m_at - '0');
      ++m_at;
    }
    return value <= k_max_safe_integer && !(m_at != m_end && is_number_byte(*m_at));
  }

  static bool is_number_byte(char c) { return c == '.' || c == 'e' || c == 'E'; }

  // A string of printable ASCII without escapes; `body` is between its quotes.
  bool read_plain_string(std::string_view& body)
  {
    if (!consume('"')) {
      return false;
    }
    const char* quote = plain_string_end(m_at, m_end);
    if (quote == nullptr) {
      return false;
    }
    body = std::string_view(m_at, static_cast<std::size_t>(quote - m_at));
    m_at = quote + 1;
    return true;
  }

  // Any JSON value, checked as the full parse would, and not kept;
  // `depth` is the nesting of the object or array it is in.
  bool skip_value(std::size_t depth)
  {
    if (m_at == m_end) {
      return false;
    }
    switch (*m_at) {
    case '{':
      return depth < k_max_nesting && read_members([&](std::string_view) {
               return skip_value(depth + 1);
             });
    case '[':
      return depth < k_max_nesting && skip_array(depth + 1);
    case '"': {
      if (const char* quote = plain_string_end(m_at + 1, m_end)) {
        m_at = quote + 1; // the usual string: nothing to decode
        return true;
      }
      DiscardSink discarded;
      const char* after = decode_json_string(m_at + 1, m_end, discarded);
      if (after == nullptr) {
        return false;
      }
      m_at = after;
      return true;
    }
    case 't':
      return consume_word("true");
    case 'f':
      return consume_word("false");
    case 'n':
      return consume_word("null");
    default:
      return skip_number();
    }
  }

  bool skip_array(std::size_t depth)
  {
    return walk_elements([&] { return skip_value(depth); });
  }

  // JSON's number grammar, for numbers no double overflows on: one with an
  // exponent, or longer than 17 bytes, takes the full parse, which refuses
  // one that overflows.
  bool skip_number()
  {
    const char* const start = m_at;
    consume('-');
    if (!skip_integer_digits()) {
      return false;
    }
    if (consume('.') && !skip_digits()) {
      return false;
    }
    constexpr std::ptrdiff_t k_max_number_bytes = 17; // "-", 15 digits and "."
    return m_at - start <= k_max_number_bytes && m_at != m_end && *m_at != 'e' && *m_at != 'E';
  }

  PlainCallFilter& m_filter;
  PlainCallArguments* m_arguments; // nullptr: none to read into
  PlainCallUse m_use = PlainCallUse::none;
  bool m_arguments_read = false;     // into m_arguments, where they were
  std::string_view m_raw_arguments{}; // the arguments' text, when skipped
  std::string_view m_envelope{};      // params._meta's text, when it carries the envelope
  bool m_envelope_key = false;        // read_meta() met a key of the envelope's
};

} // namespace

std::optional<PlainToolCall> scan_plain_tool_call(std::string_view line, PlainCallFilter& filter,
                                                  PlainCallArguments* arguments)
{
  return Scanner(line, filter, arguments).run();
}

nlohmann::json plain_id(std::string_view raw_id)
{
  if (raw_id.starts_with('"')) {
    return std::string(raw_id.substr(1, raw_id.size() - 2));
  }
  const char* const end = raw_id.data() + raw_id.size();
  if (raw_id.starts_with('-')) {
    std::int64_t value = 0;
    std::from_chars(raw_id.data(), end, value);
    return value;
  }
  std::uint64_t value = 0;
  std::from_chars(raw_id.data(), end, value);
  return value;
}

} // namespace fsguard
