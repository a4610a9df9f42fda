#include "tracker/tool_map.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace fsguard {

namespace {

// Whether `text`, in ASCII lower case, ends with `suffix` (no copy of `text`).
bool lower_case_ends_with(std::string_view text, std::string_view suffix)
{
  if (suffix.size() > text.size()) {
    return false;
  }
  return std::equal(suffix.begin(), suffix.end(), text.end() - suffix.size(),
                    [](char wanted, char c) {
                      return wanted == (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
                    });
}

std::optional<ToolRole> role_named(std::string_view name)
{
  if (name == "read") return ToolRole::read;
  if (name == "write") return ToolRole::write;
  if (name == "edit") return ToolRole::edit;
  if (name == "move") return ToolRole::move;
  if (name == "other") return ToolRole::other;
  return std::nullopt;
}

Result<ToolSpec, std::string> parse_tool_spec(const std::string& name,
                                              const nlohmann::json& entry)
{
  const std::string where = "tools." + name;
  if (!entry.is_object()) {
    return where + " must be an object";
  }
  ToolSpec spec;
  const auto role = entry.find("role");
  if (role == entry.end() || !role->is_string() || !role_named(role->get<std::string>())) {
    return where + ".role must be one of \"read\", \"write\", \"edit\", \"move\", \"other\"";
  }
  spec.role = *role_named(role->get<std::string>());
  for (const auto& [key, value] : entry.items()) {
    if (key == "role") {
      continue;
    }
    if (key == "path" || key == "paths" || key == "source") {
      if (!value.is_string()) return where + "." + key + " must be a string";
      spec.path_argument = value.get<std::string>();
      spec.path_is_list = key == "paths";
    } else if (key == "destination") {
      if (!value.is_string()) return where + ".destination must be a string";
      spec.destination_argument = value.get<std::string>();
    } else if (key == "dry_run") {
      if (!value.is_string()) return where + ".dry_run must be a string";
      spec.dry_run_argument = value.get<std::string>();
    } else if (key == "partial_if_set") {
      if (!value.is_array()) return where + ".partial_if_set must be an array of strings";
      for (const auto& argument : value) {
        if (!argument.is_string()) return where + ".partial_if_set must be an array of strings";
        spec.partial_if_set.push_back(argument.get<std::string>());
      }
    } else {
      return where + ": unknown key \"" + key + "\"";
    }
  }
  if (spec.role == ToolRole::move && spec.destination_argument.empty()) {
    return where + ": a move needs \"source\" and \"destination\"";
  }
  return spec;
}

PathArgument path_argument(const nlohmann::json& arguments, const std::string& name)
{
  const auto found = arguments.find(name);
  if (found == arguments.end() || !found->is_string()) {
    return PathArgument{};
  }
  return PathArgument{found->get<std::string>()};
}

// True if argument `name` is missing, null or "": a JavaScript server's
// `outputPath ? ... : path` then falls back.
bool absent_or_empty(const nlohmann::json& arguments, const std::string& name)
{
  const auto found = arguments.find(name);
  return found == arguments.end() || found->is_null()
         || (found->is_string() && found->get_ref<const std::string&>().empty());
}

// A head/tail argument's `value` makes a read partial unless the server
// ignores it (server-filesystem ignores 0 and absent values).
bool sets_partial(const nlohmann::json& value)
{
  return !value.is_null() && !(value.is_number() && value.get<double>() == 0.0);
}

} // namespace

Result<ToolMap, std::string> parse_tool_map(const nlohmann::json& tools)
{
  if (!tools.is_object()) {
    return std::string("tools must be an object mapping tool names to specs");
  }
  ToolMap map;
  for (const auto& [name, entry] : tools.items()) {
    auto spec = parse_tool_spec(name, entry);
    if (!spec) {
      return spec.error();
    }
    map[name] = *spec;
  }
  return map;
}

ToolNames tool_names(const ToolMap& tools)
{
  ToolNames names;
  // The preferred name if `tools` has a tool of that kind by that name, else
  // the first of that kind, else the default.
  const auto pick = [&](const std::string& preferred, auto&& fits) -> const ToolMap::value_type* {
    const auto found = tools.find(preferred);
    if (found != tools.end() && fits(found->second)) {
      return &*found;
    }
    for (const auto& entry : tools) {
      if (fits(entry.second)) {
        return &entry;
      }
    }
    return nullptr;
  };
  const auto* read = pick(names.read, [](const ToolSpec& spec) {
    return spec.role == ToolRole::read && !spec.path_is_list && spec.view != ReadView::bytes;
  });
  if (read != nullptr) {
    names.read = read->first;
    const ToolSpec& spec = read->second;
    names.read_whole.clear();
    if (!spec.whole_if_status.empty()) {
      names.read_whole = "from the start, with a length of at least the file's line count";
    } else if (!spec.partial_if_set.empty()) {
      names.read_whole = "without ";
      for (std::size_t index = 0; index < spec.partial_if_set.size(); ++index) {
        names.read_whole += (index == 0 ? "" : " or ") + spec.partial_if_set[index];
      }
    }
  }
  const auto* bytes = pick(names.read_bytes, [](const ToolSpec& spec) {
    return spec.role == ToolRole::read && !spec.path_is_list && spec.view == ReadView::bytes;
  });
  names.read_bytes = bytes != nullptr ? bytes->first : std::string();
  if (const auto* write = pick(names.write, [](const ToolSpec& spec) {
        return spec.role == ToolRole::write && spec.content_is_file;
      })) {
    names.write = write->first;
  }
  if (const auto* edit = pick(names.edit, [](const ToolSpec& spec) {
        return spec.role == ToolRole::edit;
      })) {
    names.edit = edit->first;
  }
  return names;
}

bool only_confined(const ToolMap& tools, std::string_view tool)
{
  const auto found = tools.find(tool);
  return found != tools.end() && only_confined(found->second);
}

bool only_confined(const ToolSpec& spec)
{
  return spec.role == ToolRole::other && spec.role_argument.empty();
}

std::optional<GuardedCall> describe_call(const ToolMap& tools, std::string_view tool,
                                         const nlohmann::json& arguments)
{
  const auto found = tools.find(tool);
  if (found == tools.end()) {
    return std::nullopt;
  }
  return describe_call(found->second, tool, arguments);
}

GuardedCall describe_call(const ToolSpec& spec, std::string_view tool,
                          const nlohmann::json& arguments)
{
  static const nlohmann::json k_no_arguments = nlohmann::json::object();
  const nlohmann::json& args = arguments.is_object() ? arguments : k_no_arguments;

  bool dry_run = false;
  if (!spec.dry_run_argument.empty()) {
    const auto flag = args.find(spec.dry_run_argument);
    dry_run = flag != args.end() && flag->is_boolean() && flag->get<bool>();
  }

  GuardedCall call;
  call.tool = std::string(tool);
  call.role = spec.role;
  if (dry_run) {
    call.role = ToolRole::other; // changes nothing; only confinement applies
  }
  call.path_list = spec.path_is_list;
  call.whole_if_status = spec.whole_if_status;
  call.result_is_diff = spec.result_is_diff;
  call.edit_semantics = spec.edit_semantics;
  call.content_is_file = spec.content_is_file;
  call.view = spec.view;
  call.text_is_file_bytes = spec.text_is_file_bytes;
  if (!dry_run && !spec.role_argument.empty()) {
    const auto selector = args.find(spec.role_argument);
    if (selector != args.end() && selector->is_string()) {
      const auto role = spec.role_by_value.find(selector->get<std::string>());
      if (role != spec.role_by_value.end()) {
        call.role = role->second;
      }
    }
  }
  if (!spec.path_is_list) {
    call.paths.reserve(spec.role == ToolRole::move ? 2 : 1); // one allocation, of the size kept
  }
  if (spec.path_is_list) {
    const auto list = args.find(spec.path_argument);
    if (list != args.end() && list->is_array()) {
      for (const auto& item : *list) {
        call.paths.push_back(item.is_string() ? PathArgument{item.get<std::string>()}
                                              : PathArgument{});
      }
    }
  } else if (!spec.fallback_path_argument.empty() && absent_or_empty(args, spec.path_argument)) {
    call.paths.push_back(path_argument(args, spec.fallback_path_argument));
  } else {
    call.paths.push_back(path_argument(args, spec.path_argument));
  }
  if (spec.role == ToolRole::move) {
    call.paths.push_back(path_argument(args, spec.destination_argument));
  }
  // The arguments looked at once each, not each name looked up: a call
  // has a few, most often a path alone.
  if (!spec.partial_if_set.empty()) {
    for (const auto& [name, value] : args.get_ref<const nlohmann::json::object_t&>()) {
      if (sets_partial(value)
          && std::ranges::find(spec.partial_if_set, name) != spec.partial_if_set.end()) {
        call.extent = ReadExtent::partial;
      }
    }
  }
  if (!call.paths.empty() && call.paths.front().raw) {
    const std::string& path = *call.paths.front().raw;
    for (const auto& extension : spec.converted_extensions) {
      call.content_converted = call.content_converted || lower_case_ends_with(path, extension);
    }
  }
  return call;
}

} // namespace fsguard
