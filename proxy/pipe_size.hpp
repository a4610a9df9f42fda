// The size of the pipes fsguard reads and writes messages through.
#pragma once

namespace fsguard {

// What fsguard asks a pipe to hold: a megabyte message then crosses in a
// few reads and writes instead of sixteen or more of Linux's default 64 KiB,
// each of which wakes both sides.
inline constexpr int k_pipe_bytes = 1024 * 1024;

// Asks the pipe `descriptor` is an end of to hold k_pipe_bytes. Best
// effort: a descriptor that is no pipe, or a user over the system's pipe
// limits (/proc/sys/fs/pipe-max-size, pipe-user-pages-soft), keeps what it
// has.
void widen_pipe(int descriptor);

} // namespace fsguard
