#include "proxy/jsonrpc/json_members.hpp"

namespace fsguard {

const nlohmann::json& null_value()
{
  static const nlohmann::json k_null;
  return k_null;
}

const nlohmann::json& member(const nlohmann::json& object, const char* key)
{
  if (!object.is_object()) {
    return null_value();
  }
  const auto found = object.find(std::string_view(key));
  return found == object.end() ? null_value() : *found;
}

std::string_view method_of(const nlohmann::json& body)
{
  const auto found = body.find(std::string_view("method"));
  if (found == body.end() || !found->is_string()) {
    return {};
  }
  return found->get_ref<const std::string&>();
}

} // namespace fsguard
