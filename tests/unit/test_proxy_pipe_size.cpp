#include <doctest/doctest.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "proxy/pipe_size.hpp"

using namespace fsguard;

TEST_SUITE("pipe_size")
{
  TEST_CASE("a pipe is widened to hold a megabyte message; what is no pipe is left alone")
  {
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    const int before = ::fcntl(ends[1], F_GETPIPE_SZ);
    CHECK(before < k_pipe_bytes); // Linux's default: 64 KiB
    widen_pipe(ends[1]);
    CHECK(::fcntl(ends[0], F_GETPIPE_SZ) >= k_pipe_bytes); // one pipe, both ends
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
