// The guard in a session of MCP's 2026-07-28 revision (no initialize; every
// request carries the _meta envelope; servers answer server/discover), as
// the v2 SDK's client and server speak it. test_proxy_guard.cpp drives the
// 2025 era.
#include <doctest/doctest.h>

#include <string>

#include "fake_disk.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/guard.hpp"
#include "proxy/guard/upstream_intake.hpp"
#include "tracker/path_map.hpp"

using fsguard::testing::fake_hash;
using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

using Clock = std::chrono::steady_clock;

// A guard in front of a pretend dual-era server-filesystem serving /ws,
// driven by a 2026-era client named `client`: the test plays both sides.
struct StatelessSession {
  FakeDisk disk;
  Guard guard;
  ClientIntake client_intake{guard};
  UpstreamIntake upstream_intake{guard};
  Outbox out;
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  std::string client;
  // The client capabilities its requests declare.
  nlohmann::json capabilities = nlohmann::json::object();
  // The lines of the last step to the upstream and the client, as text.
  std::string last_call_line;

  explicit StatelessSession(GuardSettings settings = {}, std::string client_name = "claude-code")
      : guard(disk, std::move(settings), "/home", "/ws"), client(std::move(client_name))
  {
    disk.make_directory("/ws");
    disk.advance(10'000'000'000LL); // files made by tests are past the racy window
  }

  nlohmann::json envelope() const
  {
    return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
            {"io.modelcontextprotocol/clientInfo", {{"name", client}, {"version", "2.1.80"}}},
            {"io.modelcontextprotocol/clientCapabilities", capabilities}};
  }

  // The client's tools/call of `tool` with `arguments`, as the v2 SDK
  // writes it, taken as the relay takes it (ClientIntake). `extra` goes
  // into its params (a retry's inputResponses and requestState).
  void call(int id, const std::string& tool, const nlohmann::json& arguments,
            const nlohmann::json& extra = nlohmann::json::object())
  {
    out = Outbox{};
    nlohmann::json request = {
      {"method", "tools/call"},
      {"params", {{"name", tool}, {"arguments", arguments}, {"_meta", envelope()}}},
      {"jsonrpc", "2.0"},
      {"id", id}};
    request["params"].update(extra);
    const std::string line = request.dump() + "\n";
    last_call_line = line;
    send(line);
  }

  // The client's `line` (with its newline), taken as the relay takes it.
  void send(const std::string& line)
  {
    client_intake.take(OutgoingLine::borrowed(line), now, out);
    out.own_lines();
  }

  // The upstream's `line`, taken as the relay takes it; returns whether it
  // is relayed as it is.
  bool upstream_line(const std::string& line)
  {
    out = Outbox{};
    const UpstreamLine fate = upstream_intake.take(line, now, out);
    upstream_intake.line_sent();
    return fate == UpstreamLine::relayed;
  }

  // The upstream answers `id` with `result`, stamped as the v2 server
  // stamps a 2026-era result; returns whether it is relayed.
  bool answer(const nlohmann::json& id, nlohmann::json result)
  {
    out = Outbox{};
    if (!result.contains("resultType")) {
      result["resultType"] = "complete";
    }
    result["_meta"]["io.modelcontextprotocol/serverInfo"] = {{"name", "secure-filesystem-server"},
                                                             {"version", "0.2.0"}};
    return upstream_line(nlohmann::json{{"result", result}, {"jsonrpc", "2.0"}, {"id", id}}.dump());
  }

  bool answer_text(const nlohmann::json& id, const std::string& text)
  {
    return answer(id, {{"content", {{{"type", "text"}, {"text", text}}}}});
  }

  // The line of the last step to the upstream whose method is `method`
  // (tools/call: of the tool `tool`); null if none.
  nlohmann::json sent(const std::string& method, const std::string& tool = "") const
  {
    for (const auto& line : out.to_upstream) {
      auto message = nlohmann::json::parse(line.text());
      if (message["method"] == method && (tool.empty() || message["params"]["name"] == tool)) {
        return message;
      }
    }
    return nullptr;
  }

