// The guard with "verify": "upstream": it sees none of the server's files
// and learns them through its own reads of the upstream. The test plays the
// client and the upstream, whose files live in a map fsguard cannot see.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "fake_disk.hpp"
#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/guard.hpp"
#include "proxy/guard/upstream_intake.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> texts_of(const std::vector<OutgoingLine>& lines)
{
  std::vector<std::string> texts;
  for (const auto& line : lines) {
    texts.emplace_back(line.text());
  }
  return texts;
}

GuardSettings verifying_upstream()
{
  GuardSettings settings;
  settings.verify = Verify::upstream;
  return settings;
}

struct RemoteSession {
  FakeDisk disk; // fsguard's side: none of the server's files are here
  Guard guard;
  // The guard is driven as the relay drives it: each line through its intake.
  ClientIntake client{guard};
  UpstreamIntake upstream{guard};
  Outbox out;
  std::map<std::string, std::string> files; // the server's
  std::vector<std::string> own_reads;        // fsguard's reads the upstream answered
  std::string reader_buffer; // the relay's reader's, which the client's lines are lent from
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);

  explicit RemoteSession(GuardSettings settings = verifying_upstream())
    : guard(disk, std::move(settings), "/home", "/ws")
  {
    request({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
             {"params", {{"clientInfo", {{"name", "test-client"}, {"version", "1"}}},
                         {"capabilities", nlohmann::json::object()}}}});
    answer(0, {{"serverInfo", {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}}}});
    const auto asked = nlohmann::json::parse(out.to_upstream.back().text());
    REQUIRE(asked["params"]["name"] == "list_allowed_directories");
    CHECK_FALSE(answer_text(asked["id"], "Allowed directories:\n/ws"));
  }

  // The client's `message`, taken as the relay takes it (ClientIntake), its
  // line borrowed from the reader's buffer (reader_buffer), which is
  // overwritten once the guard took it, as the reader reads on: the guard
  // keeps nothing of it uncopied.
  void request(const nlohmann::json& message)
  {
    out = Outbox{};
    reader_buffer = message.dump() + "\n";
    client.take(OutgoingLine::borrowed(reader_buffer), now, out);
    out.own_lines(); // as the relay writes them before it reads on
    std::fill(reader_buffer.begin(), reader_buffer.end(), '#');
  }

  void notify(const nlohmann::json& message) { request(message); }

  void call(const nlohmann::json& id, const std::string& tool, const nlohmann::json& arguments)
  {
    request({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", arguments}}}});
  }

  // The upstream's `line`, taken as the relay takes it (UpstreamIntake);
  // returns whether it is relayed as it is.
  bool upstream_line(const std::string& line)
  {
    out = Outbox{};
    const UpstreamLine fate = upstream.take(line, now, out);
    upstream.line_sent();
    return fate == UpstreamLine::relayed;
  }

  bool answer(const nlohmann::json& id, const nlohmann::json& result)
  {
    return upstream_line(nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
  }

  bool answer_text(const nlohmann::json& id, const std::string& text, bool error = false)
  {
    nlohmann::json result = {{"content", {{{"type", "text"}, {"text", text}}}}};
    if (error) {
      result["isError"] = true;
    }
    return answer(id, result);
  }

  // The requests the last step sent upstream, fsguard's own reads apart.
  std::vector<nlohmann::json> forwarded() const
  {
    std::vector<nlohmann::json> requests;
    for (const auto& line : out.to_upstream) {
      auto message = nlohmann::json::parse(line.text());
      const auto& id = message["id"];
      if (!(id.is_string() && id.get<std::string>().starts_with("fsguard/verify/"))) {
        requests.push_back(std::move(message));
      }
    }
    return requests;
  }

  // Answers fsguard's reads sent in the last step from `files`, as
  // server-filesystem would, until it sends none; what the answers released
  // is then in `out`. None of them may reach the client.
  void serve_own_reads()
  {
    for (int round = 0; round < 4; ++round) {
      std::vector<nlohmann::json> asked;
      Outbox released;
      for (const auto& line : out.to_upstream) {
        auto message = nlohmann::json::parse(line.text());
        const auto& id = message["id"];
        if (id.is_string() && id.get<std::string>().starts_with("fsguard/verify/")) {
          asked.push_back(std::move(message));
        } else {
          released.to_upstream.push_back(std::string(line.text()));
        }
      }
      released.to_client = out.to_client;
      if (asked.empty()) {
        return;
      }
      for (const auto& message : asked) {
        CHECK(message["params"]["name"] == "read_text_file");
        const std::string path = message["params"]["arguments"]["path"];
        own_reads.push_back(path);
        const auto file = files.find(path);
        const bool relayed =
          file == files.end()
            ? answer_text(message["id"], "ENOENT: no such file or directory, open '" + path + "'",
                          true)
            : answer_text(message["id"], file->second);
        CHECK_FALSE(relayed);
        for (auto& line : out.to_upstream) {
          released.to_upstream.push_back(std::move(line));
        }
        released.to_client.insert(released.to_client.end(), out.to_client.begin(),
                                  out.to_client.end());
      }
      out = std::move(released);
    }
    FAIL("fsguard kept asking");
  }

  // The veto code answering `id` in the last step; "" if none.
  std::string vetoed(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      if (message.contains("id") && message["id"] == id) {
        return message["result"]["_meta"]["fsguard/veto"]["code"].get<std::string>();
      }
    }
    return "";
  }

  std::string client_text(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      if (message.contains("id") && message["id"] == id) {
        return message["result"]["content"][0]["text"];
      }
    }
    return "";
  }

  bool went_upstream(const nlohmann::json& id) const
  {
    for (const auto& message : forwarded()) {
      if (message["id"] == id) {
        return true;
      }
    }
    return false;
  }

  // A whole read of `path`, answered with the server's content.
  void read(int id, const std::string& path)
  {
    call(id, "read_text_file", {{"path", path}});
    REQUIRE(went_upstream(id));
    CHECK(answer_text(id, files.at(path)));
  }

  // `write_file` of `content` to `path`; if it goes upstream, the server
  // writes it. Returns the veto code, "" if it went ahead.
  std::string write(int id, const std::string& path, const std::string& content)
  {
    call(id, "write_file", {{"path", path}, {"content", content}});
    serve_own_reads();
    if (!went_upstream(id)) {
      return vetoed(id);
    }
    files[path] = content;
    CHECK(answer_text(id, "Successfully wrote to " + path));
    return "";
  }
};

} // namespace

