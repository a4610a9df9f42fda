#include "proxy/jsonrpc/message.hpp"

#include "proxy/jsonrpc/json_reader.hpp"
#include "proxy/jsonrpc/json_string.hpp"
#include "proxy/jsonrpc/content_hash.hpp"
#include "tracker/unicode.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace fsguard {

namespace {

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

} // namespace

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

namespace {

// How the MCP SDK's answer to a tool call begins, up to its first
// content block's text.
constexpr std::string_view k_sdk_answer_head = R"({"result":{"content":[{"type":"text","text":)";

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

// Parses `text`, hashing params.arguments.content and leaving it out of the
// result, so a large write is never held twice.
nlohmann::json parse_without_content(std::string_view text, std::optional<ContentHash>& content_hash)
{
  content_hash.reset();
  constexpr std::size_t k_small = 64 * 1024;
  if (text.size() < k_small) {
    // Small lines: a plain parse is faster than one with a callback.
    auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto& arguments = parsed.is_object() && parsed.contains("params")
                          && parsed["params"].is_object() && parsed["params"].contains("arguments")
                        ? parsed["params"]["arguments"]
                        : parsed;
    if (&arguments != &parsed && arguments.is_object()) {
      const auto content = arguments.find("content");
      if (content != arguments.end()) {
        if (content->is_string()) {
          content_hash = hash_bytes(content->get_ref<const std::string&>());
        }
        arguments.erase(content);
      }
    }
    return parsed;
  }
  std::vector<std::string> keys; // the key being read at each depth
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    const auto level = static_cast<std::size_t>(depth);
    if (event == nlohmann::json::parse_event_t::key) {
      // A key of an object at depth `level` (the outermost object is 1).
      keys.resize(level - 1);
      keys.push_back(parsed.get<std::string>());
      return true;
    }
    const bool is_content = level == 3 && keys.size() >= 3 && keys[0] == "params"
                            && keys[1] == "arguments" && keys[2] == "content";
    if (event == nlohmann::json::parse_event_t::value && is_content) {
      // Last one wins, as in JSON.parse.
      content_hash = parsed.is_string() ? std::optional(hash_bytes(parsed.get_ref<const std::string&>()))
                                        : std::nullopt;
      return false; // frees the string
    }
    if (event == nlohmann::json::parse_event_t::object_end && level == 2 && keys.size() >= 2
        && keys[0] == "params" && keys[1] == "arguments" && parsed.is_object()) {
      parsed.erase("content"); // the slot its discarded value left
    }
    return true;
  };
  return nlohmann::json::parse(text, callback, /*allow_exceptions=*/false);
}

} // namespace

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

ClientMessage parse_client_message(std::string_view line)
{
  ClientMessage message;
  parse_client_message(line, message);
  return message;
}

void parse_client_message(std::string_view line, ClientMessage& message)
{
  message.kind = MessageKind::invalid;
  const bool read_fast = read_json_fast(line, message.body, message.content.hash,
                                        &message.content.text, &message.content.traits);
  if (!read_fast) {
    // What the fast reader built before it gave up goes first: the full
    // parser builds the whole tree again.
    release_tree(message.body);
    if (nesting_depth(line) > k_max_nesting) {
      message.kind = MessageKind::too_deep;
      return;
    }
    message.body = parse_without_content(line, message.content.hash);
  }
  if (message.body.is_discarded()) {
    // The upstream (Node) decodes its input with U+FFFD for invalid UTF-8,
    // and JSON.parse accepts lone surrogate escapes: fsguard judges the
    // message the upstream will actually see.
    std::string repaired(line);
    if (auto replaced = replace_invalid_utf8(repaired)) {
      repaired = std::move(*replaced);
    }
    if (auto replaced = replace_lone_surrogates(repaired)) {
      repaired = std::move(*replaced);
    }
    if (auto replaced = replace_infinite_numbers(repaired)) {
      repaired = std::move(*replaced);
    }
    message.body = parse_without_content(repaired, message.content.hash);
  }
  if (message.body.is_discarded()) {
    message.kind = MessageKind::invalid;
    return;
  }
  if (!read_fast && !json_parse_rejects(line).empty()) {
    message.kind = MessageKind::unreadable; // the fast reader reads what JSON.parse does
    return;
  }
  if (message.body.is_array()) {
    message.kind = MessageKind::batch;
    return;
  }
  if (!message.body.is_object()) {
    message.kind = MessageKind::other;
    return;
  }
  const nlohmann::json* id = nullptr;
  bool has_method = false;
  bool has_answer = false;
  for (const auto& [key, value] : message.body.get_ref<const nlohmann::json::object_t&>()) {
    const std::string_view name = key;
    if (name == "id") {
      id = &value;
    } else if (name == "method") {
      has_method = true;
    } else if (name == "result" || name == "error") {
      has_answer = true;
    }
  }
  const bool has_id = id != nullptr;
  if (has_method) {
    message.kind = has_id ? MessageKind::request : MessageKind::notification;
    if (has_id && !id->is_string() && !id->is_number()) {
      message.kind = MessageKind::bad_id;
    }
  } else if (has_id && has_answer) {
    message.kind = MessageKind::response;
  } else {
    message.kind = MessageKind::other;
  }
}