  // Answers fsguard's own server/discover, then its listing (`directories`,
  // one a line), then its probe of a directory it sees, if it sent one
  // (none with verify: upstream), which keeps no creation time.
  void learn_server(const std::string& directories = "/ws")
  {
    const auto discover = sent("server/discover");
    REQUIRE(discover.is_object());
    CHECK_FALSE(answer(discover["id"], {{"supportedVersions", {"2026-07-28"}},
                                        {"capabilities", {{"tools", nlohmann::json::object()}}}}));
    const auto listing = sent("tools/call", "list_allowed_directories");
    REQUIRE(listing.is_object());
    CHECK_FALSE(answer_text(listing["id"], "Allowed directories:\n" + directories));
    if (const auto probe = sent("tools/call", "get_file_info"); probe.is_object()) {
      CHECK(probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28");
      CHECK_FALSE(answer_text(probe["id"], "size: 4096\nisDirectory: true"));
    }
  }

  // The client line answering `id` in the last step, parsed; null if none.
  nlohmann::json answered(int id) const
  {
    for (const auto& line : out.to_client) {
      auto message = nlohmann::json::parse(line);
      if (message.value("id", nlohmann::json()) == id) {
        return message;
      }
    }
    return nullptr;
  }

  std::string veto_code(int id) const
  {
    const auto message = answered(id);
    return message.is_null()
             ? ""
             : message["result"]["_meta"]["fsguard/veto"]["code"].get<std::string>();
  }
};

} // namespace

