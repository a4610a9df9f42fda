// libFuzzer target over the guard's call ordering: random interleavings of
// client requests, cancels, reused ids, upstream answers in any order,
// outside writers (whole rewrites, one line changed as a formatter does,
// deletions), config reloads (stale edits rebased, stale writes merged,
// read_ttl_s, override: ask), the person's answers to fsguard's questions
// (accept, decline, cancel, an error, none in time, a client that leaves)
// and the clock, driven against a model of what the agent knew. Two
// servers: server-filesystem and @agent-infra's fork; the model's server
// replaces a move's destination, as the fork's does. It checks the promise
// and the ledger's bookkeeping:
// - every change that fsguard forwards (a write, an edit, a rebased edit,
//   a merged write, a move onto a file, an accepted override) destroys
//   only content the agent knew, whole, when it sent the call (see
//   agent_model.hpp): the file's content as it saw it whole itself, or
//   a content that keeps, byte for byte, every line written since such a
//   version (the keep-the-change rule: what the agent knows only from
//   fsguard's own diffs and notes licenses no more); an edit needs any
//   view of the content it changes, or must land where it would have
//   landed on one and keep every line changed since (a rebase); with
//   read_ttl_s, the view must be that recent (a whole-file change: a whole
//   view); an accepted override may destroy only the content the person
//   was shown, if the file still holds it;
// - what the agent knows comes only from what it was shown: a read's
//   answer, its own writes and edits, and a veto's or a note's complete
//   diff, which the model applies itself to the content the agent had
//   seen, and which it takes in only k_take_in_time after it was shown;
// - the upstream never holds two pending requests with one id;
// - fsguard's own answers never reach the client;
// - once the upstream has answered everything and the clock has run out,
//   every request the client did not cancel has exactly one answer, and
//   nothing is held.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_model.hpp"
#include "fake_disk.hpp"
#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/guard.hpp"
#include "proxy/guard/upstream_intake.hpp"
#include "tracker/unified_diff.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;
using fsguard::testing::FakeDisk;
using namespace fsguard::fuzz;

