#include "proxy/app/config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "tracker/path.hpp"
#include "tracker/profiles.hpp"

namespace fsguard {

namespace {

// `value` as a whole number from `low` to `high`, if it is one.
std::optional<std::size_t> whole_number(const nlohmann::json& value, std::uint64_t low,
                                        std::uint64_t high)
{
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() < low
      || value.get<std::uint64_t>() > high) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(value.get<std::uint64_t>());
}

constexpr std::uint64_t k_most_bytes = std::uint64_t{1} << 40;

// `value`, a "path_map" object: the server's directories (absolute, as the
// server spells them) to fsguard's (existing directories, made canonical).
Result<PathMap, std::string> parse_path_map(const nlohmann::json& value)
{
  const std::string shape = "\"path_map\" must map the server's absolute directories to "
                            "fsguard's, e.g. {\"/projects/app\": \"/home/me/app\"}";
  if (!value.is_object()) {
    return shape;
  }
  std::vector<PathMapping> mappings;
  for (const auto& [server, local] : value.items()) {
    if (!server.starts_with("/") || !local.is_string()
        || !local.get<std::string>().starts_with("/")) {
      return shape;
    }
    std::error_code error;
    const auto canonical = std::filesystem::canonical(local.get<std::string>(), error);
    if (error || !std::filesystem::is_directory(canonical, error)) {
      return "path_map directory " + local.get<std::string>() + " (for the server's " + server
             + ") does not exist on fsguard's side or is not a directory";
    }
    mappings.push_back(PathMapping{lexically_normal(server), canonical.string()});
  }
  return PathMap(std::move(mappings));
}

// Why a config value was refused.
struct BadValue {
  std::string reason;
};

// `value`, the path of a file fsguard keeps (`key`): "~/" expands to
// $HOME, and a relative path is taken from the working directory, so that
// every session of a client finds the same file.
Result<std::string, BadValue> kept_file_path(const nlohmann::json& value, const std::string& key)
{
  if (!value.is_string() || value.get<std::string>().empty()) {
    return BadValue{"\"" + key + "\" must be a file path"};
  }
  std::string path = value.get<std::string>();
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || !std::string_view(home).starts_with("/")) {
      return BadValue{"\"" + key + "\" starts with ~/, but $HOME is not an absolute path"};
    }
    path = std::string(home) + path.substr(1);
  }
  std::error_code error;
  const auto absolute = std::filesystem::absolute(path, error);
  if (error || path.ends_with("/")) {
    return BadValue{"\"" + key + "\" must be a file path"};
  }
  return absolute.lexically_normal().string();
}

// Where in `text` the JSON parser gave up, and why, as "line L, column C:
// <the parser's reason>": the last byte it read (the end of the token it
// could not take), counted from 1 as editors do.
std::string describe_json_error(std::string_view text)
{
  struct FirstError : nlohmann::json_sax<nlohmann::json> {
    std::size_t bytes_read = 0;
    std::string reason;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& error) override
    {
      bytes_read = position;
      reason = error.what();
      return false;
    }
  } first_error;
  nlohmann::json::sax_parse(text, &first_error, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/true);
  const std::size_t at = std::min(first_error.bytes_read == 0 ? 0 : first_error.bytes_read - 1,
                                  text.size());
  const std::string_view before = text.substr(0, at);
  const std::size_t line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
  const std::size_t line_start = before.rfind('\n') == std::string_view::npos
                                   ? 0 : before.rfind('\n') + 1;
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: why".
  std::string reason = first_error.reason;
  if (const auto colon = reason.find(": "); colon != std::string::npos) {
    reason.erase(0, colon + 2);
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(at - line_start + 1)
         + (reason.empty() ? "" : ": " + reason);
}

// The keys parse_config() takes, for the suggestion after an unknown one.
constexpr std::array k_config_keys = {
  "$schema", "audit_log", "call_timeout_s", "client_result_limits", "confine_to",
  "diff_max_bytes", "diff_max_lines", "identity_check", "kept_text_file_bytes", "kept_text_total_bytes",
  "log_level", "max_line_bytes", "mode", "override", "override_timeout_s",
  "partial_read_allows_write", "path_map", "profile", "read_ttl_s", "shared_ledger",
  "stale_edit", "stale_write", "state_file", "tools", "verify",
};

