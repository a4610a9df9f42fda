#include <doctest/doctest.h>

#include "guard_session.hpp"

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

  TEST_CASE("a held call keeps its line whole after the reader's buffer is reused")
  {
    // Session::request lends the client's line from the reader's buffer and
    // overwrites the buffer once the guard took it: a held call keeps a copy
    // of its own, which goes upstream as the client sent it.
    Session s;
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    const std::string held = Session::json_line(
      {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/call"},
       {"params", {{"name", "write_file"}, {"arguments", {{"path", "/ws/a.txt"}, {"content", "three\n"}}}}}});
    s.request(held);
    CHECK(s.out.to_upstream.empty());
    REQUIRE(s.guard.holds_calls());
    CHECK(s.reader_buffer.find_first_not_of('#') == std::string::npos); // the reader read on
    s.disk.write("/ws/a.txt", "two\n");
    s.answer_text(2, "Successfully wrote to /ws/a.txt");
    REQUIRE(s.out.to_upstream.size() == 1);
    CHECK(s.out.to_upstream.front() == held);
  }

  TEST_CASE("a call forwarded at once goes on from the reader's buffer, uncopied")
  {
    Session s;
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    for (const std::string& buffer :
         {std::string(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a.txt"}}})"
                       "\n"),
          std::string(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/ws/b.txt","content":"new\n"}}})"
                       "\n")}) {
      CAPTURE(buffer);
      REQUIRE(s.plain(buffer));
      s.out = Outbox{};
      s.client.take(OutgoingLine::borrowed(buffer), s.now, s.out);
      REQUIRE(s.out.to_upstream.size() == 1);
      CHECK(s.out.to_upstream.front().is_borrowed());
      CHECK(s.out.to_upstream.front().text().data() == buffer.data());
      CHECK(s.out.to_upstream.front() == buffer);
    }
  }

  TEST_CASE("a write's answer goes on before fsguard reads the file it left")
  {
    Session s;
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    s.disk.write("/ws/a.txt", "two\n");
    const int hashed = s.disk.hash_calls;
    CHECK(s.answer_text_unsettled(2, "Wrote"));
    const SeenRecord* read = s.guard.record("/ws/a.txt");
    REQUIRE(read != nullptr);
    CHECK(read->hash == s.disk.hash_of("one\n")); // the agent does not wait for the record
    s.upstream.line_sent();
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == s.disk.hash_of("two\n"));
    // Its stat, racy, could vouch for nothing: recorded from the content it
    // wrote, not read back (the next check compares the file's content).
    CHECK(s.disk.hash_calls == hashed);
  }

  TEST_CASE("an edit whose result fsguard cannot check is recorded before its answer goes on")
  {
    // No diff in the answer, no hash to hold the agent to: a writer landing
    // while the answer went to a slow client would have been taken for the
    // agent's edit had the record waited for the answer.
    GuardSettings settings;
    settings.tools = server_filesystem_tools();
    (*settings.tools)["edit_file"].result_is_diff = false;
    Session s(settings);
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "edit_file",
           {{"path", "/ws/a.txt"}, {"edits", {{{"oldText", "one"}, {"newText", "two"}}}}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.disk.write("/ws/a.txt", "two\n");
    CHECK(s.answer_text_unsettled(2, "Edited"));
    s.disk.write("/ws/a.txt", "two\nand another writer's line\n");
    s.upstream.line_sent();
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.forwarded_ids().empty()); // the other writer's line was never seen
  }

  TEST_CASE("a change sent before the last write's record is taken is decided on that record")
  {
    // The client may send its next call while fsguard still writes the
    // last answer to it: the write is recorded before the call is decided.
    Session s;
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    s.disk.write("/ws/a.txt", "two\n");
    CHECK(s.answer_text_unsettled(2, "Wrote"));
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
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
    const auto asked = nlohmann::json::parse(s.out.to_upstream.back().text())["id"];
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
      for (const auto& line : s.out.to_upstream) {
        sent.emplace_back(line.text());
      }
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
    s.request(line + "\n");
    REQUIRE(s.out.to_upstream.size() == 1);
    s.upstream_line(R"({"jsonrpc":"2.0","id":"\ud800","result":{"content":[]}})");
    CHECK(s.guard.take_unanswered().empty());
  }

  TEST_CASE("a failed initialize may be sent again")
  {
    Session s{Session::Uninitialized{}};
    const auto initialize = [&](int id) {
      s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "initialize"},
                                    {"params", nlohmann::json::object()}}));
    };
    initialize(1);
    s.upstream_line(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}})");
    initialize(2);
    CHECK(s.out.to_upstream.size() == 1);
    CHECK(s.out.to_client.empty());
  }

  TEST_CASE("an initialize refused for a reused id leaves the session uninitialized")
  {
    Session s{Session::Uninitialized{}};
    Outbox& out = s.out;
    const auto send = [&](int id, const char* method) {
      s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", id}, {"method", method},
                                    {"params", nlohmann::json::object()}}));
    };
    send(1, "tools/list");
    send(1, "initialize"); // id 1 is pending: refused, never sent
    CHECK(out.to_upstream.empty());
    CHECK(out.to_client.size() == 1);
    send(2, "initialize");
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
    Session s{Session::Uninitialized{}, settings};
    FakeDisk& disk = s.disk;
    s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                                  {"params", nlohmann::json::object()}}));
    s.upstream_line(
      R"({"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"desktop-commander"}}})");
    const auto write = [&](int id) {
      s.call(id, "write_file", {{"path", "/ws/t.xlsx"}, {"content", "[[1,2]]"}});
      return s.out.to_upstream.size() == 1;
    };
    REQUIRE(write(1));
    disk.write("/ws/t.xlsx", "PK\x03\x04 a spreadsheet"); // the server converts the rows
    s.upstream_line(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}})");
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

  TEST_CASE("an id written as an integral float is the integer the server reads and answers")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.disk.advance(10'000'000'000LL);
    s.call(7.0, "read_text_file", {{"path", "/ws/a.txt"}}); // sent as 7.0, read by JSON.parse as 7
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{7.0});
    s.call(7, "list_directory", {{"path", "/ws"}}); // the same id, to the server
    CHECK(s.forwarded_ids().empty());
    CHECK(s.answered(7) == "-32600");
    s.answer(7, {{"content", {{{"type", "text"}, {"text", "a\n"}}}},
                 {"structuredContent", {{"content", "a\n"}}}}); // the server writes 7
    s.call(nlohmann::json::parse("9e0"), "write_file", {{"path", "/ws/a.txt"}, {"content", "b\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{9.0}); // the read was recorded
    s.request(R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_directory",)"
              R"("arguments":{"path":"/ws"},"_meta":{"progressToken":3.0}}})"
              "\n");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{10});
  }

  TEST_CASE("only a request fsguard relays is closed by close_relayed_request")
  {
    Session s;
    s.call(7, "list_directory", {{"path", "/ws"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{7});
    s.call(8, "read_text_file", {{"path", "/ws/a.txt"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{8});
    CHECK_FALSE(s.guard.close_relayed_request("8")); // a guarded call: its answer counts
    CHECK_FALSE(s.guard.close_relayed_request("9")); // nothing pending
    CHECK(s.guard.close_relayed_request("7"));
    CHECK_FALSE(s.guard.close_relayed_request("7")); // closed: the id is free again
    s.call(7, "list_directory", {{"path", "/ws"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{7});
  }

  TEST_CASE("a plain call of a tool fsguard only relays goes on unparsed, and counts as pending")
  {
    Session s;
    const std::string sent = R"({"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/ws"}},"jsonrpc":"2.0","id":7})"
                             "\n";
    REQUIRE(s.plain(sent));
    s.out = Outbox{};
    s.client.take(OutgoingLine::borrowed(sent), s.now, s.out);
    REQUIRE(s.out.to_upstream.size() == 1);
    CHECK(s.out.to_upstream.front() == sent);
    CHECK(s.out.to_upstream.front().is_borrowed()); // forwarded uncopied
    // Pending under its id: reused, it is refused (by the full path).
    s.request(sent);
    CHECK(s.answered(7) == "-32600");
    CHECK(s.guard.close_relayed_request("7")); // its answer goes on without a skim
  }

  TEST_CASE("a plain call of the client's listing of the allowed directories takes the full path")
  {
    Session s;
    const auto plain = [](const std::string& tool) {
      return R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":")" + tool
             + R"(","arguments":{"path":"/ws/a.txt"}}})" + "\n";
    };
    std::string line = plain("list_allowed_directories");
    CHECK_FALSE(s.guard.scan_plain_call(line, s.plain_arguments));
    for (const std::string tool : {"read_text_file", "write_file", "edit_file", "move_file",
                                   "read_multiple_files"}) {
      CAPTURE(tool);
      const auto call = s.guard.scan_plain_call(plain(tool), s.plain_arguments);
      REQUIRE(call);
      CHECK(call->tool != nullptr); // guarded: its arguments read
      CHECK(s.plain_arguments.tree == nlohmann::json{{"path", "/ws/a.txt"}});
    }
    const auto listed = s.guard.scan_plain_call(plain("list_directory"), s.plain_arguments);
    REQUIRE(listed);
    CHECK(listed->tool == nullptr); // only relayed
    GuardSettings confined;
    confined.confine_to = {"/ws2"};
    s.guard.set_settings(confined);
    const auto confined_listing = s.guard.scan_plain_call(plain("list_directory"), s.plain_arguments);
    REQUIRE(confined_listing);
    CHECK(confined_listing->tool != nullptr); // confined now: described
  }

  TEST_CASE("a plain guarded call is decided as the full path decides it")
  {
    // The same calls, once through the scan and once parsed, in two
    // sessions: the same lines go out, and the same records are kept.
    const auto run = [](bool plain) {
      Session s;
      s.disk.write("/ws/a.txt", "one\n");
      std::vector<std::string> sent;
      // The parsed way, each line spells the key "name" with an escape: no
      // longer the plain shape, so the intake parses it.
      const auto up = [](std::string_view line) {
        return "up " + nlohmann::json::parse(line).dump();
      };
      const auto send = [&](std::string taken) {
        if (!plain) {
          taken.replace(taken.find(R"("name")"), 6, R"("n\u0061me")");
        }
        REQUIRE(s.plain(taken) == plain);
        s.request(taken);
        for (const auto& each : s.out.to_upstream) {
          sent.push_back(up(each.text()));
        }
        for (const auto& each : s.out.to_client) {
          sent.push_back("client " + each);
        }
      };
      // A write before any read: vetoed.
      send(R"({"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/ws/a.txt"}},"jsonrpc":"2.0","id":1})"
           "\n");
      // A read, forwarded, and a second read of the file, which waits for
      // nothing (reads do not hold each other).
      send(R"({"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a.txt"}},"jsonrpc":"2.0","id":2})"
           "\n");
      // An edit held behind that read, then released by its answer.
      send(R"({"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/ws/a.txt","edits":[{"oldText":"one","newText":"two"}]}},"jsonrpc":"2.0","id":"e-3"})"
           "\n");
      s.answer(2, {{"content", {{{"type", "text"}, {"text", "one\n"}}}}});
      for (const auto& each : s.out.to_upstream) {
        sent.push_back(up(each.text()));
      }
      const SeenRecord* record = s.guard.record("/ws/a.txt");
      sent.push_back(record != nullptr ? "seen" : "unseen");
      sent.push_back(s.guard.close_relayed_request("\"e-3\"") ? "relayed" : "guarded");
      return sent;
    };
    const auto plain = run(true);
    const auto parsed = run(false);
    CHECK(plain == parsed);
    REQUIRE(plain.size() >= 4);
    CHECK(plain[0].starts_with("client ")); // the veto
    CHECK(plain[1].starts_with("up ")); // the read
    CHECK(plain.back() == "guarded");
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
    // The SDK's request schema is strict: a member of another name too.
    s.request(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","_meta":{}})"
              "\n");
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answered(3) == "-32600");
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

  TEST_CASE("attack (verify local baseline): a held relative write released before the new roots are listed")
  {
    Session s;
    s.disk.write("/ws/a.txt", "old root\n");
    s.disk.write("/ws2/a.txt", "new root, never read\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}}); // in flight
    s.call(3, "edit_file", {{"path", "a.txt"}, {"edits", nlohmann::json::array()}});
    CHECK(s.forwarded_ids().empty()); // held behind the read
    s.roots_changed("file:///ws2");
    s.answer_text(2, "old root\n"); // before fsguard's listing is answered
    CHECK(s.forwarded_ids().empty());
    CHECK(s.answered(3).empty()); // neither forwarded nor refused: it waits
    CHECK(s.guard.holds_calls());
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

  TEST_CASE("with confine_to, a call of a tool that changes nothing is confined too")
  {
    GuardSettings confined;
    confined.confine_to = {"/ws2"};
    Session s(confined);
    s.call(1, "list_directory", {{"path", "/ws"}});
    CHECK(s.answered(1) == "outside_confinement");
    s.call(2, "list_directory", {{"path", "/ws2"}});
    CHECK(s.answered(2) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
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

  TEST_CASE("a move whose destination cannot be resolved is refused with the destination's reason")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.call(1, "move_file", {{"source", "/ws/a.txt"}, {"destination", 5}});
    CHECK(s.answered(1) == "unresolved_path");
    CHECK(s.client_text(1).find("missing or not a string") != std::string::npos);
    s.call(2, "move_file", {{"source", "/ws/a.txt"}, {"destination", " /ws/b.txt"}});
    CHECK(s.answered(2) == "unresolved_path");
    CHECK(s.client_text(2).find("white space") != std::string::npos);
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

namespace {

std::string numbered_lines(int count)
{
  std::string text;
  for (int line = 1; line <= count; ++line) {
    text += "line " + std::to_string(line) + "\n";
  }
  return text;
}

std::string replaced(std::string text, const std::string& what, const std::string& by)
{
  return text.replace(text.find(what), what.size(), by);
}

nlohmann::json one_edit(const std::string& path, const std::string& old_text,
                        const std::string& new_text)
{
  return {{"path", path}, {"edits", {{{"oldText", old_text}, {"newText", new_text}}}}};
}

} // namespace

TEST_SUITE("guard: stale changes")
{
  TEST_CASE("a write's content is kept for the next veto's diff as the reader decoded it, or from its line")
  {
    for (const bool decoded : {true, false}) {
      CAPTURE(decoded);
      Session s;
      s.disk.write("/ws/a.txt", numbered_lines(10));
      s.read_content(1, "/ws/a.txt");
      const std::string written = numbered_lines(30);
      std::string line =
        Session::json_line({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
                            {"params", {{"name", "write_file"},
                                        {"arguments", {{"path", "/ws/a.txt"}, {"content", written}}}}}});
      if (!decoded) {
        // A number past 64 bits elsewhere: the one-pass reader leaves the
        // line to the full parser, which only hashes the content.
        const std::string at = R"("arguments":{)";
        line.insert(line.find(at) + at.size(), R"("note":18446744073709551616,)");
        std::optional<ContentHash> hash;
        REQUIRE_FALSE(read_json_fast(std::string_view(line).substr(0, line.size() - 1), hash));
      }
      s.request(line);
      REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
      s.disk.write("/ws/a.txt", written);
      s.answer_text(2, "Successfully wrote to /ws/a.txt");
      s.disk.write("/ws/a.txt", replaced(written, "line 20\n", "// changed\n"));
      s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
      REQUIRE(s.answered(3) == "changed");
      CHECK(s.client_line(3)["result"]["_meta"]["fsguard/veto"]["diff_complete"] == true);
      CHECK(s.client_text(3).find("-line 20\n+// changed\n") != std::string::npos);
    }
  }

  TEST_CASE("a changed veto after a whole read shows the diff, and counts as a read")
  {
    Session s;
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "line 51\n"}});
    REQUIRE(s.answered(2) == "changed");
    const auto meta = s.client_line(2)["result"]["_meta"]["fsguard/veto"];
    CHECK(meta["diff_complete"] == true);
    CHECK(meta["counts_as_read"] == true);
    CHECK(meta["cause"] == "outside fsguard");
    CHECK(meta["seen_xxh3_128"] == to_hex(fake_hash(seen)));
    CHECK(meta["current_xxh3_128"] == to_hex(fake_hash(formatted)));
    const std::string text = s.client_text(2);
    CAPTURE(text);
    CHECK(text.find("modified outside fsguard since you last read or wrote it") != std::string::npos);
    CHECK(text.find("@@ -1,4 +1,4 @@\n-line 1\n+// formatted\n") != std::string::npos);
    CHECK(text.find("This diff counts as your read") != std::string::npos);
    // The corrected retry, a model turn later, needs no read.
    s.now += std::chrono::seconds(2);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", formatted + "line 51\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("the calls that reach fsguard right after a veto were written before it: they get the veto too")
  {
    Session s;
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string now = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", now);
    // One model turn's writes, sent together or one after the other.
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    CHECK(s.answered(2) == "changed");
    s.now += k_take_in_time / 2;
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.answered(3) == "changed");
    CHECK(*s.disk.content("/ws/a.txt") == now);
    // The agent's next turn comes later, and relies on the diff.
    s.now += k_take_in_time;
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", now + "four\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("a veto repeated within the take-in time says the call came before the diff could be read")
  {
    Session s;
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string now = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", now);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(s.answered(2) == "changed");
    CHECK(s.client_text(2).find("This diff counts as your read") != std::string::npos);
    s.now += k_take_in_time / 2;
    s.call(3, "edit_file", one_edit("/ws/a.txt", "line 3\n", "LINE 3\n"));
    REQUIRE(s.answered(3) == "changed");
    const std::string text = s.client_text(3);
    CAPTURE(text);
    CHECK(text.find("-line 3\n+line three\n") != std::string::npos); // the diff again
    CHECK(text.find("This diff counts as your read") == std::string::npos);
    CHECK(text.find("fsguard showed you this same diff when it refused an earlier call, and this "
                    "call was sent before you could have read that diff")
          != std::string::npos);
    CHECK(s.client_line(3)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == true);
    // The diff counts from when it was first shown, not from its repetition.
    s.now += k_take_in_time / 2;
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", now + "four\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("a veto that counts as a read licenses only the calls sent after it")
  {
    Session s;
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}}); // in flight: holds the writes
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "four\n"}});
    CHECK(s.forwarded_ids().empty());
    s.disk.write("/ws/a.txt", replaced(seen, "line 3\n", "line three\n"));
    s.answer(2, {{"isError", true}, {"content", {{{"type", "text"}, {"text", "failed"}}}}});
    CHECK(s.answered(3) == "changed"); // the diff counts as a read once taken in...
    CHECK(s.answered(4) == "changed");  // ...not for a call sent before it
    s.now += std::chrono::seconds(1);
    s.call(5, "write_file",
           {{"path", "/ws/a.txt"}, {"content", replaced(seen, "line 3\n", "line three\n") + "five\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }

  TEST_CASE("a write held up longer than the take-in time (a permission prompt) still cannot undo the change a veto showed")
  {
    Session s;
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string now = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", now);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 3\n", "LINE 3\n"));
    REQUIRE(s.answered(2) == "changed");
    // The same model turn's next call, written from the old version, waited
    // for the person to allow it.
    s.now += std::chrono::seconds(5);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "line 21\n"}});
    REQUIRE(s.answered(3) == "changed");
    const std::string text = s.client_text(3);
    CAPTURE(text);
    CHECK(text.find("does not keep that change byte for byte") != std::string::npos);
    CHECK(*s.disk.content("/ws/a.txt") == now);
    // A write that keeps the change passes; so does any write after a read.
    s.now += std::chrono::seconds(5);
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", now + "line 21\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("after a veto that counts as a read, a real read lets a write replace the change")
  {
    Session s;
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string now = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", now);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(s.answered(2) == "changed");
    s.now += std::chrono::seconds(2);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "twenty-one\n"}});
    REQUIRE(s.answered(3) == "changed"); // would undo what the diff showed
    s.read_content(4, "/ws/a.txt");
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", "five\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }

  TEST_CASE("a cut diff, a partial read or an evicted text gives the plain changed veto")
  {
    const std::string seen = numbered_lines(300);
    std::string rewritten;
    for (int line = 1; line <= 300; ++line) {
      rewritten += "new " + std::to_string(line) + "\n";
    }
    SUBCASE("cut")
    {
      Session s;
      s.disk.write("/ws/a.txt", seen);
      s.read_content(1, "/ws/a.txt");
      s.disk.write("/ws/a.txt", rewritten);
      s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
      REQUIRE(s.answered(2) == "changed");
      CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["diff_complete"] == false);
      CHECK(s.client_text(2).find("fsguard cut the diff here") != std::string::npos);
      CHECK(s.client_text(2).find("does not count as a read") != std::string::npos);
      s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
      CHECK(s.answered(3) == "changed");
    }
    SUBCASE("evicted")
    {
      GuardSettings settings;
      settings.kept_texts.total_bytes = 0;
      Session s(settings);
      s.disk.write("/ws/a.txt", seen);
      s.read_content(1, "/ws/a.txt");
      s.disk.write("/ws/a.txt", replaced(seen, "line 1\n", "one\n"));
      s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
      REQUIRE(s.answered(2) == "changed");
      CHECK(s.client_text(2).find("@@") == std::string::npos);
      CHECK(s.client_text(2).find("Read it again to get its current content") != std::string::npos);
      s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
      CHECK(s.answered(3) == "changed");
    }
    SUBCASE("partial")
    {
      Session s;
      s.disk.write("/ws/a.txt", seen);
      s.call(1, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 5}});
      s.answer_text(1, "line 1\nline 2\nline 3\nline 4\nline 5");
      s.disk.write("/ws/a.txt", replaced(seen, "line 1\n", "one\n"));
      s.call(2, "edit_file", one_edit("/ws/a.txt", "line 4\n", "four\n"));
      REQUIRE(s.answered(2) == "changed");
      CHECK(s.client_text(2).find("@@") == std::string::npos);
    }
    SUBCASE("a read whose text is not the file's content")
    {
      Session s;
      s.disk.write("/ws/a.txt", seen);
      s.read(1, "/ws/a.txt"); // answered "shown"
      s.disk.write("/ws/a.txt", replaced(seen, "line 1\n", "one\n"));
      s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
      REQUIRE(s.answered(2) == "changed");
      CHECK(s.client_text(2).find("@@") == std::string::npos);
    }
  }

  TEST_CASE("a diff the client would cut does not count as a read")
  {
    GuardSettings settings;
    settings.client_result_limits["test-client"] = 700;
    Session s(settings);
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt"); // a short answer: seen whole
    const std::string now = replaced(seen, "line 1\n", "one\n");
    s.disk.write("/ws/a.txt", now);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    REQUIRE(s.answered(2) == "changed");
    CHECK(s.out.to_client.front().size() > 700);
    CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == false);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", now + "x\n"}});
    CHECK(s.answered(3) == "changed");
  }

  TEST_CASE("a file that changes before its read's hash is taken keeps what the read showed")
  {
    Session s;
    const std::string text = numbered_lines(10);
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL); // old enough for the stat to vouch: the hash is owed
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    const std::string line =
      nlohmann::json{{"jsonrpc", "2.0"}, {"id", 1},
                     {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}.dump();
    s.upstream_line(line, false);
    s.disk.replace("/ws/a.txt", text); // renamed over with the same bytes before the hash
    s.upstream.line_sent();
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
  }

  TEST_CASE("a guard that leaves its files to the process's exit knows none afterwards")
  {
    Session s;
    const std::string text = numbered_lines(10);
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL);
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, text);
    REQUIRE(s.guard.record("/ws/a.txt") != nullptr);
    REQUIRE(s.guard.kept_texts().size() == 1);
    s.guard.leave_files_to_exit(); // what it held is left unfreed, on purpose
    CHECK(s.guard.record("/ws/a.txt") == nullptr);
    CHECK(s.guard.kept_texts().size() == 0);
  }

  TEST_CASE("a read's answer pays the hash it owes when it shows the file's bytes: the file is not read again")
  {
    Session s;
    const std::string text = numbered_lines(10);
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL); // old enough for the stat to vouch: the hash is owed
    const int before = s.disk.hash_calls;
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, text);
    CHECK(s.disk.hash_calls == before);
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known);
    CHECK(record->hash == s.disk.hash_of(text));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
  }

  TEST_CASE("a whole read's text decoded as its answer was skimmed pays its hash and is kept, not decoded again")
  {
    Session s;
    const std::string text = numbered_lines(10) + "caf\u00e9 \r a bare carriage return\n";
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL); // old enough for the stat to vouch: the hash is owed
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    // The guard asks for the text before the answer is skimmed.
    const auto wanted = [&](int id) {
      return s.guard.answer_text_wanted(s.guard.find_answer(id_key(id))).has_value();
    };
    CHECK(wanted(1));
    CHECK(s.answer_in_sdk_bytes(1, text));
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known);
    CHECK(record->hash == s.disk.hash_of(text));
    CHECK(record->traits.bare_cr); // from what the decoder saw: a "\r" written
    REQUIRE(s.guard.kept_texts().size() == 1);
    // A change made after the read is vetoed with its diff: the kept text.
    s.disk.write("/ws/a.txt", numbered_lines(11));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.answered(2) == "changed");
    // A write's answer, and a read that is not whole, are not decoded so.
    s.read_content(3, "/ws/a.txt");
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "y\n"}});
    CHECK_FALSE(wanted(4));
    CHECK(s.answer_in_sdk_bytes(4, "Successfully wrote to /ws/a.txt"));
    s.call(5, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    CHECK_FALSE(wanted(5));
    CHECK(s.answer_in_sdk_bytes(5, "y"));
  }

  TEST_CASE("a tools map that names list_allowed_directories says what its calls are, on either path")
  {
    GuardSettings settings;
    settings.tools = server_filesystem_tools();
    ToolSpec listing;
    listing.role = ToolRole::other;
    (*settings.tools)["list_allowed_directories"] = listing;
    settings.confine_to = {"/ws2"};
    Session s(settings);
    // Confined like any tool the map names, not read as the client's
    // listing of the allowed directories (nor relayed unparsed).
    s.call(1, "list_allowed_directories", {{"path", "/ws/a.txt"}});
    CHECK(s.answered(1) == "outside_confinement");
    CHECK(s.out.to_upstream.empty());
  }

  TEST_CASE("the full path alone relays a plain call of a tool fsguard does not guard")
  {
    // What take_plain_call takes first, on_client_request takes the same
    // way when it comes to it (a line not in the plain shape: a key escaped).
    Session s;
    const std::string line =
      R"({"method":"tools/call","params":{"n\u0061me":"list_directory","arguments":{"path":"/ws"}},"jsonrpc":"2.0","id":7})"
      "\n";
    REQUIRE_FALSE(s.plain(line));
    s.request(line);
    REQUIRE(s.out.to_upstream.size() == 1);
    CHECK(s.out.to_upstream.front() == line);
    CHECK(s.guard.close_relayed_request("7"));
  }

  TEST_CASE("a read through a tools map of the config is hashed from the file: only built-in profiles vouch for their text")
  {
    // A server of unknown make may decode as it likes (a lossy decoder that
    // keeps the length): its text never stands for the file's bytes.
    GuardSettings settings;
    settings.tools = server_filesystem_tools();
    for (auto& [name, spec] : *settings.tools) {
      spec.text_is_file_bytes = false; // as a config's tools map has it
    }
    Session s(settings);
    const std::string text = numbered_lines(10);
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL);
    const int before = s.disk.hash_calls;
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, text);
    CHECK(s.disk.hash_calls == before + 1);
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == s.disk.hash_of(text));
  }

  TEST_CASE("an answer with U+FFFD is not taken for the file's bytes, even at the file's length")
  {
    // A cut four-byte sequence (3 bytes) shows as one U+FFFD (3 bytes): the
    // answer has the file's length, not its bytes. Taken for them, the
    // write would pass as if the file were valid text, and lose the bytes.
    Session s;
    s.disk.write("/ws/a.txt", "a\xF0\x90\x80\n");
    s.disk.advance(3'000'000'000LL);
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, "a\xEF\xBF\xBD\n");
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == s.disk.hash_of("a\xF0\x90\x80\n"));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.answered(2) == "lossy_read");
  }

  TEST_CASE("an answer with U+FFFD as an escape is not taken for the file's bytes either")
  {
    // The decoder writes U+FFFD for "\\ufffd": a text of ASCII bytes on the
    // wire that decodes to one that is not.
    Session s;
    s.disk.write("/ws/a.txt", "a\xF0\x90\x80\n");
    s.disk.advance(3'000'000'000LL);
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    const std::string line =
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\ufffd\n"}]}})";
    s.upstream_line(line);
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == s.disk.hash_of("a\xF0\x90\x80\n"));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.answered(2) == "lossy_read");
  }

  TEST_CASE("an answer that shows a bare carriage return records it, as hashing the file would")
  {
    Session s;
    const std::string text = "a\rb\r\nc\n"; // the answer has it as the escape "\\r"
    s.disk.write("/ws/a.txt", text);
    s.disk.advance(3'000'000'000LL);
    const int before = s.disk.hash_calls;
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.answer_text(1, text);
    CHECK(s.disk.hash_calls == before); // the answer paid the hash
    const SeenRecord* record = s.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash_state == HashState::known);
    CHECK(record->traits == ContentTraits{.valid_utf8 = true, .bare_cr = true});
  }

  TEST_CASE("a changed veto stays under 8 KiB by default, however large the change")
  {
    Session s;
    std::string seen;
    std::string rewritten;
    for (int line = 0; line < 5000; ++line) {
      seen += std::string(70, 'a') + std::to_string(line) + "\n";
      rewritten += std::string(70, 'b') + std::to_string(line) + "\n";
    }
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", rewritten);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    REQUIRE(s.answered(2) == "changed");
    CHECK(s.out.to_client.front().size() < 8192);
  }

  TEST_CASE("a stale edit far from the outside change is applied to the current content")
  {
    Session s;
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    const std::string edited = replaced(formatted, "line 40\n", "LINE 40\n");
    s.disk.replace("/ws/a.txt", edited);
    CHECK_FALSE(s.answer_text(2, diff_of(formatted, edited))); // fsguard's version goes instead
    REQUIRE(s.out.to_client.size() == 1);
    const auto answer = s.client_line(2);
    CHECK(answer["result"]["content"].size() == 2);
    CHECK(answer["result"]["_meta"]["fsguard/stale"]["how"] == "rebase");
    const std::string note = answer["result"]["content"][1]["text"];
    CAPTURE(note);
    CHECK(note.find("had been modified outside fsguard") != std::string::npos);
    CHECK(note.find("-line 1\n+// formatted\n") != std::string::npos);
    // Right after the note, a call was written without it in view.
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    CHECK(s.answered(3) == "not_read");
    // A turn later the agent knows the result whole: a rewrite passes...
    s.now += std::chrono::seconds(1);
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", edited + "line 51\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("after a rebase, a write written from the old version cannot undo the outside change, however late it comes")
  {
    Session s;
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    const std::string edited = replaced(formatted, "line 40\n", "LINE 40\n");
    s.disk.replace("/ws/a.txt", edited);
    s.answer_text(2, diff_of(formatted, edited));
    s.now += std::chrono::seconds(5); // held by a permission prompt
    s.call(3, "write_file",
           {{"path", "/ws/a.txt"}, {"content", replaced(seen, "line 40\n", "LINE 40\n") + "x\n"}});
    CHECK(s.answered(3) == "changed");
    CHECK(*s.disk.content("/ws/a.txt") == edited);
  }

  TEST_CASE("a call sent before a rebased edit's answer is not licensed by it")
  {
    Session s;
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", replaced(seen, "line 40\n", "LINE 40\n") + "x\n"}});
    CHECK(s.forwarded_ids().empty()); // held
    const std::string edited = replaced(formatted, "line 40\n", "LINE 40\n");
    s.disk.replace("/ws/a.txt", edited);
    s.answer_text(2, diff_of(formatted, edited));
    CHECK(s.answered(3) == "not_read"); // it was written without the note in view
    CHECK(*s.disk.content("/ws/a.txt") == edited);
  }

  TEST_CASE("a stale edit that touches the changed line is vetoed with the diff")
  {
    Session s;
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 10\n", "line 10 // reviewed\n"));
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 10\n", "LINE 10\n"));
    REQUIRE(s.answered(2) == "changed");
    const std::string text = s.client_text(2);
    CAPTURE(text);
    CHECK(text.find("+line 10 // reviewed\n") != std::string::npos);
    CHECK(text.find("did not apply your edit to the current content") != std::string::npos);
    // The veto counts as a read: the edit retried against the current line passes.
    s.now += std::chrono::seconds(1);
    s.call(3, "edit_file", one_edit("/ws/a.txt", "line 10 // reviewed\n", "LINE 10\n"));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("with stale_edit veto, a stale edit is never applied")
  {
    GuardSettings settings;
    settings.stale_edit = StaleEdit::veto;
    Session s(settings);
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 1\n", "one\n"));
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    CHECK(s.answered(2) == "changed");
  }

  TEST_CASE("in warn mode a stale edit goes through as it is, with no rebase")
  {
    GuardSettings settings;
    settings.mode = Mode::warn;
    Session s(settings);
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 1\n", "one\n"));
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    const std::string after = replaced(*s.disk.content("/ws/a.txt"), "line 40\n", "LINE 40\n");
    const std::string before = *s.disk.content("/ws/a.txt");
    s.disk.replace("/ws/a.txt", after);
    CHECK(s.answer_text(2, diff_of(before, after))); // relayed as it is
  }

  TEST_CASE("with stale_write merge, a write that does not overlap the change is merged")
  {
    GuardSettings settings;
    settings.stale_write = StaleWrite::merge;
    Session s(settings);
    s.guard.set_auditing(true);
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string theirs = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", theirs);
    const std::string ours = replaced(seen, "line 40\n", "LINE 40\n");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", ours}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    const std::string merged = replaced(theirs, "line 40\n", "LINE 40\n");
    CHECK(s.forwarded_arguments(2)["content"] == merged);
    REQUIRE(s.out.decisions.size() == 1);
    CHECK(s.out.decisions.front()["decision"] == "merge");
    CHECK(s.out.decisions.front()["fingerprint"]["seen_xxh3_128"] == to_hex(fake_hash(seen)));
    CHECK(s.out.decisions.front()["fingerprint"]["current_xxh3_128"] == to_hex(fake_hash(theirs)));
    s.disk.replace("/ws/a.txt", merged);
    CHECK_FALSE(s.answer_text(2, "Successfully wrote to /ws/a.txt"));
    const std::string note = s.client_text(2);
    CAPTURE(note);
    CHECK(note.find("Your write was merged") != std::string::npos);
    CHECK(note.find("-line 1\n+// formatted\n") != std::string::npos);
    s.now += std::chrono::seconds(1);
    s.call(3, "edit_file", one_edit("/ws/a.txt", "// formatted\n", "// done\n"));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("with stale_write merge, an overlapping write is vetoed with the conflict")
  {
    GuardSettings settings;
    settings.stale_write = StaleWrite::merge;
    Session s(settings);
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 40\n", "theirs 40\n"));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", replaced(seen, "line 40\n", "ours 40\n")}});
    REQUIRE(s.answered(2) == "changed");
    CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["merge"] == "conflict");
    const std::string text = s.client_text(2);
    CAPTURE(text);
    CHECK(text.find("<<<<<<< your write\nours 40\n") != std::string::npos);
    CHECK(text.find("theirs 40\n>>>>>>> on disk now") != std::string::npos);
    CHECK(*s.disk.content("/ws/a.txt") == replaced(seen, "line 40\n", "theirs 40\n"));
  }

  TEST_CASE("a rebase is audited with both hashes and the result's")
  {
    Session s;
    s.guard.set_auditing(true);
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    REQUIRE(s.out.decisions.size() == 1);
    const auto& record = s.out.decisions.front();
    CHECK(record["decision"] == "rebase");
    CHECK(record["code"] == "changed");
    CHECK(record["fingerprint"]["seen_xxh3_128"] == to_hex(fake_hash(seen)));
    CHECK(record["fingerprint"]["current_xxh3_128"] == to_hex(fake_hash(formatted)));
    CHECK(record["fingerprint"]["result_xxh3_128"]
          == to_hex(fake_hash(replaced(formatted, "line 40\n", "LINE 40\n"))));
  }

  TEST_CASE("the agent's own write kept: a formatter after it shows as a diff from what it wrote")
  {
    Session s;
    s.disk.write("/ws/a.txt", "old\n");
    s.read_content(1, "/ws/a.txt");
    const std::string written = numbered_lines(30);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", written}});
    s.disk.replace("/ws/a.txt", written);
    s.answer_text(2, "Successfully wrote to /ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(written, "line 2\n", "line two\n")); // format on save
    s.call(3, "edit_file", one_edit("/ws/a.txt", "line 25\n", "LINE 25\n"));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3}); // rebased
  }

  TEST_CASE("the cause of a change the agent made itself through another name is its own write")
  {
    Session s;
    s.disk.write("/ws/a.txt", "a\n");
    s.disk.write("/ws/b.txt", "b\n");
    s.read_content(1, "/ws/a.txt");
    s.read_content(2, "/ws/b.txt");
    s.call(3, "write_file", {{"path", "/ws/b.txt"}, {"content", "shared\n"}});
    s.disk.replace("/ws/b.txt", "shared\n");
    s.disk.write("/ws/a.txt", "shared\n"); // a hard link, say, written in place
    s.answer_text(3, "Successfully wrote to /ws/b.txt");
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.answered(4) == "changed");
    CHECK(s.client_text(4).find("modified by your own write_file of /ws/b.txt through fsguard")
          != std::string::npos);
  }

  TEST_CASE("veto texts name the profile's own read tool")
  {
    Session s({}, "test-client", "1.2.29"); // @agent-infra/mcp-server-filesystem
    s.disk.write("/ws/a.txt", "a\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    REQUIRE(s.answered(1) == "not_read");
    const std::string text = s.client_text(1);
    CHECK(text.find("Read it with read_file, then retry.") != std::string::npos);
    CHECK(text.find("read_text_file") == std::string::npos);
  }

  TEST_CASE("agent-infra's edit_file is rebased too, and held to what it should leave")
  {
    Session s({}, "test-client", "1.2.29");
    const std::string seen = numbered_lines(50);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt", "read_file");
    const std::string formatted = replaced(seen, "line 1\n", "// formatted\n");
    s.disk.write("/ws/a.txt", formatted);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 40\n", "LINE 40\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    const std::string edited = replaced(formatted, "line 40\n", "LINE 40\n");
    s.disk.write("/ws/a.txt", edited + "hook\n"); // someone else at the same moment
    s.answer_text(2, "```diff\n...```\n\n");
    s.now += std::chrono::seconds(1);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(s.answered(3) == "changed");
  }
}

