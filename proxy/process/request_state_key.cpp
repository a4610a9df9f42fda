#include "proxy/process/request_state_key.hpp"

#include <sys/random.h>

#include <cerrno>

namespace fsguard {

std::string request_state_key()
{
  // The kernel's generator (getrandom(2)) rather than OpenSSL's RAND_bytes:
  // the first RAND_bytes sets up OpenSSL's generator, about 6 million
  // instructions at every start (bench.callgrind_per_message), for a key
  // most sessions never use. getrandom blocks only until the kernel's pool
  // is first seeded at boot, and returns up to 256 bytes whole.
  std::string key(32, '\0');
  std::size_t filled = 0;
  while (filled < key.size()) {
    const ssize_t got = ::getrandom(key.data() + filled, key.size() - filled, 0);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return {};
    }
    filled += static_cast<std::size_t>(got);
  }
  return key;
}

} // namespace fsguard
