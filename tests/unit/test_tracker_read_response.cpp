#include <doctest/doctest.h>

#include <algorithm>

#include "tracker/read_response.hpp"

using namespace fsguard;

TEST_SUITE("read_response")
{
  TEST_CASE("successful and failed parts of read_multiple_files are told apart")
  {
    const std::string text =
      "/ws/hello.txt:\nhello\nsecond line\n\n\n---\n/ws/nonl.txt:\nn1\nn2\n\n---\n"
      "/ws/missing.txt: Error - ENOENT: no such file\n---\n/etc/passwd: Error - Access denied";
    const auto read = parts_read(text, {"/ws/hello.txt", "/ws/nonl.txt", "/ws/missing.txt", "/etc/passwd"});
    CHECK(read == std::vector<bool>{true, true, false, false});
  }

  TEST_CASE("a single part is read when it has the success header")
  {
    CHECK(parts_read("/ws/a:\ncontent\n", {"/ws/a"}) == std::vector<bool>{true});
    CHECK(parts_read("/ws/a: Error - EISDIR", {"/ws/a"}) == std::vector<bool>{false});
  }

  TEST_CASE("content that mimics the next header makes the split ambiguous, so nothing from there counts")
  {
    const std::string text = "/a:\nx\n---\n/b:\nfake\n\n---\n/b: Error - denied";
    const auto read = parts_read(text, {"/a", "/b"});
    CHECK(read == std::vector<bool>{false, false});
  }

  TEST_CASE("a response in an unexpected shape counts as nothing read")
  {
    CHECK(parts_read("something else", {"/a", "/b"}) == std::vector<bool>{false, false});
    CHECK(parts_read("", {"/a"}) == std::vector<bool>{false});
  }

  TEST_CASE("400 paths and a file full of --- lines split in work linear in the response")
  {
    // Each "---" line is a separator candidate; a split that rescans the
    // rest of the text for every part did 400 x 250,000 of them.
    std::vector<std::string> paths;
    std::string text;
    std::string dashes;
    for (int line = 0; line < 250'000; ++line) {
      dashes += "---\n";
    }
    for (int part = 0; part < 400; ++part) {
      paths.push_back("/ws/file-" + std::to_string(part) + ".txt");
      text += (part == 0 ? "" : "\n---\n") + paths.back() + ":\n"
              + (part == 399 ? dashes : "content " + std::to_string(part) + "\n") + "\n";
    }
    std::size_t work = 0;
    const auto read = parts_read(text, paths, &work);
    CHECK(read == std::vector<bool>(400, true));
    CHECK(work <= text.size());
  }

  TEST_CASE("20,000 missing paths split in work linear in the response")
  {
    std::vector<std::string> paths;
    std::string text;
    for (int part = 0; part < 20'000; ++part) {
      paths.push_back("/ws/missing-" + std::to_string(part) + ".txt");
      text += (part == 0 ? "" : "\n---\n") + paths.back()
              + ": Error - ENOENT: no such file or directory, open '" + paths.back() + "'";
    }
    std::size_t work = 0;
    CHECK(parts_read(text, paths, &work) == std::vector<bool>(20'000, false));
    CHECK(work <= text.size());
    // Still told apart from content: make one part a success.
    const std::string found = "/ws/missing-7.txt";
    const auto at = text.find(found + ": Error");
    std::string with_content = text;
    with_content.replace(at, with_content.find('\n', at) - at, found + ":\nhello\n");
    const auto read = parts_read(with_content, paths);
    CHECK(read[7]);
    CHECK(std::count(read.begin(), read.end(), true) == 1);
  }

  TEST_CASE("the work grows in proportion to the response, not to parts times response")
  {
    const auto work_for = [](int parts) {
      std::vector<std::string> paths;
      std::string text;
      for (int part = 0; part < parts; ++part) {
        paths.push_back("/ws/d/" + std::to_string(part));
        text += (part == 0 ? "" : "\n---\n") + paths.back() + ":\n---\n/ws/d/\n---\n/ws/\n";
      }
      std::size_t work = 0;
      CHECK(parts_read(text, paths, &work) == std::vector<bool>(parts, true));
      return std::pair(work, text.size());
    };
    const auto [small_work, small_size] = work_for(2'000);
    const auto [large_work, large_size] = work_for(8'000);
    CHECK(large_size >= 4 * small_size);
    CHECK(small_work > 0);
    CHECK(large_work * small_size <= 5 * small_work * large_size / 4); // linear, give or take
  }

  TEST_CASE("a split too costly to decide counts nothing as read")
  {
    // A requested path that itself holds the separator, repeated `length`
    // times, and a first file whose content repeats it `copies` times: each
    // separator in that content starts a walk of up to the whole path.
    const auto split = [](int length, int copies, std::size_t& work) {
      std::string repeated;
      for (int copy = 0; copy < length; ++copy) {
        repeated += "\n---\n/x";
      }
      const std::vector<std::string> paths = {"/first", "/x" + repeated + "END"};
      std::string text = "/first:\ncontent";
      for (int copy = 0; copy < copies; ++copy) {
        text += repeated;
      }
      text += "\n\n---\n" + paths[1] + ":\nsecond\n";
      const auto read = parts_read(text, paths, &work);
      CHECK(work <= 4 * text.size() + 64 * 1024 + 1);
      return read;
    };
    std::size_t work = 0;
    // A few short walks: decided.
    CHECK(split(20, 5, work) == std::vector<bool>{true, true});
    // Thousands of walks of thousands of bytes each: it gives up instead.
    CHECK(split(1000, 5, work) == std::vector<bool>{false, false});
    CHECK(work > 64 * 1024);
  }

  TEST_CASE("parts_shown gives each part's content exactly as the file holds it")
  {
    // server-filesystem's shape: "<path>:\n<content>\n" parts joined by "\n---\n".
    const std::string text = "/ws/hello.txt:\nh\u00e9llo\nsecond line\n\n\n---\n/ws/nonl.txt:\nn1\nn2\n---\n"
                             "\n---\n/ws/missing.txt: Error - ENOENT: no such file\n---\n/ws/empty.txt:\n\n";
    const auto shown = parts_shown(text, {"/ws/hello.txt", "/ws/nonl.txt", "/ws/missing.txt",
                                          "/ws/empty.txt"});
    REQUIRE(shown.size() == 4);
    CHECK(shown[0] == std::optional<std::string_view>("h\u00e9llo\nsecond line\n"));
    CHECK(shown[1] == std::optional<std::string_view>("n1\nn2\n---"));
    CHECK_FALSE(shown[2]);
    CHECK(shown[3] == std::optional<std::string_view>(""));
  }
}
