#include <doctest/doctest.h>

#include <string>

#include "proxy/guard/text_diff.hpp"
#include "tracker/unified_diff.hpp"

using namespace fsguard;

namespace {

std::string numbered_lines(int count, int changed = 0, const std::string& change = "")
{
  std::string text;
  for (int line = 1; line <= count; ++line) {
    text += line == changed ? change + "\n" : "line " + std::to_string(line) + "\n";
  }
  return text;
}

} // namespace

TEST_SUITE("text_diff")
{
  TEST_CASE("a diff has line numbers and applies to the old text to give the new one")
  {
    const std::string before = numbered_lines(50);
    const std::string after = numbered_lines(50, 40, "LINE 40");
    const TextDiff diff = diff_texts(before, after, "a.txt\t(before)", "a.txt\t(after)", {});
    CAPTURE(diff.text);
    CHECK(diff.complete);
    CHECK(diff.text.starts_with("--- a.txt\t(before)\n+++ a.txt\t(after)\n@@ -37,7 +37,7 @@\n"));
    CHECK(diff.text.find("\n-line 40\n+LINE 40\n") != std::string::npos);
    CHECK(apply_unified_diff(before, diff.text) == after);
  }

  TEST_CASE("a last line without a newline is marked as in any unified diff")
  {
    const TextDiff diff = diff_texts("a\nb", "a\nc", "x", "y", {});
    CAPTURE(diff.text);
    CHECK(diff.text.find("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")
          != std::string::npos);
    CHECK(apply_unified_diff("a\nb", diff.text) == "a\nc");
    CHECK(apply_unified_diff("a\nb\n", diff_texts("a\nb\n", "a\nb", "x", "y", {}).text) == "a\nb");
  }

  TEST_CASE("equal texts have an empty, complete diff")
  {
    const TextDiff diff = diff_texts("same\n", "same\n", "x", "y", {});
    CHECK(diff.text.empty());
    CHECK(diff.complete);
  }

  TEST_CASE("a diff longer than its bounds is cut at whole lines and says so")
  {
    std::string before;
    std::string after;
    for (int line = 0; line < 400; ++line) {
      before += "old " + std::to_string(line) + "\n";
      after += "new " + std::to_string(line) + "\n";
    }
    DiffBounds bounds;
    bounds.max_lines = 50;
    bounds.max_bytes = 100'000;
    const TextDiff by_lines = diff_texts(before, after, "x", "y", bounds);
    CHECK_FALSE(by_lines.complete);
    CHECK(by_lines.text.find("[fsguard cut the diff here: ") != std::string::npos);
    CHECK(by_lines.text.find("-old 0\n") != std::string::npos);
    bounds.max_lines = 100'000;
    bounds.max_bytes = 1000;
    const TextDiff by_bytes = diff_texts(before, after, "x", "y", bounds);
    CHECK_FALSE(by_bytes.complete);
    CHECK(by_bytes.text.size() < 1100);
    CHECK(by_bytes.text.ends_with("more diff lines are not shown]\n"));
  }

  TEST_CASE("hunks that fit are shown whole; the rest is counted")
  {
    const std::string before = numbered_lines(100);
    std::string after = numbered_lines(100, 10, "TEN");
    after = after.replace(after.find("line 90\n"), 7, "NINETY");
    DiffBounds bounds;
    bounds.max_lines = 12;
    const TextDiff diff = diff_texts(before, after, "x", "y", bounds);
    CAPTURE(diff.text);
    CHECK_FALSE(diff.complete);
    CHECK(diff.text.find("+TEN\n") != std::string::npos);
    CHECK(diff.text.find("NINETY") == std::string::npos);
  }

  TEST_CASE("changes on different lines merge cleanly")
  {
    const std::string base = numbered_lines(50);
    const std::string ours = numbered_lines(50, 40, "ours 40");
    const std::string theirs = numbered_lines(50, 1, "theirs 1");
    const auto merged = merge_texts(base, ours, theirs, "base", "ours", "theirs");
    REQUIRE(merged);
    CHECK(merged->clean);
    std::string both = theirs;
    both.replace(both.find("line 40\n"), 7, "ours 40");
    CHECK(merged->text == both);
  }

  TEST_CASE("changes of the same line conflict, and the conflict shows both sides and the base")
  {
    const std::string base = numbered_lines(20);
    const auto merged = merge_texts(base, numbered_lines(20, 5, "ours 5"),
                                    numbered_lines(20, 5, "theirs 5"), "as you last saw it",
                                    "your write", "on disk now");
    REQUIRE(merged);
    CHECK_FALSE(merged->clean);
    const std::string hunks = conflict_hunks(merged->text, {});
    CAPTURE(hunks);
    CHECK(hunks.find("<<<<<<< your write\nours 5\n") != std::string::npos);
    CHECK(hunks.find("||||||| as you last saw it\nline 5\n") != std::string::npos);
    CHECK(hunks.find("=======\ntheirs 5\n>>>>>>> on disk now\n") != std::string::npos);
    CHECK(hunks.find("line 3\n") != std::string::npos); // context
    CHECK(hunks.find("line 12\n") == std::string::npos);
  }

  TEST_CASE("changes of adjacent lines conflict, as in git")
  {
    const std::string base = numbered_lines(20);
    const auto merged = merge_texts(base, numbered_lines(20, 5, "ours 5"),
                                    numbered_lines(20, 6, "theirs 6"), "b", "o", "t");
    REQUIRE(merged);
    CHECK_FALSE(merged->clean);
  }
}
