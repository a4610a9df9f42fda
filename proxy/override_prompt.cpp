#include "proxy/override_prompt.hpp"

#include "proxy/message.hpp"

namespace fsguard {

namespace {

// What happened, for the person: the agent's words are not theirs.
std::string what_happened(const std::string& tool, const Veto& veto)
{
  const std::string start = "The agent's " + tool + " of " + veto.path + " was stopped by fsguard: ";
  switch (veto.code) {
  case VetoCode::not_read:
    return start + "the file exists and the agent has not read it in this session, so the "
                   "write would replace content the agent has not seen.";
  case VetoCode::partial_read:
    return start + "the agent has read only part of the file, so the write would replace "
                   "lines it has not seen.";
  case VetoCode::changed:
    return start + "the file was modified " + (veto.cause.empty() ? "" : veto.cause + " ")
           + "after the agent last read it, so the write would replace that change.";
  case VetoCode::expired:
    return start + "the agent read the file longer ago than this session allows, so what it "
                   "saw may no longer be current.";
  default:
    return start + "fsguard cannot vouch that the write is safe.";
  }
}

} // namespace

bool client_elicits(const nlohmann::json& capabilities)
{
  const auto& elicitation = member(capabilities, "elicitation");
  if (!elicitation.is_object()) {
    return false;
  }
  return elicitation.empty() || elicitation.contains("form");
}

bool may_override(VetoCode code)
{
  return code == VetoCode::not_read || code == VetoCode::partial_read
         || code == VetoCode::changed || code == VetoCode::expired;
}

std::string override_request(const std::string& id, const std::string& tool, const Veto& veto)
{
  std::string message = what_happened(tool, veto);
  if (!veto.diff.empty()) {
    message += "\n\nWhat changed, from the version the agent saw to the file now"
               + std::string(veto.diff_complete ? "" : " (cut)") + ":\n" + fenced_diff(veto.diff);
  }
  message += "\n\nAllow this one write? Only this call goes ahead; later ones are checked as "
             "before.";
  const nlohmann::ordered_json request = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"method", "elicitation/create"},
    {"params",
     {{"message", message},
      {"requestedSchema",
       {{"type", "object"},
        {"properties",
         {{"allow",
           {{"type", "boolean"},
            {"title", "Allow this write"},
            {"description", "Let the agent's " + tool + " of " + veto.path + " go ahead once"},
            {"default", false}}}}},
        {"required", {"allow"}}}}}},
  };
  return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

OverrideAnswer read_override_answer(const nlohmann::json& response)
{
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    return OverrideAnswer::error;
  }
  const auto& action = member(result, "action");
  if (action == "accept") {
    return member(member(result, "content"), "allow") == true ? OverrideAnswer::allow
                                                               : OverrideAnswer::decline;
  }
  if (action == "decline" || action == "cancel") {
    return OverrideAnswer::decline;
  }
  return OverrideAnswer::error;
}

} // namespace fsguard