TEST_SUITE("guard: servers that see other paths")
{
  const auto warned = [](const Outbox& out, const std::string& words) {
    return std::any_of(out.log.begin(), out.log.end(), [&](const LogLine& line) {
      return line.level == LogLevel::warn && line.text.find(words) != std::string::npos;
    });
  };

  TEST_CASE("a server directory fsguard cannot see is said at once, and writes below it are refused")
  {
    Session s({}, "test-client", "0.2.0", {"/projects/app"});
    CHECK(warned(s.out, "fsguard cannot see the upstream's allowed directories /projects/app"));
    CHECK(warned(s.out, "path_map"));
    s.call(1, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "x\n"}});
    CHECK(s.answered(1) == "not_visible");
    const std::string text = s.client_text(1);
    CAPTURE(text);
    CHECK(text.find("path_map") != std::string::npos);
    CHECK(text.find("/projects/app/a.txt") != std::string::npos);
    s.call(2, "edit_file", {{"path", "a.txt"}, {"edits", nlohmann::json::array()}}); // relative
    CHECK(s.answered(2) == "not_visible");
    s.call(3, "list_directory", {{"path", "/projects/app"}}); // the rest passes
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("with path_map, the server's paths are guarded as the files fsguard sees")
  {
    GuardSettings settings;
    settings.path_map = PathMap({PathMapping{"/projects/app", "/ws"}});
    Session s(settings, "test-client", "0.2.0", {"/projects/app"});
    CHECK_FALSE(warned(s.out, "fsguard's side"));
    s.disk.write("/ws/a.txt", "one\n");
    s.call(1, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "x\n"}});
    s.answer_file_info("/ws/a.txt"); // the server's report of it first: the same file
    REQUIRE(s.answered(1) == "not_read");
    CHECK(s.client_text(1).find("/projects/app/a.txt already exists") != std::string::npos);
    CHECK(s.client_line(1)["result"]["_meta"]["fsguard/veto"]["path"] == "/projects/app/a.txt");
    s.call(2, "read_text_file", {{"path", "a.txt"}}); // relative: under the server's directory
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.answer(2, {{"content", {{{"type", "text"}, {"text", "one\n"}}}}});
    s.call(3, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "two\n"}});
    s.answer_file_info("/ws/a.txt");
    CHECK(s.answered(3) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
    s.disk.write("/ws/a.txt", "two\n");
    s.answer_text(3, "Successfully wrote to /projects/app/a.txt");
    s.disk.write("/ws/a.txt", "outside\n");
    s.call(4, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "four\n"}});
    s.answer_file_info("/ws/a.txt");
    CHECK(s.answered(4) == "changed");
    // A server path no entry maps cannot be seen: refused, never a new file.
    s.call(5, "write_file", {{"path", "/elsewhere/b.txt"}, {"content", "x\n"}});
    CHECK(s.answered(5) == "unresolved_path");
    CHECK(s.client_text(5).find("outside every directory of fsguard's path_map") != std::string::npos);
  }

  TEST_CASE("with path_map, a change waits for the server's report of its file and is refused "
            "when that shows another file than fsguard's (a wrong map, a mount, a link)")
  {
    GuardSettings settings;
    settings.path_map = PathMap({PathMapping{"/projects/app", "/ws"}});
    Session s(settings, "test-client", "0.2.0", {"/projects/app"});
    // fsguard sees no notes/n.txt (an empty mount point); the server has one.
    s.disk.make_directory("/elsewhere");
    s.disk.write("/elsewhere/n.txt", "the server's notes\n");
    s.call(1, "write_file", {{"path", "/projects/app/notes/n.txt"}, {"content", "x\n"}});
    REQUIRE(s.forwarded_ids().size() == 1);
    CHECK(s.forwarded_ids().front() != 1); // fsguard's own question, not the call
    s.answer_file_info("/elsewhere/n.txt");
    REQUIRE(s.answered(1) == "not_visible");
    const std::string text = s.client_text(1);
    CHECK(text.find("the server has a file of 19 bytes") != std::string::npos);
    CHECK(text.find("fsguard sees none") != std::string::npos);
    CHECK(text.find("path_map") != std::string::npos);
    // Missing on both sides: a new file, written.
    s.call(2, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "x\n"}});
    s.answer_file_info("/ws/new.txt");
    CHECK(s.answered(2) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    // A file of another size on the server's side: refused, after a read too.
    s.disk.write("/ws/b.txt", "fsguard's\n");
    s.disk.make_directory("/other");
    s.disk.write("/other/b.txt", "the server's b\n");
    s.call(3, "read_text_file", {{"path", "/projects/app/b.txt"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{3});
    s.answer_text(3, "fsguard's\n");
    s.call(4, "write_file", {{"path", "/projects/app/b.txt"}, {"content", "x\n"}});
    s.answer_file_info("/other/b.txt");
    CHECK(s.answered(4) == "not_visible");
  }

  TEST_CASE("with path_map, a change whose file the server never reports on is refused after "
            "call_timeout_s, never let through")
  {
    GuardSettings settings;
    settings.path_map = PathMap({PathMapping{"/projects/app", "/ws"}});
    settings.call_timeout = std::chrono::seconds(20);
    Session s(settings, "test-client", "0.2.0", {"/projects/app"});
    s.call(1, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "x\n"}});
    REQUIRE(s.forwarded_ids().size() == 1); // fsguard's question only
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(21), s.out);
    CHECK(s.answered(1) == "cannot_inspect"); // not a setup problem: a retry may go through
    CHECK(s.client_text(1).find("within call_timeout_s") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }
}

