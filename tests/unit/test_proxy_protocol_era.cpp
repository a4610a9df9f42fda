#include <doctest/doctest.h>

#include <string>

#include "proxy/jsonrpc/protocol_era.hpp"

using namespace fsguard;

namespace {

// A 2026-era request's params._meta, as the v2 SDK's client sends it.
nlohmann::json envelope(const std::string& client = "claude-code", bool elicits = false)
{
  nlohmann::json capabilities = nlohmann::json::object();
  if (elicits) {
    capabilities["elicitation"] = {{"form", nlohmann::json::object()}};
  }
  return {{k_protocol_version_key, "2026-07-28"},
          {k_client_info_key, {{"name", client}, {"version", "2.1.80"}}},
          {k_client_capabilities_key, capabilities}};
}

nlohmann::json tools_call(const nlohmann::json& meta)
{
  nlohmann::json request = {
    {"jsonrpc", "2.0"},
    {"id", 1},
    {"method", "tools/call"},
    {"params", {{"name", "write_file"}, {"arguments", nlohmann::json::object()}}}};
  if (!meta.is_null()) {
    request["params"]["_meta"] = meta;
  }
  return request;
}

nlohmann::json initialize(const std::string& client, bool elicits)
{
  nlohmann::json capabilities = nlohmann::json::object();
  if (elicits) {
    capabilities["elicitation"] = nlohmann::json::object();
  }
  return {{"jsonrpc", "2.0"},
          {"id", 0},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", "2025-11-25"},
            {"clientInfo", {{"name", client}, {"version", "1"}}},
            {"capabilities", capabilities}}}};
}

} // namespace

