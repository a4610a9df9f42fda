#include "proxy/jsonrpc/json_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/jsonrpc/json_cursor.hpp"
#include "proxy/jsonrpc/json_string.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "tracker/kept_texts.hpp"

namespace fsguard {

static_assert(k_decoded_content_bytes == KeptTextBudget{}.file_bytes,
              "the reader decodes what the guard keeps by default");

namespace {

// Where an object sits on the way to params.arguments.content.
enum class Place { elsewhere, top, params, arguments };

// Deeper than this, the message is refused (the caller tells why).
constexpr int k_max_depth = static_cast<int>(k_max_nesting);

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

// Takes a write's decoded content from a line too long to decode it in
// place (see Reader::read_content): keeps its bytes while they fit the
// room of `text` (k_decoded_content_bytes at most), and hashes them (a
// longer content is only hashed, and none of it kept).
class ContentSink final : public ByteSink {
public:
  explicit ContentSink(TextBytes* text) : m_text(text) {}

  void append(const char* bytes, std::size_t size) override
  {
    if (m_text != nullptr) {
      if (size <= m_text->capacity() - m_text->size()) {
        std::memcpy(m_text->data() + m_text->size(), bytes, size);
        m_text->set_size(m_text->size() + size);
        return;
      }
      m_hasher.append(m_text->data(), m_text->size()); // too long to keep: only hashed
      *m_text = TextBytes();
      m_text = nullptr;
    }
    m_hasher.append(bytes, size);
  }

  // The hash of everything appended.
  ContentHash digest() { return m_text != nullptr ? hash_bytes(m_text->view()) : m_hasher.digest(); }
  // Whether the text holds everything appended.
  bool kept() const { return m_text != nullptr; }

private:
  TextBytes* m_text;
  HashSink m_hasher;
};

class Reader : JsonCursor {
public:
  Reader(std::string_view text, std::optional<ContentHash>& content_hash,
         std::optional<TextBytes>* content_text, std::optional<ContentTraits>* content_traits)
    : JsonCursor(text), m_content_hash(content_hash), m_content_text(content_text),
      m_content_traits(content_traits)
  {
  }

  // Reads the document into `out`, reusing what it holds (see read_json_fast).
  bool read_document(nlohmann::json& out)
  {
    skip_space();
    if (!read_value(out, Place::top, 0)) {
      return false;
    }
    skip_space();
    return m_at == m_end;
  }

  // Reads the value next, params.arguments of a request, into `out` as
  // read_document() reads it there; returns where it ends, or nullptr.
  const char* read_arguments(nlohmann::json& out)
  {
    constexpr int k_arguments_depth = 2; // in params, in the request
    if (!read_value(out, Place::arguments, k_arguments_depth)) {
      return nullptr;
    }
    return m_at;
  }

private:
  using Object = nlohmann::json::object_t;
  using Array = nlohmann::json::array_t;

  // Reads a value into `out`, replacing what it holds: values are built
  // where they end up, never moved from a temporary, and a string, array or
  // object read where one was keeps its memory. `depth` is the nesting of
  // the array or object the value is in.
  bool read_value(nlohmann::json& out, Place place, int depth)
  {
    if (m_at == m_end) {
      return false;
    }
    switch (*m_at) {
    case '{':
      return depth < k_max_depth && read_object(out, place, depth + 1);
    case '[':
      return depth < k_max_depth && read_array(out, depth + 1);
    case '"': {
      ++m_at;
      auto* text = out.get_ptr<std::string*>();
      if (text == nullptr) {
        out = nlohmann::json::value_t::string;
        text = out.get_ptr<std::string*>();
      }
      text->clear();
      if (!read_string_body(*text)) {
        return false;
      }
      drop_spare_capacity(*text);
      return true;
    }
    case 't':
      return read_literal("true", out, true);
    case 'f':
      return read_literal("false", out, false);
    case 'n':
      return read_literal("null", out, nullptr);
    default:
      return read_number(out);
    }
  }

  // An object read where one was reuses the members of the same name (the
  // last message's: a client sends the same shape each time) and removes
  // the others at the end. Each byte is read once: only the members there
  // before are tracked, and an object with more than k_tracked of them is
  // emptied first.
  bool read_object(nlohmann::json& out, Place place, int depth)
  {
    if (!out.is_object()) {
      out = nlohmann::json::value_t::object;
    }
    Object& members = *out.get_ptr<Object*>();
    if (members.size() > EarlierMembers::k_tracked) {
      members.clear();
    }
    EarlierMembers earlier(members);
    if (!read_members(members, place, depth, earlier)) {
      return false;
    }
    earlier.remove_unset(members);
    return true;
  }

  // The members an object held before this read, and which of them the read
  // set again.
  class EarlierMembers {
  public:
    static constexpr std::size_t k_tracked = 16;

