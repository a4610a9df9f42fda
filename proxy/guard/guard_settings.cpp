#include "proxy/guard/guard_settings.hpp"

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

std::optional<StaleEdit> parse_stale_edit(std::string_view name)
{
  if (name == "rebase") return StaleEdit::rebase;
  if (name == "veto") return StaleEdit::veto;
  return std::nullopt;
}

std::string_view to_string(StaleEdit stale_edit)
{
  return stale_edit == StaleEdit::rebase ? "rebase" : "veto";
}

std::optional<StaleWrite> parse_stale_write(std::string_view name)
{
  if (name == "veto") return StaleWrite::veto;
  if (name == "merge") return StaleWrite::merge;
  return std::nullopt;
}

std::string_view to_string(StaleWrite stale_write)
{
  return stale_write == StaleWrite::merge ? "merge" : "veto";
}

std::optional<Override> parse_override(std::string_view name)
{
  if (name == "never") return Override::never;
  if (name == "ask") return Override::ask;
  return std::nullopt;
}

std::string_view to_string(Override override_mode)
{
  return override_mode == Override::ask ? "ask" : "never";
}

std::optional<Verify> parse_verify(std::string_view name)
{
  if (name == "local") return Verify::local;
  if (name == "upstream") return Verify::upstream;
  return std::nullopt;
}

std::string_view to_string(Verify verify)
{
  return verify == Verify::upstream ? "upstream" : "local";
}

std::optional<IdentityCheck> parse_identity_check(std::string_view name)
{
  if (name == "auto") return IdentityCheck::automatic;
  if (name == "every_change") return IdentityCheck::every_change;
  return std::nullopt;
}

std::string_view to_string(IdentityCheck check)
{
  return check == IdentityCheck::every_change ? "every_change" : "auto";
}

std::string why_check_each_change(IdentityCheck check, const PathMap& map,
                                  const std::string& elsewhere)
{
  if (check == IdentityCheck::every_change) {
    return "identity_check is \"every_change\"";
  }
  if (!map.empty()) {
    return "path_map maps the server's paths to fsguard's";
  }
  return elsewhere;
}

} // namespace fsguard