TEST_SUITE("guard: path_map with the other profiles' get_file_info")
{
  const PathMap k_map({PathMapping{"/projects/app", "/ws"}});

  // A session with desktop-commander under path_map.
  const auto commander = [](Session& s) {
    s.initialize();
    s.answer(0, {{"serverInfo", {{"name", "desktop-commander"}, {"version", "0.2.52"}}}});
  };

  TEST_CASE("with path_map, a desktop-commander change waits for its get_file_info, read in its "
            "format: the same file is changed")
  {
    GuardSettings settings;
    settings.path_map = k_map;
    Session s{Session::Uninitialized{}, settings};
    commander(s);
    s.disk.write("/ws/a.txt", "one\n");
    s.disk.advance(10'000'000'000LL);
    s.call(1, "read_file", {{"path", "/projects/app/a.txt"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{1});
    s.answer_text(1, "[Reading 1 lines from start (total: 1 lines, 0 remaining)]\none\n");
    s.call(2, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "two\n"},
                             {"mode", "rewrite"}});
    REQUIRE(s.forwarded_ids().size() == 1);
    CHECK(s.forwarded_ids().front() != 2); // fsguard's question first
    s.answer_file_info("/ws/a.txt", FileInfoFormat::iso_json);
    CHECK(s.answered(2) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    // A new file, missing on both sides ("Error: ENOENT"), is written.
    s.call(3, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "x\n"}});
    s.answer_file_info("/ws/new.txt", FileInfoFormat::iso_json);
    CHECK(s.answered(3) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("with path_map, a desktop-commander change to a file the server sees otherwise is "
            "refused, down to another millisecond of the same second")
  {
    GuardSettings settings;
    settings.path_map = k_map;
    Session s{Session::Uninitialized{}, settings};
    commander(s);
    // fsguard sees no notes/n.txt (an empty mount point); the server has one.
    s.disk.make_directory("/elsewhere");
    s.disk.write("/elsewhere/n.txt", "the server's notes\n");
    s.call(1, "write_file", {{"path", "/projects/app/notes/n.txt"}, {"content", "x\n"}});
    s.answer_file_info("/elsewhere/n.txt", FileInfoFormat::iso_json);
    REQUIRE(s.answered(1) == "not_visible");
    CHECK(s.client_text(1).find("the server has a file of 19 bytes") != std::string::npos);
    // Of one size and second, 300 ms apart: server-filesystem's text could
    // not tell them, desktop-commander's does.
    s.disk.write("/ws/b.txt", "fsguard's b\n");
    s.disk.set_mtime("/ws/b.txt", 1'700'000'000'100'000'000);
    s.disk.make_directory("/other");
    s.disk.write("/other/b.txt", "servers' b\n");
    s.disk.set_mtime("/other/b.txt", 1'700'000'000'400'000'000);
    s.disk.advance(10'000'000'000LL);
    s.call(2, "edit_block", {{"file_path", "/projects/app/b.txt"}, {"old_string", "b"},
                             {"new_string", "c"}});
    s.answer_file_info("/other/b.txt", FileInfoFormat::iso_json);
    REQUIRE(s.answered(2) == "not_visible");
    CHECK(s.client_text(2).find("modified at second 1700000000.400 there, fsguard sees a file of "
                                "12 bytes modified at second 1700000000.100")
          != std::string::npos);
  }

  TEST_CASE("with path_map, an agent-infra change waits for its get_file_info; its missing parent "
            "is a missing file")
  {
    GuardSettings settings;
    settings.path_map = k_map;
    Session s(settings, "test-client", "1.2.29"); // @agent-infra's fork
    s.disk.make_directory("/elsewhere");
    s.disk.write("/elsewhere/n.txt", "the server's notes\n");
    s.call(1, "write_file", {{"path", "/projects/app/notes/n.txt"}, {"content", "x\n"}});
    REQUIRE(s.forwarded_ids().size() == 1);
    CHECK(s.forwarded_ids().front() != 1);
    s.answer_file_info("/elsewhere/n.txt");
    CHECK(s.answered(1) == "not_visible");
    // Its own words for a file whose directory is missing, without "Error: ".
    s.call(2, "write_file", {{"path", "/projects/app/nodir/new.txt"}, {"content", "x\n"}});
    const auto asked = nlohmann::json::parse(s.out.to_upstream.back().text());
    CHECK(asked["params"]["arguments"]["path"] == "/projects/app/nodir/new.txt");
    s.answer(asked["id"], {{"content", {{{"type", "text"},
                                         {"text", "Parent directory does not exist: "
                                                  "/projects/app/nodir"}}}},
                           {"isError", true}});
    CHECK(s.answered(2) == "");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
  }
}

TEST_SUITE("guard: servers that see other directories")
{
  const auto roots_to_srv = [](Session& s, std::int64_t born) {
    s.disk.make_directory("/srv");
    s.disk.births["/srv"] = born;
    s.roots_changed("file:///srv");
    s.list_directories({"/srv"}, false);
    REQUIRE(s.out.to_upstream.size() == 1); // fsguard asks about the directory
    CHECK(nlohmann::json::parse(s.out.to_upstream.front().text())["params"]["name"] == "get_file_info");
  };

  TEST_CASE("a directory of the server's name, created at another time, is another one: writes below it are refused")
  {
    Session s;
    roots_to_srv(s, 1'700'000'000);
    auto probes = std::move(s.out);
    s.call(1, "write_file", {{"path", "/srv/new.txt"}, {"content", "y\n"}});
    CHECK(s.forwarded_ids().empty()); // waits for the answer
    s.out = std::move(probes);
    s.answer_probes(5); // the server's /srv was created 5 s later: another directory
    CHECK(s.answered(1) == "not_visible");
    Session earlier;
    roots_to_srv(earlier, 1'700'000'000);
    auto asked = std::move(earlier.out);
    earlier.call(1, "write_file", {{"path", "/srv/new.txt"}, {"content", "y\n"}});
    earlier.out = std::move(asked);
    earlier.answer_probes(-1); // a second before: another directory
    CHECK(earlier.answered(1) == "not_visible");
    const std::string text = s.client_text(1);
    CAPTURE(text);
    CHECK(text.find("is another one") != std::string::npos);
    s.call(2, "write_file", {{"path", "/srv/other.txt"}, {"content", "y\n"}});
    CHECK(s.answered(2) == "not_visible");
  }

  TEST_CASE("a directory created at the same time is the same, and one whose server keeps no creation time is taken as it is")
  {
    for (const std::int64_t shift : {std::int64_t{0}, std::int64_t{-1'700'000'000}}) {
      Session s;
      roots_to_srv(s, 1'700'000'000);
      auto probes = std::move(s.out);
      s.call(1, "write_file", {{"path", "/srv/new.txt"}, {"content", "y\n"}});
      CHECK(s.forwarded_ids().empty());
      s.out = std::move(probes);
      s.answer_probes(shift);
      CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{1});
    }
  }
}

TEST_SUITE("guard: calls before fsguard knows the session")
{
  const nlohmann::json k_server_filesystem = {
    {"serverInfo", {{"name", "secure-filesystem-server"}, {"version", "0.2.0"}}}};

  // desktop-commander's answer to a read_file of the first `shown` of
  // `total` lines (numbered from 1).
  const auto commander_read = [](int shown, int total) {
    std::string text = "[Reading " + std::to_string(shown) + " lines from start (total: "
                       + std::to_string(total) + " lines, " + std::to_string(total - shown)
                       + " remaining)]\n";
    for (int line = 1; line <= shown; ++line) {
      text += std::to_string(line) + "\n";
    }
    return nlohmann::json{{"content", {{{"type", "text"}, {"text", text}}}}};
  };

  TEST_CASE("a write sent before the directories are learned waits, and is refused below one fsguard cannot see")
  {
    Session s{Session::Uninitialized{}};
    s.initialize();
    s.call(1, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "blind\n"}});
    CHECK(s.forwarded_ids().empty()); // before the initialize result
    CHECK(s.out.to_client.empty());
    s.answer(0, k_server_filesystem);
    CHECK(s.out.to_client.empty()); // and before fsguard's own listing
    s.list_directories({"/projects/app"});
    CHECK(s.answered(1) == "not_visible");
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a listing of fsguard's own too long to relay is taken as unreadable: the calls that waited are decided")
  {
    Session s{Session::Uninitialized{}};
    s.initialize();
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    s.answer(0, k_server_filesystem);
    REQUIRE_FALSE(s.out.to_upstream.empty());
    const auto asked = nlohmann::json::parse(s.out.to_upstream.back().text());
    REQUIRE(asked["params"]["name"] == "list_allowed_directories");
    s.out = Outbox{};
    s.guard.on_upstream_answer_dropped(",\"id\":" + asked["id"].dump() + "}", 70'000'000,
                                       67'108'864, s.out);
    CHECK(s.answered(1) == "not_read"); // decided at once, not after call_timeout_s
    CHECK(*s.disk.content("/ws/a.txt") == "theirs\n");
  }

  TEST_CASE("calls that waited for the initialize result are refused at once, saying why, when the server refuses initialize")
  {
    Session s{Session::Uninitialized{}};
    s.initialize();
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    CHECK(s.out.to_client.empty());
    CHECK(s.upstream_line(
      R"({"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Unsupported protocol version"}})"));
    REQUIRE(s.out.to_client.size() == 1); // not after call_timeout_s
    const auto answer = nlohmann::json::parse(s.out.to_client.front());
    CHECK(answer["id"] == 1);
    const std::string text = answer["error"]["message"];
    CHECK(text.find("the server refused initialize") != std::string::npos);
    CHECK(text.find("\"Unsupported protocol version\"") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
    CHECK(*s.disk.content("/ws/a.txt") == "theirs\n");
  }

  TEST_CASE("a write sent before the probe of its directory is answered waits for it")
  {
    for (const std::int64_t shift : {std::int64_t{5}, std::int64_t{0}}) {
      Session s{Session::Uninitialized{}};
      s.disk.births["/ws"] = 1'700'000'000;
      s.initialize();
      s.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "y\n"}});
      s.answer(0, k_server_filesystem);
      s.list_directories({"/ws"}, false);
      REQUIRE(s.out.to_upstream.size() == 1); // only the probe: the write waits for it
      CHECK(nlohmann::json::parse(s.out.to_upstream.front().text())["params"]["name"]
            == "get_file_info");
      CHECK(s.out.to_client.empty());
      s.answer_probes(shift);
      if (shift != 0) {
        CHECK(s.answered(1) == "not_visible"); // the server's /ws is another directory
      } else {
        CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{1});
      }
    }
  }

  TEST_CASE("a plain guarded call sent before the listing is answered waits for it")
  {
    Session s{Session::Uninitialized{}};
    s.initialize();
    s.answer(0, k_server_filesystem);
    auto listing = std::move(s.out);
    s.disk.write("/ws/a.txt", "a\n");
    // The plain shape every SDK writes, taken without a parse.
    const std::string line =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file",)"
      R"("arguments":{"path":"/ws/a.txt","content":"x\n"}}})";
    PlainCallArguments arguments;
    REQUIRE(s.guard.scan_plain_call(line, arguments));
    s.request(line + "\n");
    CHECK(s.forwarded_ids().empty());
    CHECK(s.out.to_client.empty());
    s.out = std::move(listing);
    s.list_directories({"/ws"});
    CHECK(s.answered(1) == "not_read");
  }

  TEST_CASE("a read sent before the initialize result is described with the tool map the result names")
  {
    Session s{Session::Uninitialized{}};
    s.disk.write("/ws/big.txt", "many lines\n");
    s.initialize();
    s.call(1, "read_file", {{"path", "/ws/big.txt"}});
    CHECK(s.forwarded_ids().empty());
    s.answer(0, {{"serverInfo", {{"name", "desktop-commander"}, {"version", "0.2.0"}}}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{1}); // no listing to wait for
    s.answer(1, commander_read(1000, 1500));
    s.call(2, "write_file", {{"path", "/ws/big.txt"}, {"content", "short\n"}});
    CHECK(s.answered(2) == "partial_read");
  }

  TEST_CASE("a call of a tool only the server named later has is guarded too")
  {
    Session s{Session::Uninitialized{}};
    s.disk.write("/ws/a.txt", "a\n");
    s.initialize();
    // Not a tool of server-filesystem's, the map fsguard assumes before.
    s.call(1, "edit_block", {{"file_path", "/ws/a.txt"}, {"old_string", "a"}, {"new_string", "b"}});
    CHECK(s.forwarded_ids().empty());
    s.answer(0, {{"serverInfo", {{"name", "desktop-commander"}, {"version", "0.2.0"}}}});
    CHECK(s.answered(1) == "not_read");
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("requests that are not tool calls, and calls fsguard does not guard, do not wait for the directories")
  {
    Session s{Session::Uninitialized{}};
    s.initialize();
    s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{1});
    s.call(2, "list_directory", {{"path", "/ws"}}); // which tools are guarded is not known yet
    CHECK(s.forwarded_ids().empty());
    s.answer(0, k_server_filesystem);
    REQUIRE(s.forwarded_ids().size() == 2); // the listing fsguard asks, and the call
    CHECK(s.forwarded_ids()[1] == 2);
    s.call(3, "list_directory", {{"path", "/ws"}}); // known now, and not guarded
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("a tool call sent before any initialize is refused at once, saying why")
  {
    Session s{Session::Uninitialized{}};
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK(s.answered(1) == std::to_string(static_cast<int>(RpcError::invalid_request)));
    const std::string message = s.client_line(1)["error"]["message"];
    CAPTURE(message);
    CHECK(message.find("before initialize") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
    CHECK_FALSE(s.guard.holds_calls());
    s.request(Session::json_line({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2}); // other requests go on
    s.initialize(3);
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}}); // the id was never taken
    CHECK(s.out.to_client.empty()); // waits for the initialize result
  }

  TEST_CASE("a call that waits for the session longer than call_timeout is refused, saying why")
  {
    GuardSettings settings;
    settings.call_timeout = std::chrono::seconds(20);
    Session s{Session::Uninitialized{}, settings};
    s.initialize();
    s.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(19), s.out);
    CHECK(s.out.to_client.empty());
    s.guard.tick(s.now + std::chrono::seconds(20), s.out);
    CHECK(s.answered(1) == std::to_string(static_cast<int>(RpcError::server_error)));
    const auto refused = s.client_line(1);
    const std::string message = refused["error"]["message"];
    CAPTURE(message);
    CHECK(message.find("answer to initialize") != std::string::npos);
    CHECK(message.find("call_timeout_s") != std::string::npos);
    CHECK(message.find("did not send it") != std::string::npos);
    CHECK(s.out.to_upstream.empty());
    CHECK_FALSE(s.guard.holds_calls());

    // Initialized, but the server never answers fsguard's listing.
    s.answer(0, k_server_filesystem);
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK(s.forwarded_ids().empty());
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(20), s.out);
    CHECK(s.answered(2) == std::to_string(static_cast<int>(RpcError::server_error)));
    const std::string unlisted = s.client_line(2)["error"]["message"];
    CAPTURE(unlisted);
    CHECK(unlisted.find("list_allowed_directories") != std::string::npos);
    CHECK(s.guard.take_unanswered().empty()); // each answered once
  }
}

namespace {

// The rows of a shared ledger, as several sessions see them.
struct LedgerRow {
  std::string path;
  ContentHash hash{};
  std::int64_t at_ns = 0;
  std::string client;
  std::int64_t pid = 0;
};

// A shared ledger in memory: each instance is one session (`pid`).
class FakeLedger final : public SharedLedger {
public:
  FakeLedger(std::vector<LedgerRow>& rows, std::int64_t pid) : m_rows(rows), m_pid(pid) {}

  void record(const std::string& path, const ContentHash& hash, std::int64_t at_ns,
              std::string_view client) override
  {
    m_rows.push_back(LedgerRow{path, hash, at_ns, std::string(client), m_pid});
  }

  std::optional<OtherWrite> who_wrote(const std::string& path, const ContentHash& hash,
                                      std::int64_t since_ns) override
  {
    std::optional<OtherWrite> found;
    for (const auto& row : m_rows) {
      if (row.path == path && row.hash == hash && row.at_ns > since_ns && row.pid != m_pid
          && (!found || row.at_ns > found->at_ns)) {
        found = OtherWrite{row.client, row.pid, row.at_ns};
      }
    }
    return found;
  }

private:
  std::vector<LedgerRow>& m_rows;
  std::int64_t m_pid;
};

// A ledger that names another session for every content it is asked about.
class LyingLedger final : public SharedLedger {
public:
  void record(const std::string&, const ContentHash&, std::int64_t, std::string_view) override {}
  std::optional<OtherWrite> who_wrote(const std::string&, const ContentHash&,
                                      std::int64_t since_ns) override
  {
    return OtherWrite{"liar", 1, since_ns + 1};
  }
};

constexpr std::int64_t k_second_ns = 1'000'000'000;

} // namespace

TEST_SUITE("guard: other sessions")
{
  TEST_CASE("a write the guard lets through is told to the shared ledger with the client's name")
  {
    std::vector<LedgerRow> rows;
    FakeLedger ledger(rows, 100);
    Session s({}, "claude-code");
    s.guard.set_shared_ledger(&ledger);
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    CHECK(rows.empty()); // not before the server says it is done
    s.disk.write("/ws/a.txt", "two\n");
    s.answer_text(2, "Successfully wrote to /ws/a.txt");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].path == "/ws/a.txt");
    CHECK(rows[0].hash == fake_hash("two\n"));
    CHECK(rows[0].client == "claude-code");
    CHECK(rows[0].at_ns == s.disk.now_ns());
  }

  TEST_CASE("a changed veto names the other session whose write is on disk, and how long ago")
  {
    std::vector<LedgerRow> rows;
    FakeLedger mine(rows, 100);
    FakeLedger other(rows, 4242);
    Session s;
    s.guard.set_shared_ledger(&mine);
    s.disk.write("/ws/a.txt", "one\n");
    s.read(1, "/ws/a.txt");
    s.disk.advance(20 * k_second_ns);
    s.disk.write("/ws/a.txt", "theirs\n");
    other.record("/ws/a.txt", fake_hash("theirs\n"), s.disk.now_ns(), "claude-code");
    s.disk.advance(40 * k_second_ns);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.answered(2) == "changed");
    const std::string cause = "by another agent session (claude-code, pid 4242) 40 s ago";
    CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["cause"] == cause);
    CHECK(s.client_text(2).find("has been modified " + cause + " since you last read")
          != std::string::npos);
  }

  TEST_CASE("another session's write older than the agent's read is not taken for the cause")
  {
    std::vector<LedgerRow> rows;
    FakeLedger mine(rows, 100);
    FakeLedger other(rows, 4242);
    Session s;
    s.guard.set_shared_ledger(&mine);
    s.disk.write("/ws/a.txt", "theirs\n");
    other.record("/ws/a.txt", fake_hash("theirs\n"), s.disk.now_ns(), "claude-code");
    s.disk.advance(k_second_ns);
    s.disk.write("/ws/a.txt", "one\n");
    s.disk.advance(10 * k_second_ns);
    s.read(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", "theirs\n"); // put back outside fsguard
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.answered(2) == "changed");
    CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["cause"] == "outside fsguard");
  }

  TEST_CASE("the shared ledger decides nothing: it neither licenses a write nor refuses one")
  {
    LyingLedger ledger;
    Session s;
    s.guard.set_shared_ledger(&ledger);
    s.disk.write("/ws/a.txt", "one\n");
    s.disk.write("/ws/b.txt", "b\n");
    s.call(1, "write_file", {{"path", "/ws/b.txt"}, {"content", "x\n"}});
    CHECK(s.answered(1) == "not_read");
    s.read(2, "/ws/a.txt");
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }
}

