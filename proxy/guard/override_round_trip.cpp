#include "proxy/guard/override_round_trip.hpp"

#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/round_trip.hpp"
#include "proxy/guard/quoted_text.hpp"

namespace fsguard {

namespace {

std::string dumped(const nlohmann::ordered_json& response)
{
  return response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Why the retry's state is not taken, for the agent.
std::string problem_text(StateProblem problem, std::chrono::seconds timeout)
{
  switch (problem) {
  case StateProblem::forged:
    return "its requestState starts as fsguard's own do, but fsguard did not make it in this "
           "session, or it was altered";
  case StateProblem::other_call:
    return "its requestState is fsguard's answer to a question about another call (another "
           "tool, or other arguments): it is good only for the retry of that call, unchanged";
  case StateProblem::expired:
    return "its requestState answers a question fsguard asked the user more than "
           + std::to_string(timeout.count())
           + " s ago (override_timeout_s), and fsguard takes no answer after that";
  case StateProblem::used:
    return "its requestState answers a question of fsguard's that was answered already (each "
           "is good for one retry)";
  }
  return {};
}

} // namespace

std::string override_input_required(const nlohmann::json& id, const std::string& tool,
                                    const Veto& veto, const FilePreview* preview,
                                    const std::string& state)
{
  nlohmann::ordered_json params = {{"mode", "form"}};
  params.update(override_question(tool, veto, preview));
  const nlohmann::ordered_json response = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"result",
     {{"resultType", "input_required"},
      {"inputRequests",
       {{k_override_input_key, {{"method", "elicitation/create"}, {"params", params}}}}},
      {"requestState", state}}},
  };
  return dumped(response);
}

OverrideReply read_override_input(const nlohmann::json& request)
{
  const nlohmann::json* answer = input_response_of(request, k_override_input_key);
  if (answer == nullptr) {
    return {};
  }
  return read_override_answer(nlohmann::json{{"result", *answer}});
}

std::string refused_state_answer(const nlohmann::json& id, const std::string& tool,
                                 StateProblem problem, std::chrono::seconds timeout)
{
  const std::string text =
    "fsguard refused this " + tool + ": " + problem_text(problem, timeout)
    + ". Nothing was written and the call was not sent. Call " + tool
    + " again as a new call, without inputResponses and requestState: fsguard decides it "
      "again, and asks the user again where it may.";
  const nlohmann::ordered_json response = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"result",
     {{"content", {{{"type", "text"}, {"text", text}}}},
      {"isError", true},
      {"_meta", {{"fsguard/refused", {{"tool", tool}, {"reason", "request_state"}}}}},
      {"resultType", "complete"}}},
  };
  return dumped(response);
}

std::string undeclared_elicitation_outcome()
{
  return "fsguard is set to let the user allow such a write, but this request's client "
         "capabilities do not declare MCP elicitation (form), so fsguard cannot ask the user.";
}

} // namespace fsguard
