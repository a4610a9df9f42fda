// What the guard's own source files share (guard.cpp and guard_*.cpp):
// not part of Guard's interface.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/protocol_era.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

inline bool changes_files(ToolRole role)
{
  return role == ToolRole::write || role == ToolRole::edit || role == ToolRole::move;
}

// The first text block of a tool result, or "".
std::string_view result_text(const nlohmann::json& response);

// A hash as the audit log and a veto's _meta write it (null: unknown).
nlohmann::ordered_json hash_json(const std::optional<ContentHash>& hash);

// The answer to the call `id` of `tool` that refuses it with `veto`, in
// the session's `era`; `names` are the server's tool names.
std::string veto_response(const nlohmann::json& id, const std::string& tool, const Veto& veto,
                          const ToolNames& names, Era era);

} // namespace fsguard
