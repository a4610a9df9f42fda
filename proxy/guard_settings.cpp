#include "proxy/guard_settings.hpp"

namespace fsguard {

std::optional<Mode> parse_mode(std::string_view name)
{
  if (name == "enforce") return Mode::enforce;
  if (name == "warn") return Mode::warn;
  if (name == "off") return Mode::off;
  return std::nullopt;
}

std::string_view to_string(Mode mode)
{
  switch (mode) {
  case Mode::enforce: return "enforce";
  case Mode::warn: return "warn";
  case Mode::off: return "off";
  }
  return "enforce";
}

} // namespace fsguard
