// The hash of the maps keyed by a string that fsguard looks up on every
// call: the tracker's records and the guard's busy files (by canonical
// path), the ledger's requests (by id key).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace fsguard {

// Hashes a string key with XXH3-64, which takes a path of 50 to 100 bytes
// in about half the instructions of std::hash<std::string>.
struct StringKeyHash {
  // The hash of `key`.
  std::size_t operator()(std::string_view key) const noexcept;
  // The same for `key`, a map's key.
  std::size_t operator()(const std::string& key) const noexcept
  {
    return (*this)(std::string_view(key));
  }
};

} // namespace fsguard

#if defined(__GLIBCXX__)
// Not "fast" to libstdc++, as std::hash<std::string> is not (its documented
// way to say so): a map then keeps each key's hash in its node, so a probe
// hashes no neighbour's key again, and finds a key among 20 or fewer by
// comparing them, without hashing it at all (the guard's busy files and
// the ledger hold a few).
template <> struct std::__is_fast_hash<fsguard::StringKeyHash> : std::false_type {};
#endif
