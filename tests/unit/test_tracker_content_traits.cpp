#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tracker/content_traits.hpp"

using namespace fsguard;

namespace {

// The traits of `bytes` fed in two pieces, split at `at`.
ContentTraits split_at(const std::string& bytes, std::size_t at)
{
  ContentScanner scanner;
  scanner.append(std::string_view(bytes).substr(0, at));
  scanner.append(std::string_view(bytes).substr(at));
  return scanner.traits();
}

// The same traits whichever two pieces `bytes` comes in.
ContentTraits traits_in_pieces(const std::string& bytes)
{
  const ContentTraits whole = content_traits(bytes);
  for (std::size_t at = 0; at <= bytes.size(); ++at) {
    CAPTURE(at);
    CHECK(split_at(bytes, at) == whole);
  }
  return whole;
}

} // namespace

TEST_SUITE("content_traits")
{
  TEST_CASE("valid UTF-8 is told from what a UTF-8 decoder would replace by U+FFFD, across pieces")
  {
    const std::vector<std::string> valid = {
      "", "plain ASCII text, long enough for the eight-byte steps\n", "caf\xC3\xA9",
      "\xEF\xBB\xBF" "BOM", "\xE2\x82\xAC", "\xF0\x9F\x99\x82", "\xED\x9F\xBF", "\xF4\x8F\xBF\xBF",
      std::string("nul\0byte", 8)};
    for (const auto& text : valid) {
      CAPTURE(text);
      CHECK(traits_in_pieces(text).valid_utf8);
    }
    const std::vector<std::string> invalid = {
      "caf\xE9",                 // Latin-1
      "\xC3",                    // cut short at the end
      "ok \xE2\x82",             // cut short at the end
      "\xC0\xAF",                // overlong
      "\xE0\x80\xAF",            // overlong
      "\xED\xA0\x80",            // a UTF-16 surrogate
      "\xF4\x90\x80\x80",        // above U+10FFFF
      "\xF5\x80\x80\x80", "\xFF", "\x80", "a\xC3(b",
      std::string(100, 'a') + "\xFE" + std::string(100, 'b')};
    for (const auto& text : invalid) {
      CAPTURE(text);
      CHECK_FALSE(traits_in_pieces(text).valid_utf8);
    }
  }

  TEST_CASE("a carriage return not followed by a newline is bare, across pieces")
  {
    CHECK_FALSE(traits_in_pieces("a\nb\n").bare_cr);
    CHECK_FALSE(traits_in_pieces("a\r\nb\r\n").bare_cr);
    CHECK(traits_in_pieces("progress 10%\rprogress 20%\n").bare_cr);
    CHECK(traits_in_pieces("a\r\nb\r").bare_cr); // at the very end
    CHECK(traits_in_pieces("\r\r\n").bare_cr);
  }

  TEST_CASE("a byte that is not ASCII is found wherever it lies in a long ASCII run")
  {
    // Runs of ASCII are skipped 128, 64 and 8 bytes at a time: a byte past
    // 0x7F at every offset, at every alignment, must still be looked at.
    for (std::size_t start = 0; start < 3; ++start) {
      for (std::size_t at = start; at < 300; ++at) {
        CAPTURE(start);
        CAPTURE(at);
        std::string text(300, 'a');
        text[at] = '\xFF';
        CHECK_FALSE(content_traits(std::string_view(text).substr(start)).valid_utf8);
        text[at] = '\xC3'; // a lead byte cut short, or completed by "\xA9"
        CHECK_FALSE(content_traits(std::string_view(text).substr(start)).valid_utf8);
        if (at + 1 < text.size()) {
          text[at + 1] = '\xA9';
          CHECK(content_traits(std::string_view(text).substr(start)).valid_utf8);
        }
      }
    }
  }

  TEST_CASE("a carriage return is found wherever it lies in a long ASCII run")
  {
    // ASCII without "\r" is told in one pass of 128, 64 and 8 bytes at a
    // time: a "\r" at every offset, at every alignment, must still be seen.
    for (std::size_t start = 0; start < 3; ++start) {
      for (std::size_t at = start; at < 300; ++at) {
        CAPTURE(start);
        CAPTURE(at);
        std::string text(300, 'a');
        text[at] = '\r';
        const std::string_view piece = std::string_view(text).substr(start);
        CHECK(content_traits(piece) == ContentTraits{true, true});
        if (at + 1 < text.size()) {
          text[at + 1] = '\n';
          CHECK(content_traits(piece) == ContentTraits{true, false});
          CHECK(split_at(std::string(piece), at + 1 - start) == ContentTraits{true, false});
        }
      }
    }
  }

  TEST_CASE("a scanner starts over after reset")
  {
    ContentScanner scanner;
    scanner.append("\xFF\r");
    scanner.reset();
    scanner.append("fine\r\n");
    CHECK(scanner.traits() == ContentTraits{true, false});
  }
}
