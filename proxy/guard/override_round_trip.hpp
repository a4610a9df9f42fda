// override: ask in the 2026 era, where a server (and so fsguard, standing in
// for it) cannot send the client a request: the vetoed call is answered
// with resultType "input_required" carrying fsguard's question (the same as
// the 2025 era's elicitation/create) and its own requestState
// (override_state.hpp); the client asks the person and retries the call
// with their answer in inputResponses. What that answer and the retry's
// refusals look like on the wire. Pure: no I/O.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "proxy/guard/override_prompt.hpp"
#include "proxy/guard/override_state.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

// The key of fsguard's question in inputRequests, and of the person's
// answer in the retry's inputResponses.
inline constexpr char k_override_input_key[] = "fsguard/override";

// A client's retry that answers fsguard's question (or, `carried`, the
// server's own question after a change the person allowed): what the
// person was asked about, and what they answered.
struct OverrideRetry {
  OverrideGrant grant;
  OverrideReply reply; // the person's answer (carried: an allow)
  bool carried = false; // the retry of the server's own input_required
  // Set when the answer did not let the change go ahead: what the model is
  // told with the veto that follows.
  std::string outcome;
};

// fsguard's answer, with id `id`, to the agent's `tool` call refused with
// `veto`: resultType "input_required", its question to the person under
// k_override_input_key (elicitation/create, form mode; `preview`, may be
// null, is what it shows of the file), and `state`. One JSON line.
std::string override_input_required(const nlohmann::json& id, const std::string& tool,
                                    const Veto& veto, const FilePreview* preview,
                                    const std::string& state);

// The person's answer in the retry `request` (parsed) to fsguard's question:
// read as the 2025 era reads an elicitation result.
OverrideReply read_override_input(const nlohmann::json& request);

// fsguard's answer, with id `id`, to a retry of the agent's `tool` call
// whose requestState claims to be fsguard's and is not good for it
// (`problem`; `timeout` is how long a question stands): a tool error of
// the 2026 era saying what happened and what to do. One JSON line.
std::string refused_state_answer(const nlohmann::json& id, const std::string& tool,
                                 StateProblem problem, std::chrono::seconds timeout);

// What the 2026-era veto says when override is "ask" but the call's own
// request did not declare form elicitation in its client capabilities.
std::string undeclared_elicitation_outcome();

} // namespace fsguard