// The edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The text of the file at `path`, or why it cannot be read.
Result<std::string, BadValue> read_config_text(const std::string& path)
{
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    return BadValue{"it is a directory; give the path of a JSON file"};
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                            &std::fclose);
  if (!file) {
    return BadValue{std::strerror(errno)};
  }
  std::string text;
  std::array<char, 65536> buffer;
  while (const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get())) {
    text.append(buffer.data(), got);
  }
  if (std::ferror(file.get())) {
    return BadValue{std::strerror(errno)};
  }
  return text;
}

nlohmann::ordered_json path_map_json(const PathMap& map)
{
  nlohmann::ordered_json described = nlohmann::ordered_json::object();
  for (const auto& mapping : map.mappings()) {
    described[mapping.server] = mapping.local;
  }
  return described;
}

} // namespace

std::optional<std::string_view> nearest_config_key(std::string_view key)
{
  std::string lower(key);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::optional<std::string_view> nearest;
  // A typo changes a few characters, a longer key a few more.
  std::size_t nearest_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const std::string_view known : k_config_keys) {
    const std::size_t distance = edit_distance(lower, known);
    if (distance < nearest_distance) {
      nearest = known;
      nearest_distance = distance;
    }
  }
  return nearest;
}

Result<Config, std::string> parse_config(std::string_view text, std::string_view origin)
{
  const std::string where(origin);
  const auto document = nlohmann::json::parse(text, nullptr, false, /*ignore_comments=*/true);
  if (document.is_discarded()) {
    return where + ": not valid JSON at " + describe_json_error(text);
  }
  if (!document.is_object()) {
    return where + ": the config must be a JSON object";
  }
  Config config;
  std::vector<std::string> confine_to; // checked once "verify" is known
  for (const auto& [key, value] : document.items()) {
    config.sources[key] = "file " + where;
    if (key == "mode") {
      const auto mode = value.is_string() ? parse_mode(value.get<std::string>()) : std::nullopt;
      if (!mode) return where + ": \"mode\" must be \"enforce\", \"warn\" or \"off\"";
      config.mode = *mode;
    } else if (key == "log_level") {
      const auto level = value.is_string() ? parse_log_level(value.get<std::string>()) : std::nullopt;
      if (!level) return where + ": \"log_level\" must be \"error\", \"warn\", \"info\" or \"debug\"";
      config.log_level = *level;
    } else if (key == "partial_read_allows_write") {
      if (!value.is_boolean()) return where + ": \"partial_read_allows_write\" must be true or false";
      config.partial_read_allows_write = value.get<bool>() ? PartialReadAllowsOverwrite::yes
                                                           : PartialReadAllowsOverwrite::no;
    } else if (key == "max_line_bytes") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() < 1024) {
        return where + ": \"max_line_bytes\" must be a whole number of at least 1024";
      }
      config.max_line_bytes = value.get<std::size_t>();
    } else if (key == "profile") {
      const std::string name = value.is_string() ? value.get<std::string>() : "";
      if (name != "auto" && !profile_named(name)) {
        return where + ": \"profile\" must be \"auto\" or one of " + profile_names();
      }
      config.profile = name;
    } else if (key == "tools") {
      auto tools = parse_tool_map(value);
      if (!tools) return where + ": " + tools.error();
      config.tools = std::move(tools).value();
    } else if (key == "audit_log") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return where + ": \"audit_log\" must be a file path";
      }
      config.audit_log = value.get<std::string>();
    } else if (key == "confine_to") {
      if (!value.is_array()) return where + ": \"confine_to\" must be an array of absolute directory paths";
      for (const auto& directory : value) {
        if (!directory.is_string() || !directory.get<std::string>().starts_with("/")) {
          return where + ": \"confine_to\" must be an array of absolute directory paths";
        }
        confine_to.push_back(directory.get<std::string>());
      }
    } else if (key == "path_map") {
      auto map = parse_path_map(value);
      if (!map) return where + ": " + map.error();
      config.path_map = std::move(map).value();
    } else if (key == "call_timeout_s") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() < 1
          || value.get<std::uint64_t>() > 86'400) {
        return where + ": \"call_timeout_s\" must be a whole number of seconds from 1 to 86400";
      }
      config.call_timeout = std::chrono::seconds(value.get<std::uint64_t>());
    } else if (key == "client_result_limits") {
      if (!value.is_object()) {
        return where + ": \"client_result_limits\" must map client names to character counts";
      }
      for (const auto& [client, limit] : value.items()) {
        if (!limit.is_number_unsigned() || limit.get<std::uint64_t>() < 1) {
          return where + ": \"client_result_limits\" must map client names to character counts "
                 "of at least 1 (\"" + client + "\")";
        }
        config.client_result_limits[client] = limit.get<std::size_t>();
      }
    } else if (key == "stale_edit") {
      const auto stale = value.is_string() ? parse_stale_edit(value.get<std::string>()) : std::nullopt;
      if (!stale) return where + ": \"stale_edit\" must be \"rebase\" or \"veto\"";
      config.stale_edit = *stale;
    } else if (key == "stale_write") {
      const auto stale = value.is_string() ? parse_stale_write(value.get<std::string>()) : std::nullopt;
      if (!stale) return where + ": \"stale_write\" must be \"veto\" or \"merge\"";
      config.stale_write = *stale;
    } else if (key == "override") {
      const auto mode = value.is_string() ? parse_override(value.get<std::string>()) : std::nullopt;
      if (!mode) return where + ": \"override\" must be \"never\" or \"ask\"";
      config.override_mode = *mode;
    } else if (key == "identity_check") {
      const auto check =
        value.is_string() ? parse_identity_check(value.get<std::string>()) : std::nullopt;
      if (!check) return where + ": \"identity_check\" must be \"auto\" or \"every_change\"";
      config.identity_check = *check;
    } else if (key == "verify") {
      const auto verify = value.is_string() ? parse_verify(value.get<std::string>()) : std::nullopt;
      if (!verify) return where + ": \"verify\" must be \"local\" or \"upstream\"";
      config.verify = *verify;
    } else if (key == "override_timeout_s") {
      const auto seconds = whole_number(value, 1, 3600);
      if (!seconds) return where + ": \"override_timeout_s\" must be a whole number of seconds from 1 to 3600";
      config.override_timeout = std::chrono::seconds(*seconds);
    } else if (key == "read_ttl_s") {
      const auto seconds = whole_number(value, 0, 31'536'000);
      if (!seconds) return where + ": \"read_ttl_s\" must be a whole number of seconds (0: reads never expire)";
      config.read_ttl = std::chrono::seconds(*seconds);
    } else if (key == "kept_text_file_bytes" || key == "kept_text_total_bytes") {
      const auto bytes = whole_number(value, 0, k_most_bytes);
      if (!bytes) return where + ": \"" + key + "\" must be a whole number of bytes (0 keeps nothing)";
      (key == "kept_text_file_bytes" ? config.kept_texts.file_bytes
                                     : config.kept_texts.total_bytes) = *bytes;
    } else if (key == "diff_max_lines") {
      const auto lines = whole_number(value, 4, 100'000);
      if (!lines) return where + ": \"diff_max_lines\" must be a whole number from 4 to 100000";
      config.diff_bounds.max_lines = *lines;
    } else if (key == "diff_max_bytes") {
      const auto bytes = whole_number(value, 256, 16 * 1024 * 1024);
      if (!bytes) return where + ": \"diff_max_bytes\" must be a whole number from 256 to 16777216";
      config.diff_bounds.max_bytes = *bytes;
    } else if (key == "state_file" || key == "shared_ledger") {
      auto path = kept_file_path(value, key);
      if (!path) return where + ": " + path.error().reason;
      (key == "state_file" ? config.state_file : config.shared_ledger) = std::move(path).value();
    } else if (key == "$schema") {
      config.sources.erase(key);
      continue; // editors use it to find the schema
    } else {
      const auto nearest = nearest_config_key(key);
      return where + ": unknown key \"" + key + "\""
             + (nearest ? " (did you mean \"" + std::string(*nearest) + "\"?)" : "");
    }
  }
  for (const auto& directory : confine_to) {
    if (config.verify == Verify::upstream) {
      // The server's directories, which fsguard cannot see: taken as spelled.
      config.confine_to.push_back(lexically_normal(directory));
      continue;
    }
    std::error_code error;
    const auto canonical = std::filesystem::canonical(directory, error);
    if (error || !std::filesystem::is_directory(canonical, error)) {
      return where + ": confine_to directory " + directory + " does not exist or is not a directory";
    }
    config.confine_to.push_back(canonical.string());
  }
  if (config.verify == Verify::upstream && !config.path_map.empty()) {
    return std::string(origin) + ": \"path_map\" and \"verify\": \"upstream\" exclude each "
           "other: with verify upstream fsguard reads the files through the server and looks "
           "at none on its side; drop one of them";
  }
  return config;
}

