// What the MCP SDK's schema rejects, so that the server drops a message
// without an answer: fsguard answers such a message itself instead of
// leaving the client waiting.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fsguard {

// The top-level members of a request that fsguard reads, found in one walk
// over its members. An absent one points to a null value, except `params`,
// which is then nullptr (a present "params": null is refused).
struct RequestMembers {
  const nlohmann::json* version; // "jsonrpc"
  const nlohmann::json* id;
  const nlohmann::json* method;
  const nlohmann::json* params = nullptr;
  bool answer_member = false; // "result" or "error" beside them
  bool other_member = false;  // a member of any other name
};

// The members of the parsed message `request` (none if it is not an object).
RequestMembers request_members(const nlohmann::json& request);

// request_the_server_drops() of the request whose `members` these are.
std::string request_the_server_drops(const RequestMembers& members);

// Why the MCP SDK's schema would reject `request` (a parsed request), so
// that the server drops it without an answer: a missing or wrong "jsonrpc",
// an id that is neither a string nor a safe integer, a method that is not
// a string, params or params._meta that are not objects, a progressToken
// that is neither a string nor a safe integer, "result"/"error" beside
// "method", or any other member (the schema is strict). "" if none. A
// number is an integer as JSON.parse reads it: 7.0 and 9e0 are.
std::string request_the_server_drops(const nlohmann::json& request);

// Why the MCP SDK's schema (JSONRPCMessageSchema) would reject `message`, a
// parsed line of any kind, so that the server drops it unanswered: a
// request as request_the_server_drops() says; a notification with a wrong
// "jsonrpc", "method" or "params"; an answer with a wrong "jsonrpc" or id,
// a "result" that is not an object, an "error" without an integer code and
// a string message, or both; any other member; or no "method", "result"
// or "error" at all. "" if none.
std::string message_the_server_drops(const nlohmann::json& message);

} // namespace fsguard
