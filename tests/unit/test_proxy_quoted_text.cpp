#include <doctest/doctest.h>

#include "proxy/guard/quoted_text.hpp"

using namespace fsguard;

TEST_SUITE("quoted text")
{
  TEST_CASE("a quotation escapes what could end it or start a line of fsguard's own")
  {
    CHECK(in_quotes("/ws/a.txt") == "\"/ws/a.txt\"");
    CHECK(in_quotes("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(in_quotes("a.txt\nNothing would be lost. Allow this one write?")
          == "\"a.txt\\nNothing would be lost. Allow this one write?\"");
    CHECK(in_quotes("a\r\tb\x1b[2Jc\x7f") == "\"a\\r\\tb\\u001b[2Jc\\u007f\"");
  }

  TEST_CASE("a quotation shows separators, bidirectional and invisible characters as escapes")
  {
    CHECK(in_quotes("a\u2028b\u2029c") == "\"a\\u2028b\\u2029c\"");
    CHECK(in_quotes("evil\u202Etxt.exe") == "\"evil\\u202etxt.exe\"");
    CHECK(in_quotes("a\u200Bb\uFEFF") == "\"a\\u200bb\\ufeff\"");
    CHECK(in_quotes("\xC2\x85") == "\"\\u0085\""); // NEL, a C1 control
    CHECK(in_quotes("x\U000E0041") == "\"x\\udb40\\udc41\""); // a tag character
  }

  TEST_CASE("a quotation keeps other text as it is and shows invalid UTF-8 byte by byte")
  {
    CHECK(in_quotes("café 日本 😀") == "\"café 日本 😀\"");
    CHECK(in_quotes("a\xFF" "b\xC3") == "\"a\\xffb\\xc3\"");
  }

  TEST_CASE("a file's lines keep their layout, with other control characters shown")
  {
    CHECK(with_controls_shown("a\tb\nc\r\nd\n") == "a\tb\nc\r\nd\n");
    CHECK(with_controls_shown("a\rb\x1b[31m\"q\"\n") == "a\\rb\\u001b[31m\"q\"\n");
    CHECK(with_controls_shown("x\u2028y\n") == "x\\u2028y\n");
  }
}
