#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "tracker/string_key_hash.hpp"

using namespace fsguard;

TEST_SUITE("string_key_hash")
{
  TEST_CASE("a key hashes alike however it is held")
  {
    const StringKeyHash hash;
    const std::string path = "/home/someone/projects/fsguard/tracker/string_key_hash.cpp";
    const std::string padded = "xx" + path + "yy";
    CHECK(hash(path) == hash(std::string_view(padded).substr(2, path.size())));
    CHECK(hash(path) == hash(std::string(path)));
  }

  TEST_CASE("keys one byte apart hash apart, at every length and position")
  {
    // Lengths across XXH3's branches (0, 1-3, 4-8, 9-16, 17-128, 129-240, more).
    const StringKeyHash hash;
    for (const std::size_t length : {1, 3, 4, 8, 9, 16, 17, 70, 128, 129, 240, 241, 600}) {
      std::string key(length, 'a');
      const std::size_t original = hash(key);
      std::unordered_set<std::size_t> seen{original, hash(std::string())};
      for (std::size_t position = 0; position < length; ++position) {
        key[position] = 'b';
        CHECK_MESSAGE(seen.insert(hash(key)).second, "length ", length, " position ", position);
        key[position] = 'a';
      }
      CHECK(hash(key) == original);
    }
  }

  TEST_CASE("the maps keep each key's hash, and scan a few keys without hashing")
  {
#if defined(__GLIBCXX__)
    // As for std::hash<std::string> (see string_key_hash.hpp): a hash
    // libstdc++ takes for fast is not kept in the nodes, and is taken even
    // to find a key in a map of one.
    CHECK_FALSE(std::__is_fast_hash<StringKeyHash>::value);
    CHECK(std::__cache_default<std::string, StringKeyHash>::value);
#endif
    CHECK(std::is_nothrow_invocable_v<const StringKeyHash&, const std::string&>);
  }
}