namespace {

// Empties the arrays and objects inside `value`, innermost first, so that
// each is destroyed with no members left to move.
void empty_children(nlohmann::json& value)
{
  if (auto* object = value.get_ptr<nlohmann::json::object_t*>()) {
    for (auto& member : *object) {
      if (member.second.is_structured()) {
        empty_children(member.second);
      }
    }
    object->clear();
  } else if (auto* array = value.get_ptr<nlohmann::json::array_t*>()) {
    for (auto& element : *array) {
      if (element.is_structured()) {
        empty_children(element);
      }
    }
    array->clear();
  }
}

} // namespace

void release_tree(nlohmann::json& tree)
{
  empty_children(tree);
  tree = nullptr;
}

std::string_view method_of(const nlohmann::json& body)
{
  const auto found = body.find(std::string_view("method"));
  if (found == body.end() || !found->is_string()) {
    return {};
  }
  return found->get_ref<const std::string&>();
}

namespace {

// Whether dump() writes `c`, inside a string, as it is: printable ASCII
// other than a quote or a backslash.
bool dumped_as_is(char c)
{
  return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
}

} // namespace

std::string id_key(const nlohmann::json& id)
{
  if (id.is_number_unsigned()) {
    return std::to_string(id.get<std::uint64_t>());
  }
  if (id.is_number_integer()) {
    return std::to_string(id.get<std::int64_t>());
  }
  if (id.is_number_float()) {
    const double value = id.get<double>();
    // An integral float is the integer the peer reads (JSON.parse reads
    // 7.0 as 7, and answers with id 7), up to 2^53, the last held exactly.
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= 0x1p53) {
      return std::to_string(static_cast<long long>(value));
    }
  }
  if (const auto* text = id.get_ptr<const std::string*>()) {
    if (std::all_of(text->begin(), text->end(), dumped_as_is)) {
      return '"' + *text + '"'; // as dump() writes it, without building a serializer
    }
  }
  return id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string id_key_of_raw(std::string_view raw_id)
{
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const std::string_view digits = raw_id.starts_with('-') ? raw_id.substr(1) : raw_id;
  if (!digits.empty() && digits.size() <= 18 && std::all_of(digits.begin(), digits.end(), is_digit)
      && (digits.front() != '0' || raw_id == "0")) {
    return std::string(raw_id); // an integer that std::to_string prints back as it is
  }
  if (raw_id.size() >= 2 && raw_id.front() == '"' && raw_id.back() == '"'
      && std::all_of(raw_id.begin() + 1, raw_id.end() - 1, dumped_as_is)) {
    return std::string(raw_id); // a string that dump() writes back as it is
  }
  auto id = nlohmann::json::parse(raw_id, nullptr, false);
  if (id.is_discarded()) {
    // Lone surrogate escapes, which JSON.parse accepts: repaired as a
    // client's id is, so an answer finds its request.
    if (auto replaced = replace_lone_surrogates(raw_id)) {
      id = nlohmann::json::parse(*replaced, nullptr, false);
    }
  }
  return id.is_discarded() ? std::string() : id_key(id);
}

SkimmedMessage skim_message(std::string_view line)
{
  return Skimmer(line).run();
}

SkimmedMessage skim_message(std::string_view line, const char* first_text_end)
{
  return Skimmer(line, first_text_end).run();
}

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