TEST_SUITE("guard: saved records")
{
  TEST_CASE("records saved by one guard license the first write of a guard started later, unless the file changed")
  {
    Session first;
    first.disk.write("/ws/a.txt", "a\n");
    first.disk.write("/ws/b.txt", "b\n");
    first.read(1, "/ws/a.txt");
    first.read(2, "/ws/b.txt");
    const auto saved = first.guard.saved_records(10);
    CHECK(saved.size() == 2);
    Session next;
    next.disk = first.disk; // the same files, a new process
    next.disk.write("/ws/b.txt", "b, changed\n");
    CHECK(next.guard.restore(saved) == 1);
    next.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "x\n"}});
    CHECK(next.forwarded_ids() == std::vector<nlohmann::json>{3});
    next.call(4, "write_file", {{"path", "/ws/b.txt"}, {"content", "y\n"}});
    CHECK(next.answered(4) == "not_read");
  }
}

namespace {

GuardSettings asking()
{
  GuardSettings settings;
  settings.override_mode = Override::ask;
  return settings;
}

// The client's answer `result` to the override question `question`, `after`
// it was asked (s.now): a person takes seconds.
void answer_question(Session& s, const nlohmann::json& question, const nlohmann::json& result,
                     std::chrono::milliseconds after = std::chrono::seconds(2))
{
  const std::string answer =
    Session::json_line({{"jsonrpc", "2.0"}, {"id", question["id"]}, {"result", result}});
  s.out = Outbox{};
  s.client.take(OutgoingLine::borrowed(answer), s.now + after, s.out);
  s.out.own_lines();
}

const nlohmann::json k_allow = {{"action", "accept"}, {"content", {{"allow", true}}}};

} // namespace

