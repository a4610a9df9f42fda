#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "proxy/guard/ledger.hpp"

using namespace fsguard;

namespace {

PendingRequest relayed(int id, std::string method)
{
  PendingRequest request;
  request.from = Peer::client;
  request.id = id;
  request.method = std::move(method);
  return request;
}

} // namespace

TEST_SUITE("ledger")
{
  TEST_CASE("a request opened where a relayed one was closed holds only what it was opened with")
  {
    Ledger ledger;
    PendingRequest first = relayed(1, "tools/call");
    first.probed = "/ws";
    REQUIRE(ledger.open("1", std::move(first)) != nullptr);
    CHECK(ledger.close_if(Peer::upstream, "1", Expectation::relay));
    CHECK(ledger.find(Peer::upstream, "1") == nullptr);

    PendingRequest* second = ledger.open("2", relayed(2, "resources/read"));
    REQUIRE(second != nullptr);
    CHECK(second->id == 2);
    CHECK(second->method == "resources/read");
    CHECK(second->probed.empty());
    CHECK(ledger.find(Peer::upstream, "2") == second);
    CHECK(ledger.find(Peer::upstream, "1") == nullptr);
  }

  TEST_CASE("an id still pending is refused after a relayed request closed, and the next id opens")
  {
    Ledger ledger;
    REQUIRE(ledger.open("1", relayed(1, "tools/call")) != nullptr);
    REQUIRE(ledger.open("2", relayed(2, "tools/call")) != nullptr);
    CHECK(ledger.close_if(Peer::upstream, "1", Expectation::relay));
    CHECK(ledger.open("2", relayed(2, "prompts/get")) == nullptr);
    REQUIRE(ledger.find(Peer::upstream, "2") != nullptr);
    CHECK(ledger.find(Peer::upstream, "2")->method == "tools/call");
    PendingRequest* third = ledger.open("3", relayed(3, "prompts/list"));
    REQUIRE(third != nullptr);
    CHECK(third->method == "prompts/list");
    CHECK(ledger.close_if(Peer::upstream, "2", Expectation::relay));
    CHECK(ledger.close_if(Peer::upstream, "3", Expectation::relay));
    CHECK_FALSE(ledger.close_if(Peer::upstream, "3", Expectation::relay));
  }

  TEST_CASE("close_if leaves a request whose answer fsguard expects otherwise")
  {
    Ledger ledger;
    PendingRequest listing = relayed(7, "tools/call");
    listing.expect = Expectation::client_listing;
    REQUIRE(ledger.open("7", std::move(listing)) != nullptr);
    CHECK_FALSE(ledger.close_if(Peer::upstream, "7", Expectation::relay));
    CHECK(ledger.find(Peer::upstream, "7") != nullptr);
  }

  TEST_CASE("a request opened in the node of a recycled guarded call holds no call of its own")
  {
    Ledger ledger;
    PendingRequest guarded = relayed(1, "tools/call");
    guarded.expect = Expectation::guarded_call;
    guarded.call = std::make_unique<CallInFlight>();
    guarded.call->files.emplace_back("/ws/a.txt");
    REQUIRE(ledger.open("1", std::move(guarded)) != nullptr);
    auto closed = ledger.close(Peer::upstream, "1");
    REQUIRE_FALSE(closed.empty());
    CHECK(closed.mapped().call != nullptr);
    ledger.recycle(std::move(closed));
    ledger.recycle(ledger.close(Peer::upstream, "1")); // nothing pending: nothing taken

    PendingRequest* next = ledger.open("2", relayed(2, "tools/call"));
    REQUIRE(next != nullptr);
    CHECK(next->expect == Expectation::relay);
    CHECK(next->call == nullptr);
    CHECK(ledger.find(Peer::upstream, "1") == nullptr);
    CHECK(ledger.close_if(Peer::upstream, "2", Expectation::relay));
  }

  TEST_CASE("a request found by its answer is read and closed through what found it, once")
  {
    static_assert(!std::is_copy_constructible_v<Ledger::Answered>
                    && !std::is_copy_assignable_v<Ledger::Answered>,
                  "a copy left behind by close() would take the entry twice");
    Ledger ledger;
    PendingRequest guarded = relayed(1, "tools/call");
    guarded.expect = Expectation::guarded_call;
    REQUIRE(ledger.open("1", std::move(guarded)) != nullptr);
    REQUIRE(ledger.open("2", relayed(2, "tools/call")) != nullptr);

    auto nothing = ledger.find_answered(Peer::upstream, "3");
    CHECK(nothing.request() == nullptr);
    CHECK(ledger.close(nothing).empty());
    CHECK_FALSE(ledger.close_if(nothing, Expectation::relay));
    // An answer from the client answers none of the client's own requests.
    CHECK(ledger.find_answered(Peer::client, "1").request() == nullptr);

    auto first = ledger.find_answered(Peer::upstream, "1");
    REQUIRE(first.request() != nullptr);
    CHECK(first.request() == ledger.find(Peer::upstream, "1"));
    CHECK_FALSE(ledger.close_if(first, Expectation::relay)); // a guarded call: left
    CHECK(first.request() != nullptr);
    auto closed = ledger.close(first);
    REQUIRE_FALSE(closed.empty());
    CHECK(closed.key() == "1");
    CHECK(closed.mapped().expect == Expectation::guarded_call);
    CHECK(first.request() == nullptr);
    CHECK(ledger.close(first).empty()); // closed once only
    CHECK(ledger.find(Peer::upstream, "1") == nullptr);

    auto second = ledger.find_answered(Peer::upstream, "2");
    CHECK(ledger.close_if(second, Expectation::relay));
    CHECK(second.request() == nullptr);
    CHECK_FALSE(ledger.close_if(second, Expectation::relay));
    CHECK(ledger.find(Peer::upstream, "2") == nullptr);
    CHECK(ledger.open("2", relayed(2, "tools/call")) != nullptr); // the id is free again

    // Moved on, the handle is the new one's alone.
    auto third = ledger.find_answered(Peer::upstream, "2");
    Ledger::Answered moved = std::move(third);
    CHECK(third.request() == nullptr);
    CHECK(ledger.close(third).empty());
    CHECK_FALSE(ledger.close(moved).empty());
  }
}
