#include <doctest/doctest.h>

#include <string>

#include "fake_disk.hpp"
#include "proxy/guard.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;
using fsguard::testing::FakeDisk;

namespace {

using Clock = std::chrono::steady_clock;

// A unified diff that replaces all of `before` (lines ending in "\n") by
// `after`, in the shape server-filesystem's edit_file answers with.
std::string diff_of(const std::string& before, const std::string& after)
{
  const auto lines = [](const std::string& text) {
    std::vector<std::string> result;
    for (std::size_t at = 0; at < text.size();) {
      const auto end = text.find('\n', at);
      result.push_back(text.substr(at, end - at + 1));
      at = end + 1;
    }
    return result;
  };
  const auto old_lines = lines(before);
  const auto new_lines = lines(after);
  std::string diff = "```diff\nIndex: f\n===\n--- f\toriginal\n+++ f\tmodified\n@@ -1,"
                     + std::to_string(old_lines.size()) + " +1," + std::to_string(new_lines.size())
                     + " @@\n";
  for (const auto& line : old_lines) diff += "-" + line;
  for (const auto& line : new_lines) diff += "+" + line;
  return diff + "```\n\n";
}

// A guard in front of a pretend server-filesystem serving /ws, driven
// message by message: the test plays both the client and the upstream.
struct Session {
  FakeDisk disk;
  Guard guard;
  Outbox out;
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);

  explicit Session(GuardSettings settings = {}, std::string client = "test-client")
    : guard(disk, std::move(settings), "/home", "/ws")
  {
    disk.make_directory("/ws");
    disk.make_directory("/ws2");
    disk.advance(10'000'000'000LL); // files made by tests are past the racy window
    request(json_line({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                       {"params", {{"clientInfo", {{"name", client}, {"version", "1"}}}}}}));
    answer(0, {{"serverInfo", {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}}}});
    list_directories({"/ws"});
  }

  static std::string json_line(const nlohmann::json& message) { return message.dump() + "\n"; }

  void request(const std::string& line, const std::optional<ContentHash>& hash = std::nullopt)
  {
    out = Outbox{};
    guard.on_client_request(line, nlohmann::json::parse(line), hash, out, now);
  }

  // A tools/call of `tool` with `arguments` as request `id`.
  void call(const nlohmann::json& id, const std::string& tool, nlohmann::json arguments)
  {
    std::optional<ContentHash> hash;
    if (arguments.contains("content") && arguments["content"].is_string()) {
      hash = fake_hash(arguments["content"].get<std::string>());
    }
    request(json_line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                       {"params", {{"name", tool}, {"arguments", arguments}}}}),
            hash);
  }

  // The server asks for the client's roots, and the client answers `uri`.
  void roots_changed(const std::string& uri)
  {
    guard.on_upstream_request("0", "roots/list");
    out = Outbox{};
    const nlohmann::json roots = {{"jsonrpc", "2.0"}, {"id", 0},
                                  {"result", {{"roots", {{{"uri", uri}}}}}}};
    guard.on_client_response(roots.dump() + "\n", roots, out);
  }

  void notify(const nlohmann::json& message)
  {
    out = Outbox{};
    guard.on_client_notification(json_line(message), message, out);
  }

  // The upstream answers `id` with `result`; returns whether it is relayed.
  bool answer(const nlohmann::json& id, const nlohmann::json& result)
  {
    out = Outbox{};
    const std::string line = nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump();
    const bool relayed = guard.on_upstream_response(id_key(id), line, skim_message(line), out, now);
    guard.settle_reads();
    return relayed;
  }

  bool answer_text(const nlohmann::json& id, const std::string& text)
  {
    return answer(id, {{"content", {{{"type", "text"}, {"text", text}}}}});
  }

  // Answers the listing fsguard asked for last with `directories`.
  void list_directories(const std::vector<std::string>& directories)
  {
    REQUIRE_FALSE(out.to_upstream.empty());
    const auto asked = nlohmann::json::parse(out.to_upstream.back());
    REQUIRE(asked["params"]["name"] == "list_allowed_directories");
    std::string text = "Allowed directories:";
    for (const auto& directory : directories) {
      text += "\n" + directory;
    }
    CHECK_FALSE(answer_text(asked["id"], text)); // fsguard's own: never relayed
  }

  // The upstream ids of the lines forwarded by the last step.
  std::vector<nlohmann::json> forwarded_ids() const
  {
    std::vector<nlohmann::json> ids;
    for (const auto& line : out.to_upstream) {
      ids.push_back(nlohmann::json::parse(line).value("id", nlohmann::json()));
    }
    return ids;
  }

  // The veto code of the client line answering `id` in the last step, "" if
  // none, or the error code as text for a JSON-RPC error.
  std::string answered(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      if (message["id"] != id) {
        continue;
      }
      if (message.contains("error")) {
        return std::to_string(message["error"]["code"].get<int>());
      }
      return message["result"]["_meta"]["fsguard/veto"]["code"].get<std::string>();
    }
    return "";
  }

  // A read of `path` answered with `text`, as server-filesystem would.
  void read(int id, const std::string& path, nlohmann::json extra = nlohmann::json::object())
  {
    extra["path"] = path;
    call(id, "read_text_file", extra);
    REQUIRE(forwarded_ids() == std::vector<nlohmann::json>{id});
    answer_text(id, "shown");
  }
};

} // namespace

