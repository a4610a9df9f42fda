// The JSON-RPC errors fsguard answers with, and their lines.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fsguard {

// The JSON-RPC error codes fsguard answers with.
enum class RpcError {
  parse_error = -32700,
  invalid_request = -32600,
  internal_error = -32603, // fsguard cannot relay the upstream's answer
  server_error = -32000, // the upstream is gone
};

// A JSON-RPC error response line (with trailing newline) for `id` (a JSON
// value; null if unknown).
std::string error_response(const nlohmann::json& id, RpcError code, std::string_view message);

} // namespace fsguard
