// How much of a tool result each MCP client shows the model. A read whose
// result is longer than that was not seen whole, whatever the server sent.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fsguard {

struct ClientResultLimit {
  std::string_view client;  // clientInfo.name as the client sends it
  std::size_t characters;   // longer results are shown only in part
  std::string_view source;  // where the figure comes from
};

// The built-in table, one entry per client whose limit is documented.
std::span<const ClientResultLimit> known_client_result_limits();

// The result limit of the client named `client`: `overrides` (the config's
// client_result_limits) first, then the built-in table; nothing if none.
std::optional<std::size_t> result_limit_for(
  std::string_view client, const std::map<std::string, std::size_t, std::less<>>& overrides);

} // namespace fsguard