TEST_SUITE("guard in the 2026 era")
{
  TEST_CASE("the client's first call waits for fsguard's own server/discover, asked in its era")
  {
    StatelessSession session;
    session.disk.write("/ws/new.txt", "x");
    session.call(1, "read_text_file", {{"path", "/ws/new.txt"}});
    // Nothing is decided before fsguard knows the server: the call waits.
    REQUIRE(session.out.to_upstream.size() == 1);
    const auto discover = nlohmann::json::parse(session.out.to_upstream[0].text());
    CHECK(discover["method"] == "server/discover");
    const auto& meta = discover["params"]["_meta"];
    CHECK(meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28");
    CHECK(meta["io.modelcontextprotocol/clientCapabilities"] == nlohmann::json::object());
    // Asked once a session.
    session.call(2, "read_text_file", {{"path", "/ws/new.txt"}});
    CHECK_FALSE(session.sent("server/discover").is_object());
  }

  TEST_CASE("the server/discover result names the server, whose directories are asked for in "
            "its era, so a relative path resolves")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.disk.write("/ws/b.txt", "other\n");
    session.call(1, "read_text_file", {{"path", "/ws/b.txt"}});
    const auto discover = session.sent("server/discover");
    REQUIRE(discover.is_object());
    CHECK_FALSE(session.answer(discover["id"], {{"supportedVersions", {"2026-07-28"}},
                                                {"capabilities", nlohmann::json::object()}}));
    const auto listing = session.sent("tools/call", "list_allowed_directories");
    REQUIRE(listing.is_object());
    CHECK(listing["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28");
    CHECK_FALSE(session.answer_text(listing["id"], "Allowed directories:\n/ws"));
    CHECK_FALSE(
      session.answer_text(session.sent("tools/call", "get_file_info")["id"], "size: 4096"));
    session.call(2, "write_file", {{"path", "a.txt"}, {"content", "blind\n"}});
    CHECK(session.veto_code(2) == "not_read"); // resolved to /ws/a.txt, which was not read yet
  }

  TEST_CASE("a 2026-era call after a first request with no envelope (a bare ping) asks "
            "fsguard's server/discover at once, rather than waiting call_timeout_s")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "theirs\n");
    session.send(R"({"jsonrpc":"2.0","id":0,"method":"ping"})" "\n");
    REQUIRE(session.out.to_upstream.size() == 1); // the ping, relayed
    session.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    REQUIRE(session.sent("server/discover").is_object());
    session.learn_server();
    CHECK(session.veto_code(1) == "not_read");
  }

  TEST_CASE("fsguard's vetoes are results of the 2026 era")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    session.learn_server(); // the call waited for it
    const auto veto = session.answered(1);
    REQUIRE(veto.is_object());
    CHECK(veto["result"]["resultType"] == "complete");
    CHECK(veto["result"]["isError"] == true);
    CHECK(session.veto_code(1) == "not_read");
  }

  TEST_CASE("a guarded change goes upstream without the Tasks extension; other lines keep "
            "their bytes")
  {
    StatelessSession session;
    session.capabilities = {{"elicitation", {{"form", nlohmann::json::object()}}},
                            {"extensions",
                             {{"io.modelcontextprotocol/tasks", nlohmann::json::object()},
                              {"io.example/other", nlohmann::json::object()}}}};
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    session.learn_server();
    CHECK(session.answer_text(1, "original\n"));
    // A read keeps its line byte for byte, the extension in it.
    session.call(2, "read_text_file", {{"path", "/ws/a.txt"}});
    REQUIRE(session.out.to_upstream.size() == 1);
    CHECK(session.out.to_upstream[0].text() == session.last_call_line);
    CHECK(session.answer_text(2, "original\n"));
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    const auto write = session.sent("tools/call", "write_file");
    REQUIRE(write.is_object());
    const auto& sent_capabilities =
      write["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    CHECK_FALSE(sent_capabilities["extensions"].contains("io.modelcontextprotocol/tasks"));
    // Everything else stays: the other extension, elicitation, the arguments.
    CHECK(sent_capabilities["extensions"].contains("io.example/other"));
    CHECK(sent_capabilities["elicitation"] == nlohmann::json{{"form", nlohmann::json::object()}});
    CHECK(write["params"]["arguments"]["content"] == "mine\n");
    CHECK(write["id"] == 3);
  }

  TEST_CASE("a write answered with a task all the same leaves its file's outcome unknown, and "
            "the next change is refused saying to read it again")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    session.learn_server();
    CHECK(session.answer_text(1, "original\n"));
    session.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.answer(2, {{"resultType", "task"},
                             {"taskId", "t-1"},
                             {"status", "working"},
                             {"createdAt", "2026-11-27T00:00:00Z"},
                             {"lastUpdatedAt", "2026-11-27T00:00:00Z"},
                             {"ttlMs", 60000}})); // the client gets the server's answer
    // The task's write lands later, as the write the agent sent would.
    session.disk.write("/ws/a.txt", "mine\n");
    const SeenRecord* record = session.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->unknown_outcome);
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "again\n"}});
    CHECK(session.veto_code(3) == "unknown_outcome");
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    const std::string text = session.answered(3)["result"]["content"][0]["text"];
    CHECK(text.find("resultType \"task\"") != std::string::npos);
    CHECK(text.find("may still be under way") != std::string::npos);
    CHECK(text.find("Read it again, then retry.") != std::string::npos);
  }

  TEST_CASE("a write the server answers input_required is not done, and its retry is decided "
            "again as a new call")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    session.learn_server();
    CHECK(session.answer_text(1, "original\n"));
    session.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    REQUIRE(session.sent("tools/call", "write_file").is_object());
    const nlohmann::json confirm = {
      {"confirm", {{"method", "elicitation/create"}, {"params", {{"message", "Overwrite?"}}}}}};
    CHECK(session.answer(2, {{"resultType", "input_required"},
                             {"inputRequests", confirm},
                             {"requestState", "server-state"}}));
    // Nothing happened to the file, and nothing is recorded of it.
    const SeenRecord* record = session.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK_FALSE(record->unknown_outcome);
    CHECK(record->hash == fake_hash("original\n"));
    // The client's retry goes to the server as it is: its answers and the
    // server's state untouched.
    const nlohmann::json retry = {
      {"inputResponses", {{"confirm", {{"action", "accept"}, {"content", {{"ok", true}}}}}}},
      {"requestState", "server-state"}};
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}}, retry);
    const auto sent = session.sent("tools/call", "write_file");
    REQUIRE(sent.is_object());
    CHECK(sent["params"]["requestState"] == "server-state");
    CHECK(sent["params"]["inputResponses"] == retry["inputResponses"]);
    session.disk.write("/ws/a.txt", "mine\n");
    CHECK(session.answer_text(3, "Successfully wrote to /ws/a.txt"));
    record = session.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == fake_hash("mine\n"));
    session.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "next\n"}});
    CHECK(session.sent("tools/call", "write_file").is_object()); // the agent knows what it wrote
  }

  TEST_CASE("the retry of a write the server answered input_required is refused when the file "
            "changed between the two")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "read_text_file", {{"path", "/ws/a.txt"}});
    session.learn_server();
    CHECK(session.answer_text(1, "original\n"));
    session.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    CHECK(session.answer(2, {{"resultType", "input_required"}, {"requestState", "server-state"}}));
    session.disk.advance(3'000'000'000LL);
    session.disk.write("/ws/a.txt", "the person's save\n"); // while the client asked
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}},
                 {{"requestState", "server-state"}});
    CHECK(session.veto_code(3) == "changed");
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.disk.read("/ws/a.txt").value() == "the person's save\n");
  }

  TEST_CASE("clientInfo in the envelope applies the client's result limit")
  {
    StatelessSession session; // claude-code: 50,000 characters
    const std::string big(60'000, 'x');
    session.disk.write("/ws/big.txt", big);
    session.call(1, "read_text_file", {{"path", "/ws/big.txt"}});
    session.learn_server();
    CHECK(session.answer_text(1, big));
    session.call(2, "write_file", {{"path", "/ws/big.txt"}, {"content", "y"}});
    CHECK(session.veto_code(2) == "partial_read");

    StatelessSession other({}, "another-client");
    other.disk.write("/ws/big.txt", big);
    other.call(1, "read_text_file", {{"path", "/ws/big.txt"}});
    other.learn_server();
    CHECK(other.answer_text(1, big));
    other.call(2, "write_file", {{"path", "/ws/big.txt"}, {"content", "y"}});
    CHECK(other.veto_code(2) == ""); // forwarded
    CHECK(other.sent("tools/call", "write_file").is_object());
  }

  TEST_CASE("with verify upstream, fsguard's own reads carry the envelope")
  {
    GuardSettings settings;
    settings.verify = Verify::upstream;
    StatelessSession session(settings);
    session.call(1, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    session.learn_server(); // the call waited for it
    const auto read = session.sent("tools/call", "read_text_file");
    REQUIRE(read.is_object());
    CHECK(read["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28");
  }

  TEST_CASE("a 2026-era server's directories fsguard cannot see are learned, and writes there "
            "refused")
  {
    StatelessSession session;
    session.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "new\n"}});
    session.learn_server("/ws\n/elsewhere"); // probes /ws alone, which it sees
    session.call(2, "write_file", {{"path", "/elsewhere/a.txt"}, {"content", "blind\n"}});
    CHECK(session.veto_code(2) == "not_visible");
  }

  TEST_CASE("with path_map, fsguard's get_file_info of the file a change names carries the "
            "envelope")
  {
    GuardSettings settings;
    settings.path_map = PathMap({PathMapping{"/projects/app", "/ws"}});
    StatelessSession session(settings);
    session.call(1, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "new\n"}});
    session.learn_server("/projects/app"); // and the probe of the directory
    // The write, released, waits for the server's report of its very file.
    const auto identity = session.sent("tools/call", "get_file_info");
    REQUIRE(identity.is_object());
    CHECK(identity["params"]["arguments"]["path"] == "/projects/app/new.txt");
    CHECK(identity["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28");
  }

  TEST_CASE("a later server/discover result cannot change the server fsguard guards")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "list_directory", {{"path", "/ws"}});
    session.learn_server();
    // The client's own server/discover, answered without a serverInfo.
    session.out = Outbox{};
    const nlohmann::json discover = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "server/discover"},
                                     {"params", {{"_meta", session.envelope()}}}};
    session.send(discover.dump() + "\n");
    CHECK(session.upstream_line(
      R"({"result":{"supportedVersions":["2026-07-28"],"resultType":"complete"},"jsonrpc":"2.0","id":2})"));
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    CHECK(session.veto_code(3) == "not_read"); // still guarded as server-filesystem
  }

  TEST_CASE("a 2026-era desktop-commander is recognised from its server/discover result")
  {
    StatelessSession session;
    session.disk.write("/ws/a.txt", "original\n");
    session.call(1, "list_directory", {{"path", "/ws"}});
    const auto discover = session.sent("server/discover");
    REQUIRE(discover.is_object());
    const std::string line =
      nlohmann::json{{"result",
                      {{"supportedVersions", {"2026-07-28"}},
                       {"capabilities", nlohmann::json::object()},
                       {"resultType", "complete"},
                       {"_meta",
                        {{"io.modelcontextprotocol/serverInfo",
                          {{"name", "desktop-commander"}, {"version", "0.2.3"}}}}}}},
                     {"jsonrpc", "2.0"},
                     {"id", discover["id"]}}
        .dump();
    CHECK_FALSE(session.upstream_line(line));
    session.call(2, "edit_block",
                 {{"file_path", "/ws/a.txt"}, {"old_string", "original"}, {"new_string", "x"}});
    CHECK(session.veto_code(2) == "not_read");
  }
}