Result<Config, std::string> load_config_file(const std::string& path, std::string_view named_by)
{
  const auto text = read_config_text(path);
  if (!text) {
    return "cannot read config file " + path
           + (named_by.empty() ? "" : " (named by " + std::string(named_by) + ")") + ": "
           + text.error().reason;
  }
  return parse_config(*text, path);
}

Result<Config, std::string> load_effective_config(const ConfigInputs& inputs)
{
  const auto& file_path = inputs.file;
  const auto& environment_mode = inputs.environment_mode;
  const auto& flag_mode = inputs.flag_mode;
  const auto& flag_log_level = inputs.flag_log_level;
  Config config;
  if (file_path) {
    auto loaded = load_config_file(*file_path, inputs.file_named_by);
    if (!loaded) {
      return loaded.error();
    }
    config = std::move(loaded).value();
    config.file = *file_path;
  }
  if (environment_mode) {
    const auto mode = parse_mode(*environment_mode);
    if (!mode) {
      return "FSGUARD_MODE must be enforce, warn or off, not \"" + *environment_mode + "\"";
    }
    config.mode = *mode;
    config.sources["mode"] = "environment FSGUARD_MODE";
  }
  if (flag_mode) {
    config.mode = *flag_mode;
    config.sources["mode"] = "flag --mode";
  }
  if (flag_log_level) {
    config.log_level = *flag_log_level;
    config.sources["log_level"] = "flag --log-level";
  }
  return config;
}

