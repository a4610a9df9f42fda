#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>

#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include "proxy/jsonrpc/json_string.hpp"
#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/stores/real_disk.hpp"

using namespace fsguard;

namespace {

// What the full parser makes of `literal`: the decoded string, or nothing
// if it rejects it.
std::optional<std::string> reference_text(const std::string& literal)
{
  const auto parsed = nlohmann::json::parse(literal, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_string()) {
    return std::nullopt;
  }
  return parsed.get<std::string>();
}

// What decode_json_string makes of the whole `literal` (quotes included),
// through `simd`, or nothing if it refuses it or stops before its end.
std::optional<std::string> decoded_with(std::string_view literal, Simd simd)
{
  if (literal.empty() || literal.front() != '"') {
    return std::nullopt;
  }
  std::string text;
  StringSink sink(text);
  const char* end = literal.data() + literal.size();
  if (decode_json_string(literal.data() + 1, end, sink, simd) != end) {
    return std::nullopt;
  }
  return text;
}

// The decoder hands its bytes on 6 KiB at a time (k_room in
// json_string.cpp), from a buffer with 32 bytes of slack past it.
constexpr std::size_t k_decoder_room = 6144;
constexpr std::size_t k_decoder_buffer = k_decoder_room + 32;

// A ByteSink that keeps the bytes and the length of the longest piece
// handed to it: one longer than the decoder's buffer ran past it.
struct PieceSink final : ByteSink {
  std::string text;
  std::size_t longest = 0;
  void append(const char* bytes, std::size_t size) override
  {
    text.append(bytes, size);
    longest = std::max(longest, size);
  }
};

// What decode_json_string makes of `literal` into a DecodedText, through
// `simd`, or nothing as above.
std::optional<DecodedText> decoded_text_with(std::string_view literal, Simd simd)
{
  if (literal.empty() || literal.front() != '"') {
    return std::nullopt;
  }
  DecodedText decoded;
  const char* end = literal.data() + literal.size();
  if (decode_json_string(literal.data() + 1, end, decoded, simd) != end) {
    return std::nullopt;
  }
  return decoded;
}

// The facts of `text` found the slow way.
DecodedFacts facts_of(std::string_view text)
{
  DecodedFacts facts;
  facts.non_ascii = std::any_of(text.begin(), text.end(),
                                [](char byte) { return static_cast<unsigned char>(byte) >= 0x80; });
  facts.carriage_return = text.find('\r') != std::string_view::npos;
  return facts;
}

// The same, checking that every width of scan agrees, and that a
// DecodedText has the same text, its true facts, and the traits and U+FFFD
// a scan of the text finds.
std::optional<std::string> decoded(std::string_view literal)
{
  const auto best = decoded_with(literal, Simd::best);
  CHECK(decoded_with(literal, Simd::sse2) == best);
  CHECK(decoded_with(literal, Simd::none) == best);
  for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
    const auto text = decoded_text_with(literal, simd);
    REQUIRE(text.has_value() == best.has_value());
    if (text) {
      CHECK(text->text.view() == *best);
      CHECK(text->facts == facts_of(*best));
      CHECK(content_traits(*text) == content_traits(std::string_view(*best)));
      CHECK(holds_replacement_character(*text) == (best->find("\xEF\xBF\xBD") != std::string::npos));
    }
  }
  return best;
}

// A random JSON-string-like literal built from pieces that matter: plain
// text, escapes (good and bad), surrogates, UTF-8 (good and bad), control
// characters and stray quotes.
std::string random_literal(std::mt19937& random)
{
  static const std::vector<std::string> pieces = {
    "a", "hello world ", "0123456789abcdef", "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f",
    "\\r", "\\t", "\\u00e9", "\\u0000", "\\u000d", "\\u000A", "\\u007f", "\\u0080",
    "\\ufffd", "\\u20AC", "\\ud83d\\ude00", "\\ud800", "\\udc00",
    "\\ud800x", "\\uZZZZ", "\\u12", "\\x", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
    "\xFF", "\xC0\xAF", "\xE0\x80\xAF", "\xF0\x80\x80\xAF", "\xED\xA0\x80", "\xED\x9F\xBF",
    "\xF4\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82", "\x80", "\x01", "\t", "\"",
    "\\", std::string(40, 'x'),
  };
  std::uniform_int_distribution<std::size_t> count(0, 12);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::string literal = "\"";
  for (std::size_t index = count(random); index > 0; --index) {
    literal += pieces[pick(random)];
  }
  return literal + "\"";
}