namespace {

GuardSettings asking_settings()
{
  GuardSettings settings;
  settings.override_mode = Override::ask;
  return settings;
}

// A 2026-era session with override: ask, whose client declares form
// elicitation in every request; a.txt exists and the agent never read it.
struct AskingSession : StatelessSession {
  AskingSession() : StatelessSession(asking_settings())
  {
    guard.set_request_state_key(std::string(32, 'k'));
    capabilities = {{"elicitation", {{"form", nlohmann::json::object()}}}};
    disk.write("/ws/a.txt", "original\n");
    call(1, "list_directory", {{"path", "/ws"}});
    learn_server();
  }

  // The agent's blind write `id` of `content`: returns fsguard's requestState.
  std::string blind_write(int id, const std::string& content = "blind\n")
  {
    call(id, "write_file", {{"path", "/ws/a.txt"}, {"content", content}});
    const auto answer = answered(id);
    REQUIRE(answer.is_object());
    REQUIRE(answer["result"]["resultType"] == "input_required");
    return answer["result"]["requestState"].get<std::string>();
  }

  // The client's retry `id` of the blind write with the person's `answer`
  // and `state`, `after` the question.
  void retry(int id, const nlohmann::json& answer, const std::string& state,
             std::chrono::milliseconds after = std::chrono::seconds(2),
             const std::string& content = "blind\n")
  {
    now += after;
    call(id, "write_file", {{"path", "/ws/a.txt"}, {"content", content}},
         {{"inputResponses", {{"fsguard/override", answer}}}, {"requestState", state}});
  }

