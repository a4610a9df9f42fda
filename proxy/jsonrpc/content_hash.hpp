// Content hashes (XXH3-128): of bytes held at once, or fed piece by piece.
// The one hash fsguard uses for files on disk and for a write's content.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include <xxhash.h>

#include "tracker/file_state.hpp"

namespace fsguard {

// XXH3-128 of `bytes`: the hash RealDisk::hash gives a file holding `bytes`.
ContentHash hash_bytes(std::string_view bytes);

// The same hash, of bytes fed in pieces.
class ContentHasher {
public:
  ContentHasher();

  // Starts a new hash.
  void reset();
  // Adds `size` bytes at `bytes`.
  void append(const char* bytes, std::size_t size);
  // The hash of everything appended since the last reset.
  ContentHash digest() const;

private:
  struct StateDeleter {
    void operator()(XXH3_state_t* state) const;
  };
  std::unique_ptr<XXH3_state_t, StateDeleter> m_state;
};

} // namespace fsguard
