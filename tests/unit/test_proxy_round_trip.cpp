// The 2026 era's unfinished requests on the wire (proxy/jsonrpc/round_trip)
// and fsguard's own requestState (proxy/guard/override_state).
#include <doctest/doctest.h>

#include <string>

#include "proxy/guard/override_state.hpp"
#include "proxy/jsonrpc/round_trip.hpp"

using namespace fsguard;

TEST_SUITE("round trips of the 2026 era")
{
  TEST_CASE("the Tasks extension is taken out of a request's envelope, and only it")
  {
    const std::string line =
      R"({"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/a","content":"x"},)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)"
      R"({"extensions":{"io.modelcontextprotocol/tasks":{},"io.example/other":{}}}}},"jsonrpc":"2.0","id":3})"
      "\n";
    const auto rewritten = without_tasks_extension(line);
    REQUIRE(rewritten);
    // The members keep their order; only the extension is gone.
    CHECK(*rewritten
          == R"({"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/a","content":"x"},)"
             R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)"
             R"({"extensions":{"io.example/other":{}}}}},"jsonrpc":"2.0","id":3})"
             "\n");
    // A line that does not declare it in the capabilities is left as it is.
    CHECK_FALSE(without_tasks_extension(
      R"({"method":"tools/call","params":{"name":"write_file","arguments":{"content":"io.modelcontextprotocol/tasks"}},"jsonrpc":"2.0","id":1})"));
    CHECK_FALSE(without_tasks_extension(R"({"method":"tools/call","id":1})"));
  }

  TEST_CASE("a retry loses fsguard's own requestState and answer, and keeps the server's")
  {
    const std::string line =
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w","arguments":{},)"
      R"("inputResponses":{"fsguard/override":{"action":"accept"},"confirm":{"action":"accept"}},"requestState":"fsguard/1.x.y"}})"
      "\n";
    CHECK(without_own_input(line, "fsguard/override")
          == R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w","arguments":{},)"
             R"("inputResponses":{"confirm":{"action":"accept"}}}})"
             "\n");
    const std::string only_own =
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w",)"
      R"("inputResponses":{"fsguard/override":{"action":"accept"}},"requestState":"s"}})";
    CHECK(without_own_input(only_own, "fsguard/override")
          == R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"w"}})"
             "\n");
    const auto request = nlohmann::json::parse(line);
    REQUIRE(request_state_of(request) != nullptr);
    CHECK(*request_state_of(request) == "fsguard/1.x.y");
    REQUIRE(input_response_of(request, "confirm") != nullptr);
    CHECK(input_response_of(request, "absent") == nullptr);
  }

  TEST_CASE("the requestState of an input_required answer")
  {
    CHECK(answered_request_state(
            R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"abc"}})")
          == "abc");
    CHECK_FALSE(answered_request_state(
      R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","requestState":"abc"}})"));
    CHECK_FALSE(
      answered_request_state(R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}})"));
  }

  TEST_CASE("fsguard's own requestState is good once, for its call, until it expires")
  {
    OverrideStates states;
    states.set_key(std::string(32, 'k'));
    const std::string digest = arguments_digest({{"path", "/a"}, {"content", "x"}});
    CHECK(digest.size() == 64);
    CHECK(digest == arguments_digest(nlohmann::json::parse(R"({"content":"x","path":"/a"})")));
    OverrideGrant grant;
    grant.tool = "write_file";
    grant.arguments_digest = digest;
    grant.file = "/a";
    grant.shown = {1, 2};
    grant.code = VetoCode::changed;
    grant.asked_ns = 100;
    grant.expires_ns = 1000;
    const std::string state = states.issue(grant);
    CHECK(state.starts_with(k_own_state_prefix));
    CHECK(states.redeem(state, "edit_file", digest, 200).error() == StateProblem::other_call);
    CHECK(states.redeem(state, "write_file", "0", 200).error() == StateProblem::other_call);
    const auto taken = states.redeem(state, "write_file", digest, 200);
    REQUIRE(taken);
    CHECK(taken->file == "/a");
    CHECK(taken->shown == ContentHash{1, 2});
    CHECK(taken->code == VetoCode::changed);
    CHECK(taken->asked_ns == 100);
    CHECK(states.redeem(state, "write_file", digest, 200).error() == StateProblem::used);
    const std::string later = states.issue(grant);
    CHECK(states.redeem(later, "write_file", digest, 1001).error() == StateProblem::expired);
    // Another key, or a changed byte, is a forgery.
    OverrideStates other;
    other.set_key(std::string(32, 'o'));
    CHECK(other.redeem(states.issue(grant), "write_file", digest, 200).error()
          == StateProblem::forged);
    std::string altered = states.issue(grant);
    altered[k_own_state_prefix.size() + 3] ^= 1;
    CHECK(states.redeem(altered, "write_file", digest, 200).error() == StateProblem::forged);
    CHECK(states.redeem("fsguard/1.zz.00", "write_file", digest, 200).error()
          == StateProblem::forged);
  }
}
