#include <doctest/doctest.h>

#include "tracker/unified_diff.hpp"

using namespace fsguard;

// The texts are server-filesystem 2026.8.31's edit_file answers, verbatim.
TEST_SUITE("unified_diff")
{
  TEST_CASE("a hunk that replaces a line by two is applied")
  {
    const std::string answer =
      "```diff\nIndex: /tmp/dd/t1.txt\n===================================================================\n"
      "--- /tmp/dd/t1.txt\toriginal\n+++ /tmp/dd/t1.txt\tmodified\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+BB\n c\n```\n\n";
    CHECK(apply_unified_diff("a\nb\nc\n", answer) == "a\nB\nBB\nc\n");
  }

  TEST_CASE("a file without a final newline, edited to have one, after CRLF normalization")
  {
    const std::string answer =
      "```diff\nIndex: /tmp/dd/t2.txt\n===================================================================\n"
      "--- /tmp/dd/t2.txt\toriginal\n+++ /tmp/dd/t2.txt\tmodified\n@@ -1,3 +1,3 @@\n x\n y\n-z\n"
      "\\ No newline at end of file\n+Z\n```\n\n";
    CHECK(apply_unified_diff(without_carriage_returns("x\r\ny\r\nz"), answer) == "x\ny\nZ\n");
  }

  TEST_CASE("a context line without a final newline stays without one")
  {
    const std::string answer =
      "```diff\nIndex: /tmp/dd/t3.txt\n===================================================================\n"
      "--- /tmp/dd/t3.txt\toriginal\n+++ /tmp/dd/t3.txt\tmodified\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
      "\\ No newline at end of file\n```\n\n";
    CHECK(apply_unified_diff("one\ntwo", answer) == "ONE\ntwo");
  }

  TEST_CASE("a longer fence around backticks in the file is no part of the diff")
  {
    const std::string answer =
      "````diff\nIndex: /tmp/dd/t4.txt\n===================================================================\n"
      "--- /tmp/dd/t4.txt\toriginal\n+++ /tmp/dd/t4.txt\tmodified\n@@ -1,3 +1,3 @@\n `a`\n ```\n-q\n+Q\n````\n\n";
    CHECK(apply_unified_diff("`a`\n```\nq\n", answer) == "`a`\n```\nQ\n");
  }

  TEST_CASE("a diff without hunks leaves the file as it was")
  {
    const std::string answer =
      "```diff\nIndex: /tmp/dd/t1.txt\n===================================================================\n"
      "--- /tmp/dd/t1.txt\toriginal\n+++ /tmp/dd/t1.txt\tmodified\n```\n\n";
    CHECK(apply_unified_diff("a\nb\nc\n", answer) == "a\nb\nc\n");
  }

  TEST_CASE("a hunk that does not fit the file, or a text that is no diff, gives nothing")
  {
    const std::string answer = "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    CHECK(apply_unified_diff("a\nb\n", answer) == "a\nB\n");
    CHECK_FALSE(apply_unified_diff("a\nX\n", answer));
    CHECK_FALSE(apply_unified_diff("a\n", answer));
    CHECK_FALSE(apply_unified_diff("a\nb\n", "Edited the file."));
    CHECK_FALSE(apply_unified_diff("a\nb\n", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n"));
  }

  TEST_CASE("hunks apply at their line numbers, later ones after earlier ones")
  {
    const std::string answer = "--- f\n+++ f\n@@ -2,1 +2,1 @@\n-2\n+two\n@@ -5,1 +5,2 @@\n-5\n+five\n+5b\n";
    CHECK(apply_unified_diff("1\n2\n3\n4\n5\n6\n", answer) == "1\ntwo\n3\n4\nfive\n5b\n6\n");
    CHECK(apply_unified_diff("", "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+new\n") == "new\n");
  }
}