SkimmedMessage skim_message_generic(std::string_view line)
{
  return Skimmer(line).run_generic();
}

std::optional<bool> skim_tool_succeeded(const SkimmedMessage& response)
{
  if (!response.is_json_object) {
    return std::nullopt;
  }
  if (response.has_error || response.results != 1) {
    return response.results == 0 && response.has_error ? std::optional(false) : std::nullopt;
  }
  if (response.result.walked) {
    if (response.result.is_error_members > 1) {
      return std::nullopt;
    }
    return response.result.raw_is_error != "true";
  }
  std::string_view is_error;
  int flags = 0;
  if (!Skimmer(response.raw_result).walk([&](std::string_view key, std::string_view value) {
        if (key == "isError") {
          is_error = value;
          ++flags;
        }
      })) {
    return std::nullopt;
  }
  if (flags > 1) {
    return std::nullopt;
  }
  return is_error != "true";
}

std::optional<bool> skim_shows_content(const SkimmedMessage& response)
{
  if (!response.is_json_object || response.has_error || response.results != 1) {
    return std::nullopt;
  }
  std::string_view content = response.result.raw_content;
  int found = response.result.content_members;
  if (!response.result.walked
      && !Skimmer(response.raw_result).walk([&](std::string_view key, std::string_view value) {
           if (key == "content") {
             content = value;
             ++found;
           }
         })) {
    return std::nullopt;
  }
  if (found > 1) {
    return std::nullopt;
  }
  if (found == 0 || !content.starts_with('[')) {
    return false;
  }
  const auto next = content.find_first_not_of(" \t\r\n", 1);
  return next != std::string_view::npos && content[next] != ']';
}

std::string_view trailing_id(std::string_view tail)
{
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  std::size_t end = tail.size();
  while (end > 0 && is_space(tail[end - 1])) {
    --end;
  }
  if (end == 0 || tail[end - 1] != '}') {
    return {};
  }
  --end;
  while (end > 0 && is_space(tail[end - 1])) {
    --end;
  }
  std::size_t begin = end;
  if (begin > 0 && tail[begin - 1] == '"') {
    // A string: back to its opening quote, one not escaped by a backslash.
    for (begin = end - 1; begin > 0;) {
      --begin;
      if (tail[begin] != '"') {
        continue;
      }
      std::size_t backslashes = 0;
      while (begin > backslashes && tail[begin - 1 - backslashes] == '\\') {
        ++backslashes;
      }
      if (backslashes % 2 == 0) {
        break;
      }
    }
    if (tail[begin] != '"' || begin == end - 1) {
      return {};
    }
  } else {
    while (begin > 0 && (std::isdigit(static_cast<unsigned char>(tail[begin - 1])) != 0
                         || tail[begin - 1] == '-')) {
      --begin;
    }
    if (begin == end) {
      return {};
    }
  }
  const std::string_view value = tail.substr(begin, end - begin);
  std::size_t before = begin;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  if (before == 0 || tail[before - 1] != ':') {
    return {};
  }
  --before;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  if (before < 4 || tail.substr(before - 4, 4) != "\"id\"") {
    return {};
  }
  before -= 4;
  while (before > 0 && is_space(tail[before - 1])) {
    --before;
  }
  return before > 0 && (tail[before - 1] == ',' || tail[before - 1] == '{') ? value
                                                                              : std::string_view();
}

std::string answer_key_from_ends(std::string_view line)
{
  const std::string_view raw_id = answer_id_from_ends(line);
  return raw_id.empty() ? std::string() : id_key_of_raw(raw_id);
}

std::string_view answer_id_from_ends(std::string_view line)
{
  return line.starts_with(R"({"result":)") ? trailing_id(line) : std::string_view();
}

namespace {

// The raw value of member `key` of the raw JSON object `object`, when it
// has exactly one such member.
std::optional<std::string_view> skim_member(std::string_view object, std::string_view key)
{
  std::string_view found;
  int count = 0;
  if (!Skimmer(object).walk([&](std::string_view name, std::string_view value) {
        if (name == key) {
          found = value;
          ++count;
        }
      })
      || count != 1) {
    return std::nullopt;
  }
  return found;
}

} // namespace

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

