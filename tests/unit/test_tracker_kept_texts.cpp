#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "fake_disk.hpp"
#include "tracker/kept_texts.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;

namespace {

// `text` in a TextBytes of its own, in no more room than it needs.
TextBytes copied(std::string_view text)
{
  return TextBytes::copy_of(text);
}

} // namespace

TEST_SUITE("kept_texts")
{
  TEST_CASE("a text is found by its hash only")
  {
    KeptTexts kept;
    CHECK(kept.keep(fake_hash("a\n"), copied("a\n")));
    REQUIRE(kept.find(fake_hash("a\n")).has_value());
    CHECK(*kept.find(fake_hash("a\n")) == "a\n");
    CHECK_FALSE(kept.find(fake_hash("b\n")).has_value());
  }

  TEST_CASE("a text over the per-file cap is not kept")
  {
    KeptTexts kept(KeptTextBudget{10, 1000});
    CHECK_FALSE(kept.keep(fake_hash(std::string(11, 'x')), copied(std::string(11, 'x'))));
    CHECK(kept.size() == 0);
    CHECK(kept.keep(fake_hash(std::string(10, 'x')), copied(std::string(10, 'x'))));
  }

  TEST_CASE("the least recently used texts go first when the total is reached")
  {
    const std::size_t each = 100 + KeptTexts::k_entry_bytes;
    KeptTexts kept(KeptTextBudget{100, 3 * each});
    const auto text = [](char c) { return std::string(100, c); };
    kept.keep(fake_hash(text('a')), copied(text('a')));
    kept.keep(fake_hash(text('b')), copied(text('b')));
    kept.keep(fake_hash(text('c')), copied(text('c')));
    CHECK(kept.bytes() == 3 * each);
    kept.find(fake_hash(text('a'))); // used: b is now the oldest
    kept.keep(fake_hash(text('d')), copied(text('d')));
    CHECK(kept.size() == 3);
    CHECK(kept.bytes() <= 3 * each);
    CHECK_FALSE(kept.find(fake_hash(text('b'))).has_value());
    CHECK(kept.find(fake_hash(text('a'))).has_value());
    CHECK(kept.find(fake_hash(text('d'))).has_value());
  }

  TEST_CASE("a smaller budget drops texts at once, and a total of 0 keeps nothing")
  {
    KeptTexts kept;
    kept.keep(fake_hash("a\n"), copied("a\n"));
    kept.keep(fake_hash(std::string(5000, 'b')), copied(std::string(5000, 'b')));
    kept.set_budget(KeptTextBudget{1000, 1'000'000});
    CHECK(kept.size() == 1);
    CHECK(kept.find(fake_hash("a\n")).has_value());
    kept.set_budget(KeptTextBudget{1000, 0});
    CHECK(kept.size() == 0);
    CHECK(kept.bytes() == 0);
    CHECK_FALSE(kept.keep(fake_hash("a\n"), copied("a\n")));
  }

  TEST_CASE("keeping the same text twice costs it once")
  {
    KeptTexts kept;
    kept.keep(fake_hash("a\n"), copied("a\n"));
    kept.keep(fake_hash("a\n"), copied("a\n"));
    CHECK(kept.size() == 1);
    CHECK(kept.bytes() == 2 + KeptTexts::k_entry_bytes);
  }

  TEST_CASE("a text is kept in the memory it needs, and costs what it holds")
  {
    // A text decoded into room for its raw JSON, or for a line padded
    // after it, holds more than its length: given back.
    TextBytes roomy = TextBytes::with_room(64 * 1024);
    std::memcpy(roomy.data(), "short text", 10);
    roomy.set_size(10);
    KeptTexts kept(KeptTextBudget{1000, 32 * 1024});
    CHECK(kept.keep(fake_hash("short text"), std::move(roomy)));
    CHECK(kept.bytes() == 10 + KeptTexts::k_entry_bytes);
    CHECK(*kept.find(fake_hash("short text")) == "short text");
  }

  TEST_CASE("a text with spare room within a quarter of its length is kept as it is")
  {
    // Decoded into its raw JSON's room, a text of one escape a line holds
    // a little more than its length: not worth a realloc, and counted.
    TextBytes text = TextBytes::with_room(100 + 25 + KeptTexts::k_spare_bytes);
    std::memset(text.data(), 'x', 100);
    text.set_size(100);
    KeptTexts kept(KeptTextBudget{1000, 32 * 1024});
    CHECK(kept.keep(fake_hash(std::string(100, 'x')), std::move(text)));
    CHECK(kept.bytes() == 100 + 25 + KeptTexts::k_spare_bytes + KeptTexts::k_entry_bytes);
    kept.set_budget(KeptTextBudget{1000, 100 + 25 + KeptTexts::k_spare_bytes + KeptTexts::k_entry_bytes - 1});
    CHECK(kept.size() == 0); // what it holds, not its length, is what the budget counts
  }

  TEST_CASE("the order of use holds after a text leaves its middle, and after a move")
  {
    const std::size_t each = 100 + KeptTexts::k_entry_bytes;
    KeptTexts kept(KeptTextBudget{200, 10 * each});
    const auto text = [](char c, std::size_t length = 100) { return std::string(length, c); };
    kept.keep(fake_hash(text('a')), copied(text('a')));
    kept.keep(fake_hash(text('b', 150)), copied(text('b', 150)));
    kept.keep(fake_hash(text('c')), copied(text('c')));
    kept.find(fake_hash(text('a'))); // order of use: a, c, b
    kept.set_budget(KeptTextBudget{100, 10 * each}); // b, in the middle, goes
    CHECK(kept.size() == 2);
    CHECK(kept.bytes() == 2 * each);
    KeptTexts moved(std::move(kept));
    CHECK(kept.size() == 0);
    CHECK_FALSE(kept.find(fake_hash(text('a'))).has_value());
    moved.set_budget(KeptTextBudget{100, 2 * each});
    moved.keep(fake_hash(text('d')), copied(text('d'))); // c is the oldest
    CHECK_FALSE(moved.find(fake_hash(text('c'))).has_value());
    CHECK(moved.find(fake_hash(text('a'))).has_value());
    moved.keep(fake_hash(text('e')), copied(text('e'))); // then d
    CHECK_FALSE(moved.find(fake_hash(text('d'))).has_value());
    CHECK(moved.find(fake_hash(text('a'))).has_value());
    CHECK(moved.find(fake_hash(text('e'))).has_value());
    CHECK(moved.size() == 2);
    kept.keep(fake_hash(text('f')), copied(text('f'))); // the moved-from one starts afresh
    CHECK(kept.size() == 1);
    CHECK(kept.find(fake_hash(text('f'))).has_value());
  }
}
