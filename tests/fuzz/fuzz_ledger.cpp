// libFuzzer target over the guard's call ordering: random interleavings of
// client requests, cancels, reused ids, upstream answers in any order,
// outside writers and the clock, driven against a model of what the agent
// has seen. It checks the promise and the ledger's bookkeeping:
// - a write, edit or move that fsguard forwards (enforce mode) never
//   destroys content the agent has not seen, whole, as it is on disk now;
// - the upstream never holds two pending requests with one id;
// - fsguard's own answers never reach the client;
// - once the upstream has answered everything, every request the client
//   did not cancel has exactly one answer, and nothing is held.
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

#include "fake_disk.hpp"
#include "proxy/guard.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;
using fsguard::testing::FakeDisk;

namespace {

// FUZZ_TRACE=1 prints every line the guard sends, to replay a finding.
const bool k_trace = std::getenv("FUZZ_TRACE") != nullptr;

void check(bool condition)
{
  if (!condition) {
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

// Every content the agent has known a file to hold (seen in a read's
// answer, or written itself), and whether it knew that content whole.
using Known = std::map<std::string, bool>;

class Model {
public:
  Model() : m_guard(m_disk, settings(), "/home", "/ws")
  {
    m_disk.make_directory("/ws");
    m_disk.make_directory("/ws/d");
    m_disk.write("/ws/f0.txt", "zero\n");
    m_disk.write("/ws/f1.txt", "one\n");
    m_disk.write("/ws/d/g.txt", "gee\n");
    m_disk.advance(10'000'000'000LL);
    send_request({{"jsonrpc", "2.0"}, {"id", "init"}, {"method", "initialize"},
                  {"params", {{"clientInfo", {{"name", "fuzz"}, {"version", "1"}}}}}});
  }

  static GuardSettings settings()
  {
    GuardSettings settings;
    settings.call_timeout = std::chrono::seconds(10);
    return settings;
  }

  void step(Bytes& in)
  {
    const unsigned op = in.next() % 12;
    const std::string& file = k_files[in.next() % k_files.size()];
    switch (op) {
    case 0:
    case 1:
      call("read_text_file", op == 1 ? nlohmann::json{{"path", file}, {"head", 1}}
                                     : nlohmann::json{{"path", file}});
      break;
    case 2:
      call("write_file", {{"path", file}, {"content", "w" + std::to_string(in.next() % 4) + "\n"}});
      break;
    case 3:
      call("edit_file", {{"path", file}, {"edits", nlohmann::json::array()}});
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
      outside_write(file, in.next());
      break;
    case 10:
      m_disk.advance(in.next() % 2 ? 4'000'000 : 3'000'000'000LL);
      m_now += std::chrono::seconds(in.next() % 4);
      expire();
      break;
    case 11: {
      // An answer to nothing pending, or to a held call's id.
      const nlohmann::json id = in.next() % 2 ? nlohmann::json(m_next_id) : nlohmann::json(999);
      deliver_answer(id, {{"content", {{{"type", "text"}, {"text", "bogus"}}}}}, nullptr);
      break;
    }
    }
  }

  // Lets the upstream answer everything, the clock run out, and checks
  // that every request the client did not cancel got exactly one answer.
  void drain()
  {
    for (int round = 0; round < 200 && (!m_upstream.empty() || m_guard.holds_calls()); ++round) {
      while (!m_upstream.empty()) {
        answer(0, false);
      }
      m_now += std::chrono::seconds(11);
      expire();
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

  void call(const std::string& tool, const nlohmann::json& arguments)
  {
    const int id = m_next_id++;
    // What the agent knew when it sent the call is all it can have used,
    // counting the moves it had sent: it knows where they put the files.
    std::map<std::string, Known> effective = m_known;
    for (const auto& [key, move] : m_pending_moves) {
      transfer(effective, move.first, move.second);
    }
    m_known_when_sent[id_key(id)] = effective;
    m_sent_order[id_key(id)] = m_next_order++;
    if (tool == "write_file") {
      m_known[arguments["path"]][arguments["content"]] = true;
    } else if (tool == "edit_file") {
      // The agent knows its edit applied to whatever it knew the file to
      // hold, its own pending changes included.
      Known& known = m_known[arguments["path"]];
      for (const auto& [content, whole] : effective[arguments["path"]]) {
        known[content + "E\n"] |= whole;
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
    std::optional<ContentHash> hash;
    const auto& arguments = member(member(request, "params"), "arguments");
    if (member(arguments, "content").is_string()) {
      hash = fake_hash(arguments["content"].get<std::string>());
    }
    if (k_trace) {
      std::fprintf(stderr, "client sends %s\n", request.dump().substr(0, 160).c_str());
    }
    Outbox out;
    m_guard.on_client_request(request.dump() + "\n", request, hash, out, m_now);
    take(out);
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
    m_guard.on_client_notification(notification.dump() + "\n", notification, out);
    take(out);
  }

  void reuse(unsigned pick)
  {
    if (m_next_id == 1) {
      return;
    }
    const int id = 1 + static_cast<int>(pick % static_cast<unsigned>(m_next_id - 1));
    send_request({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                  {"params", {{"name", "read_text_file"}, {"arguments", {{"path", k_files[0]}}}}}});
  }

  // Takes what the guard sent: checks each forwarded change against the
  // agent's view, and each line for the client.
  void take(Outbox& out)
  {
    if (k_trace) {
      for (const auto& line : out.to_upstream) std::fprintf(stderr, "-> upstream %s", line.c_str());
      for (const auto& line : out.to_client) std::fprintf(stderr, "-> client %s", line.substr(0, 300).c_str());
    }
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      const auto& id = message["id"];
      check(!(id.is_string() && id.get<std::string>().starts_with("fsguard/")));
      ++m_answers[id_key(id)];
    }
    for (const auto& line : out.to_upstream) {
      const auto message = nlohmann::json::parse(line);
      if (!message.contains("id")) {
        continue; // a cancel
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

  // True if what `file` holds now is content the agent knew (whole, if
  // `whole_needed`) when it sent call `key`.
  bool agent_saw(const std::string& key, const std::string& file, bool whole_needed)
  {
    const auto content = m_disk.content(file);
    if (!content) {
      return true; // nothing there to lose (missing, or a directory the server refuses)
    }
    const Known& known = m_known_when_sent[key][file];
    const auto found = known.find(*content);
    if (k_trace && (found == known.end() || (!found->second && whole_needed))) {
      std::fprintf(stderr, "UNSAFE %s on %s: disk holds %s; known when sent:", key.c_str(),
                   file.c_str(), nlohmann::json(*content).dump().c_str());
      for (const auto& [text, whole] : known) {
        std::fprintf(stderr, " %s%s", nlohmann::json(text).dump().c_str(), whole ? "(whole)" : "");
      }
      std::fprintf(stderr, "\n");
    }
    return found != known.end() && (found->second || !whole_needed);
  }

  void check_change_is_safe(const nlohmann::json& request)
  {
    if (request["method"] != "tools/call") {
      return;
    }
    const std::string key = id_key(request["id"]);
    const std::string tool = request["params"]["name"];
    const auto& arguments = request["params"]["arguments"];
    if (tool == "write_file") {
      check(agent_saw(key, arguments["path"], true));
    } else if (tool == "edit_file") {
      check(agent_saw(key, arguments["path"], false));
    } else if (tool == "move_file") {
      check(agent_saw(key, arguments["destination"], true));
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
                     {{"serverInfo", {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}}}},
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
    if (tool == "read_text_file") {
      if (!content || empty) {
        deliver_answer(request["id"], content ? nlohmann::json::object() : failed, &forwarded);
        return;
      }
      const bool head = arguments.contains("head");
      if (deliver_answer(request["id"], text(*content), &forwarded)) {
        m_known[path][*content] |= !head;
      }
    } else if (tool == "write_file") {
      const std::string written = arguments["content"];
      if (!m_disk.stat(parent(path))) {
        deliver_answer(request["id"], failed, &forwarded);
        return;
      }
      m_disk.replace(path, written);
      deliver_answer(request["id"], text("Successfully wrote"), &forwarded);
    } else if (tool == "edit_file") {
      if (!content) {
        deliver_answer(request["id"], failed, &forwarded);
        return;
      }
      const std::string edited = *content + "E\n";
      m_disk.replace(path, edited);
      if (deliver_answer(request["id"], text(diff_appending_line(*content)), &forwarded)) {
        m_known[path].try_emplace(edited, false); // the diff shows the edited lines
      }
    } else if (tool == "move_file") {
      m_pending_moves.erase(forwarded.key);
      move(arguments["source"], arguments["destination"], forwarded, failed);
    } else {
      deliver_answer(request["id"], failed, &forwarded);
    }
  }

  // The unified diff of appending "E\n" to `content` (whose lines all end
  // in "\n"), as server-filesystem's edit_file answers.
  static std::string diff_appending_line(const std::string& content)
  {
    std::string context;
    std::size_t lines = 0;
    for (std::size_t at = 0; at < content.size();) {
      const auto end = content.find('\n', at);
      context += " " + content.substr(at, end - at + 1);
      ++lines;
      at = end + 1;
    }
    return "```diff\n--- f\toriginal\n+++ f\tmodified\n@@ -1," + std::to_string(lines) + " +1,"
           + std::to_string(lines + 1) + " @@\n" + context + "+E\n```\n\n";
  }

  // Adds what `known` holds of `source` and the files below it to the
  // same names under `destination`.
  static void transfer(std::map<std::string, Known>& known, const std::string& source,
                       const std::string& destination)
  {
    for (const auto& file : k_files) {
      if (file == source || file.starts_with(source + "/")) {
        for (const auto& [content, whole] : Known(known[file])) {
          known[destination + file.substr(source.size())][content] |= whole;
        }
      }
    }
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
    std::map<std::string, Known> known;
    for (const auto& file : k_files) {
      if (file == source || file.starts_with(source + "/")) {
        if (const auto content = m_disk.content(file)) {
          moved[destination + file.substr(source.size())] = *content;
          m_disk.remove(file);
        }
        if (const auto found = m_known.find(file); found != m_known.end()) {
          known[destination + file.substr(source.size())] = found->second;
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
    for (auto& [path, contents] : known) {
      for (const auto& [content, whole] : contents) {
        m_known[path][content] |= whole;
      }
    }
    const auto moved_at = m_sent_order[forwarded.key];
    for (auto& [key, snapshot] : m_known_when_sent) {
      if (m_sent_order[key] <= moved_at) {
        continue;
      }
      for (const auto& file : k_files) {
        if (file == source || file.starts_with(source + "/")) {
          for (const auto& [content, whole] : Known(snapshot[file])) {
            snapshot[destination + file.substr(source.size())][content] |= whole;
          }
        }
      }
    }
    deliver_answer(forwarded.request["id"],
                   nlohmann::json{{"content", {{{"type", "text"}, {"text", "moved"}}}}}, &forwarded);
  }

  // The upstream answers `id` with `result`. Returns true when the agent
  // takes the answer in: relayed, and the client still waits for it.
  bool deliver_answer(const nlohmann::json& id, const nlohmann::json& result,
                      const Forwarded* forwarded)
  {
    if (k_trace) {
      std::fprintf(stderr, "<- upstream answers %s: %s\n", id.dump().c_str(), result.dump().substr(0, 100).c_str());
    }
    const std::string line =
      nlohmann::json{{"result", result}, {"jsonrpc", "2.0"}, {"id", id}}.dump();
    Outbox out;
    const bool relayed = m_guard.on_upstream_response(id_key(id), line, skim_message(line), out, m_now);
    m_guard.settle_reads();
    const std::string key = id_key(id);
    const bool own = id.is_string() && id.get<std::string>().starts_with("fsguard/");
    check(!(own && relayed));
    bool taken = false;
    if (relayed && forwarded != nullptr && !own) {
      ++m_answers[key];
      taken = m_cancelled_now.erase(key) == 0;
    }
    take(out);
    return taken;
  }

  void outside_write(const std::string& file, unsigned how)
  {
    if (k_trace) {
      std::fprintf(stderr, "outside write %s (%u)\n", file.c_str(), how);
    }
    if (!m_disk.stat(parent(file))) {
      return;
    }
    const std::string content = "outside " + std::to_string(how % 3) + "\n";
    if (how % 4 == 0 && m_disk.content(file)) {
      // Same size, same tick: only the content tells.
      const std::string old = *m_disk.content(file);
      std::string same_size = old;
      if (!same_size.empty()) {
        same_size[0] = same_size[0] == 'X' ? 'Y' : 'X';
      }
      m_disk.write_keeping_mtime(file, same_size);
    } else {
      m_disk.write(file, content);
    }
  }

  void expire()
  {
    Outbox out;
    m_guard.expire(m_now, out);
    take(out);
  }

  FakeDisk m_disk;
  Guard m_guard;
  std::chrono::steady_clock::time_point m_now{std::chrono::hours(1)};
  std::vector<Forwarded> m_upstream;
  std::map<std::string, Known> m_known;
  std::map<std::string, std::map<std::string, Known>> m_known_when_sent; // by call key
  std::map<std::string, std::uint64_t> m_sent_order;                      // by call key
  std::map<std::string, std::pair<std::string, std::string>> m_pending_moves; // sent, not done
  std::uint64_t m_next_order = 0;
  std::map<std::string, int> m_sent;
  std::map<std::string, int> m_answers;
  std::set<std::string> m_cancelled_now;  // forwarded, cancelled, not yet answered
  std::set<std::string> m_ever_cancelled; // may have fewer answers than requests
  int m_next_id = 1;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  Model model;
  Bytes in{data, size};
  for (int steps = 0; steps < 400 && !in.done(); ++steps) {
    model.step(in);
  }
  model.drain();
  return 0;
}
