// Reading members of a parsed message without inserting any (unlike
// nlohmann's operator[], which must never see untrusted input).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace fsguard {

// The null value that lookups of absent members refer to.
const nlohmann::json& null_value();

// The member `key` of `object`, or a null value if `object` is not an
// object or has no such member (never inserts, unlike operator[]).
const nlohmann::json& member(const nlohmann::json& object, const char* key);

// The `method` of a parsed request or notification `body`, or "" if absent.
std::string_view method_of(const nlohmann::json& body);

} // namespace fsguard
