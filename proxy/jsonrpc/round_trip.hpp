// The 2026-07-28 revision's requests that do not finish with their first
// answer, as they pass fsguard in a client's tools/call: the Tasks
// extension a request's envelope may declare (SEP-2663: the server may then
// answer resultType "task" and finish later), and the retry of a
// multi-round-trip request (SEP-2322: the client answers the server's
// inputRequests in params.inputResponses and echoes its params.requestState).
// Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fsguard {

// The Tasks extension's name in a request's
// _meta["io.modelcontextprotocol/clientCapabilities"].extensions.
inline constexpr char k_tasks_extension[] = "io.modelcontextprotocol/tasks";

// The client's request `line` (with its newline) without the Tasks
// extension in its envelope's client capabilities, so that the server
// answers it at once; nothing when it does not declare it (the line goes on
// as it is, byte for byte). Only a rewritten line is parsed and written
// again, its members in their order.
std::optional<std::string> without_tasks_extension(std::string_view line);

// The params.requestState of the client's `request` (parsed): the state of
// the multi-round-trip request it retries; null when it has none or it is
// not a string.
const std::string* request_state_of(const nlohmann::json& request);

// The answer in params.inputResponses[`key`] of the client's `request`
// (parsed); null when there is none.
const nlohmann::json* input_response_of(const nlohmann::json& request, std::string_view key);

// The client's request `line` (with its newline) without its
// params.requestState and without params.inputResponses[`key`] (nor
// inputResponses, when that was its only member), as one line: the retry
// as it goes on once fsguard took its own part. Nothing if `line` is not a
// request with params.
std::optional<std::string> without_own_input(std::string_view line, std::string_view key);

// The requestState of the upstream's answer `line` when it is a 2026-era
// input_required result that has one; nothing otherwise.
std::optional<std::string> answered_request_state(std::string_view line);

} // namespace fsguard
