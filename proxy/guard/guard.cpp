#include "proxy/guard/guard.hpp"

#include <algorithm>
#include <limits>
#include <regex>

#include "proxy/guard/client_limits.hpp"
#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/guard/change_decision.hpp"
#include "proxy/guard/override_prompt.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "proxy/guard/quoted_text.hpp"
#include "proxy/guard/stale_change.hpp"
#include "tracker/joined.hpp"
#include "tracker/path.hpp"
#include "tracker/read_response.hpp"
#include "tracker/unified_diff.hpp"

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

// True when a read's answer shows content at all: an empty result answers
// nothing that was asked, so it records no read.
bool shows_content(const nlohmann::json& response)
{
  const auto& content = member(member(response, "result"), "content");
  return content.is_array() && !content.empty();
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

nlohmann::ordered_json hash_json(const std::optional<ContentHash>& hash)
{
  return hash ? nlohmann::ordered_json(to_hex(*hash)) : nlohmann::ordered_json();
}

std::string veto_response(const nlohmann::json& id, const std::string& tool, const Veto& veto,
                          const ToolNames& names, Era era)
{
  nlohmann::ordered_json meta = {{"code", to_string(veto.code)}, {"tool", tool}, {"path", veto.path}};
  if (veto.code == VetoCode::changed) {
    meta["seen_xxh3_128"] = hash_json(veto.seen_hash);
    meta["current_xxh3_128"] = hash_json(veto.current_hash);
    meta["cause"] = veto.cause;
    meta["diff_complete"] = !veto.diff.empty() && veto.diff_complete;
    meta["counts_as_read"] = veto.counts_as_read;
    if (!veto.conflict.empty()) {
      meta["merge"] = "conflict";
    }
  }
  nlohmann::ordered_json result = {
    {"content", {{{"type", "text"}, {"text", veto_text(tool, veto, names)}}}},
    {"isError", true},
    {"_meta", {{"fsguard/veto", meta}}},
  };
  stamp_result(result, era);
  const nlohmann::ordered_json response = {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
  return response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// What a call of `role` does to its files, as the call queue sees it.
FileUse file_use(ToolRole role)
{
  return role == ToolRole::move ? FileUse::move
         : changes_files(role)  ? FileUse::change
                                : FileUse::read;
}

// The canonical files of `call`, as the call queue takes them.
CallFiles files_of(const CallInFlight& call)
{
  return {call.files.data(), call.files.size()};
}

// The "name" and "arguments" of a tools/call's `params` (null: absent),
// found in one walk over its members; each a null value when absent.
struct ToolCallMembers {
  const nlohmann::json* name;
  const nlohmann::json* arguments;
};

ToolCallMembers tool_call_members(const nlohmann::json* params)
{
  ToolCallMembers members{&null_value(), &null_value()};
  if (params == nullptr) {
    return members;
  }
  if (const auto* object = params->get_ptr<const nlohmann::json::object_t*>()) {
    for (const auto& [key, value] : *object) {
      const std::string_view name = key;
      if (name == "name") {
        members.name = &value;
      } else if (name == "arguments") {
        members.arguments = &value;
      }
    }
  }
  return members;
}

// Microseconds from `began_ns` to `ended_ns` (the Disk's clock), 0 if it went back.
std::int64_t microseconds_between(std::int64_t began_ns, std::int64_t ended_ns)
{
  return ended_ns > began_ns ? (ended_ns - began_ns) / 1000 : 0;
}

} // namespace

Guard::Guard(Disk& disk, GuardSettings settings, HomeDirectory home, std::string cwd)
  : m_queue(settings.verify == Verify::upstream ? ReadsWaitForChanges::yes
                                                : ReadsWaitForChanges::no),
    m_verification(settings.verify, disk, m_tracker, m_ledger, m_queue.busy(), m_records, m_paths,
                   m_settings),
    m_disk(view() ? *view() : disk), m_settings(std::move(settings)), m_tracker(m_disk),
    m_records(m_tracker, m_disk, m_settings.kept_texts),
    m_paths(m_disk, m_ledger, std::move(home), std::move(cwd), m_settings.profile),
    m_listings(m_paths)
{
  m_paths.set_custom_tools(m_settings.tools.has_value());
  m_paths.set_path_map(m_settings.path_map);
  m_paths.set_sees_files(view() == nullptr);
  m_tracker.set_read_ttl(m_settings.read_ttl);
}

void Guard::settle_reads()
{
  m_records.settle(m_client_name);
}

std::size_t Guard::restore(const std::vector<SavedRecord>& saved)
{
  std::size_t taken = 0;
  for (const auto& record : saved) {
    taken += m_tracker.restore(record) ? 1 : 0;
  }
  return taken;
}

void Guard::leave_files_to_exit()
{
  // Moved into objects nothing deletes: the kernel takes their pages back
  // at exit all at once.
  static_cast<void>(new Tracker(std::move(m_tracker)));
  m_records.leave_to_exit();
}

void Guard::set_settings(GuardSettings settings)
{
  settings.verify = view() ? Verify::upstream : Verify::local;
  m_settings = std::move(settings);
  m_paths.set_custom_tools(m_settings.tools.has_value());
  m_paths.set_path_map(m_settings.path_map);
  m_tracker.set_read_ttl(m_settings.read_ttl);
  m_records.set_kept_budget(m_settings.kept_texts);
}

const ToolMap& Guard::tools() const
{
  return m_settings.tools ? *m_settings.tools : m_paths.tools();
}

void Guard::answer_error(const nlohmann::json& id, RpcError code, std::string_view message,
                         Outbox& out)
{
  out.to_client.push_back(
    error_response(id.is_string() || id.is_number() ? id : nlohmann::json(), code, message));
}

void Guard::on_client_request(OutgoingLine line, const nlohmann::json& request,
                              ContentArgument content, Outbox& out, Clock::time_point now)
{
  const RequestMembers members = request_members(request);
  const auto& id = *members.id;
  const std::string key = id_key(id);
  const std::string_view method = members.method->is_string()
                                    ? std::string_view(members.method->get_ref<const std::string&>())
                                    : std::string_view();
  if (const auto problem = request_the_server_drops(members); !problem.empty()) {
    answer_error(id, RpcError::invalid_request,
                 "fsguard: invalid request, which the server would drop without an answer: "
                   + problem,
                 out);
    return;
  }
  if (id.is_string() && id.get_ref<const std::string&>().starts_with(k_own_id_prefix)) {
    answer_error(id, RpcError::invalid_request,
                 "fsguard: request ids starting with \"fsguard/\" are reserved for fsguard's own "
                 "requests; use another id",
                 out);
    return;
  }
  if (method == "initialize" && m_ledger.initialize_seen()) {
    answer_error(id, RpcError::invalid_request,
                 "fsguard: initialize was already sent in this session; a session is "
                 "initialized once",
                 out);
    return;
  }
  PendingRequest entry;
  if (method == "tools/call" && take_retry(line, request, entry.retry, out, now) == RetryTake::refused) {
    return; // a requestState claiming to be fsguard's that is not good
  }
  entry.from = Peer::client;
  entry.id = id;
  entry.method = std::string(method);
  std::optional<GuardedCall> what; // described once, for its first attempt too
  const std::string* guarded_name = nullptr;
  const std::optional<ClientFacts> facts = client_facts(request); // the 2026 era's envelope
  const nlohmann::json* arguments = &null_value();
  if (method == "initialize") {
    entry.expect = Expectation::initialize;
  } else if (method == "server/discover") {
    entry.expect = Expectation::discover;
  } else if (method == "tools/call") {
    const auto [name, call_arguments] = tool_call_members(members.params);
    const auto* tool = name->get_ptr<const std::string*>(); // not a string: the server refuses it
    arguments = call_arguments;
    if (tool == nullptr) {
      // relayed undescribed
    } else if (!m_paths.knows_server() && !m_ledger.initialize_seen() && !facts) {
      // Neither initialize nor the 2026 era's envelope, whose requests need
      // none (they wait below for the server/discover fsguard then asks).
      answer_error(id, RpcError::invalid_request,
                   "fsguard: " + *tool + " was called before initialize. fsguard learns from the "
                   "server's initialize result which server it guards and how that server reads "
                   "a call's paths, so it checks no call before; the call was not sent. Send "
                   "initialize first.",
                   out);
      return;
    } else if (!m_paths.knows_server()) {
      // Which tools fsguard guards, and how, is known once the server is:
      // every call waits for it (try_run), to be described then.
      guarded_name = tool;
      entry.expect = Expectation::guarded_call;
    } else if (reads_client_listing(*tool)) {
      entry.expect = Expectation::client_listing;
      entry.listing_sequence = m_paths.client_listing_sequence();
    } else if (const auto* spec = guarded_tool(*tool)) {
      what = describe_call(spec->second, spec->first, *arguments);
      guarded_name = &spec->first;
      entry.expect = Expectation::guarded_call;
    }
  }
  const Expectation expect = entry.expect;
  PendingRequest* const opened = m_ledger.open(key, std::move(entry));
  if (opened == nullptr) {
    answer_error(id, RpcError::invalid_request,
                 "fsguard: request id " + key
                   + " is still pending; the MCP specification forbids reusing an id within a "
                     "session; use a new id",
                 out);
    return;
  }
  const bool opens_session = learn_client(facts, method);
  if (expect != Expectation::guarded_call) {
    out.to_upstream.push_back(std::move(line));
  } else {
    run_new_call(line, id, key, *guarded_name, *arguments, std::move(what), std::move(content),
                 *opened, out, now);
  }
  if (opens_session) {
    ask_server(out); // after the client's request, which the server sees first
  }
}

bool Guard::learn_client(const std::optional<ClientFacts>& facts, std::string_view method)
{
  if (!facts && m_era.known() && method != "initialize") {
    return false; // a 2025-era request, in a session whose era is known: nothing new
  }
  const bool opens_session = m_era.on_client_request(facts, method);
  m_client_name = m_era.client_name();
  // A 2026-era session has no requests from the server to the client: its
  // question to the person goes another way, which fsguard does not take yet.
  m_client_elicits = m_era.era() == Era::handshake && m_era.declares_elicitation();
  m_paths.set_own_envelope(m_era.own_envelope());
  return opens_session;
}

void Guard::ask_server(Outbox& out)
{
  PendingRequest request;
  request.from = Peer::fsguard;
  request.id = std::string(k_own_id_prefix) + "discover";
  request.method = "server/discover";
  request.expect = Expectation::discover;
  const nlohmann::json message = {{"jsonrpc", "2.0"},
                                  {"id", request.id},
                                  {"method", request.method},
                                  {"params", nlohmann::json::object()}};
  if (m_ledger.open(id_key(request.id), std::move(request)) != nullptr) { // asked once a session
    out.to_upstream.push_back(own_request_line(message, m_era.own_envelope()));
  }
}

void Guard::run_new_call(OutgoingLine& line, const nlohmann::json& id, const std::string& key,
                         const std::string& tool, const nlohmann::json& arguments,
                         std::optional<GuardedCall>&& what, ContentArgument content,
                         PendingRequest& entry, Outbox& out, Clock::time_point now)
{
  m_records.take_in_shown(now); // what fsguard showed long enough ago comes before this call
  const std::uint64_t sent_at = m_records.next_moment();
  // A new call waits behind every held one (the queue's must_wait()).
  Attempt attempt =
    try_run(line, id, arguments, std::move(what), content, key, entry, sent_at, out, now);
  if (attempt.outcome != Outcome::ran) {
    // Held: its line outlives the reader's buffer, so it is copied if lent.
    Queue::Held held{HeldCall{std::move(line).take(), id, tool, arguments, std::move(content),
                              key, sent_at}};
    held.arrived = now;
    hold_again(held, std::move(attempt));
    m_queue.hold(std::move(held));
  }
}

std::optional<Guard::PlainCall> Guard::scan_plain_call(std::string_view text,
                                                       PlainCallArguments& arguments) const
{
  // What the guard does with a call of each tool, as on_client_request()
  // would decide it; the guarded tool's entry kept for take_plain_call().
  class Filter final : public PlainCallFilter {
  public:
    explicit Filter(const Guard& guard) : m_guard(guard) {}

    PlainCallUse use_of(std::string_view name) override
    {
      if (!m_guard.m_paths.knows_server() || m_guard.reads_client_listing(name)) {
        return PlainCallUse::none; // before the server is known, every call waits for it
      }
      m_tool = m_guard.guarded_tool(name);
      return m_tool == nullptr ? PlainCallUse::relay : PlainCallUse::guard;
    }

    const ToolMap::value_type* tool() const { return m_tool; }

  private:
    const Guard& m_guard;
    const ToolMap::value_type* m_tool = nullptr;
  };
  Filter filter(*this);
  const auto scanned = scan_plain_tool_call(text, filter, &arguments);
  if (!scanned) {
    return std::nullopt;
  }
  return PlainCall{*scanned, filter.tool()};
}

bool Guard::take_plain_call(OutgoingLine& line, const PlainCall& call,
                            PlainCallArguments& arguments, Outbox& out, Clock::time_point now)
{
  // As on_client_request() takes the line parsed, which the scan's shape
  // leaves nothing to refuse of but a reused id.
  const std::string key = id_key_of_raw(call.scanned.raw_id);
  PendingRequest entry;
  entry.from = Peer::client;
  entry.id = plain_id(call.scanned.raw_id);
  entry.method = "tools/call";
  entry.expect = call.tool != nullptr ? Expectation::guarded_call : Expectation::relay;
  PendingRequest* const opened = m_ledger.open(key, std::move(entry));
  if (opened == nullptr) {
    return false; // a reused id: on_client_request() answers it
  }
  const bool opens_session = learn_client(
    call.scanned.envelope.empty()
      ? std::nullopt
      : envelope_facts_of_raw(call.scanned.envelope),
    "tools/call");
  if (call.tool == nullptr) {
    out.to_upstream.push_back(std::move(line));
  } else {
    const nlohmann::json id = opened->id; // the entry may close while the call runs
    std::optional<GuardedCall> what(
      describe_call(call.tool->second, call.tool->first, arguments.tree));
    run_new_call(line, id, key, call.tool->first, arguments.tree, std::move(what),
                 std::move(arguments.content), *opened, out, now);
  }
  if (opens_session) {
    ask_server(out); // after the client's request, which the server sees first
  }
  return true;
}

const ToolMap::value_type* Guard::guarded_tool(std::string_view name) const
{
  const ToolMap& map = tools();
  const auto spec = map.find(name);
  if (spec == map.end()) {
    return nullptr; // a tool fsguard does not know
  }
  if (m_settings.confine_to.empty() && only_confined(spec->second)) {
    return nullptr; // no rule looks at its paths: relayed undescribed (as try_run would)
  }
  return &*spec;
}

bool Guard::reads_client_listing(std::string_view name) const
{
  // A tools map that names the tool says what its calls are instead.
  return name == "list_allowed_directories" && m_paths.reads_roots() && !tools().contains(name);
}

std::unique_ptr<CallInFlight> Guard::describe(const nlohmann::json& id, GuardedCall&& what,
                                              const std::optional<ContentHash>& content_hash) const
{
  auto described = std::make_unique<CallInFlight>();
  CallInFlight& call = *described;
  call.id = id;
  call.files.reserve(what.paths.size());
  const auto unresolved = [&](PathError problem) {
    call.problems.resize(what.paths.size()); // one a file, once any is unresolved
    call.problems[call.files.size()] = std::move(problem);
    call.files.emplace_back();
  };
  for (const auto& argument : what.paths) {
    if (!argument.raw) {
      unresolved(PathError{"the path argument is missing or not a string"});
      continue;
    }
    auto resolved = resolve_path(m_disk, *argument.raw, m_paths.context());
    if (resolved) {
      call.files.emplace_back(std::move(resolved).value());
    } else {
      unresolved(std::move(resolved).error());
    }
  }
  if (what.role == ToolRole::write && what.content_is_file && !what.content_converted) {
    call.expected = content_hash;
  }
  call.what = std::move(what);
  return described;
}

Guard::Attempt Guard::try_run(OutgoingLine& line, const nlohmann::json& id,
                              const nlohmann::json& arguments, std::optional<GuardedCall>&& what, ContentArgument& content,
                              const std::string& key, PendingRequest& entry, std::uint64_t sent_at,
                              Outbox& out, Clock::time_point now)
{
  if (!m_paths.knows_server()) {
    return {Outcome::waiting_for_session, {}}; // which tools are guarded, and how, is unknown
  }
  if (!what) {
    entry.expect = Expectation::relay; // the map changed: no longer a file tool
    out.to_upstream.push_back(std::move(line));
    return {Outcome::ran, {}};
  }
  if (what->role == ToolRole::other && m_settings.confine_to.empty()) {
    // No rule looks at its paths: forwarded unresolved (it would be
    // forwarded however they resolved).
    entry.expect = Expectation::relay;
    out.to_upstream.push_back(std::move(line));
    return {Outcome::ran, {}};
  }
  if (!knows_session()) {
    // Described and decided once fsguard knows the server's directories:
    // before, a change below one it cannot see would be taken for a new
    // file, and a path resolved against directories still unknown.
    return {Outcome::waiting_for_session, {}};
  }
  std::unique_ptr<CallInFlight> described = describe(id, std::move(*what), content.hash);
  CallInFlight& call = *described;
  call.sent_at = sent_at;
  if (awaits_directories(call)) {
    // The server's allowed directories are in doubt: ask it, and hold the
    // call rather than refuse a path that will resolve in a moment. (A
    // probe's answer asks again if they still are.)
    m_listings.ask_for_call(now, out);
    return {Outcome::waiting_for_directories, {}};
  }
  if (auto veto = confinement_veto(call)) {
    refuse(call, key, *veto, out); // confinement holds in every mode
    audit(call, "veto", veto, 0, out);
    return {Outcome::ran, {}};
  }
  if (call.what.role == ToolRole::other) {
    entry.expect = Expectation::relay;
    out.to_upstream.push_back(std::move(line));
    return {Outcome::ran, {}};
  }
  if (m_queue.must_wait(file_use(call.what.role), files_of(call))) {
    if (m_settings.log_level >= LogLevel::debug) {
      out.say(LogLevel::debug,
              "holding " + call.what.tool + " " + key + " until an earlier call on its file ends");
    }
    return {Outcome::held, std::move(call)};
  }
  if (m_verification.awaits_upstream(call, tools(), m_era.own_envelope(), out, now)) {
    return {Outcome::held, std::move(call)}; // later calls on its files wait behind it
  }
  if (awaits_identity(call, out, now)) {
    return {Outcome::held, std::move(call)}; // the server's report of its files first
  }
  if (auto veto = identity_veto(call)) {
    refuse(call, key, *veto, out);
    audit(call, "veto", veto, 0, out);
    return {Outcome::ran, {}};
  }
  if (call.expected && content.text) {
    // start() keeps it or not.
    call.written =
      WrittenContent{.bytes = std::move(*content.text), .raw = false, .hash = content.hash,
                     .traits = content.traits};
    content.text.reset();
  }
  start(std::move(line), arguments, std::move(described), key, entry, out, now);
  if (view()) {
    view()->forget_all(); // what the upstream said held for this decision only
  }
  return {Outcome::ran, {}};
}

bool Guard::awaits_directories(const CallInFlight& call) const
{
  if (m_paths.context().rules != PathRules::server_filesystem
      || !m_listings.calls_wait()) {
    return false;
  }
  if (changes_files(call.what.role) && m_paths.probing()) {
    return true; // whether fsguard sees the directories is being asked
  }
  return std::any_of(call.problems.begin(), call.problems.end(),
                     [](const PathError& problem) { return problem.directories_in_doubt; });
}

std::optional<Veto> Guard::confinement_veto(const CallInFlight& call) const
{
  if (m_settings.confine_to.empty()) {
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
    const bool inside = where && std::any_of(m_settings.confine_to.begin(),
                                             m_settings.confine_to.end(),
                                             [&](const std::string& directory) {
                                               return is_within(*where, directory);
                                             });
    if (!inside) {
      Veto veto;
      veto.code = VetoCode::outside_confinement;
      veto.path = where.value_or(raw.value_or(""));
      veto.reason = joined(m_settings.confine_to, ", ");
      return veto;
    }
  }
  return std::nullopt;
}

std::optional<std::string> Guard::content_seen(const std::string& file)
{
  const SeenRecord* record = m_tracker.find(file);
  if (record == nullptr || record->hash_state != HashState::known) {
    return std::nullopt;
  }
  auto bytes = m_disk.read(file);
  if (!bytes || m_disk.hash_of(*bytes) != record->hash) {
    return std::nullopt; // it moved on since the check: nothing to vouch for
  }
  return std::move(bytes).value();
}

bool Guard::server_refuses(const std::string& file) const
{
  const PathContext& context = m_paths.context();
  if (context.rules != PathRules::server_filesystem || context.allowed_sets.empty()) {
    return false;
  }
  // The allowed directories are the server's: `file` as the server spells it.
  std::string mapped;
  const std::string_view spelled =
    context.map.empty() ? std::string_view(file) : std::string_view(mapped = server_spelling(file));
  return std::none_of(context.allowed_sets.begin(), context.allowed_sets.end(),
                      [&](const DirectorySet& set) {
                        return std::any_of(set.begin(), set.end(), [&](const std::string& dir) {
                          return is_within(spelled, dir);
                        });
                      });
}

void Guard::start(OutgoingLine line, const nlohmann::json& arguments,
                  std::unique_ptr<CallInFlight> owned, const std::string& key,
                  PendingRequest& entry, Outbox& out, Clock::time_point now)
{
  CallInFlight& call = *owned;
  if (changes_files(call.what.role)) {
    m_records.settle(m_client_name); // no change goes upstream while a read's hash or a change's record is owed
    if (entry.retry && m_settings.mode == Mode::enforce
        && settle_retry(line, owned, key, entry, out, now)) {
      return; // the person's answer in the 2026 era decided it
    }
    const auto began_ns = m_disk.now_ns();
    Verdict verdict = decide_change(call, line, arguments);
    if (m_settings.mode == Mode::enforce) {
      keep_refused(verdict, entry);
    }
    const auto latency_us = microseconds_between(began_ns, m_disk.now_ns());
    const auto& veto = verdict.veto;
    if (veto && m_settings.mode == Mode::enforce) {
      if (asks_person(*veto)) {
        audit(call, "ask", veto, latency_us, out);
        ask_person(std::move(line), arguments, std::move(call), key, std::move(verdict), out, now);
        return;
      }
      if (asks_in_answer(*veto, entry, line.text())) {
        audit(call, "ask", veto, latency_us, out);
        ask_in_answer(call, key, verdict, line.text(), out, now);
        return;
      }
      note_override_outcome(*verdict.veto, entry, line.text());
      veto_change(call, key, verdict, latency_us, out, now);
      return;
    }
    if (veto && m_settings.mode == Mode::warn) {
      out.say(LogLevel::warn, "would refuse (warn mode lets it through): "
                                + veto_text(call.what.tool, *veto, tool_names(tools())));
    }
    if (call.carried) {
      const bool rebase = call.carried->how == CarriedOver::How::rebase;
      audit(call, rebase ? "rebase" : "merge", verdict.carried_over, latency_us, out);
      if (m_settings.log_level >= LogLevel::info) {
        out.say(LogLevel::info, std::string(rebase ? "rebased " : "merged ") + call.what.tool
                                  + " onto a change made " + verdict.carried_over->cause + ": "
                                  + verdict.carried_over->path);
      }
    } else {
      audit(call, veto ? (m_settings.mode == Mode::warn ? "warn" : "off") : "allow", veto,
            latency_us, out);
    }
    if (call.what.role == ToolRole::write && call.expected && !call.carried
        && (m_records.kept().budget().total_bytes > 0 || view())) {
      // What the agent writes, it knows whole: kept once the write is done
      // (when only its raw JSON string is at hand, decoded only then, by
      // settle_reads()). With verify: upstream its text is the record,
      // whatever its size.
      if (call.written) { // as the reader decoded it
        if (!view() && call.written->bytes.size() > m_records.kept().budget().file_bytes) {
          call.written.reset();
        }
      } else if (const auto raw = skim_content_argument(line.text());
                 raw && (view() || raw->size() <= max_raw_json_string(m_records.kept().budget().file_bytes))) {
        call.written = WrittenContent{TextBytes::copy_of(*raw)};
      }
    } else {
      call.written.reset(); // not what goes to the file, or nothing to keep it for
    }
  } else {
    call.read_starts.reserve(call.files.size());
    for (auto& file : call.files) {
      if (file && server_refuses(*file)) {
        file.reset(); // the server will refuse it: fsguard reads nothing of it
      }
      call.read_starts.push_back(file ? m_tracker.begin_read(*file) : ReadStart{});
    }
    m_verification.begin_partial_checks(call, tools(), now);
  }
  forward(std::move(line), std::move(owned), entry, out, now);
}

void Guard::forward(OutgoingLine line, std::unique_ptr<CallInFlight> owned, PendingRequest& entry,
                    Outbox& out, Clock::time_point now)
{
  const CallInFlight& call = *owned;
  if (view() && changes_files(call.what.role)) {
    // A read fsguard asked earlier of a file this change touches (for a
    // call since given up on) tells of the file before it: nobody may rely
    // on its answer.
    for (const auto& file : call.files) {
      if (file) {
        view()->drop_asks_at(*file);
      }
    }
  }
  owned->started = now;
  mark_busy(call, +1);
  if (changes_files(call.what.role)) {
    forward_change_line(line);
  }
  entry.call = std::move(owned);
  out.to_upstream.push_back(std::move(line));
}

void Guard::veto_change(const CallInFlight& call, const std::string& key, Verdict& verdict,
                        std::int64_t latency_us, Outbox& out, Clock::time_point now)
{
  Veto& veto = *verdict.veto;
  if (m_era.era() == Era::handshake && m_settings.override_mode == Override::ask
      && !m_client_elicits && veto.override_outcome.empty() && may_override(veto.code)) {
    veto.person_unreachable = true;
  }
  const SeenRecord* record = verdict.shown ? m_tracker.find(verdict.shown->file) : nullptr;
  if (verdict.shown
      && (record == nullptr || record->hash_state != HashState::known
          || veto.seen_hash != record->hash)) {
    // Refused after the person was asked, and meanwhile the agent read the
    // file again (it may be gone since): the diff is over a version that
    // is no longer the agent's record, so it shows nothing whole.
    veto.counts_as_read = false;
    verdict.shown.reset();
  }
  // The same diff over the same record, shown by an earlier veto and not
  // yet taken in: this call was sent before the agent could read it. That
  // diff stands, from when it was shown.
  veto.repeats_shown_diff =
    verdict.shown
    && m_records.shows_not_taken_in(verdict.shown->file, verdict.shown->fingerprint.hash,
                                    record->hash, record->known_since);
  refuse(call, key, veto, out);
  audit(call, "veto", veto, latency_us, out);
  if (verdict.shown && !veto.repeats_shown_diff) {
    // The agent will have seen every line of this version: what it read
    // whole, and the complete diff. Calls that come once it could take
    // the diff in may rely on it; until then the record stays.
    m_records.remember_shown(ShownKnowledge{verdict.shown->file, now, verdict.shown->fingerprint,
                                  record->hash, record->known_since, record->hash});
    m_records.keep_text(verdict.shown->fingerprint.hash, TextBytes::copy_of(verdict.shown->text));
  }
}

bool Guard::asks_person(const Veto& veto) const
{
  // With verify: upstream fsguard could not tell, when the person allows it,
  // that the file still holds what they were shown: the veto stands.
  return m_settings.override_mode == Override::ask && m_client_elicits && !view()
         && may_override(veto.code);
}

void Guard::ask_person(OutgoingLine line, const nlohmann::json& arguments, CallInFlight call,
                       const std::string& key, Verdict verdict, Outbox& out,
                       Clock::time_point now)
{
  const std::string id = m_overrides.next_id();
  PendingRequest question;
  question.from = Peer::fsguard;
  question.id = id;
  question.method = "elicitation/create";
  question.expect = Expectation::override_answer;
  const std::string question_key = id_key(question.id);
  Veto shown_veto = *verdict.veto;
  shown_veto.path = server_spelling(shown_veto.path);
  if (!m_ledger.open_toward_client(question_key, std::move(question))) {
    veto_change(call, key, verdict, 0, out, now); // cannot happen: the number never repeats
    return;
  }
  // The person allows the write over the very bytes the question was made
  // from: a change landing after them is one they were not shown.
  PendingOverride pending;
  std::optional<FilePreview> preview;
  pending.shown = question_shown(*verdict.veto, preview);
  out.to_client.push_back(
    override_request(id, call.what.tool, shown_veto, preview ? &*preview : nullptr));
  mark_busy(call, +1); // the calls after it on its file wait for the answer
  pending.line = std::move(line).take();
  pending.arguments = arguments;
  pending.call = std::move(call);
  pending.key = key;
  pending.verdict = std::move(verdict);
  pending.asked = now;
  pending.deadline = now + m_settings.override_timeout;
  pending.question_id = id;
  m_overrides.add(question_key, std::move(pending));
}

void Guard::settle_override(const std::string& key, const nlohmann::json* answer,
                            std::string_view no_answer, Outbox& out, Clock::time_point now)
{
  auto taken = m_overrides.take(key);
  if (!taken) {
    return;
  }
  PendingOverride pending = std::move(*taken);
  mark_busy(pending.call, -1);
  if (m_ledger.find(Peer::upstream, pending.key) == nullptr) {
    release_held(out, now); // the call was answered already: nothing to forward or refuse
    return;
  }
  const OverrideReply reply = answer ? read_override_answer(*answer) : OverrideReply{};
  std::string outcome;
  if (answer == nullptr) {
    outcome = unanswered_outcome(no_answer);
  } else if (!person_allowed(reply, now - pending.asked)) {
    outcome = refused_reply_outcome(reply, now - pending.asked);
  } else {
    // Allowed for the content the person was shown: if the file moved on
    // meanwhile, that is a change nobody has seen.
    std::optional<ContentHash> now_holds;
    if (auto fingerprint = m_disk.fingerprint(pending.verdict.veto->path)) {
      now_holds = fingerprint->hash;
    }
    // The roots may have changed while the person decided: the path must
    // still name the file they were asked about.
    const auto what = describe_call(tools(), pending.call.what.tool, pending.arguments);
    const bool same_files =
      what
      && describe(pending.call.id, GuardedCall(*what), pending.call.expected)->files
           == pending.call.files;
    if (!same_files) {
      now_holds.reset();
    }
    // Decided again as every change is: the person's answer lifts the one
    // refusal they were asked about, and no other rule.
    ChangeDecision decision;
    if (now_holds == pending.shown && same_files) {
      decision = decide_accepted(pending.call, pending.line, pending.verdict.veto->code);
    }
    if (now_holds == pending.shown && same_files && decision.outcome != ChangeOutcome::veto) {
      audit(pending.call, "override", pending.verdict.veto, 0, out);
      out.say(LogLevel::info, "the user allowed " + pending.call.what.tool + " of "
                                + server_spelling(pending.verdict.veto->path));
      forward(std::move(pending.line), std::make_unique<CallInFlight>(std::move(pending.call)),
              *m_ledger.find(Peer::upstream, pending.key), out, now);
      release_held(out, now);
      return;
    }
    if (decision.outcome == ChangeOutcome::veto && decision.veto) {
      pending.verdict.veto = std::move(decision.veto);
      pending.verdict.shown.reset(); // the question's diff is not this veto's
      outcome = redecided_allow_outcome();
    } else {
      outcome = outdated_allow_outcome();
    }
  }
  pending.verdict.veto->override_outcome = std::move(outcome);
  audit(pending.call, "override_refused", pending.verdict.veto, 0, out);
  veto_change(pending.call, pending.key, pending.verdict, 0, out, now);
  release_held(out, now);
}

void Guard::on_client_gone(Outbox& out, Clock::time_point now)
{
  for (const auto& key : m_overrides.keys()) {
    m_ledger.close(Peer::client, key);
    settle_override(key, nullptr, "the client ended the session before it answered", out, now);
  }
}

Verdict Guard::decide_change(CallInFlight& call, OutgoingLine& line,
                             const nlohmann::json& arguments)
{
  call.licensed_extent.assign(call.files.size(), ReadExtent::whole);
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const auto& file = call.files[index];
    if (!file) {
      Veto veto;
      veto.code = VetoCode::unresolved_path;
      veto.path = call.what.paths[index].raw.value_or("");
      veto.reason = call.problems[index].reason;
      return {veto, {}, {}};
    }
    if (auto veto = unseen_veto(*file)) {
      return {veto, {}, {}};
    }
    const ChangePath path = change_path(call, index);
    if (path == ChangePath::edit) {
      // Taken first: a veto let through (warn, off) licenses nothing whole.
      call.licensed_extent[index] = m_tracker.extent_of(*file, call.sent_at);
    }
    ChangeFacts facts{path};
    if (path != ChangePath::move_source) {
      facts.check = m_tracker.check_write(*file, write_kind(path),
                                          m_settings.partial_read_allows_write, call.sent_at);
    }
    if (facts.check && facts.check->code == VetoCode::changed && call.files.size() == 1) {
      return stale_change(call, line, arguments, *file, std::move(*facts.check));
    }
    if (!facts.check) {
      facts.shown = shown_change(call, line.text(), path, *file);
    }
    ChangeDecision decision = decide(facts, *file);
    if (decision.outcome == ChangeOutcome::veto) {
      return {std::move(decision.veto), {}, {}};
    }
    if (path == ChangePath::edit && call.what.result_is_diff) {
      call.edit_base = content_seen(*file);
    }
  }
  return {};
}

ChangePath Guard::change_path(const CallInFlight& call, std::size_t index)
{
  // A move: the source loses nothing by moving. An existing destination is
  // replaced by some servers whatever their tool says, so it must have been
  // read whole, as for a write.
  const ChangePath moved = index == 1 ? ChangePath::move_destination : ChangePath::move_source;
  return call.what.role == ToolRole::move    ? moved
         : call.what.role == ToolRole::write ? ChangePath::write
                                             : ChangePath::edit;
}

ChangeDecision Guard::decide_accepted(const CallInFlight& call, std::string_view line,
                                      VetoCode accepted)
{
  m_records.settle(m_client_name);
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const auto& file = call.files[index];
    const ChangePath path = change_path(call, index);
    if (!file || path == ChangePath::move_source) {
      continue; // described as when it was asked about: its paths resolved then
    }
    ChangeFacts facts{ChangePath::accepted_override};
    facts.check = m_tracker.check_write(*file, write_kind(path),
                                        m_settings.partial_read_allows_write, call.sent_at);
    facts.shown = shown_change(call, line, path, *file);
    facts.accepted = accepted;
    ChangeDecision decision = decide(facts, *file);
    if (decision.outcome == ChangeOutcome::veto) {
      return decision;
    }
  }
  return {};
}

