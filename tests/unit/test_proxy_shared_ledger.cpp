#include <doctest/doctest.h>

#include "proxy/guard/shared_ledger.hpp"

using namespace fsguard;

namespace {
constexpr std::int64_t k_second = 1'000'000'000;
constexpr std::int64_t k_now = 1'800'000'000 * k_second;
} // namespace

TEST_SUITE("shared_ledger")
{
  TEST_CASE("another session's write is named with its client, its pid and how long ago")
  {
    CHECK(describe_other_write({"claude-code", 4242, k_now - 40 * k_second}, k_now)
          == "by another agent session (claude-code, pid 4242) 40 s ago");
    CHECK(describe_other_write({"c", 1, k_now - 300 * k_second}, k_now)
          == "by another agent session (c, pid 1) 5 min ago");
    CHECK(describe_other_write({"c", 1, k_now - 5 * 3600 * k_second}, k_now)
          == "by another agent session (c, pid 1) 5 h ago");
    CHECK(describe_other_write({"c", 1, k_now + k_second}, k_now)
          == "by another agent session (c, pid 1) just now"); // another clock, a little ahead
  }

  TEST_CASE("a client name from another process is shown without control characters, and cut")
  {
    CHECK(describe_other_write({"evil\nname\x1b[31m", 7, k_now}, k_now)
          == "by another agent session (evilname[31m, pid 7) just now");
    CHECK(describe_other_write({"", 7, k_now}, k_now)
          == "by another agent session (a client without a name, pid 7) just now");
    const std::string long_name = std::string(63, 'x') + "\xc3\xa9" + std::string(10, 'y');
    CHECK(describe_other_write({long_name, 7, k_now}, k_now)
          == "by another agent session (" + std::string(63, 'x') + "..., pid 7) just now");
  }
}