namespace {

// FUZZ_TRACE=1 prints every line the guard sends, to replay a finding.
const bool k_trace = std::getenv("FUZZ_TRACE") != nullptr;

// Aborts, naming the line of the failed check, unless `condition` holds.
void check(bool condition, int line = __builtin_LINE())
{
  if (!condition) {
    std::fprintf(stderr, "fuzz_ledger: check on line %d failed\n", line);
    std::abort();
  }
}

const std::vector<std::string> k_files = {"/ws/f0.txt", "/ws/f1.txt", "/ws/f2.txt",
                                          "/ws/d/g.txt", "/ws/e/g.txt"};

struct Bytes {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;
  bool done() const { return at >= size; }
  unsigned next() { return at < size ? data[at++] : 0; }
};

// The session's setup, from the input's first byte.
struct Setup {
  bool upstream = false; // verify: upstream: fsguard learns files through its own reads
  bool fork = false;     // the server is @agent-infra's fork of server-filesystem
  bool elicits = false;  // the client declares elicitation: fsguard can ask the person
};

class Model {
public:
  explicit Model(Setup setup)
    : m_setup(setup), m_guard(m_disk, settings(), "/home", "/ws")
  {
    m_disk.make_directory("/ws");
    m_disk.make_directory("/ws/d");
    m_disk.write("/ws/f0.txt", "zero a\nzero b\nzero c\nzero d\nzero e\nzero f\n");
    m_disk.write("/ws/f1.txt", "one a\none b\none c\none d\none e\n");
    m_disk.write("/ws/d/g.txt", "gee a\ngee b\ngee c\ngee d\n");
    m_disk.advance(10'000'000'000LL);
    nlohmann::json capabilities = nlohmann::json::object();
    if (setup.elicits) {
      capabilities["elicitation"] = nlohmann::json::object();
    }
    send_request({{"jsonrpc", "2.0"}, {"id", "init"}, {"method", "initialize"},
                  {"params", {{"clientInfo", {{"name", "fuzz"}, {"version", "1"}}},
                              {"capabilities", capabilities}}}});
  }

  GuardSettings settings() const
  {
    GuardSettings settings;
    settings.call_timeout = std::chrono::seconds(10);
    settings.verify = m_setup.upstream ? Verify::upstream : Verify::local;
    return settings;
  }

  // The hash fsguard gives `content`: its disk's, or the upstream text's.
  ContentHash hash_of(const std::string& content) const
  {
    return m_setup.upstream ? hash_bytes(content) : fake_hash(content);
  }

  void step(Bytes& in)
  {
    m_agent.take_in(m_now);
    const unsigned op = in.next() % 16;
    const std::string& file = k_files[in.next() % k_files.size()];
    switch (op) {
    case 0:
    case 1:
      // The fork's read_file shows the whole file whatever it is asked.
      call(read_tool(), op == 1 && !m_setup.fork ? nlohmann::json{{"path", file}, {"head", 1}}
                                                 : nlohmann::json{{"path", file}});
      break;
    case 2:
      write(file, in.next(), in.next());
      break;
    case 3:
      edit(file, in.next(), in.next());
      break;
    case 4: {
      const bool folder = in.next() % 2 == 0;
      call("move_file", folder ? nlohmann::json{{"source", "/ws/d"}, {"destination", "/ws/e"}}
                               : nlohmann::json{{"source", file},
                                                {"destination", k_files[in.next() % 3]}});
      break;
    }
    case 5:
      cancel(in.next());
      break;
    case 6:
      reuse(in.next());
      break;
    case 7:
    case 8:
      answer(in.next(), in.next() % 8 == 0);
      break;
    case 9:
      outside_write(file, in.next(), in.next());
      break;
    case 10: {
      // The clocks: the disk's (file times, read_ttl_s) and the guard's
      // (the take-in time, the person's answer time, the timeouts).
      static constexpr int k_steps_ms[] = {0, 100, 200, 300, 1000, 2000, 11000, 31000};
      m_disk.advance(in.next() % 2 ? 4'000'000 : 3'000'000'000LL);
      m_now += std::chrono::milliseconds(k_steps_ms[in.next() % 8]);
      tick();
      break;
    }
    case 11: {
      // An answer to nothing pending, or to a held call's id.
      const nlohmann::json id = in.next() % 2 ? nlohmann::json(m_next_id) : nlohmann::json(999);
      deliver_answer(id, {{"content", {{{"type", "text"}, {"text", "bogus"}}}}}, nullptr);
      break;
    }
    case 12:
      reload(in.next(), in.next());
      break;
    case 15:
      if (in.next() % 8 == 0) {
        client_gone();
        break;
      }
      [[fallthrough]];
    case 13:
    case 14:
      answer_question(in.next(), in.next(), in.next());
      break;
    }
  }

  // Lets the upstream answer everything, the clock run out (questions to
  // the person go unanswered), and checks that every request the client
  // did not cancel got exactly one answer.
  void drain()
  {
    for (int round = 0; round < 200 && (!m_upstream.empty() || m_guard.holds_calls()); ++round) {
      while (!m_upstream.empty()) {
        answer(0, false);
      }
      m_now += std::chrono::seconds(11);
      tick();
    }
    check(m_upstream.empty() && !m_guard.holds_calls());
    for (const auto& [key, sent] : m_sent) {
      const int answers = m_answers[key];
      if (m_ever_cancelled.contains(key)) {
        check(answers <= sent);
      } else {
        check(answers == sent);
      }
    }
  }

private:
  struct Forwarded {
    nlohmann::json request;
    std::string key;
  };

  // A line never seen before in any file.
  std::string fresh_line(const char* kind) { return kind + std::to_string(m_fresh++) + "\n"; }

  // One of the contents the agent knows `file` to hold, picked by `pick`.
  std::optional<std::string> known_content(const std::string& file, unsigned pick)
  {
    const Known& known = m_agent.known(file);
    if (known.empty()) {
      return std::nullopt;
    }
    auto entry = known.begin();
    std::advance(entry, static_cast<long>(pick % known.size()));
    return entry->first;
  }

  // The agent writes a content it knows with one line changed, the same
  // content again, or something new.
  void write(const std::string& file, unsigned pick, unsigned how)
  {
    auto content = known_content(file, pick);
    if (!content || how % 8 == 0) {
      content = fresh_line("w");
    } else if (how % 8 != 1) {
      auto lines = lines_of(*content);
      lines[how % lines.size()] = fresh_line("w");
      content = joined_lines(lines);
    }
    call("write_file", {{"path", file}, {"content", *content}});
  }

  // The agent edits one line of a content it knows (or guesses one).
  void edit(const std::string& file, unsigned pick, unsigned line)
  {
    const auto content = known_content(file, pick);
    std::string old_text = "zero a\n";
    if (content) {
      const auto lines = lines_of(*content);
      old_text = lines[line % lines.size()];
    }
    call("edit_file", {{"path", file},
                       {"edits", {{{"oldText", old_text}, {"newText", fresh_line("e")}}}}});
  }

  void call(const std::string& tool, const nlohmann::json& arguments)
  {
    m_agent.take_in(m_now);
    const int id = m_next_id++;
    // What the agent knew when it sent the call is all it can have used,
    // counting the moves it had sent: it knows where they put the files.
    std::vector<AgentModel::Move> moves;
    for (const auto& [key, move] : m_pending_moves) {
      moves.push_back(move);
    }
    const auto& effective = m_agent.send(id_key(id), moves);
    if (tool == "write_file") {
      m_agent.learn(arguments["path"], arguments["content"], Knowledge{true, true});
    } else if (tool == "edit_file") {
      // The agent knows its edit applied to whatever it knew the file to
      // hold, its own pending changes included, as well as it knew that.
      const auto& edit = arguments["edits"][0];
      m_pending_edits.push_back({id_key(id), arguments["path"], edit["oldText"], edit["newText"]});
      if (const auto known = effective.find(arguments["path"]); known != effective.end()) {
        for (const auto& [content, knowledge] : known->second) {
          if (auto edited = replaced_once(content, edit["oldText"], edit["newText"])) {
            m_agent.learn(arguments["path"], *edited, knowledge);
          }
        }
      }
    } else if (tool == "move_file") {
      m_pending_moves[id_key(id)] = {arguments["source"], arguments["destination"]};
    }
    send_request({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                  {"params", {{"name", tool}, {"arguments", arguments}}}});
  }

  void send_request(const nlohmann::json& request)
  {
    const std::string key = id_key(request["id"]);
    ++m_sent[key];
    const auto& arguments = member(member(request, "params"), "arguments");
    if (k_trace) {
      std::fprintf(stderr, "client sends %s\n", request.dump().substr(0, 160).c_str());
    }
    if (member(member(request, "params"), "name") == "write_file") {
      m_sent_contents[key] = arguments["content"]; // ids of writes are never reused
    }
    // Taken as the relay takes a line (ClientIntake): a plain call unparsed
    // but for a guarded one's arguments, the rest parsed (the model holds
    // both to one account). Both ways stay in play: every third plain
    // guarded call spells its key "name" with an escape, which only the
    // full parse reads; every other write carries a number past 64 bits,
    // which leaves it to the full parser, which hands its content on
    // hashed only, as a long content is (then it is read from the line).
    std::string line = request.dump();
    if (member(arguments, "content").is_string() && ++m_content_arguments % 2 != 0) {
      const std::string at = R"("arguments":{)";
      line.insert(line.find(at) + at.size(), R"("note":18446744073709551616,)");
    } else if (guarded_tool(member(member(request, "params"), "name"))
               && ++m_plain_guarded % 3 == 0) {
      line.replace(line.rfind(R"("name")"), 6, R"("n\u0061me")");
    }
    // Borrowed from a reader's buffer, overwritten once the guard took it
    // (as the relay's reader reads on): whatever the guard kept uncopied
    // would show it.
    m_reader_buffer = line + "\n";
    Outbox out;
    m_client.take(OutgoingLine::borrowed(m_reader_buffer), m_now, out);
    out.own_lines(); // as the relay writes them before it reads on
    std::fill(m_reader_buffer.begin(), m_reader_buffer.end(), '#');
    take(out);
  }

  // Whether the model's guard guards calls of the tool named `name`.
  static bool guarded_tool(const nlohmann::json& name)
  {
    return name.is_string() && name != "list_directory" && name != "list_allowed_directories";
  }

  void cancel(unsigned pick)
  {
    if (m_next_id == 1) {
      return;
    }
    const int id = 1 + static_cast<int>(pick % static_cast<unsigned>(m_next_id - 1));
    const nlohmann::json notification = {{"jsonrpc", "2.0"},
                                         {"method", "notifications/cancelled"},
                                         {"params", {{"requestId", id}}}};
    const std::string key = id_key(id);
    if (m_sent[key] > m_answers[key]) {
      m_ever_cancelled.insert(key);
      const bool forwarded = std::any_of(m_upstream.begin(), m_upstream.end(),
                                         [&](const Forwarded& f) { return f.key == key; });
      if (forwarded) {
        m_cancelled_now.insert(key); // its answer, if any, the client ignores
      } else {
        ++m_answers[key]; // held: fsguard drops it, and it will never be answered
      }
    }
    Outbox out;
    const std::string line = notification.dump() + "\n";
    m_client.take(OutgoingLine::borrowed(line), m_now, out);
    out.own_lines();
    take(out);
  }

  void reuse(unsigned pick)
  {
    if (m_next_id == 1) {
      return;
    }
    const int id = 1 + static_cast<int>(pick % static_cast<unsigned>(m_next_id - 1));
    send_request({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                  {"params", {{"name", read_tool()}, {"arguments", {{"path", k_files[0]}}}}}});
  }

  std::string read_tool() const { return m_setup.fork ? "read_file" : "read_text_file"; }

  // A config reload: what becomes of stale edits and writes, how much text
  // is kept and shown, read_ttl_s, and whether fsguard asks the person.
  void reload(unsigned how, unsigned more)
  {
    GuardSettings changed = settings();
    changed.stale_edit = how % 2 ? StaleEdit::veto : StaleEdit::rebase;
    changed.stale_write = how / 2 % 2 ? StaleWrite::merge : StaleWrite::veto;
    if (how / 4 % 4 == 0) {
      changed.kept_texts.total_bytes = 0;
    }
    if (how / 16 % 4 == 0) {
      changed.diff_bounds.max_lines = 6;
    }
    m_ttl = std::chrono::seconds(more % 3 == 0 ? 5 : 0);
    if (k_trace) {
      std::fprintf(stderr, "reload: stale_edit %s, stale_write %s, read_ttl_s %lld, override %s\n",
                   how % 2 ? "veto" : "rebase", how / 2 % 2 ? "merge" : "veto",
                   static_cast<long long>(m_ttl.count()), more / 3 % 2 ? "ask" : "never");
    }
    changed.read_ttl = m_ttl;
    changed.override_mode = more / 3 % 2 ? Override::ask : Override::never;
    m_guard.set_settings(changed);
  }

  void tick()
  {
    Outbox out;
    m_guard.tick(m_now, out);
    take(out);
  }

  // The client answers one of fsguard's open questions to the person,
  // `delay` after the last step: allow, accept without allow, decline,
  // cancel, an error, or something else.
  void answer_question(unsigned pick, unsigned how, unsigned delay)
  {
    if (m_questions.empty()) {
      return;
    }
    auto question = m_questions.begin();
    std::advance(question, static_cast<long>(pick % m_questions.size()));
    const Question asked = question->second;
    m_questions.erase(question);
    m_now += std::chrono::milliseconds(delay % 2 ? 1500 : 0);
    static const nlohmann::json k_results[] = {
      {{"action", "accept"}, {"content", {{"allow", true}}}},
      {{"action", "accept"}, {"content", {{"allow", false}}}},
      {{"action", "decline"}},
      {{"action", "cancel"}},
      nullptr,
      {{"shrug", true}},
    };
    const nlohmann::json& result = k_results[how % 6];
    nlohmann::json response = {{"jsonrpc", "2.0"}, {"id", asked.id}};
    if (result.is_null()) {
      response["error"] = {{"code", -32603}, {"message", "no"}};
    } else {
      response["result"] = result;
    }
    if (how % 6 == 0) {
      m_allowed = asked; // the one change the guard may forward now
    }
    if (k_trace) {
      std::fprintf(stderr, "client answers %s\n", response.dump().c_str());
    }
    Outbox out;
    m_guard.on_client_response(response.dump() + "\n", response, out, m_now);
    take(out);
    m_allowed.reset();
  }

  void client_gone()
  {
    Outbox out;
    m_guard.on_client_gone(out, m_now);
    m_questions.clear();
    take(out);
  }

  // Takes what the guard sent: checks each forwarded change against the
  // agent's view, learns what each veto showed the agent, and notes the
  // questions to the person.
  void take(Outbox& out)
  {
    if (k_trace) {
      for (const auto& line : out.to_upstream) {
        std::fprintf(stderr, "-> upstream %.*s", static_cast<int>(line.text().size()), line.text().data());
      }
      for (const auto& line : out.to_client) std::fprintf(stderr, "-> client %s\n", line.substr(0, 4000).c_str());
    }
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      const auto& id = member(message, "id");
      if (message.contains("method")) {
        take_request(message);
        continue;
      }
      check(!(id.is_string() && id.get<std::string>().starts_with("fsguard/")));
      ++m_answers[id_key(id)];
      learn_from_veto(message);
    }
    for (const auto& line : out.to_upstream) {
      const auto message = nlohmann::json::parse(line.text());
      if (!message.contains("id")) {
        continue; // a cancel
      }
      if (!message.contains("method")) {
        check(false); // only a question's answer would be one: never relayed
      }
      const std::string key = id_key(message["id"]);
      for (const auto& pending : m_upstream) {
        check(pending.key != key);
      }
      check_change_is_safe(message);
      m_upstream.push_back({message, key});
    }
    out = Outbox{};
  }

  // A request or notification of fsguard's to the client: a question to
  // the person (its file as it holds now is what the person is shown), or
  // the question's withdrawal.
  void take_request(const nlohmann::json& message)
  {
    const auto& params = member(message, "params");
    if (message["method"] == "notifications/cancelled") {
      m_questions.erase(id_key(member(params, "requestId")));
      return;
    }
    check(message["method"] == "elicitation/create");
    const auto& id = message["id"];
    check(id.is_string() && id.get<std::string>().starts_with("fsguard/"));
    // "Let the agent's \"write_file\" of \"/ws/f0.txt\" go ahead once"
    const std::string what = params["requestedSchema"]["properties"]["allow"]["description"];
    const auto start = what.find(" of \"");
    const auto end = what.rfind("\" go ahead");
    check(start != std::string::npos && end != std::string::npos && end > start + 5);
    const std::string file = what.substr(start + 5, end - start - 5);
    m_questions[id_key(id)] = Question{id, file, m_disk.content(file)};
  }

  // A known content of `file` whose hash is `hex`, if the agent knows one
  // (whole, if `whole_needed`), or is taking one in.
  std::optional<std::string> known_with_hash(const std::string& file, const nlohmann::json& hex,
                                             bool whole_needed) const
  {
    return m_agent.find(file, [&](const std::string& content, const Knowledge& knowledge) {
      return (knowledge.whole || !whole_needed) && hex.is_string()
             && to_hex(hash_of(content)) == hex;
    });
  }

  // A veto that says it counts as a read: the agent applies its diff to
  // the whole content it saw, and knows the result whole, once it could
  // take the veto in; only from fsguard's text, though.
  void learn_from_veto(const nlohmann::json& message)
  {
    const auto& veto = member(member(member(message, "result"), "_meta"), "fsguard/veto");
    if (!veto.is_object() || member(veto, "counts_as_read") != true) {
      return;
    }
    const std::string text = message["result"]["content"][0]["text"];
    const std::string path = veto["path"];
    const auto seen = known_with_hash(path, member(veto, "seen_xxh3_128"), true);
    check(seen.has_value()); // a diff from a version the agent never saw whole shows nothing
    const auto now = apply_unified_diff(*seen, fenced_diff_in(text));
    check(now.has_value());
    m_agent.show(path, *now, m_now);
  }

  // The agent is shown `path` as it is now, whole or in part, by the
  // answer to `forwarded`, unless the client cancelled it. Before the
  // answer goes in: the calls it releases are decided on the clock it sets.
  void viewed(const Forwarded& forwarded, const std::string& path, bool whole)
  {
    if (!m_cancelled_now.contains(forwarded.key)) {
      m_agent.viewed(path, whole, m_disk.now_ns());
    }
  }

  // Whether the person allowed this change of `file`, now holding `now`:
  // the question showed them the file as it holds now.
  bool person_allowed(const std::string& file, const std::optional<std::string>& now)
  {
    if (!m_allowed || m_allowed->file != file || m_allowed->shown != now) {
      return false;
    }
    m_allowed.reset(); // for this one change
    return true;
  }

  // Whether a change that leaves `leaves` (nothing: not known) in `file`,
  // sent as call `key`, destroys only content the agent knew whole when it
  // sent it, recently enough for read_ttl_s; or the person allowed it.
  bool replaces_only_known(const std::string& key, const std::string& file,
                           const std::optional<std::string>& leaves)
  {
    const auto now = m_disk.content(file);
    if (!now) {
      return true; // nothing there to lose (missing, or a directory the server refuses)
    }
    if (person_allowed(file, now)) {
      return true;
    }
    if (!m_agent.recent(file, true, m_ttl, m_disk.now_ns())) {
      return m_agent.unsafe(key, file, *now, "its last whole view is older than read_ttl_s");
    }
    return m_agent.replaces_only_known(key, file, *now, leaves);
  }

  // Whether the edit `edit` of `file`, sent as call `key`, changes only
  // content the agent had a view of when it sent it (or rebased), recently
  // enough for read_ttl_s; or the person allowed it.
  bool edits_only_known(const std::string& key, const std::string& file, const nlohmann::json& edit)
  {
    const auto now = m_disk.content(file);
    if (!now) {
      return true;
    }
    if (person_allowed(file, now)) {
      return true;
    }
    if (!m_agent.recent(file, false, m_ttl, m_disk.now_ns())) {
      return m_agent.unsafe(key, file, *now, "its last view is older than read_ttl_s");
    }
    return m_agent.edits_only_known(key, file, *now, edit["oldText"], edit["newText"]);
  }

  // Every change forwarded, by the path it destroys bytes by: a write (its
  // content as sent, or merged), an edit (as sent: a rebase forwards it
  // unchanged), a move's destination (the source's bytes replace it).
  void check_change_is_safe(const nlohmann::json& request)
  {
    if (request["method"] != "tools/call") {
      return;
    }
    const std::string key = id_key(request["id"]);
    const std::string tool = request["params"]["name"];
    const auto& arguments = request["params"]["arguments"];
    if (tool == "write_file") {
      // As sent, or merged with the change since (the content is not the
      // client's then): either way, what it leaves.
      check(replaces_only_known(key, arguments["path"], arguments["content"].get<std::string>()));
    } else if (tool == "edit_file") {
      check(edits_only_known(key, arguments["path"], arguments["edits"][0]));
    } else if (tool == "move_file") {
      check(replaces_only_known(key, arguments["destination"], m_disk.content(arguments["source"])));
    }
  }

  void answer(unsigned pick, bool empty)
  {
    if (m_upstream.empty()) {
      return;
    }
    const std::size_t index = pick % m_upstream.size();
    Forwarded forwarded = m_upstream[index];
    m_upstream.erase(m_upstream.begin() + static_cast<long>(index));
    const auto& request = forwarded.request;
    const std::string method = request["method"];
    if (method == "initialize") {
      deliver_answer(request["id"],
                     {{"serverInfo", {{"name", "secure-filesystem-server"},
                                      {"version", m_setup.fork ? "1.2.29" : "0.2.0"}}}},
                     &forwarded);
      return;
    }
    const std::string tool = request["params"]["name"];
    const auto& arguments = request["params"]["arguments"];
    const auto text = [](const std::string& shown) {
      return nlohmann::json{{"content", {{{"type", "text"}, {"text", shown}}}}};
    };
    const nlohmann::json failed = {{"content", {{{"type", "text"}, {"text", "error"}}}},
                                   {"isError", true}};
    if (tool == "list_allowed_directories") {
      deliver_answer(request["id"], text("Allowed directories:\n/ws"), &forwarded);
      return;
    }
    const std::string path = arguments.value("path", "");
    const auto content = m_disk.content(path);
    if (tool == "read_text_file" || tool == "read_file") {
      const nlohmann::json missing = {
        {"content", {{{"type", "text"}, {"text", "ENOENT: no such file or directory, open '" + path + "'"}}}},
        {"isError", true}};
      if (!content || empty) {
        deliver_answer(request["id"],
                       content ? nlohmann::json::object()
                               : (m_disk.stat(path) ? failed : missing),
                       &forwarded);
        return;
      }
      const bool head = arguments.contains("head");
      const std::string shown = head ? lines_of(*content).front() : *content;
      viewed(forwarded, path, !head);
      if (deliver_answer(request["id"], text(shown), &forwarded)) {
        m_agent.learn(path, *content, Knowledge{!head, !head});
        if (!head) {
          learn_pending_edits(path, *content);
        }
      }
    } else if (tool == "write_file") {
      const std::string written = arguments["content"];
      if (!m_disk.stat(parent(path))) {
        deliver_answer(request["id"], failed, &forwarded);
        return;
      }
      m_disk.replace(path, written);
      nlohmann::json shown;
      viewed(forwarded, path, true); // its own write
      if (deliver_answer(request["id"], text("Successfully wrote"), &forwarded, &shown)) {
        learn_from_note(shown, path, m_sent_contents[forwarded.key]);
      }
    } else if (tool == "edit_file") {
      std::erase_if(m_pending_edits, [&](const PendingEdit& pending) { return pending.key == forwarded.key; });
      const auto& edit = arguments["edits"][0];
      const auto edited = content ? replace_first(*content, edit["oldText"], edit["newText"])
                                  : std::nullopt;
      if (!edited) {
        deliver_answer(request["id"], failed, &forwarded);
        return;
      }
      m_disk.replace(path, *edited);
      nlohmann::json shown;
      viewed(forwarded, path, true); // its own edit: read_ttl_s counts from it, as from a write
      if (deliver_answer(request["id"], text(diff_replacing(*content, *edited)), &forwarded, &shown)) {
        m_agent.learn(path, *edited, Knowledge{}); // the diff shows the edited lines
        learn_from_note(shown, path, *content);
      }
    } else if (tool == "move_file") {
      m_pending_moves.erase(forwarded.key);
      move(arguments["source"], arguments["destination"], forwarded, failed);
    } else {
      deliver_answer(request["id"], failed, &forwarded);
    }
  }

  // A note on a stale change fsguard carried over: the agent applies the
  // note's diff to what it knows, and knows the result whole (from
  // fsguard's text, once it could take it in) when the diff is complete
  // and it knew its starting point whole. For a rebase the
  // diff goes from the version it had seen to `before` (the edit's base,
  // which the server's full diff shows); for a merge from `before` (its
  // own content) to what was written.
  void learn_from_note(const nlohmann::json& shown, const std::string& path,
                       const std::string& before)
  {
    const auto& stale = member(member(member(shown, "result"), "_meta"), "fsguard/stale");
    if (!stale.is_object()) {
      return;
    }
    const std::string note = shown["result"]["content"].back()["text"];
    const auto on_disk = m_disk.content(path);
    if (member(stale, "how") == "rebase") {
      const auto seen = known_with_hash(path, member(stale, "seen_xxh3_128"), false);
      check(seen.has_value());
      const bool whole = known_with_hash(path, member(stale, "seen_xxh3_128"), true).has_value();
      const auto base = apply_unified_diff(*seen, fenced_diff_in(note));
      if (member(stale, "diff_complete") == true && whole && base == before && on_disk) {
        m_agent.show(path, *on_disk, m_now);
      }
    } else {
      const auto merged = apply_unified_diff(before, fenced_diff_in(note));
      if (member(stale, "diff_complete") == true && merged && on_disk && *merged == *on_disk) {
        m_agent.show(path, *merged, m_now);
      }
    }
  }

  // `text` with the first occurrence of `old_text` replaced, as
  // server-filesystem's edit_file does (nothing if there is none).
  static std::optional<std::string> replace_first(std::string text, const std::string& old_text,
                                                  const std::string& new_text)
  {
    const auto at = text.find(old_text);
    if (at == std::string::npos) {
      return std::nullopt;
    }
    return text.replace(at, old_text.size(), new_text);
  }

  // A unified diff that replaces every line of `before` by those of
  // `after` (whose lines all end in "\n"), in edit_file's answer's shape.
  static std::string diff_replacing(const std::string& before, const std::string& after)
  {
    const auto old_lines = lines_of(before);
    const auto new_lines = lines_of(after);
    std::string diff = "```diff\n--- f\toriginal\n+++ f\tmodified\n@@ -1,"
                       + std::to_string(old_lines.size()) + " +1,"
                       + std::to_string(new_lines.size()) + " @@\n";
    for (const auto& line : old_lines) diff += "-" + line;
    for (const auto& line : new_lines) diff += "+" + line;
    return diff + "```\n\n";
  }

  static std::string parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

  // Renames `source` to `destination`, replacing a file there (as some
  // servers do), and answers.
  void move(const std::string& source, const std::string& destination, const Forwarded& forwarded,
            const nlohmann::json& failed)
  {
    const auto from = m_disk.stat(source);
    if (!from || !m_disk.stat(parent(destination))
        || (m_disk.stat(destination) && m_disk.stat(destination)->is_directory())) {
      deliver_answer(forwarded.request["id"], failed, &forwarded);
      return;
    }
    std::map<std::string, std::string> moved; // new path -> content
    for (const auto& file : k_files) {
      if (file == source || file.starts_with(source + "/")) {
        if (const auto content = m_disk.content(file)) {
          moved[destination + file.substr(source.size())] = *content;
          m_disk.remove(file);
        }
      }
    }
    if (from->is_directory()) {
      m_disk.remove(source);
      m_disk.make_directory(destination);
    }
    for (const auto& [path, content] : moved) {
      m_disk.replace(path, content);
    }
    // The move is done on disk: what the agent knew of the old names it now
    // knows of the new ones, and so did every call it sent after the move
    // (those may be released by the answer below).
    m_agent.moved(forwarded.key, source, destination);
    deliver_answer(forwarded.request["id"],
                   nlohmann::json{{"content", {{{"type", "text"}, {"text", "moved"}}}}}, &forwarded);
  }

  // The upstream answers `id` with `result`. Returns true when the agent
  // takes the answer in: relayed, or fsguard's version of it sent, and the
  // client still waits for it. `shown`, if given, receives what the client
  // got.
  bool deliver_answer(const nlohmann::json& id, const nlohmann::json& result,
                      const Forwarded* forwarded, nlohmann::json* shown = nullptr)
  {
    if (k_trace) {
      std::fprintf(stderr, "<- upstream answers %s: %s\n", id.dump().c_str(), result.dump().substr(0, 100).c_str());
    }
    const std::string line =
      nlohmann::json{{"result", result}, {"jsonrpc", "2.0"}, {"id", id}}.dump();
    Outbox out;
    const bool relayed = m_upstream_intake.take(line, m_now, out) == UpstreamLine::relayed;
    m_upstream_intake.line_sent();
    const std::string key = id_key(id);
    const bool own = id.is_string() && id.get<std::string>().starts_with("fsguard/");
    check(!(own && relayed));
    bool reached = relayed;
    nlohmann::json sent = nlohmann::json::parse(line);
    for (const auto& client_line : out.to_client) {
      const auto message = nlohmann::json::parse(client_line);
      if (message["id"] == id && forwarded != nullptr) {
        check(!relayed); // one answer, never two
        reached = true;
        sent = message;
      }
    }
    bool taken = false;
    if (reached && forwarded != nullptr && !own) {
      if (relayed) {
        ++m_answers[key]; // fsguard's version is counted in take()
      }
      taken = m_cancelled_now.erase(key) == 0;
    }
    if (shown != nullptr) {
      *shown = sent;
    }
    take(out);
    return taken;
  }

  void outside_write(const std::string& file, unsigned how, unsigned line)
  {
    if (k_trace) {
      std::fprintf(stderr, "outside write %s (%u)\n", file.c_str(), how);
    }
    if (!m_disk.stat(parent(file))) {
      return;
    }
    const auto old = m_disk.content(file);
    if (how % 8 == 7) {
      if (old) {
        m_disk.remove(file); // perhaps while fsguard asks the person about it
      }
      return;
    }
    if (how % 4 == 0 && old) {
      // Same size, same tick: only the content tells.
      std::string same_size = *old;
      if (!same_size.empty()) {
        same_size[0] = same_size[0] == 'X' ? 'Y' : 'X';
      }
      m_disk.write_keeping_mtime(file, same_size);
    } else if (how % 4 != 3 && old && !old->empty()) {
      // A formatter or a person changes one line.
      auto lines = lines_of(*old);
      lines[line % lines.size()] = fresh_line("o");
      m_disk.write(file, joined_lines(lines));
    } else {
      m_disk.write(file, fresh_line("outside "));
    }
  }

  // A question fsguard asked the person about a change of `file`, which
  // showed them the file as it held `shown` (nothing: no file).
  struct Question {
    nlohmann::json id;
    std::string file;
    std::optional<std::string> shown;
  };
  Setup m_setup;
  FakeDisk m_disk; // with verify: upstream, the server's, which fsguard never looks at
  Guard m_guard;
  ClientIntake m_client{m_guard};           // the guard is driven as the relay drives it
  UpstreamIntake m_upstream_intake{m_guard};
  std::chrono::steady_clock::time_point m_now{std::chrono::hours(1)};
  std::vector<Forwarded> m_upstream;
  AgentModel m_agent{k_files};
  std::chrono::seconds m_ttl{0};          // read_ttl_s as the guard has it
  std::map<std::string, Question> m_questions; // open, by id key
  std::optional<Question> m_allowed;      // the person allowed this one change just now
  std::map<std::string, std::string> m_sent_contents; // a write's content as the client sent it
  unsigned m_content_arguments = 0; // writes sent, to hand every other one on decoded
  std::string m_reader_buffer; // the client's lines are lent from it, as from the relay's reader
  unsigned m_plain_guarded = 0;         // plain guarded calls, to parse every third one
  std::map<std::string, std::pair<std::string, std::string>> m_pending_moves; // sent, not done
  // The agent's edits sent and not yet done, in the order it sent them.
  struct PendingEdit {
    std::string key;
    std::string file;
    std::string old_text;
    std::string new_text;
  };
  std::vector<PendingEdit> m_pending_edits;

  // A whole read showed the agent `content` of `file` while its own edits of
  // it were still on their way: it knows what each of them makes of that
  // content, in the order it sent them, as well as it knows the content
  // (they land on it, as the guard holds them behind the read).
  void learn_pending_edits(const std::string& file, std::string content)
  {
    for (const auto& pending : m_pending_edits) {
      if (pending.file != file) {
        continue;
      }
      auto edited = replaced_once(content, pending.old_text, pending.new_text);
      if (!edited) {
        return;
      }
      content = std::move(*edited);
      m_agent.learn(file, content, Knowledge{true, true});
    }
  }
  std::map<std::string, int> m_sent;
  std::map<std::string, int> m_answers;
  std::set<std::string> m_cancelled_now;  // forwarded, cancelled, not yet answered
  std::set<std::string> m_ever_cancelled; // may have fewer answers than requests
  int m_next_id = 1;
  int m_fresh = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const unsigned first = size > 0 ? data[0] : 0;
  // A quarter of the runs verify through the upstream; half guard the fork;
  // half the clients can ask the person.
  Model model(Setup{first % 4 == 0, first / 4 % 2 == 1, first / 8 % 2 == 1});
  Bytes in{data, size, 1};
  for (int steps = 0; steps < 400 && !in.done(); ++steps) {
    model.step(in);
  }
  model.drain();
  return 0;
}