std::optional<std::string> Guard::written_text(const CallInFlight& call, std::string_view line,
                                               std::size_t max_bytes)
{
  if (call.written && !call.written->raw) {
    return call.written->bytes.size() <= max_bytes
             ? std::optional<std::string>(call.written->bytes.view())
             : std::nullopt;
  }
  const auto raw = skim_content_argument(line);
  return raw ? decoded_json_string(*raw, max_bytes) : std::nullopt;
}

bool Guard::keeps_shown_change(const SeenRecord& record, const std::optional<std::string>& written)
{
  const auto seen = m_records.kept().find(record.shown_over->hash);
  const auto shown = m_records.kept().find(record.shown_over->shown);
  return seen && shown && written && keeps_change(*seen, *shown, *written);
}

std::optional<std::string> Guard::checked_written_text(const CallInFlight& call,
                                                       std::string_view line)
{
  auto written = written_text(call, line, m_records.kept().budget().file_bytes);
  if (!written || !call.expected || m_disk.hash_of(*written) != *call.expected) {
    return std::nullopt;
  }
  return written;
}

ShownChange Guard::shown_change(const CallInFlight& call, std::string_view line, ChangePath path,
                                const std::string& file)
{
  const SeenRecord* record = m_tracker.find(file);
  if (!replaces_content(path) || !bound_to_shown_change(record, call.sent_at)) {
    return ShownChange::not_bound;
  }
  std::optional<std::string> leaves;
  if (path == ChangePath::move_destination) {
    // A move that replaces the file leaves the source's bytes in it.
    if (call.files.front()) {
      if (auto bytes = m_disk.read(*call.files.front());
          bytes && bytes->size() <= m_records.kept().budget().file_bytes) {
        leaves = std::move(bytes).value();
      }
    }
  } else {
    leaves = checked_written_text(call, line);
  }
  return keeps_shown_change(*record, leaves) ? ShownChange::kept : ShownChange::not_kept;
}

