// The key of the HMAC that makes fsguard's own requestState in the 2026
// era (proxy/guard/override_state.hpp): random, made once a process, never
// written anywhere, so a state made by another process, or by anyone but
// fsguard, does not pass.
#pragma once

#include <string>

namespace fsguard {

// 32 random bytes from the kernel (getrandom(2)); "" if it
// has none to give, and fsguard then does not ask the person in the 2026
// era.
std::string request_state_key();

} // namespace fsguard