namespace {

std::string_view role_name(ToolRole role)
{
  switch (role) {
  case ToolRole::read: return "read";
  case ToolRole::write: return "write";
  case ToolRole::edit: return "edit";
  case ToolRole::move: return "move";
  case ToolRole::other: return "other";
  }
  return "other";
}

// `spec` in the config file's "tools" form, plus what only a built-in
// profile can say.
nlohmann::ordered_json tool_json(const ToolSpec& spec)
{
  nlohmann::ordered_json entry = {{"role", role_name(spec.role)}};
  entry[spec.role == ToolRole::move ? "source" : (spec.path_is_list ? "paths" : "path")] =
    spec.path_argument;
  if (!spec.destination_argument.empty()) entry["destination"] = spec.destination_argument;
  if (!spec.dry_run_argument.empty()) entry["dry_run"] = spec.dry_run_argument;
  if (!spec.partial_if_set.empty()) entry["partial_if_set"] = spec.partial_if_set;
  if (!spec.fallback_path_argument.empty()) entry["path_if_unset"] = spec.fallback_path_argument;
  if (!spec.content_is_file) entry["content_is_file"] = false;
  if (!spec.whole_if_status.empty()) entry["whole_if_status"] = spec.whole_if_status;
  if (spec.edit_semantics != EditSemantics::unknown) {
    // Reported, not configurable: a custom edit tool is never rebased.
    entry["stale_edit_rebase"] = spec.edit_semantics == EditSemantics::first_exact_match
                                   ? "first_exact_match"
                                   : "first_exact_match_without_dollar";
  }
  if (!spec.role_argument.empty()) {
    nlohmann::ordered_json roles = nlohmann::ordered_json::object();
    for (const auto& [value, role] : spec.role_by_value) {
      roles[value] = role_name(role);
    }
    entry["role_by"] = {{spec.role_argument, roles}};
  }
  return entry;
}

} // namespace