TEST_SUITE("protocol_era")
{
  TEST_CASE("a request with the envelope tells the 2026 era, the client's name and its elicitation")
  {
    const auto facts = client_facts(tools_call(envelope("claude-code", true)));
    REQUIRE(facts);
    CHECK(facts->era == Era::stateless);
    CHECK(facts->protocol_version == "2026-07-28");
    CHECK(facts->name == "claude-code");
    CHECK(facts->elicits);
    CHECK_FALSE(client_facts(tools_call(envelope("claude-code", false)))->elicits);
  }

  TEST_CASE("an envelope without clientInfo names no client, and one without a version is none")
  {
    nlohmann::json meta = envelope();
    meta.erase(k_client_info_key);
    const auto facts = client_facts(tools_call(meta));
    REQUIRE(facts);
    CHECK_FALSE(facts->name);
    meta.erase(k_protocol_version_key);
    CHECK_FALSE(client_facts(tools_call(meta)));
    CHECK_FALSE(client_facts(tools_call({{"progressToken", 3}})));
    CHECK_FALSE(client_facts(tools_call(nullptr)));
  }

  TEST_CASE("an initialize tells the 2025 era, the client's name and its elicitation")
  {
    const auto facts = client_facts(initialize("claude-code", true));
    REQUIRE(facts);
    CHECK(facts->era == Era::handshake);
    CHECK(facts->protocol_version == "2025-11-25");
    CHECK(facts->name == "claude-code");
    CHECK(facts->elicits);
  }

  TEST_CASE("the serverInfo of an initialize result, or of a 2026 result's _meta")
  {
    const nlohmann::json info = {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}};
    CHECK(server_info({{"serverInfo", info}, {"protocolVersion", "2025-11-25"}}) == info);
    CHECK(server_info({{"supportedVersions", {"2026-07-28"}},
                       {"resultType", "complete"},
                       {"_meta", {{k_server_info_key, info}}}})
          == info);
    CHECK(server_info({{"capabilities", nlohmann::json::object()}}).is_null());
    CHECK(server_info(nullptr).is_null());
  }

  TEST_CASE("an answer whose resultType is not complete is unfinished")
  {
    const auto unfinished = [](std::string_view line) {
      UpstreamMessage answer(line);
      return unfinished_result_type(answer);
    };
    CHECK(
      unfinished(
        R"({"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"t","status":"working"}})")
      == "task");
    CHECK(
      unfinished(
        R"({"result":{"resultType":"input_required","requestState":"s"},"jsonrpc":"2.0","id":3})")
      == "input_required");
    CHECK_FALSE(unfinished(
      R"({"result":{"content":[],"resultType":"complete"},"jsonrpc":"2.0","id":3})"));
    CHECK_FALSE(unfinished(R"({"result":{"content":[]},"jsonrpc":"2.0","id":3})"));
    // The word in a file's text is no resultType.
    CHECK_FALSE(unfinished(
      R"({"result":{"content":[{"type":"text","text":"\"resultType\": \"task\""}]},"id":3})"));
    CHECK_FALSE(
      unfinished(R"({"error":{"code":-32602,"message":"resultType"},"id":3})"));
  }

  TEST_CASE("fsguard's own results carry resultType complete in the 2026 era only")
  {
    nlohmann::ordered_json result = {{"content", nlohmann::json::array()}, {"isError", true}};
    stamp_result(result, Era::handshake);
    CHECK_FALSE(result.contains("resultType"));
    stamp_result(result, Era::stateless);
    CHECK(result["resultType"] == "complete");
  }

  TEST_CASE("the client's first request fixes the session's era")
  {
    SessionEra by_envelope;
    CHECK_FALSE(by_envelope.known());
    CHECK(by_envelope.on_client_request(client_facts(tools_call(envelope())), "tools/call"));
    CHECK(by_envelope.known());
    CHECK(by_envelope.era() == Era::stateless);
    // Later requests do not open it again, and one without the envelope
    // does not change its era.
    CHECK_FALSE(by_envelope.on_client_request(client_facts(tools_call(envelope())), "tools/call"));
    CHECK_FALSE(by_envelope.on_client_request(std::nullopt, "tools/call"));
    CHECK(by_envelope.era() == Era::stateless);

    SessionEra by_initialize;
    CHECK_FALSE(
      by_initialize.on_client_request(client_facts(initialize("a", false)), "initialize"));
    CHECK(by_initialize.era() == Era::handshake);
    CHECK(by_initialize.own_envelope().is_null());
    // An envelope afterwards does not make it a 2026 session.
    CHECK_FALSE(
      by_initialize.on_client_request(client_facts(tools_call(envelope())), "tools/call"));
    CHECK(by_initialize.era() == Era::handshake);
    CHECK(by_initialize.own_envelope().is_null());

    SessionEra bare;
    CHECK_FALSE(bare.on_client_request(std::nullopt, "tools/call"));
    CHECK(bare.known());
    CHECK(bare.era() == Era::handshake);
  }

  TEST_CASE("a first request with neither envelope nor initialize leaves the 2026 era to the "
            "first request that carries its envelope")
  {
    SessionEra late;
    CHECK_FALSE(late.on_client_request(std::nullopt, "ping"));
    CHECK(late.era() == Era::handshake);
    CHECK(late.on_client_request(client_facts(tools_call(envelope())), "tools/call"));
    CHECK(late.era() == Era::stateless);
    CHECK_FALSE(late.own_envelope().is_null());
    CHECK_FALSE(late.on_client_request(client_facts(tools_call(envelope())), "tools/call"));

    SessionEra handshaken; // after an initialize, an envelope changes nothing
    CHECK_FALSE(handshaken.on_client_request(std::nullopt, "ping"));
    CHECK_FALSE(
      handshaken.on_client_request(client_facts(initialize("a", false)), "initialize"));
    CHECK_FALSE(handshaken.on_client_request(client_facts(tools_call(envelope())), "tools/call"));
    CHECK(handshaken.era() == Era::handshake);
  }

  TEST_CASE("a client's own server/discover opens the 2026 era without fsguard's, and its "
            "initialize falls back to 2025")
  {
    SessionEra session;
    CHECK_FALSE(session.on_client_request(client_facts(tools_call(envelope())), "server/discover"));
    CHECK(session.era() == Era::stateless);
    CHECK_FALSE(session.on_client_request(client_facts(initialize("a", false)), "initialize"));
    CHECK(session.era() == Era::handshake);
    CHECK(session.own_envelope().is_null());
  }

  TEST_CASE("fsguard's own requests carry the client's protocol version and no capability")
  {
    SessionEra session;
    session.on_client_request(client_facts(tools_call(envelope("claude-code", true))),
                              "tools/call");
    const auto& own = session.own_envelope();
    CHECK(own[k_protocol_version_key] == "2026-07-28");
    CHECK(own[k_client_capabilities_key] == nlohmann::json::object());
    CHECK(own[k_client_info_key]["name"] == "fsguard");
    const nlohmann::json message = {{"jsonrpc", "2.0"},
                                    {"id", "fsguard/x"},
                                    {"method", "tools/call"},
                                    {"params", {{"name", "list_allowed_directories"}}}};
    const auto line = own_request_line(message, own);
    CHECK(line.ends_with("\n"));
    CHECK(nlohmann::json::parse(line)["params"]["_meta"] == own);
    CHECK_FALSE(
      nlohmann::json::parse(own_request_line(message, nullptr))["params"].contains("_meta"));
  }

  TEST_CASE("the client's name and elicitation follow its latest request that gives them")
  {
    SessionEra session;
    session.on_client_request(client_facts(tools_call(envelope("claude-code", true))),
                              "tools/call");
    CHECK(session.client_name() == "claude-code");
    CHECK(session.declares_elicitation());
    nlohmann::json anonymous = envelope("x", false);
    anonymous.erase(k_client_info_key);
    session.on_client_request(client_facts(tools_call(anonymous)), "tools/call");
    CHECK(session.client_name() == "claude-code");
    CHECK_FALSE(session.declares_elicitation());
  }
}
