// The listing schedule: one retry policy for fsguard's listings of the
// server's allowed directories.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "proxy/guard/listing_schedule.hpp"
#include "fake_disk.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;
using namespace std::chrono_literals;

namespace {

// A server-filesystem session just initialized: its directories are in
// doubt, and fsguard's first listing is on its way.
struct Doubt {
  Doubt() : paths(disk, ledger, "/home", "/ws", "auto"), schedule(paths)
  {
    const nlohmann::json initialized = {
      {"result", {{"serverInfo", {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}}}}}};
    paths.on_initialize_result(initialized, out);
  }

  // Ticks every 10 ms from `from` to `to`, each listing asked taken as
  // answered without settling the doubt; returns when each was asked.
  std::vector<std::chrono::milliseconds> tick_through(ListingSchedule::Clock::time_point from,
                                                      std::chrono::milliseconds span)
  {
    std::vector<std::chrono::milliseconds> asked;
    for (auto at = 0ms; at <= span; at += 10ms) {
      out = Outbox{};
      schedule.tick(from + at, out);
      if (!out.to_upstream.empty()) {
        asked.push_back(at);
        paths.listing_done();
      }
    }
    return asked;
  }

  FakeDisk disk;
  Ledger ledger;
  ServerPaths paths;
  ListingSchedule schedule;
  Outbox out;
};

} // namespace

TEST_SUITE("guard: listing schedule")
{
  TEST_CASE("in doubt, fsguard asks again after pauses doubling from 50 ms to 2 s, 12 times at most")
  {
    Doubt doubt;
    REQUIRE(doubt.paths.in_doubt());
    REQUIRE(doubt.paths.listing_in_flight());
    doubt.paths.listing_done(); // answered, and the directories still in doubt
    CHECK(doubt.schedule.calls_wait());
    const auto asked = doubt.tick_through({}, 60s);
    // The first tick sets the first pause; each try doubles the next.
    const std::vector<std::chrono::milliseconds> expected = {
      50ms, 150ms, 350ms, 750ms, 1550ms, 3150ms, 5150ms, 7150ms, 9150ms, 11150ms, 13150ms, 15150ms};
    CHECK(asked == expected);
    CHECK(doubt.schedule.tries() == ListingSchedule::k_most_tries);
    CHECK_FALSE(doubt.schedule.calls_wait()); // the calls waiting are decided with what is known
  }

  TEST_CASE("a try does not go while a listing is on its way")
  {
    Doubt doubt; // the first listing is in flight, unanswered
    const auto asked = doubt.tick_through({}, 4s);
    CHECK(asked.empty());
  }

  TEST_CASE("a listing unanswered for 5 s is given up on, and the next try goes")
  {
    Doubt doubt;
    const ListingSchedule::Clock::time_point start{};
    CHECK_FALSE(doubt.schedule.tick(start, doubt.out));
    CHECK_FALSE(doubt.schedule.tick(start + 5s, doubt.out));
    doubt.out = Outbox{};
    CHECK(doubt.schedule.tick(start + 5s + 10ms, doubt.out)); // given up on
    CHECK(doubt.out.to_upstream.size() == 1); // and asked again, being due
    CHECK(doubt.paths.listing_in_flight());
  }

  TEST_CASE("a call that needs the directories asks at once, as a try, unless a listing is on its way")
  {
    Doubt doubt;
    doubt.out = Outbox{};
    doubt.schedule.ask_for_call({}, doubt.out);
    CHECK(doubt.out.to_upstream.empty()); // the first listing is still on its way
    doubt.paths.listing_done();
    doubt.schedule.ask_for_call({}, doubt.out);
    CHECK(doubt.out.to_upstream.size() == 1);
    CHECK(doubt.schedule.tries() == 1);
  }

  TEST_CASE("the tries start again once the doubt is over")
  {
    Doubt doubt;
    doubt.paths.listing_done();
    doubt.tick_through({}, 1s);
    CHECK(doubt.schedule.tries() > 0);
    const nlohmann::json listing = {
      {"result", {{"content", {{{"type", "text"}, {"text", "Allowed directories:\n/ws"}}}}}}};
    doubt.paths.on_listing_result(listing, 100, true,
                                  doubt.out);
    REQUIRE_FALSE(doubt.paths.in_doubt());
    doubt.schedule.tick(ListingSchedule::Clock::time_point{} + 2s, doubt.out);
    CHECK(doubt.schedule.tries() == 0);
    CHECK(doubt.schedule.calls_wait());
  }

  TEST_CASE("lifted waits let the calls waiting be decided now, whatever tries remain")
  {
    Doubt doubt;
    doubt.schedule.lift_waits(true);
    CHECK_FALSE(doubt.schedule.calls_wait());
    doubt.schedule.lift_waits(false);
    CHECK(doubt.schedule.calls_wait());
  }
}
