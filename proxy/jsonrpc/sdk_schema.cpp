#include "proxy/jsonrpc/sdk_schema.hpp"

#include <cmath>
#include <cstdint>

#include "proxy/jsonrpc/json_members.hpp"

namespace fsguard {

RequestMembers request_members(const nlohmann::json& request)
{
  // One walk over the members, not a lookup for each: this runs on every
  // request.
  RequestMembers members{&null_value(), &null_value(), &null_value()};
  if (const auto* object = request.get_ptr<const nlohmann::json::object_t*>()) {
    for (const auto& [key, value] : *object) {
      const std::string_view name = key;
      if (name == "jsonrpc") {
        members.version = &value;
      } else if (name == "method") {
        members.method = &value;
      } else if (name == "params") {
        members.params = &value;
      } else if (name == "id") {
        members.id = &value;
      } else if (name == "result" || name == "error") {
        members.answer_member = true;
      } else {
        members.other_member = true;
      }
    }
  }
  return members;
}

namespace {

// The largest integer JavaScript holds exactly (Number.MAX_SAFE_INTEGER).
constexpr std::int64_t k_max_safe_integer = (std::int64_t{1} << 53) - 1;

// Whether `value` is a number the SDK's z.number().int() takes once
// JSON.parse has read it: an integer of at most 2^53-1 in size, however it
// is written (7, 7.0 and 70e-1 all read as 7).
bool is_sdk_integer(const nlohmann::json& value)
{
  if (value.is_number_unsigned()) {
    return value.get<std::uint64_t>() <= std::uint64_t(k_max_safe_integer);
  }
  if (value.is_number_integer()) {
    const auto number = value.get<std::int64_t>();
    return number >= -k_max_safe_integer && number <= k_max_safe_integer;
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    return std::isfinite(number) && number == std::floor(number)
           && std::fabs(number) <= double(k_max_safe_integer);
  }
  return false;
}

// Why the SDK's schema rejects `meta`, a params._meta or a result's _meta
// (`where` names it): an object whose progressToken, if there, is a string
// or a safe integer, and whose related-task entry, if there, is an object
// with a string taskId. "" if none.
std::string meta_problem(const nlohmann::json& meta, std::string_view where)
{
  if (!meta.is_object()) {
    return "\"" + std::string(where) + "\" must be an object";
  }
  const auto token = meta.find(std::string_view("progressToken"));
  if (token != meta.end() && !token->is_string() && !is_sdk_integer(*token)) {
    return "\"" + std::string(where) + ".progressToken\" must be a string or an integer";
  }
  const auto task = meta.find(std::string_view("io.modelcontextprotocol/related-task"));
  if (task != meta.end()) {
    const auto task_id = task->is_object() ? task->find(std::string_view("taskId")) : task->end();
    if (!task->is_object() || task_id == task->end() || !task_id->is_string()) {
      return "\"" + std::string(where)
             + ".io.modelcontextprotocol/related-task\" must be an object with a string taskId";
    }
  }
  return {};
}

// Why the SDK's schema rejects `params` of a request or a notification: an
// object whose _meta, if there, passes meta_problem(). "" if none.
std::string params_problem(const nlohmann::json& params)
{
  if (!params.is_object()) {
    return "\"params\" must be an object";
  }
  const auto meta = params.find(std::string_view("_meta"));
  return meta == params.end() ? std::string() : meta_problem(*meta, "params._meta");
}

} // namespace

std::string request_the_server_drops(const nlohmann::json& request)
{
  return request_the_server_drops(request_members(request));
}

std::string request_the_server_drops(const RequestMembers& members)
{
  const nlohmann::json* version = members.version;
  const nlohmann::json* method = members.method;
  const nlohmann::json* params = members.params;
  const nlohmann::json* id = members.id;
  const bool answer_member = members.answer_member;
  if (!version->is_string() || version->get_ref<const std::string&>() != "2.0") {
    return "\"jsonrpc\" must be \"2.0\"";
  }
  if (!method->is_string()) {
    return "\"method\" must be a string";
  }
  if (answer_member) {
    return "a request has no \"result\" or \"error\"";
  }
  if (members.other_member) {
    return "a request has no members but \"jsonrpc\", \"id\", \"method\" and \"params\"";
  }
  if (params != nullptr) {
    if (auto problem = params_problem(*params); !problem.empty()) {
      return problem;
    }
  }
  if (id->is_string() || is_sdk_integer(*id)) {
    return {};
  }
  return "the id must be a string or an integer of at most 2^53-1 in size";
}

std::string message_the_server_drops(const nlohmann::json& message)
{
  if (!message.is_object()) {
    return "a message is a JSON object";
  }
  const RequestMembers members = request_members(message);
  if (members.method != &null_value() && members.id != &null_value()) {
    return request_the_server_drops(members);
  }
  const nlohmann::json* result = nullptr;
  const nlohmann::json* error = nullptr;
  bool has_id = false;
  for (const auto& [key, value] : message.get_ref<const nlohmann::json::object_t&>()) {
    const std::string_view name = key;
    has_id = has_id || name == "id";
    result = name == "result" ? &value : result;
    error = name == "error" ? &value : error;
  }
  const nlohmann::json& version = *members.version;
  if (!version.is_string() || version.get_ref<const std::string&>() != "2.0") {
    return "\"jsonrpc\" must be \"2.0\"";
  }
  if (members.other_member) {
    return "a message has no members but \"jsonrpc\", \"id\", \"method\", \"params\", "
           "\"result\" and \"error\"";
  }
  if (message.contains("method")) { // a notification
    if (!members.method->is_string()) {
      return "\"method\" must be a string";
    }
    if (members.answer_member) {
      return "a notification has no \"result\" or \"error\"";
    }
    return members.params == nullptr ? std::string() : params_problem(*members.params);
  }
  if (members.params != nullptr) {
    return "\"params\" belongs to a request or a notification";
  }
  if (has_id && !members.id->is_string() && !is_sdk_integer(*members.id)) {
    return "the id must be a string or an integer of at most 2^53-1 in size";
  }
  if (result != nullptr && error != nullptr) {
    return "an answer has a \"result\" or an \"error\", not both";
  }
  if (result != nullptr) {
    if (!has_id) {
      return "an answer with a \"result\" has an id";
    }
    if (!result->is_object()) {
      return "\"result\" must be an object";
    }
    const auto meta = result->find(std::string_view("_meta"));
    return meta == result->end() ? std::string() : meta_problem(*meta, "result._meta");
  }
  if (error != nullptr) {
    const auto& code = member(*error, "code");
    if (!error->is_object() || !is_sdk_integer(code) || !member(*error, "message").is_string()) {
      return "\"error\" must be an object with an integer \"code\" and a string \"message\"";
    }
    return {};
  }
  return "a message has a \"method\", a \"result\" or an \"error\"";
}

} // namespace fsguard