std::optional<std::string_view> skim_first_text(const SkimmedMessage& response)
{
  if (!response.is_json_object || response.has_error || response.results != 1) {
    return std::nullopt;
  }
  if (response.result.walked) {
    const auto& result = response.result;
    if (result.content_members != 1 || !result.first_block_walked || result.type_members != 1
        || result.raw_type != "\"text\"" || result.text_members != 1
        || !result.raw_text.starts_with('"')) {
      return std::nullopt;
    }
    return result.raw_text;
  }
  const auto content = skim_member(response.raw_result, "content");
  std::string_view block;
  if (!content || !Skimmer(*content).first_element(block)) {
    return std::nullopt;
  }
  const auto type = skim_member(block, "type");
  const auto text = skim_member(block, "text");
  if (!type || *type != "\"text\"" || !text || !text->starts_with('"')) {
    return std::nullopt;
  }
  return text;
}

std::optional<std::string_view> skim_content_argument(std::string_view line)
{
  const auto params = skim_member(line, "params");
  const auto arguments = params ? skim_member(*params, "arguments") : std::nullopt;
  const auto content = arguments ? skim_member(*arguments, "content") : std::nullopt;
  if (!content || !content->starts_with('"')) {
    return std::nullopt;
  }
  return content;
}

const nlohmann::json& null_value()
{
  static const nlohmann::json k_null;
  return k_null;
}

const nlohmann::json& member(const nlohmann::json& object, const char* key)
{
  if (!object.is_object()) {
    return null_value();
  }
  const auto found = object.find(std::string_view(key));
  return found == object.end() ? null_value() : *found;
}

std::string joined(const std::vector<std::string>& words, std::string_view separator)
{
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) {
      text += separator;
    }
    text += word;
  }
  return text;
}

std::string error_response(const nlohmann::json& id, RpcError code, std::string_view message)
{
  nlohmann::json response = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"error", {{"code", static_cast<int>(code)}, {"message", message}}},
  };
  return response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

RequestMembers request_members(const nlohmann::json& request)
{
  // One walk over the members, not a lookup for each: this runs on every
  // request.
  RequestMembers members{&null_value(), &null_value(), &null_value()};
  if (const auto* object = request.get_ptr<const nlohmann::json::object_t*>()) {
    for (const auto& [key, value] : *object) {
      const std::string_view name = key;
      if (name == "jsonrpc") {
        members.version = &value;
      } else if (name == "method") {
        members.method = &value;
      } else if (name == "params") {
        members.params = &value;
      } else if (name == "id") {
        members.id = &value;
      } else if (name == "result" || name == "error") {
        members.answer_member = true;
      } else {
        members.other_member = true;
      }
    }
  }
  return members;
}

namespace {

// The largest integer JavaScript holds exactly (Number.MAX_SAFE_INTEGER).
constexpr std::int64_t k_max_safe_integer = (std::int64_t{1} << 53) - 1;

// Whether `value` is a number the SDK's z.number().int() takes once
// JSON.parse has read it: an integer of at most 2^53-1 in size, however it
// is written (7, 7.0 and 70e-1 all read as 7).
bool is_sdk_integer(const nlohmann::json& value)
{
  if (value.is_number_unsigned()) {
    return value.get<std::uint64_t>() <= std::uint64_t(k_max_safe_integer);
  }
  if (value.is_number_integer()) {
    const auto number = value.get<std::int64_t>();
    return number >= -k_max_safe_integer && number <= k_max_safe_integer;
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    return std::isfinite(number) && number == std::floor(number)
           && std::fabs(number) <= double(k_max_safe_integer);
  }
  return false;
}

// Why the SDK's schema rejects `meta`, a params._meta or a result's _meta
// (`where` names it): an object whose progressToken, if there, is a string
// or a safe integer, and whose related-task entry, if there, is an object
// with a string taskId. "" if none.
std::string meta_problem(const nlohmann::json& meta, std::string_view where)
{
  if (!meta.is_object()) {
    return "\"" + std::string(where) + "\" must be an object";
  }
  const auto token = meta.find(std::string_view("progressToken"));
  if (token != meta.end() && !token->is_string() && !is_sdk_integer(*token)) {
    return "\"" + std::string(where) + ".progressToken\" must be a string or an integer";
  }
  const auto task = meta.find(std::string_view("io.modelcontextprotocol/related-task"));
  if (task != meta.end()) {
    const auto task_id = task->is_object() ? task->find(std::string_view("taskId")) : task->end();
    if (!task->is_object() || task_id == task->end() || !task_id->is_string()) {
      return "\"" + std::string(where)
             + ".io.modelcontextprotocol/related-task\" must be an object with a string taskId";
    }
  }
  return {};
}

// Why the SDK's schema rejects `params` of a request or a notification: an
// object whose _meta, if there, passes meta_problem(). "" if none.
std::string params_problem(const nlohmann::json& params)
{
  if (!params.is_object()) {
    return "\"params\" must be an object";
  }
  const auto meta = params.find(std::string_view("_meta"));
  return meta == params.end() ? std::string() : meta_problem(*meta, "params._meta");
}

} // namespace

