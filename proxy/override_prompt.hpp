// Asking the person, not the model, whether one vetoed write may go ahead:
// the MCP elicitation request fsguard sends the client, and how its answer
// reads. (The client shows the request to the user; the model never sees
// it and cannot answer it.)
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracker/veto.hpp"

namespace fsguard {

// Whether a client's initialize `capabilities` declare form elicitation:
// `elicitation` is an object, empty (spec 2025-06-18) or with `form`.
bool client_elicits(const nlohmann::json& capabilities);

// Whether a veto of `code` is one the person may override: the agent did
// not see the content it would replace (never read, read in part, changed
// since, read too long ago). Setup and safety vetoes are not.
bool may_override(VetoCode code);

// The elicitation/create request with id `id` asking whether the agent's
// `tool` call refused with `veto` may go ahead, as one JSON line.
std::string override_request(const std::string& id, const std::string& tool, const Veto& veto);

// What the person answered.
enum class OverrideAnswer {
  allow,   // accept, with allow: true
  decline, // accept with allow: false, decline, or cancel
  error,   // an error, or a result of another shape
};

// Reads the client's `response` to an override request.
OverrideAnswer read_override_answer(const nlohmann::json& response);

} // namespace fsguard