TEST_SUITE("guard: the person's override")
{
  TEST_CASE("with override ask, a client that elicits is asked; allow forwards this one write")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    CHECK(question["method"] == "elicitation/create");
    CHECK(question["id"].get<std::string>().starts_with("fsguard/"));
    CHECK(question["params"]["message"].get<std::string>().find("/ws/a.txt") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
    // The model's own arguments cannot answer: only the client's response.
    answer_question(s, question, k_allow);
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{1}); // the answer itself is not relayed
  }

  TEST_CASE("an accepted override is decided again: the answer lifts the refusal asked about, not the keep-the-change rule")
  {
    GuardSettings settings = asking();
    settings.read_ttl = std::chrono::seconds(10);
    Session s(settings, "claude-code", "0.2.0", {"/ws"}, true);
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.advance(2'000'000'000LL);
    const std::string shown = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", shown);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "two\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    answer_question(s, nlohmann::json::parse(s.out.to_client.front()), {{"action", "decline"}});
    REQUIRE(s.answered(2) == "changed");
    REQUIRE(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == true);
    // The whole read is now past read_ttl_s: the person is asked about that
    // alone, by a write made from the version read, which undoes the change.
    s.now += std::chrono::seconds(5);
    s.disk.advance(10'000'000'000LL);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "line 21\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    answer_question(s, nlohmann::json::parse(s.out.to_client.front()), k_allow);
    CHECK(s.forwarded_ids().empty());
    CHECK(s.answered(3) == "changed");
    CHECK(s.client_text(3).find("does not keep that change byte for byte") != std::string::npos);
    CHECK(s.client_text(3).find("decided the write again") != std::string::npos);
    CHECK(*s.disk.content("/ws/a.txt") == shown);
  }

  TEST_CASE("an accepted override is refused when confine_to no longer holds its file: the "
            "person lifts one refusal, not the confinement")
  {
    GuardSettings settings = asking();
    settings.confine_to = {"/ws"};
    Session s(settings, "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.make_directory("/ws/docs");
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    settings.confine_to = {"/ws/docs"}; // a reload while the person decides
    s.guard.set_settings(settings);
    answer_question(s, question, k_allow);
    CHECK(s.forwarded_ids().empty());
    CHECK(s.answered(1) == "outside_confinement");
    CHECK(*s.disk.content("/ws/a.txt") == "theirs\n");
  }

  TEST_CASE("a write the person allowed is known whole once done: the next veto shows the diff from it")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.write("/ws/a.txt", "theirs\n");
    const std::string mine = numbered_lines(12);
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", mine}});
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    answer_question(s, question, k_allow);
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{1});
    s.disk.write("/ws/a.txt", mine);
    s.answer_text(1, "Successfully wrote to /ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(mine, "line 5\n", "// changed\n"));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "x"}});
    REQUIRE(s.out.to_client.size() == 1);
    const auto asked_again = nlohmann::json::parse(s.out.to_client.front());
    CHECK(asked_again["params"]["message"].get<std::string>().find("-line 5\n+// changed") != std::string::npos);
  }

  TEST_CASE("decline, a wrong answer or no answer in time gives the veto; the file is untouched")
  {
    for (const std::string how : {"decline", "no", "timeout", "changed again"}) {
      CAPTURE(how);
      Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
      s.disk.write("/ws/a.txt", "theirs\n");
      s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
      const auto question = nlohmann::json::parse(s.out.to_client.front());
      s.out = Outbox{};
      if (how == "timeout") {
        s.guard.tick(s.now + std::chrono::seconds(31), s.out);
      } else {
        if (how == "changed again") {
          s.disk.write("/ws/a.txt", "theirs, again\n");
        }
        answer_question(s, question,
                        how == "decline"
                          ? nlohmann::json{{"action", "decline"}}
                          : nlohmann::json{{"action", "accept"},
                                           {"content", {{"allow", how != "no"}}}});
      }
      CHECK(s.answered(1) == "not_read");
      CHECK(s.client_text(1).find("fsguard asked the user through the client")
            != std::string::npos);
      CHECK(s.out.to_upstream.empty());
    }
  }

  TEST_CASE("when the upstream is gone, a call waiting for the person is answered once")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    CHECK(s.guard.holds_calls());
    CHECK(s.guard.take_unanswered() == std::vector<nlohmann::json>{1});
    CHECK_FALSE(s.guard.holds_calls());
    s.out = Outbox{};
    s.guard.tick(s.now + std::chrono::seconds(60), s.out);
    CHECK(s.answered(1) == ""); // no second answer
  }

  TEST_CASE("an allowed relative write is refused if the roots changed while the person decided")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.write("/ws/a.txt", "theirs\n");
    s.disk.write("/ws2/a.txt", "other\n");
    s.call(1, "write_file", {{"path", "a.txt"}, {"content", "mine\n"}});
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    s.roots_changed("file:///ws2");
    s.list_directories({"/ws2"});
    answer_question(s, question, k_allow);
    CHECK(s.answered(1) == "not_read");
    CHECK(s.out.to_upstream.empty());
  }

  TEST_CASE("a refusal after the agent read the file again, and it was deleted, answers the call")
  {
    for (const std::string how : {"decline", "timeout", "client gone"}) {
      CAPTURE(how);
      Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
      const std::string seen = numbered_lines(12);
      s.disk.write("/ws/a.txt", seen);
      s.read_content(1, "/ws/a.txt");
      s.disk.write("/ws/a.txt", replaced(seen, "line 5\n", "// changed\n"));
      s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
      REQUIRE(s.out.to_client.size() == 1);
      const auto question = nlohmann::json::parse(s.out.to_client.front());
      const std::string message = question["params"]["message"];
      REQUIRE(message.find("+// changed") != std::string::npos); // a diff that counts as a read
      // While the person decides, the agent reads the file again, and the
      // file is deleted just after that read: its record is gone.
      s.call(3, "read_text_file", {{"path", "/ws/a.txt"}});
      REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{3});
      const std::string text = *s.disk.content("/ws/a.txt");
      s.disk.remove("/ws/a.txt");
      s.answer_text(3, text);
      if (how == "decline") {
        answer_question(s, question, {{"action", "decline"}});
      } else if (how == "timeout") {
        s.out = Outbox{};
        s.guard.tick(s.now + std::chrono::seconds(31), s.out);
      } else {
        s.out = Outbox{};
        s.guard.on_client_gone(s.out, s.now + std::chrono::seconds(2));
      }
      CHECK(s.answered(2) == "changed");
      // The diff is over a version that is no longer the agent's record.
      CHECK(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == false);
      CHECK(s.out.to_upstream.empty());
      s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "new\n"}});
      CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4}); // a new file: nothing to lose
    }
  }

  TEST_CASE("the person allows the write over the bytes the diff was made from, not a write after")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    const std::string seen = numbered_lines(12);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 5\n", "// changed\n"));
    // Someone writes again just after fsguard read the file for the diff.
    s.disk.after_next_read = [&] {
      s.disk.write("/ws/a.txt", replaced(seen, "line 9\n", "// unseen\n"));
    };
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    const std::string message = question["params"]["message"];
    REQUIRE(message.find("+// changed") != std::string::npos);
    REQUIRE(message.find("unseen") == std::string::npos);
    answer_question(s, question, k_allow);
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answered(2) == "changed");
    CHECK(s.client_text(2).find("the client answered accept, but while the user decided the file "
                                "changed again")
          != std::string::npos);
    CHECK(s.disk.content("/ws/a.txt")->find("// unseen") != std::string::npos);
  }

  TEST_CASE("a not_read question shows the size and the first lines of what would be replaced, "
            "and the write is allowed over those bytes only")
  {
    for (const bool changed_after : {false, true}) {
      CAPTURE(changed_after);
      Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
      const std::string theirs = numbered_lines(30);
      s.disk.write("/ws/a.txt", theirs);
      if (changed_after) {
        s.disk.after_next_read = [&] { s.disk.write("/ws/a.txt", "rewritten\n"); };
      }
      s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
      const auto question = nlohmann::json::parse(s.out.to_client.front());
      const std::string message = question["params"]["message"];
      CHECK(message.find("The file now holds " + std::to_string(theirs.size())
                         + " bytes; the first of them:\n```\n| line 1\n") != std::string::npos);
      CHECK(message.find("| line 20\n```\n(the rest is not shown)") != std::string::npos);
      answer_question(s, question, k_allow);
      CHECK(s.forwarded_ids()
            == (changed_after ? std::vector<nlohmann::json>{} : std::vector<nlohmann::json>{1}));
    }
  }

  TEST_CASE("the question quotes the agent's path: a name cannot speak in fsguard's words")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    const std::string name =
      "/ws/notes.txt\nit is a new, empty file. Nothing would be lost. Allow this one write?";
    s.disk.write(name, "theirs\n");
    s.call(1, "write_file", {{"path", name}, {"content", "mine\n"}});
    REQUIRE(s.out.to_client.size() == 1);
    const auto question = nlohmann::json::parse(s.out.to_client.front());
    const std::string message = question["params"]["message"];
    CHECK(message.find("\"/ws/notes.txt\\nit is a new, empty file. Nothing would be lost. Allow "
                       "this one write?\"")
          != std::string::npos);
    CHECK(message.find("\nit is a new") == std::string::npos);
    const std::string description =
      question["params"]["requestedSchema"]["properties"]["allow"]["description"];
    CHECK(description.find('\n') == std::string::npos);
  }

  TEST_CASE("the diff in the question speaks of the agent's version, not the person's")
  {
    Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
    const std::string seen = numbered_lines(12);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", replaced(seen, "line 5\n", "// changed\n"));
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    const std::string message = nlohmann::json::parse(s.out.to_client.front())["params"]["message"];
    CHECK(message.find("--- \"/ws/a.txt\"\t(as the agent last saw it)\n+++ \"/ws/a.txt\"\t(on "
                       "disk now)\n@@")
          != std::string::npos);
    CHECK(message.find("as you last saw it") == std::string::npos);
  }

  TEST_CASE("the model is told what the client answered: a cancel is not a decline, and an "
            "answer too soon for a person is the client's own")
  {
    struct Case {
      nlohmann::json result;
      std::chrono::milliseconds after;
      std::string told;
    };
    const std::vector<Case> cases = {
      {{{"action", "cancel"}}, std::chrono::seconds(4),
       "the client answered cancel: the question was dismissed without a choice"},
      {{{"action", "decline"}}, std::chrono::seconds(4),
       "the client answered decline: the user refused it."},
      {{{"action", "cancel"}}, std::chrono::milliseconds(4),
       "the client answered cancel after 4 ms, sooner than a person can read the question: the "
       "client answered without asking a person"},
      {{{"action", "decline"}}, std::chrono::milliseconds(0),
       "the client answered decline after 0 ms"},
      {k_allow, std::chrono::milliseconds(10), "the client answered accept after 10 ms"},
      {{{"action", "accept"}, {"content", nlohmann::json::object()}}, std::chrono::seconds(4),
       "the client answered accept without the confirmation"},
    };
    for (const auto& [result, after, told] : cases) {
      CAPTURE(result.dump());
      CAPTURE(after.count());
      Session s(asking(), "claude-code", "0.2.0", {"/ws"}, true);
      s.disk.write("/ws/a.txt", "theirs\n");
      s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
      answer_question(s, nlohmann::json::parse(s.out.to_client.front()), result, after);
      CHECK(s.out.to_upstream.empty());
      CHECK(s.answered(1) == "not_read");
      CHECK(s.client_text(1).find(told) != std::string::npos);
      CHECK(s.client_text(1).find("declined") == std::string::npos);
    }
  }

  TEST_CASE("a client without elicitation gets the veto, with a note that it cannot ask")
  {
    Session s(asking());
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    CHECK(s.answered(1) == "not_read");
    CHECK(s.client_text(1).find("does not support MCP elicitation") != std::string::npos);
  }

  TEST_CASE("with override never, a client that elicits is not asked")
  {
    Session s({}, "claude-code", "0.2.0", {"/ws"}, true);
    s.disk.write("/ws/a.txt", "theirs\n");
    s.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    CHECK(s.answered(1) == "not_read");
  }
}

