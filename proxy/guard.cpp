#include "proxy/guard.hpp"

#include <algorithm>
#include <chrono>
#include <regex>

#include "proxy/message.hpp"
#include "proxy/real_disk.hpp"
#include "tracker/path.hpp"
#include "tracker/read_response.hpp"

namespace fsguard {

namespace {

bool changes_files(ToolRole role)
{
  return role == ToolRole::write || role == ToolRole::edit || role == ToolRole::move;
}

bool succeeded(const nlohmann::json& response)
{
  const auto& result = member(response, "result");
  if (!result.is_object()) {
    return false;
  }
  const auto& is_error = member(result, "isError");
  return !(is_error.is_boolean() && is_error.get<bool>());
}

// The first text block of a tool result, or "".
std::string_view result_text(const nlohmann::json& response)
{
  const auto& content = member(member(response, "result"), "content");
  if (!content.is_array() || content.empty()) {
    return {};
  }
  const auto& text = member(content.front(), "text");
  return text.is_string() ? std::string_view(text.get_ref<const std::string&>())
                          : std::string_view();
}

std::string veto_response(const nlohmann::json& id, const std::string& tool, const Veto& veto)
{
  nlohmann::ordered_json response = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"result",
     {
       {"content", {{{"type", "text"}, {"text", veto_text(tool, veto)}}}},
       {"isError", true},
       {"_meta",
        {{"fsguard/veto",
          {{"code", to_string(veto.code)}, {"tool", tool}, {"path", veto.path}}}}},
     }},
  };
  return response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace

Guard::Guard(Disk& disk, const Config& config, const Log& log, HomeDirectory home, std::string cwd)
  : m_disk(disk), m_config(config), m_log(log), m_tracker(disk),
    m_paths(disk, std::move(home), std::move(cwd), config.profile, log)
{
  m_paths.set_custom_tools(config.tools.has_value());
}

Guard::Call Guard::describe(const nlohmann::json& request, GuardedCall what,
                            const std::optional<ContentHash>& content_hash)
{
  Call call;
  call.id = member(request, "id");
  for (const auto& argument : what.paths) {
    if (!argument.raw) {
      call.files.emplace_back();
      call.problems.push_back(PathError{"the path argument is missing or not a string"});
      continue;
    }
    auto resolved = resolve_path(m_disk, *argument.raw, m_paths.context());
    if (resolved) {
      call.files.emplace_back(std::move(resolved).value());
      call.problems.emplace_back();
    } else {
      call.files.emplace_back();
      call.problems.push_back(resolved.error());
    }
  }
  if (what.role == ToolRole::write && what.content_is_file) {
    call.expected = content_hash;
  }
  call.what = std::move(what);
  return call;
}

void Guard::on_tool_call(std::string line, const nlohmann::json& request,
                         const std::optional<ContentHash>& content_hash, Outbox& out)
{
  const auto& params = member(request, "params");
  const auto& name = member(params, "name");
  const ToolMap& tools = m_config.tools ? *m_config.tools : m_paths.tools();
  auto what = name.is_string() ? describe_call(tools, name.get_ref<const std::string&>(),
                                               member(params, "arguments"))
                               : std::nullopt;
  if (!what) {
    if (name.is_string() && name.get_ref<const std::string&>() == "list_allowed_directories") {
      m_paths.on_client_listing(id_key(member(request, "id")));
    }
    out.to_upstream.push_back(std::move(line)); // not a file tool, or a dry run
    return;
  }
  Call call = describe(request, std::move(*what), content_hash);
  if (awaits_directories(call)) {
    // The server's allowed directories are in doubt: ask it, and hold the
    // call rather than refuse a path that will resolve in a moment.
    if (!m_paths.listing_in_flight()) {
      m_paths.ask_for_listing(out);
    }
    m_parked.push_back(Parked{std::move(line), std::move(call), request, content_hash, true});
    return;
  }
  if (auto veto = confinement_veto(call)) {
    refuse(call, *veto, out); // confinement holds in every mode
    audit(call, "veto", veto, 0);
    return;
  }
  if (call.what.role == ToolRole::other) {
    out.to_upstream.push_back(std::move(line));
    return;
  }
  const std::string key = id_key(call.id);
  if (m_in_flight.contains(key)) {
    out.to_client.push_back(error_response(
      call.id, -32600,
      "fsguard: request id " + key + " is already used by a call in flight; use a new id"));
    return;
  }
  if (changes_files(call.what.role) && blocked(call, m_parked.size())) {
    m_log.debug("holding " + call.what.tool + " " + key + " until an earlier call on its file ends");
    m_parked.push_back(Parked{std::move(line), std::move(call), {}, {}, false});
    return;
  }
  start(std::move(line), std::move(call), out);
}

std::optional<Veto> Guard::confinement_veto(const Call& call)
{
  if (m_config.confine_to.empty()) {
    return std::nullopt;
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    std::optional<std::string> where = call.files[index];
    const auto& raw = call.what.paths[index].raw;
    if (!where && raw && !raw->empty() && raw->front() == '/') {
      // A padded absolute path: the server writes it as spelled.
      if (auto literal = canonical_path(m_disk, *raw)) {
        where = std::move(literal).value();
      }
    }
    bool inside = false;
    for (const auto& directory : m_config.confine_to) {
      inside = inside || (where && is_within(*where, directory));
    }
    if (!inside) {
      Veto veto;
      veto.code = VetoCode::outside_confinement;
      veto.path = where.value_or(raw.value_or(""));
      veto.reason = joined(m_config.confine_to, ", ");
      return veto;
    }
  }
  return std::nullopt;
}

bool Guard::blocked(const Call& call, std::size_t parked_before) const
{
  for (const auto& file : call.files) {
    if (!file) {
      continue;
    }
    if (m_busy_files.contains(*file)) {
      return true;
    }
    for (std::size_t index = 0; index < parked_before; ++index) {
      for (const auto& other : m_parked[index].call.files) {
        if (other == file) {
          return true;
        }
      }
    }
  }
  return false;
}

std::optional<Veto> Guard::decide_write(const Call& call)
{
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const auto& file = call.files[index];
    if (!file) {
      Veto veto;
      veto.code = VetoCode::unresolved_path;
      veto.path = call.what.paths[index].raw.value_or("");
      veto.reason = call.problems[index].reason;
      return veto;
    }
    if (call.what.role == ToolRole::move) {
      continue; // a move loses no content: the server refuses an existing destination
    }
    const WriteKind kind =
      call.what.role == ToolRole::write ? WriteKind::overwrite : WriteKind::edit;
    if (auto veto = m_tracker.check_write(*file, kind, m_config.partial_read_allows_write)) {
      return veto;
    }
  }
  return std::nullopt;
}