TEST_SUITE("guard")
{
  TEST_CASE("a second write to a file is held until the first is answered")
  {
    Session s;
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.forwarded_ids().empty());
    CHECK(s.guard.holds_calls());
    s.disk.write("/ws/a.txt", "two\n");
    s.answer_text(2, "Successfully wrote to /ws/a.txt");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3}); // decided now: own write known
    CHECK_FALSE(s.guard.holds_calls());
  }

  TEST_CASE("a call arriving while another call on its file is held waits behind it")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.disk.write("/ws/b.txt", "b\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}}); // in flight
    s.call(3, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/c.txt"}}); // held
    CHECK(s.forwarded_ids().empty());
    s.call(4, "write_file", {{"path", "/ws/c.txt"}, {"content", "c\n"}});
    CHECK(s.forwarded_ids().empty()); // behind the held move onto c.txt
    s.answer_text(2, "a\n");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("a client's cancel of fsguard's own listing never reaches the server")
  {
    Session s;
    s.disk.write("/ws2/x.txt", "x");
    s.roots_changed("file:///ws2");
    const auto asked = nlohmann::json::parse(s.out.to_upstream.back())["id"];
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", asked}}}});
    CHECK(s.out.to_upstream.empty());
  }

  TEST_CASE("an unanswered listing is asked again, and calls waiting for it are decided in time")
  {
    GuardSettings settings;
    settings.call_timeout = std::chrono::seconds(20);
    Session s(settings);
    s.disk.write("/ws2/a.txt", "a\n");
    s.roots_changed("file://host/ws2");
    s.call(1, "write_file", {{"path", "a.txt"}, {"content", "x"}}); // waits for the directories
    CHECK(s.out.to_client.empty());
    // The listing is never answered.
    std::vector<std::string> sent;
    for (int second = 1; second <= 7; ++second) {
      s.out = Outbox{};
      s.guard.tick(s.now + std::chrono::seconds(second), s.out);
      sent.insert(sent.end(), s.out.to_upstream.begin(), s.out.to_upstream.end());
    }
    bool asked_again = false;
    for (const auto& line : sent) {
      asked_again = asked_again || line.find("list_allowed_directories") != std::string::npos;
    }
    CHECK(asked_again);
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(21), s.out);
    CHECK(s.answered(1) == "unresolved_path");
  }

  TEST_CASE("an answer whose id holds a lone surrogate escape finds its request")
  {
    Session s;
    const std::string line =
      R"({"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/ws"}}})";
    const auto message = parse_client_message(line);
    s.out = Outbox{};
    s.guard.on_client_request(line + "\n", message.body, std::nullopt, s.out, s.now);
    REQUIRE(s.out.to_upstream.size() == 1);
    const std::string answer = R"({"jsonrpc":"2.0","id":"\ud800","result":{"content":[]}})";
    s.out = Outbox{};
    s.guard.on_upstream_response(id_key_of_raw(skim_message(answer).raw_id), answer,
                                 skim_message(answer), s.out, s.now);
    CHECK(s.guard.take_unanswered().empty());
  }

  TEST_CASE("a failed initialize may be sent again")
  {
    FakeDisk disk;
    Guard guard(disk, GuardSettings{}, "/home", "/ws");
    Outbox out;
    const auto initialize = [&](int id) {
      const nlohmann::json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", "initialize"},
                                      {"params", nlohmann::json::object()}};
      out = Outbox{};
      guard.on_client_request(request.dump() + "\n", request, std::nullopt, out);
    };
    initialize(1);
    const std::string failed = R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}})";
    guard.on_upstream_response("1", failed, skim_message(failed), out);
    initialize(2);
    CHECK(out.to_upstream.size() == 1);
    CHECK(out.to_client.empty());
  }

  TEST_CASE("a held NFC-spelled write is resolved to an NFD-named file that appeared meanwhile")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    // The write waits behind a read of its NFC name, which finds nothing.
    s.call(3, "read_text_file", {{"path", "/ws/caf\xC3\xA9.txt"}});
    s.call(4, "write_file", {{"path", "/ws/caf\xC3\xA9.txt"}, {"content", "new\n"}});
    CHECK(s.forwarded_ids().empty());
    s.disk.write("/ws/cafe\xCC\x81.txt", "someone's NFD file, never read\n");
    s.answer(3, {{"content", {{{"type", "text"}, {"text", "ENOENT"}}}}, {"isError", true}});
    CHECK(s.answered(4) == "not_read");
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("desktop-commander: a file written through a conversion can be written again")
  {
    GuardSettings settings;
    settings.profile = "desktop-commander";
    FakeDisk disk;
    disk.make_directory("/ws");
    disk.advance(10'000'000'000LL);
    Guard guard(disk, settings, "/home", "/ws");
    Outbox out;
    const auto write = [&](int id) {
      const nlohmann::json request = {
        {"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
        {"params", {{"name", "write_file"}, {"arguments", {{"path", "/ws/t.xlsx"}, {"content", "[[1,2]]"}}}}}};
      out = Outbox{};
      guard.on_client_request(request.dump() + "\n", request, fake_hash("[[1,2]]"), out);
      return out.to_upstream.size() == 1;
    };
    REQUIRE(write(1));
    disk.write("/ws/t.xlsx", "PK\x03\x04 a spreadsheet"); // the server converts the rows
    const std::string answer = R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}})";
    guard.on_upstream_response("1", answer, skim_message(answer), out);
    disk.advance(10'000'000'000LL);
    CHECK(write(2)); // neither changed nor partial_read
  }

  TEST_CASE("a reused id is refused while its request is pending")
  {
    Session s;
    s.call(7, "list_directory", {{"path", "/ws"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{7});
    s.call(7, "list_directory", {{"path", "/ws"}});
    CHECK(s.forwarded_ids().empty());
    CHECK(s.answered(7) == "-32600");
    s.answer_text(7, "[FILE] a.txt");
    s.call(7, "list_directory", {{"path", "/ws"}}); // answered: the id is free again
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{7});
  }

  TEST_CASE("a second initialize is refused")
  {
    Session s;
    s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", 50}, {"method", "initialize"},
                                  {"params", nlohmann::json::object()}}));
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answered(50) == "-32600");
  }

  TEST_CASE("requests the server would drop silently are refused, not forwarded")
  {
    Session s;
    s.request(R"({"id":1,"method":"tools/list"})"
              "\n");
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answered(1) == "-32600");
    s.request(R"({"jsonrpc":"1.0","id":2,"method":"tools/list"})"
              "\n");
    CHECK(s.answered(2) == "-32600");
    s.request(R"({"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"})"
              "\n");
    CHECK(s.out.to_upstream.empty());
    s.request(R"({"jsonrpc":"2.0","id":1.5,"method":"tools/list"})"
              "\n");
    CHECK(s.out.to_upstream.empty());
    s.request(R"({"jsonrpc":"2.0","id":9007199254740991,"method":"tools/list"})"
              "\n");
    CHECK(s.out.to_upstream.size() == 1);
    for (const char* dropped : {
           R"({"jsonrpc":"2.0","id":20,"method":"tools/list","params":[]})",
           R"({"jsonrpc":"2.0","id":21,"method":"tools/list","params":null})",
           R"({"jsonrpc":"2.0","id":22,"method":"tools/list","params":{"_meta":5}})",
           R"({"jsonrpc":"2.0","id":23,"method":"tools/list","params":{"_meta":{"progressToken":{}}}})",
           R"({"jsonrpc":"2.0","id":24,"method":"tools/list","result":{}})",
         }) {
      s.request(std::string(dropped) + "\n");
      CHECK(s.out.to_upstream.empty());
      CHECK(s.out.to_client.size() == 1);
    }
  }

  TEST_CASE("a cancelled listing's id cannot carry a file's text into the directory list")
  {
    Session s;
    s.disk.write("/ws2/a.txt", "/etc\n");
    s.call(5, "list_allowed_directories", nlohmann::json::object());
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 5}}}});
    // The server ignores the cancel and never answers; the client reuses 5.
    s.call(5, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK(s.answered(5) == "-32600");
    CHECK(s.out.to_upstream.empty());
    // A relative path still resolves in /ws only.
    s.disk.write("/ws/b.txt", "b\n");
    s.call(6, "write_file", {{"path", "b.txt"}, {"content", "x"}});
    CHECK(s.answered(6) == "not_read");
  }

  TEST_CASE("a held relative write is resolved against the roots in force when it runs")
  {
    Session s;
    s.disk.write("/ws/a.txt", "old root\n");
    s.disk.write("/ws2/a.txt", "new root, never read\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}}); // in flight
    s.call(3, "edit_file", {{"path", "a.txt"}, {"edits", nlohmann::json::array()}});
    CHECK(s.forwarded_ids().empty()); // held behind the read
    // The client's roots move the server to /ws2 meanwhile.
    s.roots_changed("file:///ws2");
    s.list_directories({"/ws2"});
    s.answer_text(2, "old root\n");
    CHECK(s.answered(3) == "not_read"); // /ws2/a.txt was never read
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a held write is confined by the settings in force when it runs")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}});
    GuardSettings confined;
    confined.confine_to = {"/ws2"};
    s.guard.set_settings(confined);
    s.disk.write("/ws/a.txt", "b\n");
    s.answer_text(2, "ok");
    CHECK(s.answered(3) == "outside_confinement");
  }

  TEST_CASE("a head read licenses edits, but never a whole rewrite, however many edits follow")
  {
    Session s;
    s.disk.write("/ws/a.txt", "1\n2\n3\n4\n5\n6\n");
    s.read(1, "/ws/a.txt", {{"head", 2}});
    for (int id = 2; id < 5; ++id) {
      s.call(id, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
      REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{id});
      const std::string before = *s.disk.content("/ws/a.txt");
      const std::string after = "edited " + std::to_string(id) + "\n2\n3\n4\n5\n6\n";
      s.disk.write("/ws/a.txt", after);
      s.answer_text(id, diff_of(before, after));
    }
    s.call(9, "write_file", {{"path", "/ws/a.txt"}, {"content", "five lines\n"}});
    CHECK(s.answered(9) == "partial_read");
  }

  TEST_CASE("an edit let through in warn mode licenses no rewrite")
  {
    GuardSettings warn;
    warn.mode = Mode::warn;
    Session s(warn);
    s.disk.write("/ws/a.txt", "a\n");
    s.call(1, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
    s.disk.write("/ws/a.txt", "b\n");
    s.answer_text(1, diff_of("a\n", "b\n"));
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    CHECK((record == nullptr || record->unknown_outcome || record->extent == ReadExtent::partial));
  }

  TEST_CASE("a writer that lands with the agent's edit is caught by the next write")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\nb\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.disk.write("/ws/a.txt", "A\nb\n");              // the edit
    s.disk.write("/ws/a.txt", "A\nb\nformatted\n");   // a format-on-save hook
    s.answer_text(2, diff_of("a\nb\n", "A\nb\n"));
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "new\n"}});
    CHECK(s.answered(3) == "changed");
  }

  TEST_CASE("an edit whose diff matches the file leaves a record that licenses the next edit")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\r\nb\r\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
    s.disk.replace("/ws/a.txt", "A\nb\n"); // the server writes LF line endings
    s.answer_text(2, diff_of("a\nb\n", "A\nb\n"));
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "new\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("an edit whose diff cannot be applied leaves the file unknown")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
    s.disk.write("/ws/a.txt", "b\n");
    s.answer_text(2, "Edited.");
    s.call(3, "edit_file", {{"path", "/ws/a.txt"}, {"edits", nlohmann::json::array()}});
    CHECK(s.answered(3) == "unknown_outcome");
  }

  TEST_CASE("a read answered after a write was sent does not license that write")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}}); // sent blind
    CHECK(s.forwarded_ids().empty());
    s.answer_text(1, "a\n");
    CHECK(s.answered(2) == "not_read");
  }

  TEST_CASE("a write sent after an earlier whole read is not undone by a read in flight")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}}); // held
    s.answer_text(2, "a\n");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("an empty result answering a read records no read")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer(1, nlohmann::json::object());
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    CHECK(s.answered(2) == "not_read");
  }

  TEST_CASE("an answer with the id of a held call is not taken for it")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}}); // held
    s.answer_text(3, "Successfully wrote");                            // never asked
    CHECK(s.guard.holds_calls());
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a directory move carries the records of the files below it")
  {
    Session s;
    s.disk.make_directory("/ws/d");
    s.disk.write("/ws/d/a.txt", "a\n");
    s.read(1, "/ws/d/a.txt");
    s.call(2, "move_file", {{"source", "/ws/d"}, {"destination", "/ws/e"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.disk.remove("/ws/d/a.txt");
    s.disk.remove("/ws/d");
    s.disk.make_directory("/ws/e");
    s.disk.write("/ws/e/a.txt", "a\n");
    s.answer_text(2, "Successfully moved");
    s.call(3, "edit_file", {{"path", "/ws/e/a.txt"}, {"edits", nlohmann::json::array()}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("a call waits for a move of a directory above its file")
  {
    Session s;
    s.disk.make_directory("/ws/d");
    s.disk.write("/ws/d/a.txt", "a\n");
    s.read(1, "/ws/d/a.txt");
    s.call(2, "move_file", {{"source", "/ws/d"}, {"destination", "/ws/e"}});
    s.call(3, "write_file", {{"path", "/ws/d/a.txt"}, {"content", "x"}});
    CHECK(s.forwarded_ids().empty());
    s.disk.remove("/ws/d/a.txt");
    s.disk.remove("/ws/d");
    s.disk.make_directory("/ws/e");
    s.disk.write("/ws/e/a.txt", "a\n");
    s.answer_text(2, "Successfully moved");
    // Decided now: /ws/d/a.txt is gone, so the write creates a new file.
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("a move onto an existing file that was not read is vetoed")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.disk.write("/ws/b.txt", "b, never read\n");
    s.call(1, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/b.txt"}});
    CHECK(s.answered(1) == "not_read");
    s.call(2, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/c.txt"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
  }

  TEST_CASE("a cancelled write leaves its file unknown until it is read again")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}}); // held
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 2}}}});
    CHECK(s.answered(3) == "unknown_outcome");
    s.read(4, "/ws/a.txt");
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", "d\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }

  TEST_CASE("a cancelled held call never goes upstream")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}}); // held
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 3}}}});
    CHECK(s.out.to_upstream.empty()); // not even the cancel
    CHECK_FALSE(s.guard.holds_calls());
  }

  TEST_CASE("a call the upstream never answers stops holding the calls behind it")
  {
    GuardSettings settings;
    settings.call_timeout = std::chrono::seconds(30);
    Session s(settings);
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}}); // held
    s.out = Outbox{};
    s.guard.expire(s.now + std::chrono::seconds(29), s.out);
    CHECK(s.guard.holds_calls());
    s.guard.expire(s.now + std::chrono::seconds(31), s.out);
    CHECK_FALSE(s.guard.holds_calls());
    CHECK(s.answered(3) == "unknown_outcome");
  }

  TEST_CASE("a read longer than the client shows the model does not license a rewrite")
  {
    Session s({}, "claude-code");
    s.disk.write("/ws/big.txt", std::string(40'000, 'x'));
    s.call(1, "read_text_file", {{"path", "/ws/big.txt"}});
    s.answer(1, {{"content", {{{"type", "text"}, {"text", std::string(40'000, 'x')}}}},
                 {"structuredContent", {{"content", std::string(40'000, 'x')}}}});
    s.call(2, "write_file", {{"path", "/ws/big.txt"}, {"content", "short"}});
    CHECK(s.answered(2) == "partial_read");
    s.call(3, "edit_file", {{"path", "/ws/big.txt"}, {"edits", nlohmann::json::array()}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("the config's client_result_limits override the built-in table")
  {
    GuardSettings settings;
    settings.client_result_limits["test-client"] = 100;
    Session s(settings);
    s.disk.write("/ws/a.txt", std::string(200, 'x'));
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, std::string(200, 'x'));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "short"}});
    CHECK(s.answered(2) == "partial_read");
  }

  TEST_CASE("a read of a path the server refuses reads nothing of the file")
  {
    Session s;
    s.disk.make_directory("/proc");
    s.disk.write("/proc/pagemap", "endless");
    s.disk.set_mtime("/proc/pagemap", s.disk.now_ns()); // racy: would be hashed at once
    const int before = s.disk.hash_calls;
    s.call(1, "read_text_file", {{"path", "/proc/pagemap"}});
    s.answer(1, {{"content", {{{"type", "text"}, {"text", "Access denied"}}}}, {"isError", true}});
    CHECK(s.disk.hash_calls == before);
  }

  TEST_CASE("held calls are kept in the ledger until they run, and are owed answers")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "c\n"}}); // held
    s.call(3, "list_directory", {{"path", "/ws"}});
    CHECK(s.answered(3) == "-32600");
    const auto unanswered = s.guard.take_unanswered();
    CHECK(unanswered.size() == 2);
  }
}