Verdict Guard::stale_change(CallInFlight& call, OutgoingLine& line,
                            const nlohmann::json& arguments, const std::string& file,
                                   Veto veto)
{
  Verdict verdict;
  const SeenRecord* record = m_tracker.find(file);
  if (record != nullptr && record->hash_state == HashState::known) {
    veto.seen_hash = record->hash;
  }
  auto now = m_disk.fingerprint(file);
  veto.cause = "outside fsguard";
  if (now) {
    veto.current_hash = now->hash;
    veto.current_size = now->stat.size; // of the version the diff shows
    veto.current_mtime_ns = now->stat.mtime_ns;
    veto.cause = m_records.cause_of(file, record, now->hash);
  }
  if (m_settings.mode != Mode::enforce) {
    verdict.veto = std::move(veto); // let through: the agent is shown nothing
    return verdict;
  }
  // What the agent saw, if it saw it whole and its text is kept; and the
  // bytes on disk now, if the file held still while they were taken.
  const auto seen =
    record != nullptr && veto.seen_hash && record->extent == ReadExtent::whole
        && record->whole_since != k_never
      ? m_records.kept().find(record->hash)
      : std::nullopt;
  const std::size_t limit = m_records.kept().budget().file_bytes;
  std::optional<std::string> current;
  if (seen && now && now->stat.size <= static_cast<std::int64_t>(limit)) {
    auto bytes = m_disk.read(file);
    if (bytes && m_disk.hash_of(*bytes) == now->hash) {
      current = std::move(bytes).value();
    }
  }
  if (current == std::nullopt) {
    verdict.veto = std::move(veto);
    return verdict;
  }
  const std::string_view seen_text = *seen; // no text is kept before this returns
  const std::string spelled = server_spelling(file);
  const bool text = now->traits.valid_utf8; // else a text view of it is lossy
  const auto describe = [&](const DiffBounds& bounds) {
    const TextDiff diff = diff_texts(seen_text, *current, spelled + "\t(as you last saw it)",
                                     spelled + "\t(on disk now)", bounds);
    veto.diff = diff.text;
    veto.diff_complete = diff.complete && text;
    veto.counts_as_read = veto.diff_complete;
    return diff;
  };
  const TextDiff diff = describe(m_settings.diff_bounds);
  const auto carry_over = [&](CarriedOver carried) {
    call.carried = std::move(carried);
    verdict.carried_over = std::move(veto);
    return verdict;
  };
  if (text && call.what.role == ToolRole::edit
      && m_settings.stale_edit == StaleEdit::rebase) {
    const auto edits = text_edits(arguments);
    if (!edits) {
      veto.not_rebased = "its edits are not all {oldText, newText} strings";
    } else if (auto rebased = rebase_edits(seen_text, *current, *edits,
                                           call.what.edit_semantics)) {
      call.edit_base = *current; // the upstream's diff applies to the current content
      if (!call.what.result_is_diff) {
        call.expected = m_disk.hash_of(rebased.value());
      }
      if (decide({.path = ChangePath::rebased_edit, .carried_over = veto}, file).outcome
          == ChangeOutcome::rebase) {
        return carry_over(CarriedOver{CarriedOver::How::rebase, *veto.seen_hash, now->hash,
                                      rebase_note(spelled, veto.cause, diff), veto.diff_complete,
                                      std::move(rebased).value()});
      }
    } else {
      veto.not_rebased = rebased.error().reason;
    }
  }
  if (text && call.what.role == ToolRole::write
      && m_settings.stale_write == StaleWrite::merge && call.expected) {
    const auto written = written_text(call, line.text(), limit);
    const bool own = written && m_disk.hash_of(*written) == *call.expected;
    // A write that does not keep a change fsguard showed before may have
    // been made from the version before it: merged, it would undo it.
    ChangeFacts facts{.path = ChangePath::merged_write, .carried_over = veto};
    if (own && bound_to_shown_change(record, call.sent_at)) {
      facts.shown = keeps_shown_change(*record, written) ? ShownChange::kept
                                                         : ShownChange::not_kept;
    }
    ChangeDecision decision = decide(facts, file);
    if (decision.outcome == ChangeOutcome::veto) {
      veto = std::move(*decision.veto); // the diff kept, and why it was not merged
    }
    const auto merged = own && decision.outcome == ChangeOutcome::merge
                          ? merge_write(seen_text, *written, *current)
                          : std::nullopt;
    if (merged && merged->clean) {
      if (auto rewritten = with_content(line.text(), merged->text)) {
        line = std::move(*rewritten);
        call.expected = m_disk.hash_of(merged->text);
        const TextDiff shown = diff_texts(*written, merged->text, "your content",
                                          "what was written", m_settings.diff_bounds);
        return carry_over(CarriedOver{CarriedOver::How::merge, *veto.seen_hash, now->hash,
                                      merge_note(spelled, veto.cause, shown), shown.complete,
                                      merged->text});
      }
    } else if (merged) {
      // The change and the conflicts share the room of one veto, which
      // clients must show whole.
      const DiffBounds half{m_settings.diff_bounds.max_lines / 2,
                            m_settings.diff_bounds.max_bytes / 2};
      describe(half);
      veto.conflict = conflict_hunks(merged->text, half);
    }
  }
  if (veto.counts_as_read
      && !client_shows_whole(
        veto_response(call.id, call.what.tool, veto, tool_names(tools()), m_era.era()))) {
    veto.counts_as_read = false; // the client cuts the veto: its diff is not seen whole
  }
  if (veto.counts_as_read) {
    verdict.shown = ShownVersion{file, *now, std::move(*current)};
  }
  verdict.veto = std::move(veto);
  return verdict;
}