void Guard::refuse(const Call& call, const Veto& veto, Outbox& out)
{
  out.to_client.push_back(veto_response(call.id, call.what.tool, veto));
  out.answered.push_back(id_key(call.id));
  m_log.info("refused " + call.what.tool + " (" + std::string(to_string(veto.code)) + "): "
             + veto.path);
}

void Guard::audit(const Call& call, std::string_view decision, const std::optional<Veto>& veto,
                  std::int64_t latency_us) const
{
  if (m_audit == nullptr || !m_audit->enabled()) {
    return;
  }
  const std::string path = !call.files.empty() && call.files.front()
                             ? *call.files.front()
                             : (call.what.paths.empty() ? std::string()
                                                        : call.what.paths.front().raw.value_or(""));
  nlohmann::ordered_json fingerprint = nullptr;
  if (veto && veto->code == VetoCode::changed) {
    fingerprint = {{"seen_size", veto->seen_size},
                   {"current_size", veto->current_size},
                   {"seen_at", format_time(veto->seen_at_ns)},
                   {"current_mtime", format_time(veto->current_mtime_ns)}};
  } else if (const SeenRecord* record = path.empty() ? nullptr : m_tracker.find(path);
             record != nullptr && record->hash_state == HashState::known) {
    fingerprint = {{"size", record->size}, {"xxh3_128", to_hex(record->hash)}};
  }
  m_audit->write({
    {"event", "decision"},
    {"tool", call.what.tool},
    {"path", path},
    {"decision", decision},
    {"code", veto ? nlohmann::ordered_json(to_string(veto->code)) : nlohmann::ordered_json()},
    {"mode", to_string(m_config.mode)},
    {"fingerprint", fingerprint},
    {"latency_us", latency_us},
  });
}

void Guard::start(std::string line, Call call, Outbox& out)
{
  if (changes_files(call.what.role)) {
    m_tracker.settle_reads(); // no change goes upstream while a read's hash is owed
    const auto began = std::chrono::steady_clock::now();
    const auto veto = decide_write(call);
    const auto latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - began)
                              .count();
    if (veto && m_config.mode == Mode::enforce) {
      refuse(call, *veto, out);
      audit(call, "veto", veto, latency_us);
      return;
    }
    if (veto && m_config.mode == Mode::warn) {
      m_log.warn("would refuse (warn mode lets it through): " + veto_text(call.what.tool, *veto));
    }
    audit(call, veto ? (m_config.mode == Mode::warn ? "warn" : "off") : "allow", veto, latency_us);
  } else {
    for (const auto& file : call.files) {
      call.read_starts.push_back(file ? m_tracker.begin_read(*file) : ReadStart{});
    }
  }
  mark_busy(call, +1);
  const std::string key = id_key(call.id);
  m_in_flight.emplace(key, std::move(call));
  out.to_upstream.push_back(std::move(line));
}

bool Guard::awaits_directories(const Call& call) const
{
  if (m_paths.context().rules != PathRules::server_filesystem
      || m_listings_for_waiting >= k_max_listings_for_waiting) {
    return false;
  }
  for (const auto& problem : call.problems) {
    if (problem.directories_in_doubt) {
      return true;
    }
  }
  return false;
}

