// Test helper: whether two JSON values are equal with equal types all the
// way down (nlohmann's == calls 1 and 1u equal; the guard must see the types
// its full parser gives).
#pragma once

#include <nlohmann/json.hpp>

namespace fsguard {

inline bool same_types(const nlohmann::json& a, const nlohmann::json& b)
{
  if (a.type() != b.type() || a.size() != b.size()) {
    return false;
  }
  if (a.is_object()) {
    for (auto item = a.begin(); item != a.end(); ++item) {
      const auto other = b.find(item.key());
      if (other == b.end() || !same_types(item.value(), *other)) {
        return false;
      }
    }
  } else if (a.is_array()) {
    for (std::size_t index = 0; index < a.size(); ++index) {
      if (!same_types(a[index], b[index])) {
        return false;
      }
    }
  }
  return true;
}

} // namespace fsguard
