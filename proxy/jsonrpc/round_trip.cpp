#include "proxy/jsonrpc/round_trip.hpp"

#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"

namespace fsguard {

namespace {

std::string dumped_line(const nlohmann::ordered_json& request)
{
  return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Parses the request `line` into `request`, with its members in their
// order, to be written again changed; returns its params object, or null
// when either is not an object.
nlohmann::ordered_json* params_to_rewrite(std::string_view line, nlohmann::ordered_json& request)
{
  request = nlohmann::ordered_json::parse(line, nullptr, false);
  if (!request.is_object()) {
    return nullptr;
  }
  const auto params = request.find("params");
  return params == request.end() || !params->is_object() ? nullptr : &*params;
}

} // namespace

std::optional<std::string> without_tasks_extension(std::string_view line)
{
  // Nearly every line lacks the name: only those that have it are parsed.
  if (line.find(k_tasks_extension) == std::string_view::npos) {
    return std::nullopt;
  }
  nlohmann::ordered_json request;
  nlohmann::ordered_json* const params = params_to_rewrite(line, request);
  if (params == nullptr) {
    return std::nullopt;
  }
  const auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) {
    return std::nullopt;
  }
  const auto capabilities = meta->find(k_client_capabilities_key);
  if (capabilities == meta->end() || !capabilities->is_object()) {
    return std::nullopt;
  }
  const auto extensions = capabilities->find("extensions");
  if (extensions == capabilities->end() || !extensions->is_object()
      || extensions->erase(k_tasks_extension) == 0) {
    return std::nullopt;
  }
  return dumped_line(request);
}

const std::string* request_state_of(const nlohmann::json& request)
{
  return member(member(request, "params"), "requestState").get_ptr<const std::string*>();
}

const nlohmann::json* input_response_of(const nlohmann::json& request, std::string_view key)
{
  const auto& responses = member(member(request, "params"), "inputResponses");
  if (!responses.is_object()) {
    return nullptr;
  }
  const auto found = responses.find(key);
  return found == responses.end() ? nullptr : &*found;
}

std::optional<std::string> without_own_input(std::string_view line, std::string_view key)
{
  nlohmann::ordered_json request;
  nlohmann::ordered_json* const params = params_to_rewrite(line, request);
  if (params == nullptr) {
    return std::nullopt;
  }
  params->erase("requestState");
  const auto responses = params->find("inputResponses");
  if (responses != params->end() && responses->is_object()) {
    responses->erase(std::string(key));
    if (responses->empty()) {
      params->erase(responses);
    }
  }
  return dumped_line(request);
}

std::optional<std::string> answered_request_state(std::string_view line)
{
  if (line.find("\"requestState\"") == std::string_view::npos) {
    return std::nullopt;
  }
  const auto response = nlohmann::json::parse(line, nullptr, false);
  const auto& result = member(response, "result");
  const auto& state = member(result, "requestState");
  if (member(result, "resultType") != "input_required" || !state.is_string()) {
    return std::nullopt;
  }
  return state.get<std::string>();
}

} // namespace fsguard
