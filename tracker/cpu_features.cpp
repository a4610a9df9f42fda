#include "tracker/cpu_features.hpp"

namespace fsguard {

bool cpu_has_avx2()
{
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2"); // a fact of the CPU, asked once
  return avx2;
#else
  return false;
#endif
}

} // namespace fsguard