TEST_SUITE("verify upstream")
{
  TEST_CASE("a blind write of a file fsguard cannot see is vetoed after fsguard reads it through the server")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "precious\n";
    CHECK(s.write(1, "/ws/a.txt", "overwritten\n") == "not_read");
    CHECK(s.own_reads == std::vector<std::string>{"/ws/a.txt"});
    CHECK(s.files["/ws/a.txt"] == "precious\n");
  }

  TEST_CASE("a new file goes ahead, and the agent's own write licenses the next")
  {
    RemoteSession s;
    CHECK(s.write(1, "/ws/new.txt", "first\n") == "");
    CHECK(s.write(2, "/ws/new.txt", "second\n") == "");
    CHECK(s.files["/ws/new.txt"] == "second\n");
  }

  TEST_CASE("read then write goes ahead; a change by someone else is vetoed")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    CHECK(s.write(2, "/ws/a.txt", "two\n") == "");
    s.files["/ws/a.txt"] = "changed by a person\n";
    CHECK(s.write(3, "/ws/a.txt", "three\n") == "changed");
    CHECK(s.files["/ws/a.txt"] == "changed by a person\n");
    // The veto shows what changed: the text fsguard read through the server.
    CHECK(s.client_text(3).find("changed by a person") != std::string::npos);
  }

  TEST_CASE("a stale write after a read is vetoed")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    s.files["/ws/a.txt"] = "one\nand a line from a formatter\n";
    CHECK(s.write(2, "/ws/a.txt", "two\n") == "changed");
    CHECK(s.files["/ws/a.txt"] == "one\nand a line from a formatter\n");
    // The read's text is kept, so the veto shows the change.
    CHECK(s.client_text(2).find("+and a line from a formatter") != std::string::npos);
  }

  TEST_CASE("a failed read counts for nothing")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK(s.answer_text(1, "Access denied - path outside allowed directories", true));
    CHECK(s.write(2, "/ws/a.txt", "two\n") == "not_read");
  }

  TEST_CASE("read_multiple_files licenses each part it showed, and not a failed one")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "a1\na2\n";
    s.files["/ws/b.txt"] = "b\n";
    s.call(1, "read_multiple_files", {{"paths", {"/ws/a.txt", "/ws/gone.txt", "/ws/b.txt"}}});
    CHECK(s.answer_text(1, "/ws/a.txt:\na1\na2\n\n\n---\n/ws/gone.txt: Error - ENOENT: no such "
                           "file\n---\n/ws/b.txt:\nb\n\n"));
    s.files["/ws/gone.txt"] = "appeared since\n";
    CHECK(s.write(2, "/ws/a.txt", "A\n") == "");
    CHECK(s.write(3, "/ws/b.txt", "B\n") == "");
    CHECK(s.write(4, "/ws/gone.txt", "G\n") == "not_read");
  }

  TEST_CASE("a partial read allows an edit but not a whole write")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "l1\nl2\nl3\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    // fsguard reads the whole file before the read (which waits for it) and
    // after it, to learn what the part was cut from.
    s.serve_own_reads();
    REQUIRE(s.went_upstream(1));
    CHECK(s.answer_text(1, "l1"));
    s.serve_own_reads();
    CHECK(s.own_reads.size() == 2);
    CHECK(s.write(2, "/ws/a.txt", "all new\n") == "partial_read");
    s.call(3, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "l1"}, {"newText", "L1"}}}}});
    s.serve_own_reads();
    CHECK(s.went_upstream(3));
  }

  TEST_CASE("a partial read of a file that changed around it licenses nothing, even with the part still there")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "l1\nl2\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    s.serve_own_reads();
    CHECK(s.answer_text(1, "l1"));
    // Changed before fsguard's second read: the agent saw the head of the
    // old content, not of this one.
    s.files["/ws/a.txt"] = "l1\nchanged by a formatter\n";
    s.serve_own_reads();
    s.call(2, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "l2"}, {"newText", "L2"}}}}});
    s.serve_own_reads();
    CHECK(s.vetoed(2) == "not_read");
  }

  TEST_CASE("a partial read goes upstream only once fsguard's whole read of its file is answered")
  {
    // The server serves requests concurrently: a whole read sent with the
    // head could find the file after a change the head never showed, and
    // the changed file would pass for the one the part was cut from (found
    // by fuzz_ledger: an edit of content the agent never saw went ahead).
    RemoteSession s;
    s.files["/ws/a.txt"] = "l1\nl2\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    CHECK_FALSE(s.went_upstream(1));
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto first_read = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    REQUIRE(first_read.get<std::string>().starts_with("fsguard/verify/"));
    CHECK_FALSE(s.answer_text(first_read, s.files["/ws/a.txt"]));
    REQUIRE(s.went_upstream(1));
    CHECK(s.answer_text(1, "l1"));
    // Changed after the part: the second whole read finds other text.
    s.files["/ws/a.txt"] = "l1\nchanged by a formatter\n";
    s.serve_own_reads();
    s.call(2, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "l1"}, {"newText", "L1"}}}}});
    s.serve_own_reads();
    CHECK_FALSE(s.went_upstream(2));
    CHECK(s.vetoed(2) == "not_read");
    CHECK(s.client_text(2).find("read_text_file") != std::string::npos); // how to fix it
  }

  TEST_CASE("an edit's result is known from its diff, so a second edit needs no new read")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    s.call(2, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "one"}, {"newText", "two"}}}}});
    s.serve_own_reads();
    REQUIRE(s.went_upstream(2));
    s.files["/ws/a.txt"] = "two\n";
    CHECK(s.answer_text(2, "```diff\nIndex: /ws/a.txt\n===\n--- /ws/a.txt\toriginal\n+++ "
                           "/ws/a.txt\tmodified\n@@ -1,1 +1,1 @@\n-one\n+two\n```\n\n"));
    CHECK(s.write(3, "/ws/a.txt", "three\n") == "");
  }

  TEST_CASE("a read the server fails for another reason than a missing file refuses the write")
  {
    RemoteSession s;
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto asked = nlohmann::json::parse(s.out.to_upstream.front().text());
    CHECK_FALSE(s.answer_text(asked["id"], "EACCES: permission denied, open '/ws/a.txt'", true));
    CHECK(s.vetoed(1) == "cannot_inspect");
    CHECK(s.client_text(1).find("EACCES") != std::string::npos);
    CHECK_FALSE(s.went_upstream(1));
  }

  TEST_CASE("a read fsguard asked that never comes back refuses the write in time")
  {
    GuardSettings settings = verifying_upstream();
    settings.call_timeout = std::chrono::seconds(10);
    RemoteSession s(settings);
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    CHECK(s.out.to_client.empty());
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(11), s.out);
    CHECK(s.vetoed(1) == "cannot_inspect");
    CHECK_FALSE(s.went_upstream(1));
  }

  TEST_CASE("an answer to fsguard's read for a call the client cancelled licenses no later call")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    const auto first_read = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 2}}}});
    CHECK(s.out.to_upstream.empty()); // held: the upstream never saw it
    CHECK_FALSE(s.answer_text(first_read, "one\n")); // nobody waits for it now
    s.files["/ws/a.txt"] = "changed meanwhile\n";
    // A later write asks afresh, and sees the change.
    CHECK(s.write(3, "/ws/a.txt", "three\n") == "changed");
  }

  TEST_CASE("a write held behind a read of its file is decided on what the server holds after it")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    CHECK(s.out.to_upstream.empty()); // it waits for the read; nothing asked yet
    CHECK(s.answer_text(1, "one\n"));
    s.serve_own_reads();
    CHECK(s.vetoed(2) == "not_read"); // sent before the read's answer reached the agent
  }

  TEST_CASE("a move onto an existing destination needs it read; onto a new name it goes ahead")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "a\n";
    s.files["/ws/b.txt"] = "b\n";
    s.call(1, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/b.txt"}});
    s.serve_own_reads();
    CHECK(s.vetoed(1) == "not_read");
    CHECK(s.own_reads == std::vector<std::string>{"/ws/b.txt"});
    s.call(2, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/c.txt"}});
    s.serve_own_reads();
    CHECK(s.went_upstream(2));
  }

  TEST_CASE("text showing U+FFFD stands for bytes a write would destroy: an edit is refused")
  {
    RemoteSession s;
    s.files["/ws/bin.dat"] = "ab\xEF\xBF\xBD" "cd\n";
    s.read(1, "/ws/bin.dat");
    s.call(2, "edit_file",
           {{"path", "/ws/bin.dat"}, {"edits", {{{"oldText", "ab"}, {"newText", "AB"}}}}});
    s.serve_own_reads();
    CHECK(s.vetoed(2) == "lossy_read");
  }

  // ---- Attacks (branch attack-verify). Each fails while its hole exists. ----

  TEST_CASE("attack: a read fsguard asked for a cancelled write does not decide a later write after the directory was replaced")
  {
    RemoteSession s;
    // The agent writes a new file; fsguard asks the server for it.
    s.call(1, "write_file", {{"path", "/ws/d/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto orphan = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    // The client gives up on it; fsguard's read stays unanswered (slow server).
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 1}}}});
    // A directory the agent never looked into is moved into place.
    s.files["/ws/src/a.txt"] = "precious, never read\n";
    s.call(2, "move_file", {{"source", "/ws/src"}, {"destination", "/ws/d"}});
    s.serve_own_reads();
    REQUIRE(s.went_upstream(2));
    CHECK(s.answer_text(2, "Successfully moved /ws/src to /ws/d"));
    s.files.erase("/ws/src/a.txt");
    s.files["/ws/d/a.txt"] = "precious, never read\n";
    // Now the agent writes the file again: fsguard must ask afresh, not
    // wait for the old read...
    s.call(3, "write_file", {{"path", "/ws/d/a.txt"}, {"content", "clobber\n"}});
    Outbox asked_afresh = std::move(s.out);
    // ...which the server answers late, with what it found before the move.
    CHECK_FALSE(s.answer_text(orphan, "ENOENT: no such file or directory, open '/ws/d/a.txt'",
                              true));
    CHECK_FALSE(s.went_upstream(3));
    s.out = std::move(asked_afresh);
    s.serve_own_reads();
    CHECK_FALSE(s.went_upstream(3));
    CHECK(s.vetoed(3) == "not_read");
  }

  TEST_CASE("attack: an unreadable file whose path mentions ENOENT is not taken for a new file")
  {
    RemoteSession s;
    // A write-only file (mode 0200): the server cannot read it, but its
    // write_file replaces it (temp file + rename).
    s.call(1, "write_file", {{"path", "/ws/docs/ENOENT-handling.md"}, {"content", "x\n"}});
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto asked = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    CHECK_FALSE(s.answer_text(
      asked, "EACCES: permission denied, open '/ws/docs/ENOENT-handling.md'", true));
    CHECK_FALSE(s.went_upstream(1));
    CHECK(s.vetoed(1) == "cannot_inspect");
  }

  TEST_CASE("attack: a failed read left by a cancelled write does not refuse the next write unasked")
  {
    GuardSettings settings = verifying_upstream();
    settings.call_timeout = std::chrono::seconds(10);
    RemoteSession s(settings);
    s.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "x\n"}});
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 1}}}});
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(11), s.out); // fsguard's read expires
    // Much later the server is fine again, and the agent writes a new file.
    s.now += std::chrono::seconds(60);
    CHECK(s.write(2, "/ws/new.txt", "y\n") == "");
    CHECK(s.own_reads == std::vector<std::string>{"/ws/new.txt"});
  }

  TEST_CASE("attack: a read that crosses the agent's own write does not make its next write look changed outside fsguard")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    s.serve_own_reads();
    REQUIRE(s.went_upstream(2));
    // A read of the same file, sent while the write is in flight, waits
    // for it: the server could otherwise read before it writes and answer
    // the write first, and the read's older text would replace the record.
    s.call(3, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK_FALSE(s.went_upstream(3));
    s.files["/ws/a.txt"] = "two\n";
    CHECK(s.answer_text(2, "Successfully wrote to /ws/a.txt"));
    REQUIRE(s.went_upstream(3));
    CHECK(s.answer_text(3, "two\n"));
    // The file holds the agent's own write: nothing unseen is lost.
    CHECK(s.write(4, "/ws/a.txt", "three\n") == "");
  }

  // ---- Attacks that held (kept as regression tests). ----

  TEST_CASE("held: the client cannot use, answer or cancel fsguard's own read ids")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.call("fsguard/verify/1", "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    CHECK(s.out.to_upstream.empty());
    REQUIRE(s.out.to_client.size() == 1);
    CHECK(s.out.to_client.front().find("reserved") != std::string::npos);
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto own = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", own}}}});
    CHECK(s.out.to_upstream.empty());
    const nlohmann::json forged = {{"jsonrpc", "2.0"}, {"id", own},
                                   {"result", {{"content", {{{"type", "text"}, {"text", "x"}}}}}}};
    s.request(forged);
    CHECK(s.out.to_upstream.empty());
    CHECK(s.out.to_client.empty());
    CHECK_FALSE(s.answer_text(own, "one\n"));
    CHECK(s.vetoed(1) == "not_read");
  }

  TEST_CASE("held: two writes of the same file back to back are each decided on the file after the one before")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    Outbox first = std::move(s.out);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.out.to_upstream.empty()); // behind the first: no read of its own yet
    s.out = std::move(first);
    s.serve_own_reads();
    REQUIRE(s.went_upstream(2));
    s.files["/ws/a.txt"] = "two\n";
    CHECK(s.answer_text(2, "Successfully wrote to /ws/a.txt"));
    s.serve_own_reads(); // the second is decided on what the first left
    REQUIRE(s.went_upstream(3));
    CHECK(s.own_reads.size() == 2);
  }

  TEST_CASE("held: a write sent before a read overtakes it is not licensed by that read")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "one\n";
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    const auto own = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}});
    REQUIRE(s.went_upstream(2));
    CHECK(s.answer_text(2, "one\n"));
    CHECK_FALSE(s.answer_text(own, "one\n"));
    CHECK_FALSE(s.went_upstream(1));
    CHECK(s.vetoed(1) == "not_read");
  }

  TEST_CASE("held: read_multiple_files whose first file mimics the next part's header licenses neither")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "x\n\n---\n/ws/b.txt:\nfake\n";
    s.files["/ws/b.txt"] = "real b\n";
    s.call(1, "read_multiple_files", {{"paths", {"/ws/a.txt", "/ws/b.txt"}}});
    CHECK(s.answer_text(1, "/ws/a.txt:\n" + s.files["/ws/a.txt"] + "\n\n---\n/ws/b.txt:\n"
                             + s.files["/ws/b.txt"] + "\n"));
    CHECK(s.write(2, "/ws/b.txt", "B\n") == "not_read");
    CHECK(s.write(3, "/ws/a.txt", "A\n") == "not_read");
  }

  TEST_CASE("held: a whole write after a read that showed U+FFFD is refused")
  {
    RemoteSession s;
    s.files["/ws/bin.dat"] = "ab\xEF\xBF\xBD" "cd\n";
    s.read(1, "/ws/bin.dat");
    CHECK(s.write(2, "/ws/bin.dat", "new\n") == "lossy_read");
  }

  TEST_CASE("held: an outside writer right after the agent's write is caught by the next write")
  {
    RemoteSession s;
    CHECK(s.write(1, "/ws/new.txt", "mine\n") == "");
    s.files["/ws/new.txt"] = "a formatter's\n";
    CHECK(s.write(2, "/ws/new.txt", "again\n") == "changed");
    CHECK(s.files["/ws/new.txt"] == "a formatter's\n");
  }

  TEST_CASE("held: a JSON-RPC error answering fsguard's read refuses the write")
  {
    RemoteSession s;
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    const auto own = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    CHECK_FALSE(s.upstream_line(
      nlohmann::json{{"jsonrpc", "2.0"}, {"id", own}, {"error", {{"code", -32601}, {"message", "nope"}}}}
        .dump()));
    CHECK(s.vetoed(1) == "cannot_inspect");
  }

  TEST_CASE("held: a partial read whose after-read never comes back frees its file in time")
  {
    GuardSettings settings = verifying_upstream();
    settings.call_timeout = std::chrono::seconds(10);
    RemoteSession s(settings);
    s.files["/ws/a.txt"] = "l1\nl2\n";
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    s.serve_own_reads();
    CHECK(s.answer_text(1, "l1")); // the after-read is sent and never answered
    s.call(2, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "l1"}, {"newText", "L1"}}}}});
    CHECK(s.forwarded().empty());
    CHECK(s.guard.holds_calls());
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(11), s.out);
    s.serve_own_reads();
    CHECK(s.vetoed(2) == "not_read");
    CHECK_FALSE(s.guard.holds_calls());
  }

  TEST_CASE("attack: a relative write whose read was answered under the old roots is decided under the new ones")
  {
    RemoteSession s;
    s.files["/ws/a.txt"] = "old root\n";
    s.files["/ws2/a.txt"] = "new root, never read\n";
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "a.txt"}, {"content", "x\n"}});
    REQUIRE(s.out.to_upstream.size() == 1);
    const auto own = nlohmann::json::parse(s.out.to_upstream.front().text())["id"];
    // The client's roots move the server to /ws2 while fsguard's read is out.
    s.upstream_line(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})");
    s.request({{"jsonrpc", "2.0"}, {"id", 0}, {"result", {{"roots", {{{"uri", "file:///ws2"}}}}}}});
    std::vector<std::string> pending = texts_of(s.out.to_upstream);
    // The read was served under the old roots.
    CHECK_FALSE(s.answer_text(own, "old root\n"));
    for (const auto& line : texts_of(s.out.to_upstream)) {
      pending.push_back(line);
    }
    bool forwarded = s.went_upstream(2);
    // (With verify: local the same held call waits for the new directories:
    // see the baseline case in test_proxy_guard.cpp.)
    // fsguard's listing (and any probes) answered: the server allows /ws2 now.
    for (int round = 0; round < 6 && !forwarded; ++round) {
      std::vector<std::string> next;
      for (const auto& line : pending) {
        const auto message = nlohmann::json::parse(line);
        if (!message.contains("id") || !message["id"].is_string()) {
          continue;
        }
        const std::string name = message["params"]["name"];
        if (name == "list_allowed_directories") {
          s.answer_text(message["id"], "Allowed directories:\n/ws2");
        } else if (name == "get_file_info") {
          s.answer_text(message["id"], "size: 4096\ncreated: Mon Jan 01 2024\nmodified: Mon Jan "
                                       "01 2024\naccessed: Mon Jan 01 2024\nisDirectory: "
                                       "true\nisFile: false\npermissions: 755");
        } else if (name == "read_text_file") {
          const std::string path = message["params"]["arguments"]["path"];
          // Relative paths now resolve in /ws2.
          const std::string where = path.front() == '/' ? path : "/ws2/" + path;
          const auto file = s.files.find(where);
          s.answer_text(message["id"], file == s.files.end() ? "ENOENT" : file->second,
                        file == s.files.end());
        } else {
          continue;
        }
        forwarded = forwarded || s.went_upstream(2);
        if (!s.vetoed(2).empty()) {
          CHECK(s.vetoed(2) == "not_read");
        }
        for (const auto& sent : texts_of(s.out.to_upstream)) {
          next.push_back(sent);
        }
      }
      pending = std::move(next);
    }
    CHECK_FALSE(forwarded); // it would replace /ws2/a.txt, never read
  }
}
