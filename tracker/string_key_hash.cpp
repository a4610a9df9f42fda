#include "tracker/string_key_hash.hpp"

// XXH3-64 compiled into this file (inlined into the one function below)
// rather than called through the shared library's exported function.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fsguard {

std::size_t StringKeyHash::operator()(std::string_view key) const noexcept
{
  return static_cast<std::size_t>(XXH3_64bits(key.data(), key.size()));
}

} // namespace fsguard
