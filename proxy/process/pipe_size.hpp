// The size of the pipes fsguard reads and writes messages through.
#pragma once

namespace fsguard {

// What fsguard asks a pipe to the upstream to hold: a 1 MiB read's answer
// (the text twice, 2 MiB) then crosses in about 13 reads instead of 40 of
// Linux's default 64 KiB, each of which wakes both sides. Not more: pipe memory
// counts against a per-user limit (/proc/sys/fs/pipe-user-pages-soft, 64
// MiB), past which every new pipe of that user, in any program, gets a
// page or two. Two such pipes per fsguard leave room for a hundred of them.
inline constexpr int k_pipe_bytes = 256 * 1024;
static_assert(k_pipe_bytes <= 256 * 1024, "see the per-user limit above");

// Asks the pipe `descriptor` is an end of to hold k_pipe_bytes. Best
// effort: a descriptor that is no pipe, or a user over the system's pipe
// limits (/proc/sys/fs/pipe-max-size, pipe-user-pages-soft), keeps what it
// has.
void widen_pipe(int descriptor);

} // namespace fsguard