// What decode_json_string() made of a string body through one `Simd`:
// where it stopped (-1: it refused the body), and, when it did not refuse,
// the text and the facts.
struct Outcome {
  std::ptrdiff_t stop = -1;
  std::string text;
  DecodedFacts facts;

  bool operator==(const Outcome&) const = default;
};

// What decode_json_string() makes of `body` (past the opening quote),
// through `simd`.
Outcome outcome_with(std::string_view body, Simd simd)
{
  DecodedText decoded;
  const char* stop = decode_json_string(body.data(), body.data() + body.size(), decoded, simd);
  if (stop == nullptr) {
    return {}; // what was decoded before the refusal is not the caller's to read
  }
  return {stop - body.data(), std::string(decoded.text.view()), decoded.facts};
}

// Checks that the widest scans make of `body` what a byte at a time does.
void check_like_byte_by_byte(std::string_view body)
{
  const Outcome byte_by_byte = outcome_with(body, Simd::none);
  CHECK(outcome_with(body, Simd::sse2) == byte_by_byte);
  CHECK(outcome_with(body, Simd::best) == byte_by_byte);
}

// Where plain_string_end() should stop in `body`, found a byte at a time.
const char* plain_end_byte_by_byte(std::string_view body)
{
  for (const char& byte : body) {
    const auto value = static_cast<unsigned char>(byte);
    if (value == '"') {
      return &byte;
    }
    if (value < 0x20 || value >= 0x80 || value == '\\') {
      return nullptr;
    }
  }
  return nullptr;
}

// A random string body: mostly plain text, with escapes good and bad, UTF-8
// good and bad, control characters and quotes, each `odd_every` bytes or so;
// `length` bytes at least, ending with a closing quote and a bit of JSON or
// (one time in eight) cut off anywhere.
std::string random_body(std::mt19937& random, std::size_t length, unsigned odd_every)
{
  static const std::vector<std::string> odd = {
    "\\n", "\\n", "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t", "\\u0041", "\\u00e9",
    "\\u000d", "\\ud83d\\ude00", "\\ud800", "\\x", "\\", "\"", "\xC3\xA9", "\xE2\x82\xAC",
    "\xF0\x9F\x98\x80", "\xFF", "\xC0\xAF", "\xE2\x82", "\x80", "\x01", "\x1f", "\t", "\x7f",
  };
  std::uniform_int_distribution<unsigned> roll(0, odd_every);
  std::uniform_int_distribution<std::size_t> pick(0, odd.size() - 1);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::string body;
  while (body.size() < length) {
    if (roll(random) == 0) {
      body += odd[pick(random)];
    } else {
      body += static_cast<char>(letter(random));
    }
  }
  body += "\",\"more\":1}";
  if (roll(random) % 8 == 0) {
    body.resize(std::uniform_int_distribution<std::size_t>(0, body.size())(random));
  }
  return body;
}

} // namespace