  std::string text(int id) const
  {
    const auto message = answered(id);
    return message.is_null() ? "" : message["result"]["content"][0]["text"].get<std::string>();
  }
};

const nlohmann::json k_allow = {{"action", "accept"}, {"content", {{"allow", true}}}};

} // namespace

TEST_SUITE("guard in the 2026 era: the person's override")
{
  TEST_CASE("a vetoed write whose request declares elicitation is answered input_required with "
            "fsguard's question")
  {
    AskingSession session;
    session.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    CHECK(session.out.to_upstream.empty());
    const auto answer = session.answered(2);
    REQUIRE(answer.is_object());
    const auto& result = answer["result"];
    CHECK(result["resultType"] == "input_required");
    const auto& question = result["inputRequests"]["fsguard/override"];
    CHECK(question["method"] == "elicitation/create");
    CHECK(question["params"]["mode"] == "form");
    // The 2025 era's question, word for word.
    Veto veto;
    veto.code = VetoCode::not_read;
    veto.path = "/ws/a.txt";
    const FilePreview preview = preview_of("original\n");
    const auto asked = override_question("write_file", veto, &preview);
    CHECK(question["params"]["message"] == asked["message"]);
    CHECK(question["params"]["requestedSchema"] == nlohmann::json(asked["requestedSchema"]));
    CHECK(result["requestState"].get<std::string>().starts_with("fsguard/1."));
  }

  TEST_CASE("the person's accept lets the retry go upstream once, without fsguard's own "
            "inputResponses and requestState")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.now += std::chrono::seconds(2);
    session.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}},
                 {{"inputResponses",
                   {{"fsguard/override", k_allow}, {"server-key", {{"action", "decline"}}}}},
                  {"requestState", state}});
    const auto sent = session.sent("tools/call", "write_file");
    REQUIRE(sent.is_object());
    CHECK_FALSE(sent["params"].contains("requestState"));
    // Another key in inputResponses is not fsguard's: it goes on untouched.
    CHECK(sent["params"]["inputResponses"]
          == nlohmann::json{{"server-key", {{"action", "decline"}}}});
    CHECK(sent["params"]["arguments"]["content"] == "blind\n");
    session.disk.write("/ws/a.txt", "blind\n");
    CHECK(session.answer_text(3, "Successfully wrote to /ws/a.txt"));
    const SeenRecord* record = session.guard.record("/ws/a.txt");
    REQUIRE(record != nullptr);
    CHECK(record->hash == fake_hash("blind\n"));
  }

  TEST_CASE("a forged or altered requestState is refused, and nothing goes upstream")
  {
    AskingSession session;
    std::string state = session.blind_write(2);
    state.back() = state.back() == '0' ? '1' : '0'; // the MAC altered
    session.retry(3, k_allow, state);
    CHECK(session.out.to_upstream.empty());
    CHECK(session.text(3).find("fsguard did not make it in this session, or it was altered")
          != std::string::npos);
    CHECK(session.answered(3)["result"]["isError"] == true);
    CHECK(session.answered(3)["result"]["resultType"] == "complete");
    session.retry(4, k_allow, "fsguard/1.7b7d.00");
    CHECK(session.out.to_upstream.empty());
    CHECK(session.text(4).find("did not make it") != std::string::npos);
    // A state made under another key (another fsguard process) is not this one's.
    AskingSession other;
    other.guard.set_request_state_key(std::string(32, 'x'));
    other.retry(3, k_allow, session.blind_write(5));
    CHECK(other.text(3).find("did not make it") != std::string::npos);
  }

  TEST_CASE("a requestState answers only the call it was made for")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, k_allow, state, std::chrono::seconds(2), "other content\n");
    CHECK(session.out.to_upstream.empty());
    CHECK(session.text(3).find("another call") != std::string::npos);
    CHECK(session.disk.read("/ws/a.txt").value() == "original\n");
  }

  TEST_CASE("an expired requestState is refused")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, k_allow, state, k_default_override_timeout + std::chrono::seconds(1));
    CHECK(session.out.to_upstream.empty());
    CHECK(session.text(3).find("more than 30 s ago") != std::string::npos);
  }

  TEST_CASE("a replayed requestState is refused")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, k_allow, state);
    REQUIRE(session.sent("tools/call", "write_file").is_object());
    session.disk.write("/ws/a.txt", "blind\n");
    CHECK(session.answer_text(3, "Successfully wrote to /ws/a.txt"));
    session.disk.write("/ws/a.txt", "the person's own\n");
    session.retry(4, k_allow, state);
    CHECK(session.out.to_upstream.empty());
    CHECK(session.text(4).find("answered already") != std::string::npos);
    CHECK(session.disk.read("/ws/a.txt").value() == "the person's own\n");
  }

  TEST_CASE("a retry under an id still pending is refused without using up the person's answer")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.call(5, "read_text_file", {{"path", "/ws/other.txt"}}); // left unanswered
    session.retry(5, k_allow, state);
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.answered(5)["error"]["message"].get<std::string>().find("still pending")
          != std::string::npos);
    // The same answer under a new id is still good.
    session.retry(6, k_allow, state, std::chrono::milliseconds(0));
    CHECK(session.sent("tools/call", "write_file").is_object());
  }

  TEST_CASE("a file that changed after the question is not written over on the person's accept")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.disk.write("/ws/a.txt", "changed while the person read\n");
    session.retry(3, k_allow, state);
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.veto_code(3) == "not_read");
    CHECK(session.text(3).find("changed again") != std::string::npos);
  }

  TEST_CASE("a decline is refused, saying the user refused it")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, {{"action", "decline"}}, state);
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.veto_code(3) == "not_read");
    CHECK(session.text(3).find("the user refused it") != std::string::npos);
    CHECK(session.answered(3)["result"]["resultType"] == "complete"); // not asked again
  }

  TEST_CASE("a decline stays a refusal when the agent read the file while the person decided")
  {
    // As in the 2025 era, where the person's answer settles the vetoed
    // call: the retry, decided again, would now pass (the agent has read
    // the file), but the person refused it.
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.call(3, "read_text_file", {{"path", "/ws/a.txt"}});
    CHECK(session.answer_text(3, "original\n"));
    session.retry(4, {{"action", "decline"}}, state);
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.veto_code(4) == "not_read");
    CHECK(session.text(4).find("the user refused it") != std::string::npos);
    CHECK(session.answered(4)["result"]["resultType"] == "complete");
    CHECK(session.disk.read("/ws/a.txt").value() == "original\n");
    // A new call, without the state: decided as any call, and it passes.
    session.now += std::chrono::seconds(1);
    session.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", "mine\n"}});
    CHECK(session.sent("tools/call", "write_file").is_object());
  }

  TEST_CASE("an accept sooner than a person can answer is refused")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, k_allow, state, std::chrono::milliseconds(20));
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.text(3).find("sooner than a person can read the question") != std::string::npos);
  }

  TEST_CASE("a request that does not declare elicitation gets the veto, saying so")
  {
    AskingSession session;
    session.capabilities = nlohmann::json::object();
    session.call(2, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}});
    CHECK(session.veto_code(2) == "not_read");
    CHECK(session.text(2).find("do not declare MCP elicitation (form)") != std::string::npos);
    CHECK(session.text(2).find("does not support MCP elicitation") == std::string::npos);
  }

  TEST_CASE("the server's own question after the person allowed the write: its retry is the same "
            "change")
  {
    AskingSession session;
    const std::string state = session.blind_write(2);
    session.retry(3, k_allow, state);
    REQUIRE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.answer(3, {{"resultType", "input_required"},
                             {"inputRequests", {{"confirm", {{"method", "elicitation/create"}}}}},
                             {"requestState", "server-state"}}));
    const nlohmann::json retry = {
      {"inputResponses", {{"confirm", {{"action", "accept"}, {"content", {{"ok", true}}}}}}},
      {"requestState", "server-state"}};
    session.now += std::chrono::seconds(1);
    session.call(4, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}}, retry);
    const auto sent = session.sent("tools/call", "write_file");
    REQUIRE(sent.is_object());
    CHECK(sent["params"]["requestState"] == "server-state");
    CHECK(sent["params"]["inputResponses"] == retry["inputResponses"]);
    // Only that retry: the server's state does not license another call.
    CHECK(session.answer(4, {{"resultType", "input_required"}, {"requestState", "again"}}));
    session.call(5, "write_file", {{"path", "/ws/a.txt"}, {"content", "blind\n"}},
                 {{"requestState", "server-state"}});
    // A new call, decided again: the person is asked again.
    CHECK_FALSE(session.sent("tools/call", "write_file").is_object());
    CHECK(session.answered(5)["result"]["resultType"] == "input_required");
  }
}
