// The hash of the maps keyed by a string that fsguard looks up on every
// call: the tracker's records and the guard's busy files (by canonical
// path), the ledger's requests (by id key).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fsguard {

// Hashes a string key with XXH3-64, which takes a path of 50 to 100 bytes
// in about half the instructions of std::hash<std::string>.
struct StringKeyHash {
  // The hash of `key`. Deliberately not noexcept: libstdc++ keeps the hash
  // of each key in its node only for a hash that may throw (or one it
  // knows to be slow), and without it every probe of a bucket hashes its
  // neighbours' keys again.
  std::size_t operator()(std::string_view key) const;
  // The same for `key`, a map's key.
  std::size_t operator()(const std::string& key) const { return (*this)(std::string_view(key)); }
};

} // namespace fsguard