GuardSettings guard_settings(const Config& config)
{
  GuardSettings settings;
  settings.mode = config.mode;
  settings.log_level = config.log_level;
  settings.partial_read_allows_write = config.partial_read_allows_write;
  settings.profile = config.profile;
  settings.tools = config.tools;
  settings.confine_to = config.confine_to;
  settings.path_map = config.path_map;
  settings.override_mode = config.override_mode;
  settings.verify = config.verify;
  settings.identity_check = config.identity_check;
  settings.override_timeout = config.override_timeout;
  settings.read_ttl = config.read_ttl;
  settings.call_timeout = config.call_timeout;
  settings.client_result_limits = config.client_result_limits;
  settings.stale_edit = config.stale_edit;
  settings.stale_write = config.stale_write;
  settings.kept_texts = config.kept_texts;
  settings.diff_bounds = config.diff_bounds;
  return settings;
}

std::string describe_profile(const Profile& profile)
{
  nlohmann::ordered_json tools = nlohmann::ordered_json::object();
  for (const auto& [name, spec] : profile.tools) {
    tools[name] = tool_json(spec);
  }
  nlohmann::ordered_json unguarded = nlohmann::ordered_json::object();
  for (const auto& [name, reason] : profile.unguarded) {
    unguarded[name] = reason;
  }
  const nlohmann::ordered_json described = {
    {"profile", profile.name},
    {"tools", tools},
    {"unguarded", unguarded},
  };
  return described.dump(2) + "\n";
}

std::string describe_config(const Config& config)
{
  nlohmann::ordered_json tools = nullptr;
  for (const auto& [name, spec] : config.tools.value_or(ToolMap{})) {
    tools[name] = tool_json(spec);
  }
  const nlohmann::ordered_json values = {
    {"mode", to_string(config.mode)},
    {"profile", config.profile},
    {"log_level", to_string(config.log_level)},
    {"partial_read_allows_write", config.partial_read_allows_write == PartialReadAllowsOverwrite::yes},
    {"max_line_bytes", config.max_line_bytes},
    {"confine_to", config.confine_to},
    {"path_map", path_map_json(config.path_map)},
    {"audit_log", config.audit_log.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(config.audit_log)},
    {"tools", tools},
    {"call_timeout_s", std::chrono::duration_cast<std::chrono::seconds>(config.call_timeout).count()},
    {"client_result_limits", config.client_result_limits},
    {"stale_edit", to_string(config.stale_edit)},
    {"stale_write", to_string(config.stale_write)},
    {"override", to_string(config.override_mode)},
    {"verify", to_string(config.verify)},
    {"identity_check", to_string(config.identity_check)},
    {"override_timeout_s", config.override_timeout.count()},
    {"read_ttl_s", config.read_ttl.count()},
    {"kept_text_file_bytes", config.kept_texts.file_bytes},
    {"kept_text_total_bytes", config.kept_texts.total_bytes},
    {"diff_max_lines", config.diff_bounds.max_lines},
    {"diff_max_bytes", config.diff_bounds.max_bytes},
    {"state_file", config.state_file.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(config.state_file)},
    {"shared_ledger", config.shared_ledger.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(config.shared_ledger)},
  };
  nlohmann::ordered_json described = nlohmann::ordered_json::object();
  for (const auto& [key, value] : values.items()) {
    const auto source = config.sources.find(key);
    described[key] = {{"value", value},
                      {"source", source == config.sources.end() ? "default" : source->second}};
  }
  return described.dump(2) + "\n";
}

} // namespace fsguard