TEST_SUITE("guard: read expiry")
{
  TEST_CASE("a read older than read_ttl_s licenses nothing; a fresh read or own write renews it")
  {
    GuardSettings settings;
    settings.read_ttl = std::chrono::seconds(1);
    Session s(settings);
    s.disk.write("/ws/a.txt", "one\n");
    s.read_content(1, "/ws/a.txt");
    s.disk.advance(200'000'000LL);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.disk.write("/ws/a.txt", "two\n");
    s.answer_text(2, "ok");
    s.disk.advance(1'500'000'000LL);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.answered(3) == "expired");
    CHECK(s.client_text(3).find("read_ttl_s: 1") != std::string::npos);
    s.read_content(4, "/ws/a.txt");
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", "five\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }
}

TEST_SUITE("guard: the keep-the-change rule")
{
  // The file read whole, then changed outside on line 3, and a write of the
  // same turn refused with the diff, which counts as a read a moment later.
  struct ShownChange {
    std::string seen = numbered_lines(30);
    std::string shown = replaced(seen, "line 3\n", "line three\n");

    void show(Session& s)
    {
      s.disk.write("/ws/a.txt", seen);
      s.read_content(1, "/ws/a.txt");
      s.disk.write("/ws/a.txt", shown);
      s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "blind\n"}});
      REQUIRE(s.answered(2) == "changed");
      REQUIRE(s.client_line(2)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == true);
      s.now += std::chrono::seconds(5); // the turn's next call waited for a permission prompt
    }
  };

  TEST_CASE("the agent's own edit in between does not lift the rule for a write made from the version read")
  {
    Session s;
    ShownChange change;
    change.show(s);
    s.call(3, "edit_file", one_edit("/ws/a.txt", "line 10\n", "LINE 10\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{3});
    const std::string edited = replaced(change.shown, "line 10\n", "LINE 10\n");
    s.disk.replace("/ws/a.txt", edited);
    s.answer_text(3, diff_of(change.shown, edited));
    s.now += std::chrono::seconds(5);
    s.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", change.seen + "line 31\n"}});
    CHECK(s.answered(4) == "changed");
    CHECK(s.client_text(4).find("does not keep that change byte for byte") != std::string::npos);
    CHECK(*s.disk.content("/ws/a.txt") == edited);
    // A write that keeps the outside change passes; dropping its own edit is its own affair.
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", change.shown + "line 31\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }

  TEST_CASE("a second outside change shown keeps the version read as the base")
  {
    Session s;
    ShownChange change;
    change.show(s);
    const std::string twice = replaced(change.shown, "line 20\n", "line twenty\n");
    s.disk.write("/ws/a.txt", twice);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", change.shown + "blind\n"}});
    REQUIRE(s.answered(3) == "changed");
    REQUIRE(s.client_line(3)["result"]["_meta"]["fsguard/veto"]["counts_as_read"] == true);
    s.now += std::chrono::seconds(5);
    // Made from the version read, with the second diff applied: it would
    // undo the first change.
    s.call(4, "write_file",
           {{"path", "/ws/a.txt"},
            {"content", replaced(change.seen, "line 20\n", "line twenty\n") + "line 31\n"}});
    CHECK(s.answered(4) == "changed");
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", change.shown + "line 31\n"}});
    CHECK(s.answered(5) == "changed"); // and this one the second
    CHECK(*s.disk.content("/ws/a.txt") == twice);
    s.call(6, "write_file", {{"path", "/ws/a.txt"}, {"content", twice + "line 31\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{6});
  }

  TEST_CASE("a note on a rebase after a diff keeps the version read as the base")
  {
    Session s;
    ShownChange change;
    change.show(s);
    const std::string twice = replaced(change.shown, "line 20\n", "line twenty\n");
    s.disk.write("/ws/a.txt", twice);
    s.call(3, "edit_file", one_edit("/ws/a.txt", "line 28\n", "LINE 28\n"));
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{3}); // rebased
    const std::string edited = replaced(twice, "line 28\n", "LINE 28\n");
    s.disk.replace("/ws/a.txt", edited);
    CHECK_FALSE(s.answer_text(3, diff_of(twice, edited))); // with the note
    s.now += std::chrono::seconds(5);
    // The version read, with the note's change and its own edit: it would
    // undo the change the first diff showed.
    s.call(4, "write_file",
           {{"path", "/ws/a.txt"},
            {"content", replaced(replaced(change.seen, "line 20\n", "line twenty\n"), "line 28\n",
                                 "LINE 28\n")}});
    CHECK(s.answered(4) == "changed");
    CHECK(*s.disk.content("/ws/a.txt") == edited);
    s.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", edited + "line 31\n"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{5});
  }

  TEST_CASE("with stale_write merge, a write that undoes a change shown before is not merged")
  {
    GuardSettings settings;
    settings.stale_write = StaleWrite::merge;
    Session s(settings);
    ShownChange change;
    s.disk.write("/ws/a.txt", change.seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", change.shown);
    s.call(2, "edit_file", one_edit("/ws/a.txt", "line 3\n", "LINE 3\n"));
    REQUIRE(s.answered(2) == "changed"); // its line changed: the diff, no rebase
    s.now += std::chrono::seconds(5);
    const std::string twice = replaced(change.shown, "line 20\n", "line twenty\n");
    s.disk.write("/ws/a.txt", twice);
    // Made from the version read: merged with the second change, it would
    // take the first one back as its own edit.
    s.call(3, "write_file",
           {{"path", "/ws/a.txt"}, {"content", replaced(change.seen, "line 25\n", "LINE 25\n")}});
    REQUIRE(s.answered(3) == "changed");
    CHECK(s.client_text(3).find("did not merge your write") != std::string::npos);
    CHECK(*s.disk.content("/ws/a.txt") == twice);
    // Made from the version shown, it is merged with the second change.
    const std::string thrice = replaced(twice, "line 28\n", "line twenty-eight\n");
    s.disk.write("/ws/a.txt", thrice);
    s.call(4, "write_file",
           {{"path", "/ws/a.txt"}, {"content", replaced(change.shown, "line 25\n", "LINE 25\n")}});
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{4});
    CHECK(s.forwarded_arguments(4)["content"] == replaced(thrice, "line 25\n", "LINE 25\n"));
  }

  TEST_CASE("a move onto the file, with a server whose move replaces it, keeps the change too")
  {
    Session s({}, "test-client", "1.2.29"); // @agent-infra/mcp-server-filesystem
    ShownChange change;
    s.disk.write("/ws/a.txt", change.seen);
    s.read_content(1, "/ws/a.txt", "read_file");
    s.disk.write("/ws/a.txt", change.shown);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", change.seen + "blind\n"}});
    REQUIRE(s.answered(2) == "changed");
    s.now += std::chrono::seconds(5);
    s.disk.write("/ws/draft.txt", change.seen + "line 31\n");
    s.call(3, "move_file", {{"source", "/ws/draft.txt"}, {"destination", "/ws/a.txt"}});
    CHECK(s.answered(3) == "changed");
    CHECK(*s.disk.content("/ws/a.txt") == change.shown);
    s.disk.write("/ws/draft.txt", change.shown + "line 31\n");
    s.call(4, "move_file", {{"source", "/ws/draft.txt"}, {"destination", "/ws/a.txt"}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("a write that keeps a white-space change byte for byte passes, next to its own change")
  {
    Session s;
    std::string seen;
    std::string stripped;
    for (int line = 1; line <= 20; ++line) {
      seen += "line " + std::to_string(line) + (line % 2 == 0 ? "  \n" : "\n");
      stripped += "line " + std::to_string(line) + "\n";
    }
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.write("/ws/a.txt", stripped); // a formatter strips the trailing blanks
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", seen + "blind\n"}});
    REQUIRE(s.answered(2) == "changed");
    s.now += std::chrono::seconds(5);
    s.call(3, "write_file",
           {{"path", "/ws/a.txt"}, {"content", replaced(stripped, "line 5\n", "LINE 5\n")}});
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }
}

TEST_SUITE("guard: read expiry counts from whole views")
{
  TEST_CASE("a head read does not renew read_ttl_s for a whole-file write; it does for an edit")
  {
    GuardSettings settings;
    settings.read_ttl = std::chrono::seconds(10);
    Session s(settings);
    s.disk.write("/ws/a.txt", numbered_lines(20));
    s.read_content(1, "/ws/a.txt");
    s.disk.advance(8'000'000'000LL);
    s.call(2, "read_text_file", {{"path", "/ws/a.txt"}, {"head", 1}});
    s.answer_text(2, "line 1");
    s.disk.advance(5'000'000'000LL);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "three\n"}});
    CHECK(s.answered(3) == "expired");
    s.call(4, "edit_file", one_edit("/ws/a.txt", "line 1\n", "LINE 1\n"));
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{4});
  }

  TEST_CASE("a diff veto, which shows the changed lines only, does not renew read_ttl_s")
  {
    GuardSettings settings;
    settings.read_ttl = std::chrono::seconds(10);
    Session s(settings);
    const std::string seen = numbered_lines(20);
    s.disk.write("/ws/a.txt", seen);
    s.read_content(1, "/ws/a.txt");
    s.disk.advance(8'000'000'000LL);
    const std::string shown = replaced(seen, "line 3\n", "line three\n");
    s.disk.write("/ws/a.txt", shown);
    s.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(s.answered(2) == "changed");
    s.now += std::chrono::seconds(1);
    s.disk.advance(5'000'000'000LL);
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", shown + "line 21\n"}});
    CHECK(s.answered(3) == "expired");
  }
}