bool Guard::client_shows_whole(std::string_view answer) const
{
  const auto limit = result_limit_for(m_client_name, m_settings.client_result_limits);
  return !limit || answer.size() <= *limit;
}

std::string Guard::server_spelling(const std::string& file) const
{
  return m_paths.context().map.to_server(file);
}

std::optional<Veto> Guard::unseen_veto(const std::string& file) const
{
  for (const auto& unseen : m_paths.unseen()) {
    if (!unseen.local.empty() && is_within(file, unseen.local)) {
      Veto veto;
      veto.code = VetoCode::not_visible;
      veto.path = file;
      veto.reason = unseen.server;
      veto.cause = unseen.other ? "the directory fsguard sees under that name is another one "
                                  "(the two were created at different times)"
                                : "it does not exist on fsguard's side, or path_map does not say "
                                  "where it is";
      return veto;
    }
  }
  return std::nullopt;
}

void Guard::refuse(const CallInFlight& call, const std::string& key, Veto veto, Outbox& out)
{
  veto.path = server_spelling(veto.path); // the agent knows the server's names
  out.to_client.push_back(
    veto_response(call.id, call.what.tool, veto, tool_names(tools()), m_era.era()));
  m_ledger.close(Peer::upstream, key);
  if (m_settings.log_level >= LogLevel::info) {
    out.say(LogLevel::info, "refused " + call.what.tool + " (" + std::string(to_string(veto.code))
                              + "): " + veto.path);
  }
}

