#include <doctest/doctest.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "proxy/process/pipe_size.hpp"

using namespace fsguard;

TEST_SUITE("pipe_size")
{
  TEST_CASE("a pipe is widened where the system allows; what is no pipe is left alone")
  {
    // Whether this system lets this user have such a pipe at all (a
    // container may lower pipe-max-size; a user may be over the limit).
    int probe[2];
    REQUIRE(::pipe(probe) == 0);
    const bool allowed = ::fcntl(probe[1], F_SETPIPE_SZ, k_pipe_bytes) >= k_pipe_bytes;
    ::close(probe[0]);
    ::close(probe[1]);

    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    const int before = ::fcntl(ends[1], F_GETPIPE_SZ);
    CHECK(before < k_pipe_bytes); // Linux's default: 64 KiB
    widen_pipe(ends[1]);
    if (allowed) {
      CHECK(::fcntl(ends[0], F_GETPIPE_SZ) >= k_pipe_bytes); // one pipe, both ends
    } else {
      MESSAGE("this system refuses pipes of k_pipe_bytes: only checked that nothing fails");
      CHECK(::fcntl(ends[0], F_GETPIPE_SZ) == before);
    }
    ::close(ends[0]);
    ::close(ends[1]);

    FILE* file = ::tmpfile();
    REQUIRE(file != nullptr);
    widen_pipe(::fileno(file)); // no error to see, nothing changed
    CHECK(::fcntl(::fileno(file), F_GETPIPE_SZ) == -1);
    ::fclose(file);
    widen_pipe(-1);
  }
}
