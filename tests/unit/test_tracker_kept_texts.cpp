#include <doctest/doctest.h>

#include <string>

#include "fake_disk.hpp"
#include "tracker/kept_texts.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;

TEST_SUITE("kept_texts")
{
  TEST_CASE("a text is found by its hash only")
  {
    KeptTexts kept;
    CHECK(kept.keep(fake_hash("a\n"), "a\n"));
    REQUIRE(kept.find(fake_hash("a\n")) != nullptr);
    CHECK(*kept.find(fake_hash("a\n")) == "a\n");
    CHECK(kept.find(fake_hash("b\n")) == nullptr);
  }

  TEST_CASE("a text over the per-file cap is not kept")
  {
    KeptTexts kept(KeptTextBudget{10, 1000});
    CHECK_FALSE(kept.keep(fake_hash(std::string(11, 'x')), std::string(11, 'x')));
    CHECK(kept.size() == 0);
    CHECK(kept.keep(fake_hash(std::string(10, 'x')), std::string(10, 'x')));
  }

  TEST_CASE("the least recently used texts go first when the total is reached")
  {
    const std::size_t each = 100 + KeptTexts::k_entry_bytes;
    KeptTexts kept(KeptTextBudget{100, 3 * each});
    const auto text = [](char c) { return std::string(100, c); };
    kept.keep(fake_hash(text('a')), text('a'));
    kept.keep(fake_hash(text('b')), text('b'));
    kept.keep(fake_hash(text('c')), text('c'));
    CHECK(kept.bytes() == 3 * each);
    kept.find(fake_hash(text('a'))); // used: b is now the oldest
    kept.keep(fake_hash(text('d')), text('d'));
    CHECK(kept.size() == 3);
    CHECK(kept.bytes() <= 3 * each);
    CHECK(kept.find(fake_hash(text('b'))) == nullptr);
    CHECK(kept.find(fake_hash(text('a'))) != nullptr);
    CHECK(kept.find(fake_hash(text('d'))) != nullptr);
  }

  TEST_CASE("a smaller budget drops texts at once, and a total of 0 keeps nothing")
  {
    KeptTexts kept;
    kept.keep(fake_hash("a\n"), "a\n");
    kept.keep(fake_hash(std::string(5000, 'b')), std::string(5000, 'b'));
    kept.set_budget(KeptTextBudget{1000, 1'000'000});
    CHECK(kept.size() == 1);
    CHECK(kept.find(fake_hash("a\n")) != nullptr);
    kept.set_budget(KeptTextBudget{1000, 0});
    CHECK(kept.size() == 0);
    CHECK(kept.bytes() == 0);
    CHECK_FALSE(kept.keep(fake_hash("a\n"), "a\n"));
  }

  TEST_CASE("keeping the same text twice costs it once")
  {
    KeptTexts kept;
    kept.keep(fake_hash("a\n"), "a\n");
    kept.keep(fake_hash("a\n"), "a\n");
    CHECK(kept.size() == 1);
    CHECK(kept.bytes() == std::string("a\n").capacity() + KeptTexts::k_entry_bytes);
  }

  TEST_CASE("a text is kept in the memory it needs, and costs what it holds")
  {
    // A text decoded into a string reserved for its raw JSON, or for a
    // line padded after it, holds more than its length: given back.
    std::string roomy = "short text";
    roomy.reserve(64 * 1024);
    KeptTexts kept(KeptTextBudget{1000, 32 * 1024});
    CHECK(kept.keep(fake_hash("short text"), std::move(roomy)));
    CHECK(kept.bytes() <= 10 + KeptTexts::k_spare_bytes + KeptTexts::k_entry_bytes);
    CHECK(*kept.find(fake_hash("short text")) == "short text");
  }

  TEST_CASE("the order of use holds after a text leaves its middle, and after a move")
  {
    const std::size_t each = 100 + KeptTexts::k_entry_bytes;
    KeptTexts kept(KeptTextBudget{200, 10 * each});
    const auto text = [](char c, std::size_t length = 100) { return std::string(length, c); };
    kept.keep(fake_hash(text('a')), text('a'));
    kept.keep(fake_hash(text('b', 150)), text('b', 150));
    kept.keep(fake_hash(text('c')), text('c'));
    kept.find(fake_hash(text('a'))); // order of use: a, c, b
    kept.set_budget(KeptTextBudget{100, 10 * each}); // b, in the middle, goes
    CHECK(kept.size() == 2);
    CHECK(kept.bytes() == 2 * each);
    KeptTexts moved(std::move(kept));
    CHECK(kept.size() == 0);
    CHECK(kept.find(fake_hash(text('a'))) == nullptr);
    moved.set_budget(KeptTextBudget{100, 2 * each});
    moved.keep(fake_hash(text('d')), text('d')); // c is the oldest
    CHECK(moved.find(fake_hash(text('c'))) == nullptr);
    CHECK(moved.find(fake_hash(text('a'))) != nullptr);
    moved.keep(fake_hash(text('e')), text('e')); // then d
    CHECK(moved.find(fake_hash(text('d'))) == nullptr);
    CHECK(moved.find(fake_hash(text('a'))) != nullptr);
    CHECK(moved.find(fake_hash(text('e'))) != nullptr);
    CHECK(moved.size() == 2);
    kept.keep(fake_hash(text('f')), text('f')); // the moved-from one starts afresh
    CHECK(kept.size() == 1);
    CHECK(kept.find(fake_hash(text('f'))) != nullptr);
  }
}