void Guard::audit(const CallInFlight& call, std::string_view decision,
                  const std::optional<Veto>& veto, std::int64_t latency_us, Outbox& out) const
{
  if (!m_auditing) {
    return;
  }
  const std::string path = !call.files.empty() && call.files.front()
                             ? *call.files.front()
                             : (call.what.paths.empty() ? std::string()
                                                        : call.what.paths.front().raw.value_or(""));
  nlohmann::ordered_json fingerprint = nullptr;
  const auto size_json = [](std::int64_t size) { // null where unknown
    return size == k_unknown_size ? nlohmann::ordered_json() : nlohmann::ordered_json(size);
  };
  if (veto && veto->code == VetoCode::changed) {
    fingerprint = {{"seen_size", size_json(veto->seen_size)},
                   {"current_size", veto->current_size},
                   {"seen_at", format_time(veto->seen_at_ns)},
                   {"current_mtime", format_time(veto->current_mtime_ns)},
                   {"seen_xxh3_128", hash_json(veto->seen_hash)},
                   {"current_xxh3_128", hash_json(veto->current_hash)},
                   {"cause", veto->cause},
                   {"diff_complete", !veto->diff.empty() && veto->diff_complete}};
    if (call.carried) {
      fingerprint["result_xxh3_128"] = to_hex(m_disk.hash_of(call.carried->result));
    }
    if (!veto->conflict.empty()) {
      fingerprint["merge"] = "conflict";
    }
  } else if (const SeenRecord* record = path.empty() ? nullptr : m_tracker.find(path);
             record != nullptr && record->hash_state == HashState::known) {
    fingerprint = {{"size", size_json(record->size)}, {"xxh3_128", to_hex(record->hash)}};
  }
  out.decisions.push_back({
    {"event", "decision"},
    {"tool", call.what.tool},
    {"path", path},
    {"decision", decision},
    {"code", veto ? nlohmann::ordered_json(to_string(veto->code)) : nlohmann::ordered_json()},
    {"mode", to_string(m_settings.mode)},
    {"fingerprint", fingerprint},
    {"latency_us", latency_us},
  });
}

