#include "proxy/jsonrpc/content_hash.hpp"

#include <new>

#if defined(FSGUARD_XXH_DISPATCH)
// Calls XXH3_128bits() and XXH3_128bits_update() through libxxhash's x86
// dispatch, which picks AVX2 (or AVX-512) code at run time: the same hash,
// in 40 % of the instructions (see CMakeLists.txt).
#include <xxh_x86dispatch.h>
#endif

namespace fsguard {

namespace {

ContentHash to_content_hash(XXH128_hash_t hash)
{
  return ContentHash{hash.high64, hash.low64};
}

} // namespace

ContentHash hash_bytes(std::string_view bytes)
{
  return to_content_hash(XXH3_128bits(bytes.data(), bytes.size()));
}

ContentHasher::ContentHasher() : m_state(XXH3_createState())
{
  if (!m_state) {
    throw std::bad_alloc();
  }
  reset();
}

void ContentHasher::reset()
{
  XXH3_128bits_reset(m_state.get());
}

void ContentHasher::append(const char* bytes, std::size_t size)
{
  XXH3_128bits_update(m_state.get(), bytes, size);
}

ContentHash ContentHasher::digest() const
{
  return to_content_hash(XXH3_128bits_digest(m_state.get()));
}

void ContentHasher::StateDeleter::operator()(XXH3_state_t* state) const
{
  XXH3_freeState(state);
}

} // namespace fsguard