TEST_SUITE("json_string")
{
  TEST_CASE("a string literal decodes to the string the full parser reads")
  {
    for (const std::string literal :
         {R"("")", R"("plain text of some length, past eight bytes")", R"("a\nb\"c\\d\/e")",
          R"("\b\f\r\t")", R"("\u00e9\u20ac\ud83d\ude00")", R"("nul \u0000 inside")",
          "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\""}) {
      CAPTURE(literal);
      const auto text = decoded(literal);
      REQUIRE(text.has_value());
      CHECK(*text == *reference_text(literal));
    }
  }

  TEST_CASE("the decoder tells whether it wrote a byte from 0x80 up or a carriage return")
  {
    struct Case {
      std::string literal;
      DecodedFacts facts;
    };
    const std::string plain(40, 'p'); // past a block, so the odd piece is met after one
    for (const Case& test : std::vector<Case>{
           {R"("")", {}},
           {R"("plain \n\t\"\\ \u0041\u007f\u000a")", {}},
           {"\"" + plain + "\"", {}},
           {"\"caf\xC3\xA9\"", {.non_ascii = true}},
           {"\"" + plain + "\xF0\x9F\x98\x80\"", {.non_ascii = true}},
           {R"("\u00e9")", {.non_ascii = true}},
           {R"("\u0080")", {.non_ascii = true}},
           {R"("\ufffd")", {.non_ascii = true}},
           {R"("\ud83d\ude00")", {.non_ascii = true}},
           {R"("a\rb")", {.carriage_return = true}},
           {"\"" + plain + R"(\r\n")", {.carriage_return = true}},
           {"\"" + plain + R"(\n\t\"\\\/\b\f)" + plain + "\"", {}},
           {"\"" + plain + R"(\n\r\n)" + plain + "\"", {.carriage_return = true}},
           {"\"" + plain + R"(\u000d)" + plain + "\"", {.carriage_return = true}},
           {R"("\u000d")", {.carriage_return = true}},
           {R"("\u000D\u00e9")", {.non_ascii = true, .carriage_return = true}},
         }) {
      CAPTURE(test.literal);
      for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
        const auto text = decoded_text_with(test.literal, simd);
        REQUIRE(text.has_value());
        CHECK(text->facts == test.facts);
      }
    }
  }

  TEST_CASE("a DecodedText is decoded in place, in room no longer than its body and the slack, and replaced whole")
  {
    // Decoded into its own TextBytes, with the decoder's 32 bytes of slack
    // (k_slack): a text of any length, escaped or not, up to past the old
    // 6 KiB block, in room that ASan checks byte for byte.
    for (const std::size_t length : {0UL, 1UL, 31UL, 32UL, 33UL, 6143UL, 6144UL, 6145UL, 20000UL}) {
      for (const std::string& piece : {std::string("p"), std::string(R"(\n)"), std::string(R"(\u00e9)")}) {
        std::string body;
        std::string expected;
        while (expected.size() < length) {
          body += piece;
          expected += piece == "p" ? "p" : piece == R"(\n)" ? "\n" : "\xC3\xA9";
        }
        body += '"';
        CAPTURE(length);
        CAPTURE(piece);
        for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
          DecodedText decoded;
          REQUIRE(decode_json_string(body.data(), body.data() + body.size(), decoded, simd)
                  == body.data() + body.size());
          CHECK(decoded.text.view() == expected);
          CHECK(decoded.text.capacity() == body.size() + 32);
        }
      }
    }
    // A second decoding into the same DecodedText replaces its text and its facts.
    DecodedText decoded;
    const std::string first = R"(\u00e9\r")";
    REQUIRE(decode_json_string(first.data(), first.data() + first.size(), decoded) != nullptr);
    CHECK(decoded.facts == DecodedFacts{.non_ascii = true, .carriage_return = true});
    const std::string second = R"(plain")";
    REQUIRE(decode_json_string(second.data(), second.data() + second.size(), decoded) != nullptr);
    CHECK(decoded.text.view() == "plain");
    CHECK(decoded.facts == DecodedFacts{});
  }

  TEST_CASE("a decoded text's traits come from its facts when it holds no carriage return, its U+FFFD when it is ASCII")
  {
    // Facts that rule the scans out are taken at their word: these lie, to
    // show that no scan is made (the decoder's never lie: see decoded()).
    CHECK(content_traits(DecodedText{TextBytes::copy_of("a\rb\xC3"), {}})
          == ContentTraits{.valid_utf8 = true, .bare_cr = false});
    CHECK(content_traits(DecodedText{TextBytes::copy_of("a\rb\xC3"), {.non_ascii = true}})
          == ContentTraits{.valid_utf8 = true, .bare_cr = false}); // the decoder refuses invalid UTF-8
    CHECK_FALSE(holds_replacement_character(DecodedText{TextBytes::copy_of("\xEF\xBF\xBD"), {}}));
    // Facts that call for the scans: the scans decide.
    CHECK(content_traits(DecodedText{TextBytes::copy_of("a\rb"), {.carriage_return = true}}).bare_cr);
    CHECK_FALSE(content_traits(DecodedText{TextBytes::copy_of("a\r\nb"), {.carriage_return = true}}).bare_cr);
    CHECK_FALSE(content_traits(DecodedText{TextBytes::copy_of("\xC3"), {.non_ascii = true, .carriage_return = true}})
                  .valid_utf8);
    CHECK(content_traits(DecodedText{TextBytes::copy_of("\xC3\xA9"), {.non_ascii = true}}).valid_utf8);
    CHECK(holds_replacement_character(DecodedText{TextBytes::copy_of("a\xEF\xBF\xBD"), {.non_ascii = true}}));
    CHECK_FALSE(holds_replacement_character(DecodedText{TextBytes::copy_of("\xC3\xA9"), {.non_ascii = true}}));
  }

  TEST_CASE("the traits a decoded text's facts tell are the traits a scan of it finds")
  {
    const std::string plain(40, 'p'); // past a block, so the odd piece is met after one
    std::vector<std::string> literals = {
      R"("")",
      R"("one line\n")",
      R"("no final newline")",
      R"("crlf\r\nlines\r\n")",
      R"("bare\rcarriage return")",
      R"("ends in a carriage return\r")",
      R"("mixed\r\nand\nand\rthat")",
      R"("\r")",
      R"("\r\n")",
      R"("\n\r")",
      R"("escaped \u000d\u000a crlf")",
      R"("escaped \u000D bare")",
      R"("\t\"\\\/\b\f \u0000 \u007f")",
      "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\\n\"",
      "\"caf\xC3\xA9\\r\\n\"",
      "\"caf\xC3\xA9\\r\"",
      R"("\u00e9\u20ac\ud83d\ude00\uffff\ufffd")",
      "\"\xF4\x8F\xBF\xBF\xED\x9F\xBF\xEF\xBF\xBF\"",
      "\"" + plain + R"(\r\n)" + plain + R"(\r)" + plain + "\"",
      "\"" + plain + "\xC3\xA9" + plain + R"(\n)" + plain + "\"",
    };
    std::mt19937 random(20261124);
    for (int round = 0; round < 5'000; ++round) {
      literals.push_back(random_literal(random));
    }
    int told = 0;
    int scanned = 0;
    for (const std::string& literal : literals) {
      CAPTURE(literal);
      for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
        const auto text = decoded_text_with(literal, simd);
        if (!text) {
          continue;
        }
        const ContentTraits scan = content_traits(text->text.view());
        const auto told_traits = traits_from_facts(text->facts);
        // Told whenever there is no "\r" to scan for.
        CHECK(told_traits.has_value() == (text->text.view().find('\r') == std::string_view::npos));
        if (told_traits) {
          CHECK(*told_traits == scan);
          ++told;
        } else {
          ++scanned;
        }
        CHECK(content_traits(*text) == scan);
      }
    }
    CHECK(told > 1000);
    CHECK(scanned > 100);
  }

  TEST_CASE("literals the full parser would reject or repair are left to it")
  {
    for (const std::string& literal : std::vector<std::string>{
          R"("\ud800")", R"("\udc00")", R"("\ud800\u0041")", R"("\x")", R"("\u12")",
          "\"a\x01z\"", "\"tab\there\"", "\"bad \xFF byte\"", "\"overlong \xC0\xAF\"",
          "\"surrogate \xED\xA0\x80\"", "\"too high \xF4\x90\x80\x80\"", "\"cut \xE2\x82\"",
          R"("a"b")", R"("ends with a backslash\")", "\"", "", "plain",
          // past a block, after an escape the blocks decode themselves
          "\"" + std::string(40, 'p') + R"(\n\")", "\"" + std::string(40, 'p') + R"(\n\)",
          "\"" + std::string(40, 'p') + R"(\n\x)" + std::string(40, 'p') + "\"",
          "\"" + std::string(40, 'p') + "\\n\x01" + std::string(40, 'p') + "\""}) {
      CAPTURE(literal);
      CHECK_FALSE(decoded(literal).has_value());
    }
  }

  TEST_CASE("a string with no closing quote is refused, whatever its length and its last bytes")
  {
    // The last bytes are decoded from a padded copy: the padding must not
    // pass for a closing quote, nor for more of the string.
    for (std::size_t length = 0; length < 72; ++length) {
      for (const std::string last : {"", "p", "\\n", "\\n\\t", "\\u0041", "\xC3\xA9", "\\"}) {
        const std::string body = std::string(length, 'p') + last;
        CAPTURE(body);
        for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
          std::string text;
          StringSink sink(text);
          CHECK(decode_json_string(body.data(), body.data() + body.size(), sink, simd) == nullptr);
        }
      }
    }
  }

  TEST_CASE("a plain string ends at its quote; escapes, controls and non-ASCII are left to the decoder")
  {
    // Every length around the 16- and 8-byte steps, the odd byte at every offset.
    for (std::size_t length = 0; length < 72; ++length) {
      const std::string body(length, 'p');
      const std::string text = body + "\"rest of the line";
      CHECK(plain_string_end(text.data(), text.data() + text.size()) == text.data() + length);
      CHECK(plain_string_end(body.data(), body.data() + body.size()) == nullptr); // no quote
      for (const char odd : {'\\', '\x01', '\x1f', '\x7f', '\x80', '\xc3', '\xff'}) {
        for (std::size_t at = 0; at < length; ++at) {
          std::string with_odd = text;
          with_odd[at] = odd;
          CAPTURE(with_odd);
          const char* end = plain_string_end(with_odd.data(), with_odd.data() + with_odd.size());
          CHECK(end == (odd == '\x7f' ? with_odd.data() + length : nullptr));
        }
      }
    }
    const std::string after = R"(ab"c\d")";
    CHECK(plain_string_end(after.data(), after.data() + after.size()) == after.data() + 2);
  }

  TEST_CASE("a plain string ends where a byte at a time finds its quote, whatever byte is at any offset")
  {
    for (std::size_t length = 0; length < 70; ++length) {
      for (std::size_t at = 0; at <= length; ++at) {
        for (int value = 0; value < 256; ++value) {
          const std::string body =
            std::string(at, 'a') + static_cast<char>(value) + std::string(length - at, 'b') + "\",1]";
          CAPTURE(body);
          CHECK(plain_string_end(body.data(), body.data() + body.size()) == plain_end_byte_by_byte(body));
        }
      }
    }
  }

  TEST_CASE("long literals decode whole, with an escape or a multi-byte character at every offset")
  {
    for (std::size_t length = 0; length < 72; ++length) {
      for (const std::string odd : {"\\n", "\\\"", "\\u20ac", "\xC3\xA9", "\xF0\x9F\x98\x80"}) {
        for (std::size_t at = 0; at <= length; ++at) {
          const std::string literal =
            "\"" + std::string(at, 'a') + odd + std::string(length - at, 'b') + "\"";
          CAPTURE(literal);
          const auto text = decoded(literal);
          REQUIRE(text.has_value());
          CHECK(*text == *reference_text(literal));
        }
      }
    }
    // Past the bytes the decoder hands on at once (6 KiB), in pieces of
    // every size: many short runs, and runs longer than a block.
    for (const std::size_t run : {1, 15, 16, 17, 100, 2047, 2048, 2049, 5000}) {
      std::string literal = "\"";
      while (literal.size() < 20'000) {
        literal += std::string(run, 'x') + "\\n" + "\xC3\xA9";
      }
      literal += "\"";
      CAPTURE(run);
      const auto text = decoded(literal);
      REQUIRE(text.has_value());
      CHECK(*text == *reference_text(literal));
    }
  }

  TEST_CASE("escapes inside the blocks decode as the full parser reads them, wherever they fall")
  {
    // Two escapes: the first at every offset around the 16- and 32-byte
    // blocks, the second right after it or further on, then the closing
    // quote at once (the escape at the very end) or a block and more later.
    for (const std::string escape :
         {"\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\u0041", "\\u00e9"}) {
      for (std::size_t first = 0; first < 70; ++first) {
        for (std::size_t gap = 0; gap < 34; ++gap) {
          for (const std::size_t tail : {0, 1, 33}) {
            const std::string literal = "\"" + std::string(first, 'a') + escape
                                        + std::string(gap, 'b') + escape + std::string(tail, 'c')
                                        + "\"";
            CAPTURE(literal);
            const auto text = decoded(literal);
            REQUIRE(text.has_value());
            CHECK(*text == *reference_text(literal));
          }
        }
      }
    }
  }

  TEST_CASE("a run of escapes back to back decodes whole")
  {
    for (const std::string escape : {"\\n", "\\\\", "\\r", "\\u0041"}) {
      for (std::size_t count = 1; count < 40; ++count) {
        for (const std::size_t before : {0, 5, 31, 32, 33}) {
          std::string literal = "\"" + std::string(before, 'a');
          for (std::size_t index = 0; index < count; ++index) {
            literal += escape;
          }
          literal += std::string(40, 'z') + "\"";
          CAPTURE(literal);
          const auto text = decoded(literal);
          REQUIRE(text.has_value());
          CHECK(*text == *reference_text(literal));
        }
      }
    }
  }

  TEST_CASE("escapes where the decoder's 6 KiB of room runs out decode whole")
  {
    // The decoder hands its bytes on 6 KiB at a time (k_room in
    // json_string.cpp); the common escapes make the input run ahead of the
    // output, so the room runs out with the input past 6 KiB, at every
    // phase of the escapes against it. A piece longer than the room and its
    // slack would have run past its buffer.
    constexpr std::size_t k_room = k_decoder_room;
    for (const std::string escape : {"\\n", "\\\"", "\\u0041"}) {
      for (const std::size_t every : {1, 7, 31, 32, 33, 100}) {
        for (std::size_t before = k_room - 56; before < k_room + 4; ++before) {
          std::string literal = "\"" + std::string(before, 'a');
          while (literal.size() < k_room + 200) {
            literal += escape + std::string(every, 'b');
          }
          literal += "\"";
          CAPTURE(literal.substr(before - 8, 80));
          const auto text = decoded(literal);
          REQUIRE(text.has_value());
          CHECK(*text == *reference_text(literal));
          for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
            PieceSink sink;
            const char* end = literal.data() + literal.size();
            CHECK(decode_json_string(literal.data() + 1, end, sink, simd) == end);
            CHECK(sink.text == *text);
            CHECK(sink.longest <= k_decoder_buffer);
          }
        }
      }
    }
  }

  TEST_CASE("UTF-8 sequences where the decoder's 6 KiB of room runs out decode whole")
  {
    // The blocks copy a sequence 4 bytes at once. A "\\r" goes a byte at a
    // time and the blocks start again after it, at any phase against the
    // room: a block may start just below it, and a sequence at its last
    // byte lies 31 bytes past it. Copied there, the sequence would have run
    // past the buffer (a piece longer than it).
    for (const std::string sequence : {"\xC3\xA9", "\xE2\x80\x94", "\xF0\x9F\x98\x80"}) {
      for (std::size_t before = 0; before < 34; ++before) {
        for (std::size_t at = k_decoder_room - 8; at < k_decoder_room + 40; ++at) {
          const std::string plain(at - before - 1, 'a'); // so that the sequence is written at `at`
          const std::string literal =
            "\"" + std::string(before, 'a') + "\\r" + plain + sequence + std::string(64, 'b') + "\"";
          const std::string text = std::string(before, 'a') + "\r" + plain + sequence + std::string(64, 'b');
          CAPTURE(before);
          CAPTURE(at);
          for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
            PieceSink sink;
            const char* end = literal.data() + literal.size();
            CHECK(decode_json_string(literal.data() + 1, end, sink, simd) == end);
            CHECK(sink.text == text);
            CHECK(sink.longest <= k_decoder_buffer);
          }
        }
      }
    }
  }

  TEST_CASE("every byte, alone or escaped, at every offset around the blocks, decodes as a byte at a time does")
  {
    // Where the blocks stop, and whether they took an escape whole, shows
    // on the byte at the edge: each value at each offset, then the end of
    // the string at once or a block and more later.
    for (std::size_t length = 0; length < 70; ++length) {
      for (std::size_t at = 0; at <= length; ++at) {
        for (int value = 0; value < 256; ++value) {
          const std::string before(at, 'a');
          const std::string after = std::string(length - at, 'b') + "\",1]";
          const char byte = static_cast<char>(value);
          CAPTURE(length);
          CAPTURE(at);
          CAPTURE(value);
          check_like_byte_by_byte(before + byte + after);
          check_like_byte_by_byte(before + '\\' + byte + after);
        }
      }
    }
  }

  TEST_CASE("UTF-8 sequences of every lead and second byte decode as the full parser reads them")
  {
    // The third and fourth bytes at the edges of a continuation byte; the
    // sequence at a block's start, at its last byte, and just before the
    // closing quote (fewer than 4 bytes left to read).
    const std::string later_bytes[] = {"\x80", "\xBF", "\xC0"};
    for (int lead = 0x80; lead < 0x100; ++lead) {
      const std::size_t later = lead >= 0xF0 ? 2 : lead >= 0xE0 ? 1 : 0;
      for (int second = 0; second < 0x100; ++second) {
        for (std::size_t pick = 0; pick < (later == 2 ? 9U : later == 1 ? 3U : 1U); ++pick) {
          std::string sequence{static_cast<char>(lead), static_cast<char>(second)};
          if (later >= 1) {
            sequence += later_bytes[pick % 3];
          }
          if (later == 2) {
            sequence += later_bytes[pick / 3];
          }
          for (const std::size_t at : {0, 31}) {
            const std::string literal = "\"" + std::string(at, 'a') + sequence + std::string(40, 'z') + "\"";
            CAPTURE(literal);
            CHECK(decoded(literal) == reference_text(literal));
          }
          const std::string at_end = "\"" + std::string(40, 'a') + sequence + "\"";
          CAPTURE(at_end);
          CHECK(decoded(at_end) == reference_text(at_end));
        }
      }
    }
  }

  TEST_CASE("a body that ends where readable memory ends is read no further")
  {
    // The body is put at the end of a page whose next page cannot be read:
    // a read past its end faults.
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* const pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(pages != MAP_FAILED);
    REQUIRE(mprotect(static_cast<char*>(pages) + page, page, PROT_NONE) == 0);
    char* const page_end = static_cast<char*>(pages) + page;
    for (std::size_t length = 0; length < 70; ++length) {
      for (const std::string last : {"", "\"", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\xC3\xA9", "\xE2\x82\xAC",
                                     "\xF0\x9F\x98\x80", "\\", "\\n", "\\u00", "\xC3\xA9\"", "\\n\""}) {
        const std::string body = std::string(length, 'p') + last;
        char* const begin = page_end - body.size();
        std::copy(body.begin(), body.end(), begin);
        CAPTURE(body);
        for (const Simd simd : {Simd::best, Simd::sse2, Simd::none}) {
          DecodedText decoded_text;
          const char* stop = decode_json_string(begin, page_end, decoded_text, simd);
          CHECK(stop == (body.ends_with('"') ? page_end : nullptr));
        }
        CHECK(plain_string_end(begin, page_end) == plain_end_byte_by_byte({begin, body.size()}));
      }
    }
    munmap(pages, 2 * page);
  }

  TEST_CASE("texts dense with escapes decode as the full parser reads them")
  {
    // Lines of every length from none to past three blocks, each ending in
    // "\n" (source code has one every 40 bytes or so), some with quotes and
    // tabs, long enough to cross the decoder's room.
    for (std::size_t line = 0; line < 100; ++line) {
      for (const std::string inside : {"", "\\t", "\\\"", "\\\\"}) {
        std::string literal = "\"";
        std::string text;
        for (std::size_t index = 0; literal.size() < 17'000; ++index) {
          const std::size_t split = line == 0 ? 0 : index % line;
          literal += std::string(split, 'x') + (index % 3 == 0 ? inside : "")
                     + std::string(line - split, 'y') + "\\n";
        }
        literal += "\"";
        CAPTURE(line);
        CAPTURE(inside);
        const auto decoded_text = decoded(literal);
        REQUIRE(decoded_text.has_value());
        CHECK(*decoded_text == *reference_text(literal));
      }
    }
  }

  TEST_CASE("random bodies decode as a byte at a time does, wherever they stop")
  {
    std::mt19937 random(20261124);
    for (int round = 0; round < 20'000; ++round) {
      const auto length = std::uniform_int_distribution<std::size_t>(0, 200)(random);
      const auto odd_every = std::uniform_int_distribution<unsigned>(1, 120)(random);
      const std::string body = random_body(random, length, odd_every);
      CAPTURE(body);
      check_like_byte_by_byte(body);
    }
    // Long ones, across the decoder's room, with an odd piece every line
    // of code or prose.
    for (int round = 0; round < 60; ++round) {
      const std::string body = random_body(random, 17'000, round % 2 == 0 ? 40 : 100);
      CAPTURE(round);
      check_like_byte_by_byte(body);
    }
  }

  TEST_CASE("random literals decode as the full parser reads them, or are left to it")
  {
    std::mt19937 random(20261122);
    int accepted = 0;
    for (int round = 0; round < 20'000; ++round) {
      const std::string literal = random_literal(random);
      CAPTURE(literal);
      const auto text = decoded(literal);
      // Agreement: what nlohmann rejects (lone surrogates included) is left
      // to the full parser.
      REQUIRE(text == reference_text(literal));
      accepted += text.has_value() ? 1 : 0;
    }
    CHECK(accepted > 1000); // the generator makes valid ones too
  }

  TEST_CASE("a write parsed on the fast path matches the full parse")
  {
    std::mt19937 random(7);
    for (int round = 0; round < 2'000; ++round) {
      const std::string content = random_literal(random);
      const std::string line = R"({"jsonrpc":"2.0","id":)" + std::to_string(round)
                               + R"(,"method":"tools/call","params":{"name":"write_file",)"
                                 R"("arguments":{"path":"/ws/a.txt","content":)"
                               + content + R"(,"mode":"x"}}})";
      CAPTURE(line);
      const ClientMessage message = parse_client_message(line);
      auto reference = nlohmann::json::parse(line, nullptr, false);
      if (reference.is_discarded()) {
        // Invalid UTF-8 and lone surrogates are repaired as Node does; the
        // rest is invalid. Either way the fast path must not have claimed it.
        CHECK_FALSE(decoded(content).has_value());
        continue;
      }
      REQUIRE(message.kind == MessageKind::request);
      const std::string text = reference["params"]["arguments"]["content"].get<std::string>();
      reference["params"]["arguments"].erase("content");
      CHECK(message.body == reference);
      REQUIRE(message.content.hash.has_value());
      CHECK(*message.content.hash == hash_bytes(text));
      REQUIRE(message.content.text.has_value());
      CHECK(*message.content.text == text);
      // Traits told by the decoder's facts are the traits a scan finds.
      CHECK(message.content.traits.has_value() == (text.find('\r') == std::string::npos));
      if (message.content.traits) {
        CHECK(*message.content.traits == content_traits(std::string_view(text)));
      }
    }
  }

  TEST_CASE("repeated or escaped keys on the way to the content take the full parse")
  {
    const auto repeated = parse_client_message(
      R"({"id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"content":"a"}},)"
      R"("params":{"name":"write_file","arguments":{"path":"/b","content":"second"}}})");
    REQUIRE(repeated.content.hash.has_value());
    CHECK(*repeated.content.hash == hash_bytes("second"));
    CHECK(repeated.body["params"]["arguments"]["path"] == "/b");

    const auto escaped = parse_client_message(
      R"({"id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/c",)"
      R"("content":"x","cont\u0065nt":"last"}}})");
    REQUIRE(escaped.content.hash.has_value());
    CHECK(*escaped.content.hash == hash_bytes("last"));
    CHECK_FALSE(escaped.body["params"]["arguments"].contains("content"));
  }

  TEST_CASE("a megabyte of content with escapes and UTF-8 decodes whole")
  {
    std::string text;
    std::string literal = "\"";
    while (text.size() < (1 << 20)) {
      text += "line \"quoted\" caf\xC3\xA9\t\\ end\n";
      literal += "line \\\"quoted\\\" caf\xC3\xA9\\t\\\\ end\\n";
    }
    literal += "\"";
    const auto result = decoded(literal);
    REQUIRE(result.has_value());
    CHECK(*result == text);
  }
}
