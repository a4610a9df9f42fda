#include "proxy/guard/client_limits.hpp"

#include <array>

namespace fsguard {

namespace {

constexpr std::array k_known = {
  ClientResultLimit{
    "claude-code", 50'000,
    "Claude Code shows the model a preview of an MCP tool result over 50,000 characters "
    "(anthropics/claude-code#45770)"},
};

} // namespace

std::span<const ClientResultLimit> known_client_result_limits()
{
  return k_known;
}

std::optional<std::size_t> result_limit_for(
  std::string_view client, const std::map<std::string, std::size_t, std::less<>>& overrides)
{
  if (const auto configured = overrides.find(client); configured != overrides.end()) {
    return configured->second;
  }
  for (const auto& known : k_known) {
    if (known.client == client) {
      return known.characters;
    }
  }
  return std::nullopt;
}

} // namespace fsguard