void Guard::on_upstream_request(const std::string& key, std::string_view method)
{
  PendingRequest entry;
  entry.from = Peer::upstream;
  entry.method = std::string(method);
  entry.expect = method == "roots/list" && m_paths.reads_roots() ? Expectation::roots
                                                                   : Expectation::relay;
  m_ledger.open(key, std::move(entry)); // a reused id keeps its first request
}

void Guard::on_client_response(OutgoingLine line, const nlohmann::json& response, Outbox& out,
                               Clock::time_point now)
{
  const std::string key = id_key(member(response, "id"));
  const auto answered = m_ledger.close(Peer::client, key);
  if (answered && answered.mapped().from == Peer::fsguard) {
    settle_override(key, &response, "", out, now); // fsguard's own: never relayed
    return;
  }
  const auto& id = member(response, "id");
  if (!answered && id.is_string() && id.get_ref<const std::string&>().starts_with(k_own_id_prefix)) {
    out.say(LogLevel::warn, "dropped the client's answer to " + id.get<std::string>()
                              + ", which fsguard is not waiting for");
    return; // an answer to fsguard's question that came too late, or never asked
  }
  out.to_upstream.push_back(std::move(line)); // the server hears it before fsguard asks
  if (answered && answered.mapped().expect == Expectation::roots) {
    m_paths.on_roots_result(response, out);
  }
}

void Guard::on_client_notification(OutgoingLine line, const nlohmann::json& notification,
                                   Outbox& out, Clock::time_point now)
{
  if (method_of(notification) != "notifications/cancelled") {
    out.to_upstream.push_back(std::move(line));
    return;
  }
  const auto& request_id = member(member(notification, "params"), "requestId");
  if (request_id.is_string()
      && request_id.get_ref<const std::string&>().starts_with(k_own_id_prefix)) {
    out.say(LogLevel::warn, "dropped the client's cancel of fsguard's own request "
                              + request_id.get<std::string>());
    return; // the client never sent it; its answer is fsguard's to read
  }
  const std::string key = id_key(request_id);
  PendingRequest* entry = request_id.is_null() ? nullptr : m_ledger.find(Peer::upstream, key);
  if (entry != nullptr && entry->from == Peer::client && entry->expect == Expectation::guarded_call
      && !entry->call) {
    // Held: the upstream never saw it, so it needs no cancel either.
    m_queue.drop_if([&](const Queue::Held& held) { return held.payload.key == key; });
    if (auto pending = m_overrides.take_for_call(key)) { // the person need not answer any more
      const nlohmann::json cancel = {
        {"jsonrpc", "2.0"},
        {"method", "notifications/cancelled"},
        {"params", {{"requestId", pending->second.question_id}, {"reason", "the call was cancelled"}}},
      };
      out.to_client.push_back(cancel.dump() + "\n");
      mark_busy(pending->second.call, -1);
      m_ledger.close(Peer::client, pending->first);
    }
    m_ledger.close(Peer::upstream, key);
    release_held(out, now);
    return;
  }
  if (entry != nullptr && entry->from == Peer::client && !entry->cancelled) {
    if (entry->call && !entry->call->expired) {
      // The upstream may still carry out a cancelled change, and will not
      // say: the file's content is unknown until it is read again.
      if (changes_files(entry->call->what.role)) {
        for (const auto& file : entry->call->files) {
          if (file) {
            m_tracker.mark_unknown(*file);
          }
        }
      }
      mark_busy(*entry->call, -1);
      entry->call->expired = true;
    }
    m_ledger.cancel(key);
  }
  out.to_upstream.push_back(std::move(line));
  release_held(out, now);
}

std::optional<std::size_t> Guard::answer_text_wanted(const Ledger::Answered& answered) const
{
  const PendingRequest* pending = answered.request();
  if (pending == nullptr || pending->expect != Expectation::guarded_call || !pending->call) {
    return std::nullopt;
  }
  const CallInFlight& call = *pending->call;
  if (call.what.role != ToolRole::read || call.what.extent != ReadExtent::whole
      || !keeps_text_shown(call)) {
    return std::nullopt;
  }
  return m_records.kept().budget().file_bytes;
}

bool Guard::keeps_text_shown(const CallInFlight& call) const
{
  return !view() && !call.what.path_list && call.files.size() == 1 && call.files.front()
         && call.what.view == ReadView::utf8_text && call.what.whole_if_status.empty()
         && m_records.kept().budget().total_bytes > 0;
}

void Guard::on_verify_answer(const std::string& key, const UpstreamRead& read, Outbox& out,
                             Clock::time_point now)
{
  const auto taken = m_verification.on_verify_answer(key, read, out);
  if (taken != UpstreamVerification::Answer::nothing) {
    release_held(out, now);
  }
  if (taken == UpstreamVerification::Answer::file_read) {
    view()->forget_all();
  }
}

bool Guard::on_upstream_response(Ledger::Answered answered_by_key, const std::string& key,
                                 UpstreamMessage& answer, Outbox& out, Clock::time_point now)
{
  const PendingRequest* pending = answered_by_key.request();
  if (pending == nullptr || (pending->expect == Expectation::guarded_call && !pending->call)) {
    return true; // answers nothing the upstream was asked: the client's business
  }
  auto closed = m_ledger.close(answered_by_key);
  PendingRequest& answered = closed.mapped();
  switch (answered.expect) {
  case Expectation::relay:
  case Expectation::roots:
  case Expectation::override_answer: // asked of the client: never answered by the upstream
    return true;
  case Expectation::initialize: {
    const nlohmann::json& response = answer.tree();
    if (!member(response, "result").is_object()) {
      m_ledger.initialize_failed(); // the client may correct it and send it again
      refuse_session_waits_after(response, out);
      return true;
    }
    m_paths.on_initialize_result(response, out);
    release_held(out, now); // the calls sent before, if the server has no directories to learn
    return true;
  }
  case Expectation::discover: {
    const bool own = answered.from == Peer::fsguard;
    const nlohmann::json& response = answer.tree();
    if ((member(response, "result").is_object() || own) && !m_paths.knows_server()) {
      // The first answer fixes the server for the session: a later one (a
      // client's own server/discover) cannot change its profile.
      // A server that refused fsguard's own server/discover is guarded as
      // one that never said which it is; the client's own refused one is
      // followed by its initialize (the SDK's fallback to the 2025 era).
      if (own && !member(response, "result").is_object()) {
        out.say(LogLevel::warn, "the upstream did not answer fsguard's server/discover, so "
                                "fsguard cannot tell which server it is");
      }
      m_paths.on_initialize_result(response, out);
      release_held(out, now); // the calls that waited to know the server, as after initialize
    }
    return !own;
  }
  case Expectation::own_listing:
  case Expectation::client_listing: {
    const bool own = answered.expect == Expectation::own_listing;
    if (own) {
      m_paths.listing_done();
    }
    m_paths.on_listing_result(answer.tree(),
                              answered.listing_sequence, own, out);
    after_listing(out, now);
    return !own;
  }
  case Expectation::own_probe:
    m_paths.on_probe_result(answer.tree(), answered.probed, out);
    after_listing(out, now);
    return false;
  case Expectation::own_verify:
    on_verify_answer(key, read_outcome(answer), out, now);
    return false;
  case Expectation::own_identity:
    on_identity_answer(key, identity_outcome(answer.tree()), out, now);
    return false;
  case Expectation::guarded_call:
    break;
  }
  CallInFlight& call = *answered.call;
  const auto drop_unused_checks = [&] { m_verification.drop_unused_checks(call); };
  if (call.expired) {
    drop_unused_checks();
    // It was given up on (cancelled, or no answer in time) and the calls
    // behind it went on: when it took effect is unknown.
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file);
        }
      }
    }
    return true;
  }
  // Marked idle before its answer is recorded, which looks at no call in
  // flight, so that the record may take the call's paths rather than copy them.
  mark_busy(call, -1);
  const bool relay =
    (changes_files(call.what.role) && unfinished_change(answered, answer, out, now))
    || record_answer(call, answer, out, now);
  drop_unused_checks();
  m_ledger.recycle(std::move(closed));
  release_held(out, now);
  return relay;
}

