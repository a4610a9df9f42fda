#include "proxy/process/pipe_size.hpp"

#include <fcntl.h>

namespace fsguard {

void widen_pipe(int descriptor)
{
  (void)::fcntl(descriptor, F_SETPIPE_SZ, k_pipe_bytes);
}

} // namespace fsguard