    explicit EarlierMembers(Object& members)
    {
      for (auto at = members.begin(); at != members.end(); ++at) {
        m_members[m_count++] = at;
      }
    }

    // The earlier member named `key`, noted as set; nothing if the object
    // held no such member. Few and mostly of other lengths, they are found
    // with fewer comparisons than the map's search of all its members.
    std::optional<Object::iterator> set_again(std::string_view key)
    {
      for (std::size_t index = 0; index < m_count; ++index) {
        const std::string& name = m_members[index]->first;
        if (name.size() == key.size() && std::memcmp(name.data(), key.data(), key.size()) == 0) {
          m_set[index] = true;
          return m_members[index];
        }
      }
      return std::nullopt;
    }

    void remove_unset(Object& members) const
    {
      for (std::size_t index = 0; index < m_count; ++index) {
        if (!m_set[index]) {
          members.erase(m_members[index]);
        }
      }
    }

  private:
    std::array<Object::iterator, k_tracked> m_members{};
    std::array<bool, k_tracked> m_set{};
    std::size_t m_count = 0;
  };

  // Reads an object's members from its '{' into `members`, noting in
  // `earlier` each of its members set.
  bool read_members(Object& members, Place place, int depth, EarlierMembers& earlier)
  {
    const auto read_member = [&](std::string_view key) {
      const Place inner = place == Place::top && key == "params"         ? Place::params
                          : place == Place::params && key == "arguments" ? Place::arguments
                                                                         : Place::elsewhere;
      if (inner != Place::elsewhere) {
        forget_content(); // a repeated key replaces what the earlier one held
      }
      if (place == Place::arguments && key == "content") {
        return read_content(depth);
      }
      return read_value(slot(members, key, earlier)->second, inner, depth);
    };
    return walk_members([this](std::string_view& key) { return read_key(key); }, read_member);
  }

  // The member `key` of `members`: the last message's (noted as set in
  // `earlier`), one this read added (a repeated key, whose last value wins
  // as in JSON.parse), or a new one, null.
  static Object::iterator slot(Object& members, std::string_view key, EarlierMembers& earlier)
  {
    if (const auto member = earlier.set_again(key)) {
      return *member;
    }
    auto at = members.lower_bound(key);
    if (at != members.end() && at->first == key) {
      return at;
    }
    return members.emplace_hint(at, std::piecewise_construct, std::forward_as_tuple(key),
                                std::forward_as_tuple());
  }

  // params.arguments.content, at nesting `depth` (its object's): hashed if
  // a string, and decoded into m_content_text if asked and short enough;
  // never in the tree, and nested no deeper than any other value.
  bool read_content(int depth)
  {
    forget_content();
    if (m_at == m_end || *m_at != '"') {
      nlohmann::json ignored;
      return read_value(ignored, Place::elsewhere, depth);
    }
    if (m_content_text != nullptr
        && static_cast<std::size_t>(m_end - m_at) <= k_decoded_content_bytes) {
      return read_content_in_place();
    }
    TextBytes* text = nullptr;
    if (m_content_text != nullptr) {
      // At most as long as the rest of the line: no regrowing on the way.
      text = &m_content_text->emplace(TextBytes::with_room(
        std::min(static_cast<std::size_t>(m_end - m_at), k_decoded_content_bytes)));
    }
    ContentSink sink(text);
    DecodedFacts facts;
    const char* after = decode_json_string(m_at + 1, m_end, sink, facts);
    if (after == nullptr) {
      return false;
    }
    m_at = after;
    m_content_hash = sink.digest();
    if (!sink.kept()) {
      forget_content_text();
    } else {
      drop_spare_room(*text); // reserved for the rest of the line, which may be padding
      if (m_content_traits != nullptr) {
        *m_content_traits = traits_from_facts(facts);
      }
    }
    return true;
  }

  // The content string at m_at, on a line whose rest is no longer than
  // k_decoded_content_bytes (nor, then, the text), decoded straight into
  // the text kept (decode_json_string into a DecodedText) and hashed whole.
  bool read_content_in_place()
  {
    DecodedText decoded;
    const char* after = decode_json_string(m_at + 1, m_end, decoded);
    if (after == nullptr) {
      return false;
    }
    m_at = after;
    m_content_hash = hash_bytes(decoded.text.view());
    drop_spare_room(decoded.text); // room for the rest of the line, which may be padding
    *m_content_text = std::move(decoded.text);
    if (m_content_traits != nullptr) {
      *m_content_traits = traits_from_facts(decoded.facts);
    }
    return true;
  }

  void forget_content()
  {
    m_content_hash.reset();
    forget_content_text();
  }

  void forget_content_text()
  {
    if (m_content_text != nullptr) {
      m_content_text->reset();
    }
    if (m_content_traits != nullptr) {
      m_content_traits->reset();
    }
  }