bool Guard::record_answer(CallInFlight& call, UpstreamMessage& answer, Outbox& out,
                          Clock::time_point now)
{
  const std::string_view line = answer.line();
  const SkimmedMessage& skimmed = answer.skimmed();
  DecodedAnswerText* const first_text = answer.first_text();
  // Most answers only need their outcome, which a skim finds without
  // parsing megabytes of file content; the rest need the text.
  bool relay = true;
  const bool is_read = call.what.role == ToolRole::read;
  const bool needs_text = call.what.path_list || !call.what.whole_if_status.empty()
                          || (call.what.role == ToolRole::edit && call.what.result_is_diff);
  const nlohmann::json* response = &null_value(); // the tree, when the skim cannot tell
  bool ok = false;
  const auto skimmed_ok = needs_text ? std::nullopt : skim_tool_succeeded(skimmed);
  const auto skimmed_content = is_read && !needs_text ? skim_shows_content(skimmed) : std::nullopt;
  if (skimmed_ok && (!is_read || skimmed_content)) {
    ok = *skimmed_ok && (!is_read || *skimmed_content);
  } else {
    response = &answer.tree();
    ok = succeeded(*response) && (!is_read || shows_content(*response));
  }
  if (!ok) {
    return true;
  }
  switch (call.what.role) {
  case ToolRole::read: {
    // Which files the answer showed: all of them, unless a list's answer
    // leaves some out (left empty otherwise: no allocation for a list of one).
    std::vector<bool> listed_shown;
    if (call.what.path_list) {
      std::vector<std::string> requested;
      for (const auto& argument : call.what.paths) {
        requested.push_back(argument.raw.value_or(""));
      }
      listed_shown = parts_read(result_text(*response), requested);
    }
    ReadExtent extent = call.what.extent;
    std::string reason;
    if (!call.what.whole_if_status.empty()) {
      const std::string_view text = result_text(*response);
      const std::string first_line(text.substr(0, text.find('\n')));
      if (!std::regex_match(first_line, std::regex(call.what.whole_if_status))) {
        extent = ReadExtent::partial;
      }
    }
    const std::size_t shown_bytes =
      skimmed.raw_result.empty() ? line.size() : skimmed.raw_result.size();
    if (const auto limit = result_limit_for(m_client_name, m_settings.client_result_limits);
        limit && shown_bytes > *limit && extent == ReadExtent::whole) {
      extent = ReadExtent::partial;
      reason = "the result of " + call.what.tool + " was about " + std::to_string(shown_bytes)
               + " characters long, and " + m_client_name + " shows the model only the first "
               + std::to_string(*limit);
    }
    const std::uint64_t shown_at = m_records.next_moment();
    if (view()) {
      m_verification.record_read(call, answer, *response, extent, reason, shown_at, tools(),
                                 m_era.own_envelope(), out);
    }
    std::optional<std::int64_t> owed_size; // the first file's, if its record owes a hash
    for (std::size_t index = 0; index < call.files.size() && !view(); ++index) {
      if (call.files[index] && (!call.what.path_list || listed_shown[index])) {
        const SeenRecord* record = m_tracker.finish_read(
          *call.files[index], call.read_starts[index], extent, call.what.view, reason, shown_at);
        if (index == 0 && record != nullptr && record->hash_state == HashState::owed
            && record->trusted_stat) {
          owed_size = record->trusted_stat->size;
        }
      }
    }
    if (extent == ReadExtent::whole && keeps_text_shown(call)) {
      // The text exactly as the agent saw it, kept once settle_reads() has
      // confirmed that it is the file's content. The call is done with its
      // path (on_upstream_response marked it idle first): the text takes it.
      const auto raw = skim_first_text(skimmed);
      if (raw && raw->size() <= max_raw_json_string(m_records.kept().budget().file_bytes)) {
        ShownText& shown =
          m_records.shown_read(ShownText{.file = std::move(*call.files.front()),
                                               .in_answer = *raw,
                                               .read = true,
                                               .shown_at = shown_at,
                                               .is_file_bytes = call.what.text_is_file_bytes,
                                               .owed_size = owed_size});
        if (first_text != nullptr && first_text->end == raw->data() + raw->size()) {
          // The very string, decoded as the answer was skimmed (one string
          // ends at one closing quote).
          shown.owned = std::move(first_text->decoded.text);
          shown.decoded = true;
          shown.facts = first_text->decoded.facts;
        }
      }
    }
    break;
  }
  case ToolRole::edit:
  case ToolRole::write: {
    if (!call.files.front()) {
      break;
    }
    std::string& file = *call.files.front();
    // What the change should have left, where fsguard can tell: a writer
    // that lands at the same moment is then not taken for the agent.
    std::optional<ContentHash> expected = call.expected;
    std::optional<std::string> expected_text; // with the hash `expected`
    if (call.what.role == ToolRole::edit && call.what.result_is_diff) {
      // Its diff applied to the content the edit was decided on.
      auto applied = call.edit_base ? apply_unified_diff(without_carriage_returns(*call.edit_base),
                                                         result_text(*response))
                                    : std::nullopt;
      if (!applied) {
        m_tracker.mark_unknown(file, "fsguard could not confirm what the last " + call.what.tool
                                       + " left in the file");
        break;
      }
      expected = m_disk.hash_of(*applied);
      expected_text = std::move(applied);
    } else if (call.carried) {
      expected_text = call.carried->result; // its hash is `expected`
    }
    ReadExtent extent =
      call.licensed_extent.empty() ? ReadExtent::partial : call.licensed_extent.front();
    std::uint64_t known_since = call.sent_at;
    if (call.carried) {
      // The agent learns of the other change from the note on this answer,
      // so only calls sent after it may rely on the result.
      nlohmann::ordered_json meta = {
        {"how", call.carried->how == CarriedOver::How::rebase ? "rebase" : "merge"},
        {"path", server_spelling(file)},
        {"seen_xxh3_128", to_hex(call.carried->seen)},
        {"current_xxh3_128", to_hex(call.carried->current)},
        {"diff_complete", call.carried->shows_whole},
      };
      auto noted = with_note(answer.line(), answer.skimmed(), call.carried->note, "fsguard/stale", meta);
      if (!noted) {
        m_tracker.mark_unknown(file, "fsguard could not tell you how it carried your last "
                                       + call.what.tool + " over to a change made elsewhere");
        break;
      }
      if (!call.carried->shows_whole || !client_shows_whole(*noted)) {
        extent = ReadExtent::partial; // the note's diff is cut, or the client cuts the note
      }
      out.to_client.push_back(std::move(*noted)); // before any call released after it
      relay = false;
      known_since = k_not_yet; // see take_in_shown()
    }
    if (view()) {
      m_verification.record_change(call, file, expected, expected_text, extent, known_since);
    }
    AnsweredChange change{.file = std::move(file),
                          .tool = call.what.tool,
                          .sent_at = call.sent_at,
                          .expected = expected,
                          .expected_text = std::move(expected_text),
                          .extent = extent,
                          .written = std::move(call.written)};
    if (!view() && !call.carried && change.expected) {
      // Recorded once the answer has gone on (settle_reads()): the agent
      // does not wait while fsguard reads and hashes the file. Only a
      // change whose result fsguard knows: another writer landing while
      // the answer goes to a slow client is then still told from the
      // agent (Tracker::finish_write); without it, the record is taken now.
      m_records.answered(std::move(change));
      break;
    }
    // The record the change left, looked up once for what follows.
    const SeenRecord* record =
      view() ? m_tracker.find(change.file)
             : m_tracker.finish_write(change.file, expected, extent, known_since,
                                      change.expected_bytes());
    if (known_since == k_not_yet && record != nullptr) {
      m_records.remember_shown(ShownKnowledge{change.file, now, std::nullopt, record->hash, k_not_yet,
                                    call.carried->seen});
    }
    m_records.after_change_recorded(std::move(change), record, m_client_name);
    break;
  }
  case ToolRole::move:
    if (call.files.size() == 2 && call.files[0] && call.files[1]) {
      m_tracker.finish_move(*call.files[0], *call.files[1]);
    }
    break;
  case ToolRole::other:
    break;
  }
  return relay;
}

void Guard::mark_busy(const CallInFlight& call, int delta)
{
  m_queue.busy().mark(file_use(call.what.role), files_of(call), delta);
}

void Guard::hold_again(Queue::Held& held, Attempt&& attempt)
{
  held.wait = attempt.outcome == Outcome::waiting_for_directories ? Queue::Wait::directories
              : attempt.outcome == Outcome::waiting_for_session   ? Queue::Wait::session
                                                                  : Queue::Wait::behind_calls;
  held.files.reset();
  if (attempt.call) {
    // As last described: later calls on its files wait behind it.
    held.files.emplace(file_use(attempt.call->what.role),
                       std::vector<std::optional<std::string>>(
                         std::make_move_iterator(attempt.call->files.begin()),
                         std::make_move_iterator(attempt.call->files.end())));
  }
}

void Guard::release_held(Outbox& out, Clock::time_point now)
{
  const bool knows_tools = m_paths.knows_server();
  m_queue.retry([&](Queue::Held& held) {
    if (held.wait == Queue::Wait::directories
        || (held.wait == Queue::Wait::session && !knows_tools)) {
      return false;
    }
    HeldCall& call = held.payload;
    OutgoingLine line(std::move(call.line));
    Attempt attempt = try_run(line, call.id, call.arguments,
                              describe_call(tools(), call.tool, call.arguments), // the map now
                              call.content, call.key, *m_ledger.find(Peer::upstream, call.key),
                              call.sent_at, out, now);
    if (attempt.outcome == Outcome::ran) {
      return true;
    }
    call.line = std::move(line).take(); // its own string again, not copied
    hold_again(held, std::move(attempt));
    return false;
  });
}