void Guard::after_listing(Outbox& out)
{
  const bool any_waiting = std::any_of(m_parked.begin(), m_parked.end(),
                                       [](const Parked& parked) { return parked.awaiting_directories; });
  if (!any_waiting) {
    m_listings_for_waiting = 0;
    return;
  }
  // The server adopts new roots within milliseconds: ask again a few times
  // before giving up on the waiting calls.
  if (m_paths.in_doubt() && !m_paths.listing_in_flight()
      && m_listings_for_waiting < k_max_listings_for_waiting) {
    ++m_listings_for_waiting;
    m_paths.ask_for_listing(out);
    return;
  }
  std::deque<Parked> waiting;
  for (auto parked = m_parked.begin(); parked != m_parked.end();) {
    if (parked->awaiting_directories) {
      waiting.push_back(std::move(*parked));
      parked = m_parked.erase(parked);
    } else {
      ++parked;
    }
  }
  // Past the limit, awaits_directories() lets them through to a decision.
  for (auto& parked : waiting) {
    on_tool_call(std::move(parked.line), parked.request, parked.content_hash, out);
  }
  m_listings_for_waiting = 0;
}

bool Guard::on_response(const std::string& key, std::string_view line,
                        const SkimmedMessage& skimmed, Outbox& out)
{
  auto found = m_in_flight.find(key);
  if (found == m_in_flight.end()) {
    const bool forward =
      m_paths.on_upstream_response(key, nlohmann::json::parse(line, nullptr, false), out);
    after_listing(out);
    return forward;
  }
  Call call = std::move(found->second);
  m_in_flight.erase(found);
  // Most responses only need their outcome, which a skim finds without
  // parsing megabytes of file content; the rest need the text.
  const bool needs_text = call.what.path_list || !call.what.whole_if_status.empty();
  const auto outcome = needs_text ? std::nullopt : skim_tool_succeeded(skimmed);
  if (outcome) {
    if (*outcome) {
      record_response(call, nlohmann::json());
    }
  } else if (const auto response = nlohmann::json::parse(line, nullptr, false);
             succeeded(response)) {
    record_response(call, response);
  }
  mark_busy(call, -1);
  release_parked(out);
  return true;
}

void Guard::record_response(const Call& call, const nlohmann::json& response)
{
  switch (call.what.role) {
  case ToolRole::read: {
    std::vector<bool> read(call.files.size(), true);
    if (call.what.path_list) {
      std::vector<std::string> requested;
      for (const auto& argument : call.what.paths) {
        requested.push_back(argument.raw.value_or(""));
      }
      read = parts_read(result_text(response), requested);
    }
    ReadExtent extent = call.what.extent;
    if (!call.what.whole_if_status.empty()) {
      const std::string_view text = result_text(response);
      const std::string first_line(text.substr(0, text.find('\n')));
      if (!std::regex_match(first_line, std::regex(call.what.whole_if_status))) {
        extent = ReadExtent::partial;
      }
    }
    for (std::size_t index = 0; index < call.files.size(); ++index) {
      if (call.files[index] && read[index]) {
        m_tracker.finish_read(*call.files[index], call.read_starts[index], extent, call.what.view);
      }
    }
    break;
  }
  case ToolRole::write:
  case ToolRole::edit:
    if (call.files.front()) {
      m_tracker.finish_write(*call.files.front(), call.expected);
    }
    break;
  case ToolRole::move:
    if (call.files.size() == 2 && call.files[0] && call.files[1]) {
      m_tracker.finish_move(*call.files[0], *call.files[1]);
    }
    break;
  case ToolRole::other:
    break;
  }
}

void Guard::on_cancelled(const nlohmann::json& params, Outbox& out)
{
  const auto& request_id = member(params, "requestId");
  if (request_id.is_null()) {
    return;
  }
  const std::string key = id_key(request_id);
  for (auto parked = m_parked.begin(); parked != m_parked.end(); ++parked) {
    if (id_key(parked->call.id) == key) {
      m_parked.erase(parked); // the upstream never saw it
      release_parked(out);
      return;
    }
  }
  auto found = m_in_flight.find(key);
  if (found == m_in_flight.end()) {
    return;
  }
  // The upstream may still carry out a cancelled write, and will not say:
  // fsguard no longer knows the file's state, so it must be read again.
  if (changes_files(found->second.what.role)) {
    for (const auto& file : found->second.files) {
      if (file) {
        m_tracker.forget(*file);
      }
    }
  }
  mark_busy(found->second, -1);
  m_in_flight.erase(found);
  release_parked(out);
}

void Guard::mark_busy(const Call& call, int delta)
{
  for (const auto& file : call.files) {
    if (!file) {
      continue;
    }
    auto& count = m_busy_files[*file];
    count += delta;
    if (count <= 0) {
      m_busy_files.erase(*file);
    }
  }
}

void Guard::release_parked(Outbox& out)
{
  for (std::size_t index = 0; index < m_parked.size();) {
    if (m_parked[index].awaiting_directories || blocked(m_parked[index].call, index)) {
      ++index;
      continue;
    }
    Parked parked = std::move(m_parked[index]);
    m_parked.erase(m_parked.begin() + static_cast<long>(index));
    start(std::move(parked.line), std::move(parked.call), out);
  }
}

} // namespace fsguard
