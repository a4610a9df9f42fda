#include "tracker/saved_state.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

namespace fsguard {

namespace {

using Json = nlohmann::json;

// The marker a state file starts with, as state_text() writes it: text that
// starts so is fsguard's, even when the rest cannot be read.
constexpr std::string_view k_format = "fsguard-state";
constexpr std::string_view k_prefix = R"({"format":"fsguard-state")";

const Json* field(const Json& object, std::string_view name)
{
  if (!object.is_object()) {
    return nullptr;
  }
  const auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

std::optional<std::int64_t> signed_field(const Json& object, std::string_view name)
{
  const Json* value = field(object, name);
  if (value == nullptr || !value->is_number_integer()) {
    return std::nullopt;
  }
  if (value->is_number_unsigned()
      && value->get<std::uint64_t>()
           > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return value->get<std::int64_t>();
}

std::optional<std::uint64_t> unsigned_field(const Json& object, std::string_view name)
{
  const Json* value = field(object, name);
  if (value == nullptr || !value->is_number_unsigned()) {
    return std::nullopt;
  }
  return value->get<std::uint64_t>();
}

std::optional<std::string> string_field(const Json& object, std::string_view name)
{
  const Json* value = field(object, name);
  if (value == nullptr || !value->is_string()) {
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<bool> bool_field(const Json& object, std::string_view name)
{
  const Json* value = field(object, name);
  if (value == nullptr || !value->is_boolean()) {
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<ContentHash> hash_from_hex(std::string_view hex)
{
  if (hex.size() != 32) {
    return std::nullopt;
  }
  ContentHash hash{};
  for (std::size_t index = 0; index < hex.size(); ++index) {
    const char c = hex[index];
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    auto& word = hash[index / 16];
    word = (word << 4) | static_cast<std::uint64_t>(digit);
  }
  return hash;
}

std::string_view view_name(ReadView view)
{
  switch (view) {
  case ReadView::bytes: return "bytes";
  case ReadView::utf8_text: return "utf8_text";
  case ReadView::utf8_lines: return "utf8_lines";
  }
  return "bytes";
}

std::optional<ReadView> parse_view(std::string_view name)
{
  if (name == "bytes") return ReadView::bytes;
  if (name == "utf8_text") return ReadView::utf8_text;
  if (name == "utf8_lines") return ReadView::utf8_lines;
  return std::nullopt;
}

std::optional<SavedRecord> parse_record(const Json& entry)
{
  const auto path = string_field(entry, "path");
  const auto hex = string_field(entry, "xxh3_128");
  const auto hash = hex ? hash_from_hex(*hex) : std::nullopt;
  const Json* stat = field(entry, "stat");
  const auto stat_trusted = bool_field(entry, "stat_trusted");
  const auto taken_at = signed_field(entry, "taken_at_ns");
  const auto seen_at = signed_field(entry, "seen_at_ns");
  const auto extent = string_field(entry, "extent");
  const auto reason = string_field(entry, "partial_reason");
  const auto view = string_field(entry, "view");
  const auto valid_utf8 = bool_field(entry, "valid_utf8");
  const auto bare_cr = bool_field(entry, "bare_cr");
  if (!path || !path->starts_with('/') || !hash || stat == nullptr || !stat_trusted || !taken_at
      || !seen_at || !extent || (*extent != "whole" && *extent != "partial") || !reason || !view
      || !parse_view(*view) || !valid_utf8 || !bare_cr) {
    return std::nullopt;
  }
  const auto device = unsigned_field(*stat, "device");
  const auto inode = unsigned_field(*stat, "inode");
  const auto size = signed_field(*stat, "size");
  const auto mtime = signed_field(*stat, "mtime_ns");
  const auto ctime = signed_field(*stat, "ctime_ns");
  const auto mode = unsigned_field(*stat, "mode");
  if (!device || !inode || !size || !mtime || !ctime || !mode
      || *mode > std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  SavedRecord record;
  record.path = *path;
  record.hash = *hash;
  record.stat = FileStat{*device, *inode, *size, *mtime, *ctime, static_cast<std::uint32_t>(*mode)};
  record.stat_trusted = *stat_trusted;
  record.taken_at_ns = *taken_at;
  record.seen_at_ns = *seen_at;
  record.extent = *extent == "whole" ? ReadExtent::whole : ReadExtent::partial;
  record.partial_reason = *reason;
  record.view = *parse_view(*view);
  record.traits = ContentTraits{*valid_utf8, *bare_cr};
  return record;
}

nlohmann::ordered_json record_json(const SavedRecord& record)
{
  return {
    {"path", record.path},
    {"xxh3_128", to_hex(record.hash)},
    {"stat",
     {{"device", record.stat.device},
      {"inode", record.stat.inode},
      {"size", record.stat.size},
      {"mtime_ns", record.stat.mtime_ns},
      {"ctime_ns", record.stat.ctime_ns},
      {"mode", record.stat.mode}}},
    {"stat_trusted", record.stat_trusted},
    {"taken_at_ns", record.taken_at_ns},
    {"seen_at_ns", record.seen_at_ns},
    {"extent", record.extent == ReadExtent::whole ? "whole" : "partial"},
    {"partial_reason", record.partial_reason},
    {"view", view_name(record.view)},
    {"valid_utf8", record.traits.valid_utf8},
    {"bare_cr", record.traits.bare_cr},
  };
}

std::optional<StateKey> parse_key(const Json& section)
{
  const Json* command = field(section, "command");
  const auto cwd = string_field(section, "cwd");
  if (command == nullptr || !command->is_array() || !cwd) {
    return std::nullopt;
  }
  StateKey key;
  key.cwd = *cwd;
  for (const auto& argument : *command) {
    if (!argument.is_string()) {
      return std::nullopt;
    }
    key.command.push_back(argument.get<std::string>());
  }
  return key;
}

SavedState damaged(std::string_view text, std::string problem)
{
  SavedState state;
  const auto start = text.find_first_not_of(" \t\r\n");
  const bool ours = start != std::string_view::npos && text.substr(start).starts_with(k_prefix);
  state.kind = ours ? StateKind::ours_damaged : StateKind::foreign;
  state.problem = ours ? std::move(problem) : "it is not an fsguard state file";
  return state;
}

bool taken_later(const SavedRecord& a, const SavedRecord& b)
{
  return a.taken_at_ns != b.taken_at_ns ? a.taken_at_ns > b.taken_at_ns : a.path < b.path;
}

} // namespace

SavedState parse_state(std::string_view text)
{
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return {};
  }
  const auto document = Json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    return damaged(text, "it is not valid JSON (cut short?)");
  }
  const auto format = string_field(document, "format");
  if (!format || *format != k_format) {
    SavedState state;
    state.kind = StateKind::foreign;
    state.problem = "it is not an fsguard state file";
    return state;
  }
  const auto version = signed_field(document, "version");
  if (!version || *version != k_state_version) {
    SavedState state;
    state.kind = StateKind::other_version;
    state.problem = "it was written by an fsguard of another version ("
                    + (version ? std::to_string(*version) : std::string("none")) + ", this one "
                    + std::to_string(k_state_version) + ")";
    return state;
  }
  const Json* upstreams = field(document, "upstreams");
  if (upstreams == nullptr || !upstreams->is_array()) {
    return damaged(text, "it has no list of upstreams");
  }
  SavedState state;
  state.kind = StateKind::ours;
  for (const auto& section : *upstreams) {
    auto key = parse_key(section);
    const Json* records = field(section, "records");
    if (!key || records == nullptr || !records->is_array()) {
      return damaged(text, "an upstream's entry is damaged");
    }
    StateSection parsed{std::move(*key), {}};
    for (const auto& entry : *records) {
      auto record = parse_record(entry);
      if (!record) {
        return damaged(text, "a record is damaged");
      }
      parsed.records.push_back(std::move(*record));
    }
    state.sections.push_back(std::move(parsed));
  }
  return state;
}

std::vector<SavedRecord> records_of(const SavedState& state, const StateKey& key)
{
  if (state.kind != StateKind::ours) {
    return {};
  }
  for (const auto& section : state.sections) {
    if (section.key == key) {
      return section.records;
    }
  }
  return {};
}

void merge_state(SavedState& state, const StateKey& key, const std::vector<SavedRecord>& mine,
                 std::size_t limit)
{
  if (state.kind != StateKind::ours) {
    state.sections.clear();
  }
  state.kind = StateKind::ours;
  state.problem.clear();
  auto section = std::find_if(state.sections.begin(), state.sections.end(),
                              [&](const StateSection& entry) { return entry.key == key; });
  if (section == state.sections.end()) {
    state.sections.push_back(StateSection{key, {}});
    section = std::prev(state.sections.end());
  }
  std::map<std::string, SavedRecord> by_path;
  for (auto& record : section->records) {
    by_path.insert_or_assign(record.path, std::move(record));
  }
  for (const auto& record : mine) {
    const auto found = by_path.find(record.path);
    if (found == by_path.end() || record.taken_at_ns >= found->second.taken_at_ns) {
      by_path.insert_or_assign(record.path, record);
    }
  }
  section->records.clear();
  for (auto& [path, record] : by_path) {
    section->records.push_back(std::move(record));
  }
  // Keep the `limit` newest of all sections: the oldest taken go first.
  std::size_t total = 0;
  for (const auto& entry : state.sections) {
    total += entry.records.size();
  }
  if (total > limit) {
    std::vector<std::pair<std::size_t, std::size_t>> order; // (section, record)
    for (std::size_t s = 0; s < state.sections.size(); ++s) {
      for (std::size_t r = 0; r < state.sections[s].records.size(); ++r) {
        order.emplace_back(s, r);
      }
    }
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      return taken_later(state.sections[a.first].records[a.second],
                         state.sections[b.first].records[b.second]);
    });
    std::vector<std::vector<bool>> keep(state.sections.size());
    for (std::size_t s = 0; s < state.sections.size(); ++s) {
      keep[s].assign(state.sections[s].records.size(), false);
    }
    for (std::size_t index = 0; index < limit; ++index) {
      keep[order[index].first][order[index].second] = true;
    }
    for (std::size_t s = 0; s < state.sections.size(); ++s) {
      std::vector<SavedRecord> kept;
      for (std::size_t r = 0; r < state.sections[s].records.size(); ++r) {
        if (keep[s][r]) {
          kept.push_back(std::move(state.sections[s].records[r]));
        }
      }
      state.sections[s].records = std::move(kept);
    }
  }
  std::erase_if(state.sections, [](const StateSection& entry) { return entry.records.empty(); });
  for (auto& entry : state.sections) {
    std::sort(entry.records.begin(), entry.records.end(), taken_later);
  }
}

std::string state_text(const SavedState& state)
{
  nlohmann::ordered_json upstreams = nlohmann::ordered_json::array();
  for (const auto& section : state.sections) {
    nlohmann::ordered_json records = nlohmann::ordered_json::array();
    for (const auto& record : section.records) {
      ContentScanner scanner;
      scanner.append(record.path);
      if (scanner.traits().valid_utf8) { // JSON would garble the name of another file
        records.push_back(record_json(record));
      }
    }
    upstreams.push_back(
      {{"command", section.key.command}, {"cwd", section.key.cwd}, {"records", records}});
  }
  const nlohmann::ordered_json document = {
    {"format", k_format},
    {"version", k_state_version},
    {"upstreams", upstreams},
  };
  // One record a line would be easier to read, but the file is fsguard's
  // alone; compact keeps it small.
  return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace fsguard