std::string request_the_server_drops(const nlohmann::json& request)
{
  return request_the_server_drops(request_members(request));
}

std::string request_the_server_drops(const RequestMembers& members)
{
  const nlohmann::json* version = members.version;
  const nlohmann::json* method = members.method;
  const nlohmann::json* params = members.params;
  const nlohmann::json* id = members.id;
  const bool answer_member = members.answer_member;
  if (!version->is_string() || version->get_ref<const std::string&>() != "2.0") {
    return "\"jsonrpc\" must be \"2.0\"";
  }
  if (!method->is_string()) {
    return "\"method\" must be a string";
  }
  if (answer_member) {
    return "a request has no \"result\" or \"error\"";
  }
  if (members.other_member) {
    return "a request has no members but \"jsonrpc\", \"id\", \"method\" and \"params\"";
  }
  if (params != nullptr) {
    if (auto problem = params_problem(*params); !problem.empty()) {
      return problem;
    }
  }
  if (id->is_string() || is_sdk_integer(*id)) {
    return {};
  }
  return "the id must be a string or an integer of at most 2^53-1 in size";
}

std::string message_the_server_drops(const nlohmann::json& message)
{
  if (!message.is_object()) {
    return "a message is a JSON object";
  }
  const RequestMembers members = request_members(message);
  if (members.method != &null_value() && members.id != &null_value()) {
    return request_the_server_drops(members);
  }
  const nlohmann::json* result = nullptr;
  const nlohmann::json* error = nullptr;
  bool has_id = false;
  for (const auto& [key, value] : message.get_ref<const nlohmann::json::object_t&>()) {
    const std::string_view name = key;
    has_id = has_id || name == "id";
    result = name == "result" ? &value : result;
    error = name == "error" ? &value : error;
  }
  const nlohmann::json& version = *members.version;
  if (!version.is_string() || version.get_ref<const std::string&>() != "2.0") {
    return "\"jsonrpc\" must be \"2.0\"";
  }
  if (members.other_member) {
    return "a message has no members but \"jsonrpc\", \"id\", \"method\", \"params\", "
           "\"result\" and \"error\"";
  }
  if (message.contains("method")) { // a notification
    if (!members.method->is_string()) {
      return "\"method\" must be a string";
    }
    if (members.answer_member) {
      return "a notification has no \"result\" or \"error\"";
    }
    return members.params == nullptr ? std::string() : params_problem(*members.params);
  }
  if (members.params != nullptr) {
    return "\"params\" belongs to a request or a notification";
  }
  if (has_id && !members.id->is_string() && !is_sdk_integer(*members.id)) {
    return "the id must be a string or an integer of at most 2^53-1 in size";
  }
  if (result != nullptr && error != nullptr) {
    return "an answer has a \"result\" or an \"error\", not both";
  }
  if (result != nullptr) {
    if (!has_id) {
      return "an answer with a \"result\" has an id";
    }
    if (!result->is_object()) {
      return "\"result\" must be an object";
    }
    const auto meta = result->find(std::string_view("_meta"));
    return meta == result->end() ? std::string() : meta_problem(*meta, "result._meta");
  }
  if (error != nullptr) {
    const auto& code = member(*error, "code");
    if (!error->is_object() || !is_sdk_integer(code) || !member(*error, "message").is_string()) {
      return "\"error\" must be an object with an integer \"code\" and a string \"message\"";
    }
    return {};
  }
  return "a message has a \"method\", a \"result\" or an \"error\"";
}

} // namespace fsguard