void Guard::after_listing(Outbox& out, Clock::time_point now)
{
  if (knows_session() && m_queue.any_waits(Queue::Wait::session)) {
    release_held(out, now); // the listing (or its last probe) completed the session
  }
  if (!m_queue.any_waits(Queue::Wait::directories)) {
    return;
  }
  if (m_paths.probing()) {
    return; // the last probe's answer releases them
  }
  if (m_paths.in_doubt() && m_listings.calls_wait()) {
    return; // the next try goes on the schedule (ListingSchedule)
  }
  // Known, or the tries are spent: awaits_directories() lets them through
  // to a decision with what is known.
  for (auto& held : m_queue.held()) {
    if (held.wait == Queue::Wait::directories) {
      held.wait = Queue::Wait::behind_calls;
    }
  }
  release_held(out, now);
}

void Guard::expire(Clock::time_point now, Outbox& out)
{
  m_states.forget_expired(
    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  bool any = false;
  m_ledger.for_each_guarded_call([&](const std::string& key, PendingRequest& entry) {
    CallInFlight& call = *entry.call;
    if (call.expired || now - call.started < m_settings.call_timeout) {
      return;
    }
    call.expired = true;
    any = true;
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file);
        }
      }
    }
    mark_busy(call, -1);
    out.say(LogLevel::warn,
            "the upstream has not answered " + call.what.tool + " " + key + " for "
              + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                 m_settings.call_timeout)
                                 .count())
              + " s; the calls held behind it go ahead, and its files must be read again");
  });
  // fsguard's own reads through the upstream unanswered that long: their
  // changes are refused, and partial reads license nothing.
  any = m_verification.expire(now - m_settings.call_timeout) || any;
  refuse_overdue_session_waits(now, out);
  // fsguard's own get_file_info unanswered that long: the changes it was
  // asked for are refused.
  any = !m_identity.expire(now - m_settings.call_timeout).empty() || any;
  // Calls that waited for the server's directories that long are decided
  // with what is known.
  bool overdue = false;
  for (auto& held : m_queue.held()) {
    if (held.wait == Queue::Wait::directories && now - held.arrived >= m_settings.call_timeout) {
      held.wait = Queue::Wait::behind_calls;
      overdue = true;
    }
  }
  if (overdue) {
    m_listings.lift_waits(true);
    release_held(out, now);
    m_listings.lift_waits(false);
  } else if (any) {
    release_held(out, now);
  }
  if (view()) {
    view()->forget_all(); // a failure no call took stays with none
  }
}

void Guard::refuse_session_waits_after(const nlohmann::json& refused_initialize, Outbox& out)
{
  const auto waits = [](const Queue::Held& held) { return held.wait == Queue::Wait::session; };
  const auto& message = member(member(refused_initialize, "error"), "message");
  const std::string said = message.is_string()
                             ? "its error: " + in_quotes(message.get_ref<const std::string&>())
                             : "it gave no error message";
  for (const Queue::Held& waiting : m_queue.held()) {
    if (!waits(waiting)) {
      continue;
    }
    const HeldCall& held = waiting.payload;
    answer_error(held.id, RpcError::server_error,
                 "fsguard: " + held.tool + " was sent before the server answered initialize, "
                   + "and the server refused initialize (" + said + "), so fsguard could not "
                   + "check the call and did not send it. Fix what the server's error names, "
                   + "then initialize again and call again.",
                 out);
    out.say(LogLevel::warn, "refused " + held.tool + " " + held.key
                              + ": it waited for an initialize the server refused");
    m_ledger.close(Peer::upstream, held.key);
  }
  m_queue.drop_if(waits);
}

void Guard::refuse_overdue_session_waits(Clock::time_point now, Outbox& out)
{
  const auto overdue = [&](const Queue::Held& held) {
    return held.wait == Queue::Wait::session && now - held.arrived >= m_settings.call_timeout;
  };
  if (std::none_of(m_queue.held().begin(), m_queue.held().end(), overdue)) {
    return;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(m_settings.call_timeout);
  const std::string waited = std::to_string(seconds.count()) + " s (call_timeout_s)";
  const bool initialized = m_paths.knows_server();
  const bool stateless = m_era.era() == Era::stateless; // no initialize: server/discover
  const std::string awaited =
    initialized ? "the server's answer to fsguard's own list_allowed_directories (or get_file_info "
                  "of those directories), which tells fsguard which files the server serves"
    : stateless ? "the server's answer to fsguard's own server/discover, which tells fsguard "
                  "which server it guards and how that server reads a call's paths"
                : "the server's answer to initialize, which tells fsguard which server it guards "
                  "and how that server reads a call's paths";
  const std::string remedy =
    initialized || stateless
      ? "Call again; if this keeps happening, the server does not answer fsguard: "
        "fsguard --check-setup shows what it sees."
      : "Call tools once the initialize result has come; if it never does, the server "
        "does not start or answer: fsguard --check-setup shows what it sees.";
  for (const Queue::Held& waiting : m_queue.held()) {
    if (!overdue(waiting)) {
      continue;
    }
    const HeldCall& held = waiting.payload;
    answer_error(held.id, RpcError::server_error,
                 "fsguard: " + held.tool + " waited " + waited + " for " + awaited
                   + ". It never came, so fsguard could not check the call and did not send it. "
                   + remedy,
                 out);
    out.say(LogLevel::warn, "refused " + held.tool + " " + held.key + ": it waited " + waited
                              + " for " + awaited);
    m_ledger.close(Peer::upstream, held.key);
  }
  m_queue.drop_if(overdue);
}

void Guard::tick(Clock::time_point now, Outbox& out)
{
  expire(now, out);
  for (const auto& key : m_overrides.due(now)) {
    const nlohmann::json cancel = {
      {"jsonrpc", "2.0"},
      {"method", "notifications/cancelled"},
      {"params", {{"requestId", m_overrides.find(key)->question_id}, {"reason", "no answer in time"}}},
    };
    out.to_client.push_back(cancel.dump() + "\n");
    m_ledger.close(Peer::client, key);
    settle_override(key, nullptr,
                    "no answer came within " + std::to_string(m_settings.override_timeout.count())
                      + " s, so fsguard withdrew the question",
                    out, now);
  }
  if (m_listings.tick(now, out)) {
    after_listing(out, now); // a listing given up on: the calls that waited for it
  }
}

void Guard::on_upstream_answer_dropped(std::string_view tail, std::size_t length,
                                       std::size_t limit, Outbox& out, Clock::time_point now)
{
  const std::string sizes = std::to_string(length) + " bytes, over max_line_bytes ("
                            + std::to_string(limit) + ")";
  const std::string_view raw_id = trailing_id(tail);
  const std::string key = raw_id.empty() ? std::string() : id_key_of_raw(raw_id);
  const PendingRequest* pending = key.empty() ? nullptr : m_ledger.find(Peer::upstream, key);
  if (pending == nullptr || (pending->expect == Expectation::guarded_call && !pending->call)) {
    out.say(LogLevel::error, "dropped an upstream message of " + sizes
                               + "; raise max_line_bytes in the config to relay it");
    return;
  }
  auto closed = m_ledger.close(Peer::upstream, key);
  PendingRequest& answered = closed.mapped();
  out.say(LogLevel::error, "dropped the upstream's answer to " + answered.method + " " + key
                             + " (" + sizes + ") and answered it with an error");
  if (answered.expect == Expectation::own_listing) {
    m_paths.listing_done();
    // Read as a listing that could not be read, so the calls that waited
    // for it are decided (with absolute paths alone) rather than time out.
    m_paths.on_listing_result(nlohmann::json(), 0, true, out);
    after_listing(out, now);
    return;
  }
  if (answered.expect == Expectation::own_probe) {
    m_paths.probe_done();
    after_listing(out, now); // it may have been the last one the session waited for
    return;
  }
  if (answered.expect == Expectation::own_identity) {
    ServerFileReport report;
    report.reason = "its answer to fsguard's get_file_info was " + sizes;
    on_identity_answer(key, std::move(report), out, now);
    return;
  }
  if (answered.expect == Expectation::own_verify) {
    on_verify_answer(key,
                     UpstreamRead{UpstreamRead::Outcome::failed, {},
                                  "the server's answer to fsguard's read of it was " + sizes},
                     out, now);
    return;
  }
  if (answered.call && !answered.call->expired) {
    const CallInFlight& call = *answered.call;
    if (changes_files(call.what.role)) {
      for (const auto& file : call.files) {
        if (file) {
          m_tracker.mark_unknown(*file, "the server's answer to the last change of it was too "
                                        "long for fsguard to relay");
        }
      }
    }
    mark_busy(call, -1);
  }
  const std::string text = "fsguard: the server's answer was " + sizes
                           + ", so fsguard could not relay it. Read large files in parts "
                             "(head/tail), or raise max_line_bytes in fsguard's config.";
  if (answered.from == Peer::client) {
    answer_error(answered.id, RpcError::internal_error, text, out);
  }
  release_held(out, now);
}

std::vector<nlohmann::json> Guard::take_unanswered()
{
  m_queue.clear();
  m_overrides.clear(); // their calls are among the client's requests below
  m_verification.clear();
  std::vector<nlohmann::json> ids;
  for (auto& request : m_ledger.take_client_requests()) {
    ids.push_back(std::move(request.id));
  }
  return ids;
}

} // namespace fsguard
