// What the CPU offers beyond the baseline fsguard is built for (x86-64:
// SSE2), for the few scans that pick a wider path at run time.
#pragma once

namespace fsguard {

// Whether the CPU runs AVX2; false on other architectures. Asked once.
bool cpu_has_avx2();

} // namespace fsguard
