#include "proxy/guard/guard.hpp"

#include <algorithm>

#include "proxy/guard/change_decision.hpp"
#include "proxy/guard/guard_internal.hpp"
#include "tracker/joined.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "tracker/path.hpp"

namespace fsguard {

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

namespace {

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
  // A retry under an id still pending is refused below for the id, before
  // its requestState is checked: the person's answer stays good.
  if (method == "tools/call" && m_ledger.find(Peer::upstream, key) == nullptr
      && take_retry(line, request, content, entry.retry, out, now) == RetryTake::refused) {
    return; // a requestState claiming to be fsguard's that is not good
  }
  entry.from = Peer::client;
  entry.id = id;
  entry.method = std::string(method);
  std::optional<GuardedCall> what; // described once, for its first attempt too
  const std::string* guarded_name = nullptr;
  const std::optional<ClientFacts> facts = client_facts(request); // the 2026 era's envelope
  entry.envelope_elicits = facts && facts->era == Era::stateless && facts->elicits;
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
  const std::optional<ClientFacts> facts =
    call.scanned.envelope.empty() ? std::nullopt : envelope_facts_of_raw(call.scanned.envelope);
  opened->envelope_elicits = facts && facts->era == Era::stateless && facts->elicits;
  const bool opens_session = learn_client(facts, "tools/call");
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
  IdentityVerdict identity = prove_identity(call, out, now);
  if (identity.waits) {
    return {Outcome::held, std::move(call)}; // the server's report of its files first
  }
  if (identity.veto) {
    refuse(call, key, *identity.veto, out);
    audit(call, "veto", identity.veto, 0, out);
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
      if (asks_in_answer(*veto, entry)) {
        audit(call, "ask", veto, latency_us, out);
        ask_in_answer(call, arguments, key, verdict, out, now);
        return;
      }
      note_override_outcome(*verdict.veto, entry);
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

std::string Guard::server_spelling(const std::string& file) const
{
  return m_paths.context().map.to_server(file);
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
