#include <doctest/doctest.h>

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
}
