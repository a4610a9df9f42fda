#include "proxy/jsonrpc/rpc_error.hpp"

namespace fsguard {

std::string error_response(const nlohmann::json& id, RpcError code, std::string_view message)
{
  nlohmann::json response = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"error", {{"code", static_cast<int>(code)}, {"message", message}}},
  };
  return response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace fsguard
