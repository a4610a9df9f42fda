#include "proxy/process/request_state_key.hpp"

#include <openssl/rand.h>

namespace fsguard {

std::string request_state_key()
{
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return {};
  }
  return key;
}

} // namespace fsguard
