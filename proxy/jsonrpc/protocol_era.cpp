#include "proxy/jsonrpc/protocol_era.hpp"

#include "proxy/jsonrpc/json_members.hpp"

namespace fsguard {

bool client_elicits(const nlohmann::json& capabilities)
{
  const auto& elicitation = member(capabilities, "elicitation");
  if (!elicitation.is_object()) {
    return false;
  }
  return elicitation.empty() || elicitation.contains("form");
}


std::optional<ClientFacts> envelope_facts(const nlohmann::json& meta)
{
  const auto& version = member(meta, k_protocol_version_key);
  if (!version.is_string()) {
    return std::nullopt;
  }
  ClientFacts facts;
  facts.era = Era::stateless;
  facts.protocol_version = version.get<std::string>();
  const auto& name = member(member(meta, k_client_info_key), "name");
  if (name.is_string()) {
    facts.name = name.get<std::string>();
  }
  facts.elicits = client_elicits(member(meta, k_client_capabilities_key));
  return facts;
}

std::optional<ClientFacts> envelope_facts_of_raw(std::string_view raw_meta)
{
  return envelope_facts(nlohmann::json::parse(raw_meta, nullptr, false));
}

std::optional<ClientFacts> client_facts(const nlohmann::json& request)
{
  const auto& params = member(request, "params");
  if (auto facts = envelope_facts(member(params, "_meta"))) {
    return facts;
  }
  if (method_of(request) != "initialize") {
    return std::nullopt;
  }
  ClientFacts facts;
  const auto& version = member(params, "protocolVersion");
  facts.protocol_version = version.is_string() ? version.get<std::string>() : std::string();
  const auto& name = member(member(params, "clientInfo"), "name");
  facts.name = name.is_string() ? name.get<std::string>() : std::string();
  facts.elicits = client_elicits(member(params, "capabilities"));
  return facts;
}

const nlohmann::json& server_info(const nlohmann::json& result)
{
  const auto& own = member(result, "serverInfo");
  return own.is_object() ? own : member(member(result, "_meta"), k_server_info_key);
}

std::optional<std::string> unfinished_result_type(UpstreamMessage& answer)
{
  // Most answers have no resultType at all: only those that name one are parsed.
  if (answer.line().find("\"resultType\"") == std::string_view::npos) {
    return std::nullopt;
  }
  const nlohmann::json& response = answer.tree();
  const auto& type = member(member(response, "result"), "resultType");
  if (!type.is_string() || type.get_ref<const std::string&>() == "complete") {
    return std::nullopt;
  }
  return type.get<std::string>();
}

void stamp_result(nlohmann::ordered_json& result, Era era)
{
  if (era == Era::stateless) {
    result["resultType"] = "complete";
  }
}

bool SessionEra::on_client_request(const std::optional<ClientFacts>& facts, std::string_view method)
{
  const bool first = !m_known;
  m_known = true;
  // A first request with no envelope and no initialize (a bare ping, a
  // client that skips the handshake) fixed the 2025 era only for want of
  // better: the first request that carries the 2026 envelope before any
  // initialize opens the 2026 era, as if it had come first.
  const bool opens_late = m_era == Era::handshake && !m_initialized && facts
                          && facts->era == Era::stateless && method != "initialize";
  if (method == "initialize") {
    m_initialized = true;
  }
  if (facts) {
    if (facts->name) {
      m_client_name = *facts->name;
    }
    m_elicits = facts->elicits;
  }
  // The first request fixes the era; an initialize fixes it again (the
  // fallback of a client whose server/discover the server refused).
  if (first || method == "initialize" || opens_late) {
    m_era = facts ? facts->era : Era::handshake;
  }
  if (m_era == Era::handshake) {
    m_own_envelope = nullptr;
    return false;
  }
  if (facts && facts->era == Era::stateless) {
    m_own_envelope = {
      {k_protocol_version_key, facts->protocol_version},
      {k_client_info_key, {{"name", "fsguard"}, {"version", FSGUARD_VERSION}}},
      {k_client_capabilities_key, nlohmann::json::object()},
    };
  }
  return (first || opens_late) && method != "server/discover";
}

std::string own_request_line(nlohmann::json message, const nlohmann::json& envelope)
{
  if (!envelope.is_null()) {
    message["params"]["_meta"] = envelope;
  }
  return message.dump() + "\n";
}

} // namespace fsguard
