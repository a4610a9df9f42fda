#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <utility>

#include "tracker/text_bytes.hpp"

using namespace fsguard;

TEST_SUITE("text_bytes")
{
  TEST_CASE("room is given unset, and the text is what set_size takes of it")
  {
    TextBytes text = TextBytes::with_room(100);
    CHECK(text.capacity() == 100);
    CHECK(text.size() == 0);
    CHECK(text.view().empty());
    std::memcpy(text.data(), "hello", 5);
    text.set_size(5);
    CHECK(text.view() == "hello");
    CHECK(text.capacity() == 100);
  }

  TEST_CASE("a copy holds the text in no more room than it needs")
  {
    const TextBytes text = TextBytes::copy_of("a\nb\n");
    CHECK(text.view() == "a\nb\n");
    CHECK(text.capacity() == 4);
    const TextBytes empty = TextBytes::copy_of("");
    CHECK(empty.empty());
    CHECK(empty.view().empty());
  }

  TEST_CASE("shrink_to_fit gives back the spare room and keeps the bytes")
  {
    TextBytes text = TextBytes::with_room(64 * 1024);
    const std::string bytes(1000, 'x');
    std::memcpy(text.data(), bytes.data(), bytes.size());
    text.set_size(bytes.size());
    text.shrink_to_fit();
    CHECK(text.capacity() == 1000);
    CHECK(text.view() == bytes);
    TextBytes none = TextBytes::with_room(50);
    none.shrink_to_fit();
    CHECK(none.capacity() == 0);
    CHECK(none.view().empty());
  }

  TEST_CASE("a move takes the bytes and leaves an empty text")
  {
    TextBytes text = TextBytes::copy_of("moved");
    TextBytes taken(std::move(text));
    CHECK(taken.view() == "moved");
    CHECK(text.size() == 0);     // NOLINT(bugprone-use-after-move): its state is the point
    CHECK(text.capacity() == 0); // NOLINT(bugprone-use-after-move)
    TextBytes other = TextBytes::copy_of("other");
    other = std::move(taken);
    CHECK(other.view() == "moved");
    CHECK(taken.empty()); // NOLINT(bugprone-use-after-move)
    CHECK(taken.capacity() == 0); // NOLINT(bugprone-use-after-move)
  }
}
