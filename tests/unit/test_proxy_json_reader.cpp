#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_types.hpp"
#include "proxy/jsonrpc/json_reader.hpp"
#include "proxy/stores/real_disk.hpp"

using namespace fsguard;

namespace {

struct Reference {
  nlohmann::json body;
  std::optional<ContentHash> content_hash;
};

// What nlohmann's parser makes of `text`, with params.arguments.content
// taken out and hashed, as the guard wants it.
std::optional<Reference> reference_read(const std::string& text)
{
  auto body = nlohmann::json::parse(text, nullptr, false);
  if (body.is_discarded()) {
    return std::nullopt;
  }
  Reference reference;
  if (body.is_object() && body.contains("params") && body["params"].is_object()
      && body["params"].contains("arguments") && body["params"]["arguments"].is_object()) {
    auto& arguments = body["params"]["arguments"];
    if (const auto content = arguments.find("content"); content != arguments.end()) {
      if (content->is_string()) {
        reference.content_hash = hash_bytes(content->get_ref<const std::string&>());
      }
      arguments.erase(content);
    }
  }
  reference.body = std::move(body);
  return reference;
}

class Generator {
public:
  explicit Generator(unsigned seed) : m_random(seed) {}

  std::string document()
  {
    std::string text = space() + message() + space();
    if (chance(15)) {
      corrupt(text);
    }
    return text;
  }

private:
  bool chance(int percent) { return std::uniform_int_distribution<int>(0, 99)(m_random) < percent; }
  std::size_t below(std::size_t limit) { return std::uniform_int_distribution<std::size_t>(0, limit - 1)(m_random); }
  std::string pick(const std::vector<std::string>& options) { return options[below(options.size())]; }

  std::string space() { return pick({"", "", "", " ", "\t", "\r\n ", "  "}); }

  std::string string_literal()
  {
    static const std::vector<std::string> pieces = {
      "a", "path/to/file.txt", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\u0000", "\\ud83d\\ude00",
      "\\ud800", "\\uDC00", "\xC3\xA9", "\xF0\x9F\x98\x80", "\xFF", "\xED\xA0\x80", "\x01", "\\q",
      std::string(20, 'w'), "content", "params",
    };
    static const std::vector<std::string> valid_pieces = {"b", "dir/name.md", "\\t", "\\u20AC", "\xE2\x82\xAC"};
    std::string literal = "\"";
    for (std::size_t count = below(5); count > 0; --count) {
      literal += chance(85) ? pick(valid_pieces) : pick(pieces);
    }
    return literal + "\"";
  }

  std::string number()
  {
    if (chance(80)) {
      return pick({"0", "42", "-3", "2.5", "1e3"});
    }
    return pick({"0", "-0", "7", "-12", "3.25", "-0.5e3", "1E2", "2e-3", "1.0", "18446744073709551615",
                 "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1e400",
                 "1e-400", "01", "1.", "-", ".5", "+1", "1e", "0x10", "123456789012345678901234567890"});
  }

  std::string value(int depth)
  {
    const std::size_t kind = below(depth > 3 ? 4 : 6);
    switch (kind) {
    case 0: return string_literal();
    case 1: return number();
    case 2: return chance(90) ? pick({"true", "false", "null"}) : pick({"tru", "nul"});
    case 3: return chance(50) ? string_literal() : number();
    case 4: {
      std::string text = "[" + space();
      for (std::size_t count = below(4); count > 0; --count) {
        text += value(depth + 1) + space() + (count > 1 ? "," + space() : "");
      }
      return text + "]";
    }
    default: return object(depth + 1, {});
    }
  }

  std::string object(int depth, std::vector<std::pair<std::string, std::string>> members)
  {
    for (std::size_t count = below(4); count > 0; --count) {
      members.emplace_back(chance(70) ? pick({"\"a\"", "\"id\"", "\"x\"", "\"content\""})
                                      : string_literal(),
                           value(depth));
    }
    std::shuffle(members.begin(), members.end(), m_random);
    std::string text = "{" + space();
    for (std::size_t index = 0; index < members.size(); ++index) {
      text += members[index].first + space() + ":" + space() + members[index].second + space();
      if (index + 1 < members.size()) {
        text += "," + space();
      }
    }
    return text + "}";
  }

  std::string arguments()
  {
    std::vector<std::pair<std::string, std::string>> members = {{"\"path\"", string_literal()}};
    for (std::size_t count = 1 + below(2); count > 0; --count) {
      members.emplace_back(chance(85) ? "\"content\"" : "\"cont\\u0065nt\"",
                           chance(80) ? string_literal() : value(3));
    }
    return object(3, members);
  }