  // An array read where one was reuses its elements in order.
  bool read_array(nlohmann::json& out, int depth)
  {
    if (!out.is_array()) {
      out = nlohmann::json::value_t::array;
    }
    Array& elements = *out.get_ptr<Array*>();
    std::size_t count = 0;
    const bool read = walk_elements([&] {
      nlohmann::json& element = count < elements.size() ? elements[count] : elements.emplace_back();
      ++count;
      return read_value(element, Place::elsewhere, depth);
    });
    if (!read) {
      return false;
    }
    elements.resize(count);
    drop_spare_capacity(elements);
    return true;
  }

  // A string or array reused from a longer one gives back what it no longer
  // needs: what the tree holds stays in proportion to the last line, however
  // long the lines before it were.
  template <class Container>
  static void drop_spare_capacity(Container& container)
  {
    const std::size_t element = sizeof(typename Container::value_type);
    if ((container.capacity() - container.size()) * element
        > container.size() * element + k_kept_spare_bytes) {
      container.shrink_to_fit();
    }
  }
  static constexpr std::size_t k_kept_spare_bytes = 64;

  // The same for a content's text.
  static void drop_spare_room(TextBytes& text)
  {
    if (text.capacity() - text.size() > text.size() + k_kept_spare_bytes) {
      text.shrink_to_fit();
    }
  }

  // Reads a key into `key`: a view of the text when it holds no escape (the
  // usual case), else of m_key, where it is decoded.
  bool read_key(std::string_view& key)
  {
    if (!consume('"')) {
      return false;
    }
    if (const char* quote = plain_string_end(m_at, m_end)) {
      key = std::string_view(m_at, static_cast<std::size_t>(quote - m_at));
      m_at = quote + 1;
      return true;
    }
    m_key.clear();
    if (!read_string_body(m_key)) {
      return false;
    }
    key = m_key;
    return true;
  }

  // Reads the rest of a string whose opening quote is behind m_at into
  // `out` (empty).
  bool read_string_body(std::string& out)
  {
    if (const char* quote = plain_string_end(m_at, m_end)) {
      out.assign(m_at, quote);
      m_at = quote + 1;
      return true;
    }
    StringSink sink(out);
    const char* after = decode_json_string(m_at, m_end, sink);
    if (after == nullptr) {
      return false;
    }
    m_at = after;
    return true;
  }

  template <class Value>
  bool read_literal(std::string_view word, nlohmann::json& out, Value value)
  {
    if (!consume_word(word)) {
      return false;
    }
    out = value;
    return true;
  }

  // JSON's number grammar; integers become int64 (negative) or uint64, the
  // rest double, as nlohmann stores them. Out of range: the full parser.
  bool read_number(nlohmann::json& out)
  {
    const char* start = m_at;
    const bool negative = consume('-');
    if (!skip_integer_digits()) {
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

  std::optional<ContentHash>& m_content_hash;
  std::optional<TextBytes>* m_content_text; // nullptr: not asked for
  std::optional<ContentTraits>* m_content_traits; // nullptr: not asked for
  std::string m_key; // an escaped key, decoded
};

} // namespace

namespace {

// Forgets the content a read found (`content_hash`, and `content_text` and
// `content_traits` if given): before a read, and after one that failed.
void forget_content(std::optional<ContentHash>& content_hash,
                    std::optional<TextBytes>* content_text,
                    std::optional<ContentTraits>* content_traits)
{
  content_hash.reset();
  if (content_text != nullptr) {
    content_text->reset();
  }
  if (content_traits != nullptr) {
    content_traits->reset();
  }
}

} // namespace

bool read_json_fast(std::string_view text, nlohmann::json& tree,
                    std::optional<ContentHash>& content_hash,
                    std::optional<TextBytes>* content_text,
                    std::optional<ContentTraits>* content_traits)
{
  Reader reader(text, content_hash, content_text, content_traits);
  forget_content(content_hash, content_text, content_traits);
  if (!reader.read_document(tree)) {
    forget_content(content_hash, content_text, content_traits);
    return false;
  }
  return true;
}

const char* read_arguments_fast(std::string_view text, nlohmann::json& tree,
                                std::optional<ContentHash>& content_hash,
                                std::optional<TextBytes>* content_text,
                                std::optional<ContentTraits>* content_traits)
{
  Reader reader(text, content_hash, content_text, content_traits);
  forget_content(content_hash, content_text, content_traits);
  const char* const end = reader.read_arguments(tree);
  if (end == nullptr) {
    forget_content(content_hash, content_text, content_traits);
  }
  return end;
}

std::optional<nlohmann::json> read_json_fast(std::string_view text,
                                             std::optional<ContentHash>& content_hash)
{
  nlohmann::json tree;
  if (!read_json_fast(text, tree, content_hash)) {
    return std::nullopt;
  }
  return tree;
}

} // namespace fsguard