  std::string message()
  {
    if (chance(10)) {
      return value(0);
    }
    std::vector<std::pair<std::string, std::string>> members = {
      {"\"jsonrpc\"", "\"2.0\""}, {"\"id\"", number()}, {"\"method\"", "\"tools/call\""}};
    for (std::size_t count = 1 + (chance(20) ? 1 : 0); count > 0; --count) {
      std::vector<std::pair<std::string, std::string>> params = {{"\"name\"", "\"write_file\""}};
      for (std::size_t inner = 1 + (chance(20) ? 1 : 0); inner > 0; --inner) {
        params.emplace_back("\"arguments\"", chance(90) ? arguments() : value(2));
      }
      members.emplace_back("\"params\"", chance(90) ? object(1, params) : value(1));
    }
    return object(0, members);
  }

  void corrupt(std::string& text)
  {
    if (text.empty()) {
      return;
    }
    const std::size_t at = below(text.size());
    switch (below(3)) {
    case 0: text.erase(at, 1); break;
    case 1: text.insert(at, 1, pick({"{", "}", "\"", ",", ":", "\\", "x"})[0]); break;
    default: text.resize(at); break;
    }
  }

  std::mt19937 m_random;
};

} // namespace

TEST_SUITE("json_reader")
{
  TEST_CASE("random messages read as nlohmann reads them, or are left to it")
  {
    Generator generator(20261122);
    int fast = 0;
    int valid = 0;
    for (int round = 0; round < 30'000; ++round) {
      const std::string text = generator.document();
      CAPTURE(text);
      std::optional<ContentHash> content_hash;
      const auto read = read_json_fast(text, content_hash);
      const auto reference = reference_read(text);
      valid += reference ? 1 : 0;
      if (!read) {
        CHECK_FALSE(content_hash.has_value());
        continue;
      }
      ++fast;
      REQUIRE(reference.has_value()); // never accepts what the full parser rejects
      CHECK(read->dump() == reference->body.dump());
      CHECK(same_types(*read, reference->body));
      CHECK(*read == reference->body);
      CHECK(content_hash == reference->content_hash);
    }
    MESSAGE("fast path took " << fast << " of " << valid << " valid documents");
    CHECK(fast > valid * 3 / 4); // it is the common path, not a rare one
  }

  TEST_CASE("a tree reused from line to line reads each line as a fresh one does")
  {
    Generator generator(20261123);
    nlohmann::json reused; // what the last document left, read or not
    int compared = 0;
    for (int round = 0; round < 30'000; ++round) {
      const std::string text = generator.document();
      CAPTURE(text);
      std::optional<ContentHash> fresh_hash;
      const auto fresh = read_json_fast(text, fresh_hash);
      std::optional<ContentHash> reused_hash;
      std::optional<TextBytes> content_text = TextBytes::copy_of("left from the last line");
      const bool read = read_json_fast(text, reused, reused_hash, &content_text);
      REQUIRE(read == fresh.has_value());
      if (!read) {
        CHECK_FALSE(reused_hash.has_value());
        CHECK_FALSE(content_text.has_value());
        continue;
      }
      ++compared;
      CHECK(reused == *fresh);
      CHECK(same_types(reused, *fresh));
      CHECK(reused_hash == fresh_hash);
      // The decoded content is there exactly when it was hashed (all short
      // here), and it is what was hashed.
      REQUIRE(content_text.has_value() == reused_hash.has_value());
      if (content_text) {
        CHECK(hash_bytes(content_text->view()) == *reused_hash);
      }
    }
    CHECK(compared > 10'000);
  }

  TEST_CASE("a reused tree loses the members, elements and types the new line lacks")
  {
    nlohmann::json tree;
    std::optional<ContentHash> content_hash;
    const auto read = [&](const std::string& text) {
      REQUIRE(read_json_fast(text, tree, content_hash));
      CHECK(tree == nlohmann::json::parse(text));
    };
    read(R"({"id":1,"params":{"name":"write_file","arguments":{"path":"/a","old":"x"},"extra":[1,2,3]}})");
    read(R"({"id":2,"params":{"name":"read_text_file","arguments":{"path":"/b"},"extra":[4]}})");
    read(R"({"id":"3","params":{"arguments":"no longer an object","extra":{"now":"an object"}}})");
    read(R"({"id":4,"id":5,"params":[{"a":1},{"b":2}]})"); // a repeated key: the last wins
    read(R"({"params":[{"b":2}],"more":null})");
    std::string many = R"({"params":{)";
    for (int member = 0; member < 40; ++member) {
      many += (member > 0 ? "," : "") + ("\"k" + std::to_string(member) + "\":" + std::to_string(member));
    }
    read(many + "}}"); // more members than it tracks: read afresh
    read(R"({"params":{"k7":"seven","k39":39}})");
    read(many + R"(,"k0":"again"}})");
    read("[]");
    REQUIRE(read_json_fast(R"({"params":{"arguments":{"path":"/c","content":"hashed, not kept"}}})",
                           tree, content_hash));
    CHECK(tree == nlohmann::json::parse(R"({"params":{"arguments":{"path":"/c"}}})"));
    CHECK(content_hash == hash_bytes("hashed, not kept"));
    read(R"({"params":{"arguments":{"path":"/c"}}})");
    CHECK_FALSE(content_hash.has_value());
  }

  TEST_CASE("a reused object finds the last line's members by name, in any order, repeated or not")
  {
    nlohmann::json tree;
    std::optional<ContentHash> content_hash;
    const auto read = [&](const std::string& text) {
      REQUIRE(read_json_fast(text, tree, content_hash));
      CHECK(tree == nlohmann::json::parse(text));
    };
    read(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"path":"/a"}}})");
    // The same keys in another order; "method" and "params" are of one length.
    read(R"({"params":{"arguments":{"path":"/b"},"name":"b"},"id":2,"method":"tools/call","jsonrpc":"2.0"})");
    // Keys that begin as the last line's do, or are of their length.
    read(R"({"jsonrp":"x","idx":3,"i":4,"method":"m","paramz":5})");
    // A key repeated, among the last line's members and not: the last wins,
    // and the members it replaced are gone.
    read(R"({"i":1,"idx":2,"i":3,"new":4,"new":5,"i":6})");
    CHECK(tree.size() == 3);
    read(R"({"new":7})");
    read(R"({})");
    read(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"c"}})");
  }

  TEST_CASE("a reused tree holds memory in proportion to the last line, not the longest before it")
  {
    nlohmann::json tree;
    std::optional<ContentHash> content_hash;
    std::optional<TextBytes> content_text;
    std::string long_array = "[[0";
    for (int element = 1; element < 30'000; ++element) {
      long_array += ",0";
    }
    REQUIRE(read_json_fast(long_array + R"(],")" + std::string(60'000, 'x') + R"("])", tree,
                           content_hash));
    REQUIRE(read_json_fast(R"([[1],"y"])", tree, content_hash));
    CHECK(tree[0].get_ref<const nlohmann::json::array_t&>().capacity() < 100);
    CHECK(tree[1].get_ref<const std::string&>().capacity() < 100);
    // Spare room is counted in bytes: an array of 40 emptied keeps no 40 slots.
    std::string forty = "[[0";
    for (int element = 1; element < 40; ++element) {
      forty += ",0";
    }
    REQUIRE(read_json_fast(forty + "]]", tree, content_hash));
    REQUIRE(tree[0].size() == 40);
    REQUIRE(read_json_fast("[[]]", tree, content_hash));
    CHECK(tree[0].get_ref<const nlohmann::json::array_t&>().capacity() <= 4);
    // A write's content is reserved for the rest of its line: padding after
    // it is not kept with the text.
    REQUIRE(read_json_fast(R"({"params":{"arguments":{"content":"x"}}})" + std::string(1 << 20, ' '),
                           tree, content_hash, &content_text));
    REQUIRE(content_text == "x");
    CHECK(content_text->capacity() < 100);
  }

  TEST_CASE("a content reads the same decoded in place or in pieces, and keeps no room for the padding after it")
  {
    // The rest of a line from the content's quote up to
    // k_decoded_content_bytes is decoded straight into the text kept; a
    // longer rest, in pieces. Either way: the same text, hash and traits,
    // in room for the text, not for the line.
    nlohmann::json tree;
    std::optional<ContentHash> content_hash;
    std::optional<TextBytes> content_text;
    std::optional<ContentTraits> traits;
    const std::string raw = R"(caf\u00e9\n\"quoted\"\ttab)";
    const std::string decoded = "caf\xC3\xA9\n\"quoted\"\ttab";
    const std::string line = R"({"params":{"arguments":{"path":"/a","content":")" + raw + R"("}}})";
    const std::size_t rest = raw.size() + 5; // the quotes and "}}}"
    for (const std::size_t padding : {std::size_t{0}, std::size_t{100'000},
                                      k_decoded_content_bytes - rest, k_decoded_content_bytes - rest + 1}) {
      CAPTURE(padding);
      REQUIRE(read_json_fast(line + std::string(padding, ' '), tree, content_hash, &content_text, &traits));
      REQUIRE(content_text.has_value());
      CHECK(*content_text == decoded);
      CHECK(content_text->capacity() < 100);
      CHECK(content_hash == hash_bytes(decoded));
      CHECK(traits == ContentTraits{.valid_utf8 = true, .bare_cr = false});
    }
  }

  TEST_CASE("a content up to k_decoded_content_bytes is decoded for the guard, a longer one only hashed")
  {
    nlohmann::json tree;
    std::optional<ContentHash> content_hash;
    std::optional<TextBytes> content_text;
    std::optional<ContentTraits> traits;
    const auto write = [](const std::string& raw_content) {
      return R"({"params":{"arguments":{"path":"/a","content":")" + raw_content + R"("}}})";
    };
    REQUIRE(read_json_fast(write(R"(caf\u00e9\n)"), tree, content_hash, &content_text, &traits));
    CHECK(content_text == "caf\xC3\xA9\n");
    CHECK(traits == ContentTraits{.valid_utf8 = true, .bare_cr = false});
    // A "\r" leaves the traits to a scan of the text.
    REQUIRE(read_json_fast(write(R"(a\r\nb)"), tree, content_hash, &content_text, &traits));
    CHECK(content_text == "a\r\nb");
    CHECK_FALSE(traits.has_value());
    traits = ContentTraits{};
    for (const std::size_t size : {k_decoded_content_bytes, k_decoded_content_bytes + 1}) {
      CAPTURE(size);
      // Escapes, so that the text is decoded in many pieces on its way past the limit.
      std::string raw;
      std::string decoded;
      while (decoded.size() < size) {
        raw += decoded.size() % 100 == 0 ? "\\n" : "x";
        decoded += decoded.size() % 100 == 0 ? '\n' : 'x';
      }
      REQUIRE(read_json_fast(write(raw), tree, content_hash, &content_text, &traits));
      REQUIRE(content_hash.has_value());
      CHECK(*content_hash == hash_bytes(decoded));
      CHECK(content_text.has_value() == (size <= k_decoded_content_bytes));
      CHECK(traits.has_value() == content_text.has_value()); // none for a text not kept
      if (content_text) {
        CHECK(*content_text == decoded);
      }
    }
    REQUIRE(read_json_fast(R"({"params":{"arguments":{"content":"first","content":5}}})", tree,
                           content_hash, &content_text, &traits));
    CHECK_FALSE(content_text.has_value());
    CHECK_FALSE(traits.has_value());
    REQUIRE(read_json_fast(write("x"), tree, content_hash, &content_text, &traits));
    REQUIRE(traits.has_value());
    CHECK_FALSE(read_json_fast(write("x") + ",", tree, content_hash, &content_text, &traits));
    CHECK_FALSE(traits.has_value()); // a line not read leaves none
    REQUIRE(read_json_fast(R"({"params":{"arguments":{"content":"first"},"arguments":{}}})", tree,
                           content_hash, &content_text));
    CHECK_FALSE(content_text.has_value());
    REQUIRE(read_json_fast(R"({"params":{"arguments":{"content":5,"content":"last"}}})", tree,
                           content_hash, &content_text));
    CHECK(content_text == "last");
  }

  TEST_CASE("numbers keep nlohmann's types, and edge cases go to the full parser")
  {
    std::optional<ContentHash> unused;
    CHECK(read_json_fast("18446744073709551615", unused)->is_number_unsigned());
    CHECK(read_json_fast("-9223372036854775808", unused)->is_number_integer());
    CHECK(read_json_fast("1.0", unused)->is_number_float());
    CHECK(read_json_fast("-0", unused)->is_number_integer());
    CHECK_FALSE(read_json_fast("18446744073709551616", unused).has_value());
    CHECK_FALSE(read_json_fast("1e400", unused).has_value());
    CHECK_FALSE(read_json_fast("\xEF\xBB\xBF{}", unused).has_value());
    CHECK_FALSE(read_json_fast("01", unused).has_value());
  }

  TEST_CASE("the content is hashed and left out; only the last one counts")
  {
    std::optional<ContentHash> content_hash;
    const auto body = read_json_fast(
      R"({"id":1,"params":{"arguments":{"content":"old","path":"/a","content":"new \u00e9"}}})",
      content_hash);
    REQUIRE(body.has_value());
    CHECK((*body)["params"]["arguments"] == nlohmann::json({{"path", "/a"}}));
    REQUIRE(content_hash.has_value());
    CHECK(*content_hash == hash_bytes("new \xC3\xA9"));

    read_json_fast(R"({"params":{"arguments":{"content":"x"}},"params":{"arguments":{}}})", content_hash);
    CHECK_FALSE(content_hash.has_value());
    read_json_fast(R"({"params":{"arguments":{"content":"x","content":5}}})", content_hash);
    CHECK_FALSE(content_hash.has_value());
    read_json_fast(R"({"other":{"arguments":{"content":"x"}}})", content_hash);
    CHECK_FALSE(content_hash.has_value());
  }
}
