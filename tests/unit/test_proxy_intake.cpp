// The intakes (proxy/guard/client_intake, proxy/guard/upstream_intake):
// what becomes of each whole line from either peer, without the relay.
#include <doctest/doctest.h>

#include <string>

#include "fake_disk.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/upstream_intake.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

// A guard that knows its server (server-filesystem serving /ws), and its
// two intakes.
struct Intakes {
  FakeDisk disk;
  Guard guard{disk, GuardSettings{}, "/home", "/ws"};
  ClientIntake client{guard};
  UpstreamIntake upstream{guard};
  Outbox out;
  Guard::Clock::time_point now = Guard::Clock::time_point{} + std::chrono::hours(1);

  Intakes()
  {
    disk.make_directory("/ws");
    from_client(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
    from_upstream(
      R"({"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"secure-filesystem-server","version":"0.2.0"}}})");
    from_upstream(R"({"result":{"content":[{"type":"text","text":"Allowed directories:\n/ws"}]},)"
                  R"("jsonrpc":"2.0","id":"fsguard/allowed-directories/1"})");
    // fsguard's get_file_info probes of the directory.
    std::vector<nlohmann::json> probes;
    for (const auto& sent : out.to_upstream) {
      probes.push_back(nlohmann::json::parse(sent.text())["id"]);
    }
    REQUIRE_FALSE(probes.empty());
    for (const auto& id : probes) {
      from_upstream(R"({"result":{"content":[{"type":"text","text":"size: 4096\nisDirectory: true"}]},)"
                    R"("jsonrpc":"2.0","id":)" + id.dump() + "}");
    }
  }

  void from_client(const std::string& text)
  {
    out = Outbox{};
    line = text + "\n";
    client.take(OutgoingLine::borrowed(line), now, out);
    out.own_lines();
  }
  std::string line;

  UpstreamLine from_upstream(const std::string& text)
  {
    out = Outbox{};
    const UpstreamLine fate = upstream.take(text, now, out);
    upstream.line_sent();
    return fate;
  }

  // The one line the client was sent, parsed.
  nlohmann::json answer() const
  {
    REQUIRE(out.to_client.size() == 1);
    return nlohmann::json::parse(out.to_client.front());
  }
};

} // namespace

TEST_SUITE("client intake")
{
  TEST_CASE("a line that is not JSON is answered with a parse error, logged, and not forwarded")
  {
    Intakes s;
    s.from_client("{not json");
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answer()["error"]["code"] == -32700);
    CHECK(s.answer()["id"].is_null());
    REQUIRE(s.out.log.size() == 1);
    CHECK(s.out.log.front().level == LogLevel::warn);
  }

  TEST_CASE("what the server would not read or would drop is answered, never forwarded")
  {
    Intakes s;
    s.from_client("[1,2]"); // a batch
    CHECK(s.answer()["error"]["code"] == -32600);
    s.from_client(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"); // an id of neither kind
    CHECK(s.answer()["error"]["code"] == -32600);
    s.from_client("\xEF\xBB\xBF" R"({"jsonrpc":"2.0","id":3,"method":"ping"})"); // a BOM
    CHECK(s.answer()["error"]["code"] == -32700);
    CHECK(s.answer()["id"] == 3);
    std::string deep = R"({"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":)";
    deep += std::string(k_max_nesting, '[') + std::string(k_max_nesting, ']') + "}}";
    s.from_client(deep);
    CHECK(s.answer()["error"]["code"] == -32600);
    CHECK(s.answer()["id"] == 4); // found by a skim, the line unparsed
    s.from_client(R"({"jsonrpc":"1.0","method":"notifications/x"})"); // the SDK's schema drops it
    CHECK(s.answer()["error"]["code"] == -32600);
    s.from_client(R"({"jsonrpc":"2.0","method":"tools/call","params":{}})"); // no id: no answer
    CHECK(s.out.to_client.empty());
    CHECK(s.out.to_upstream.empty());
    CHECK(s.out.log.size() == 1);
  }

  TEST_CASE("a line of white space is skipped, and a line too long is answered")
  {
    Intakes s;
    s.from_client(" \t\r");
    CHECK(s.out.empty());
    s.out = Outbox{};
    s.client.take_too_long(100, s.out);
    CHECK(s.answer()["error"]["code"] == -32600);
    CHECK(s.answer()["error"]["message"].get<std::string>().find("max_line_bytes (100 bytes)")
          != std::string::npos);
  }

  TEST_CASE("once the upstream has exited, requests are answered with why and nothing goes to it")
  {
    Intakes s;
    s.client.upstream_gone("fsguard: the upstream server exited");
    s.from_client(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/ws"}}})");
    CHECK(s.out.to_upstream.empty());
    CHECK(s.answer()["id"] == 7);
    CHECK(s.answer()["error"]["message"] == "fsguard: the upstream server exited");
    s.from_client(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    CHECK(s.out.empty());
  }
}

TEST_SUITE("upstream intake")
{
  TEST_CASE("an answer to a call fsguard only relays goes on as it is; a guarded one's is read")
  {
    Intakes s;
    s.from_client(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/ws"}}})");
    REQUIRE(s.out.to_upstream.size() == 1);
    CHECK(s.from_upstream(R"({"result":{"content":[]},"jsonrpc":"2.0","id":7})")
          == UpstreamLine::relayed);
    CHECK(s.out.empty());
    s.disk.write("/ws/a.txt", "a\n");
    s.from_client(
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a.txt"}}})");
    CHECK(s.from_upstream(
            R"({"result":{"content":[{"type":"text","text":"a\n"}]},"jsonrpc":"2.0","id":8})")
          == UpstreamLine::relayed);
    CHECK(s.guard.record("/ws/a.txt") != nullptr); // the read was recorded
  }

  TEST_CASE("a line that is not JSON is withheld and logged; white space is nothing")
  {
    Intakes s;
    CHECK(s.from_upstream("Server started on stdio") == UpstreamLine::withheld);
    REQUIRE(s.out.log.size() == 1);
    CHECK(s.out.log.front().text.find("Server started on stdio") != std::string::npos);
    CHECK(s.from_upstream("  ") == UpstreamLine::blank);
    CHECK(s.out.empty());
  }

  TEST_CASE("a line the skim cannot read is parsed once, and taken as the skim would take it")
  {
    Intakes s;
    s.disk.write("/ws/a.txt", "a\n");
    s.from_client(
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a.txt"}}})");
    // An escaped key: the skim leaves it, the parse reads the answer.
    CHECK(s.from_upstream(
            R"({"jsonrpc":"2.0","id":8,"resul\u0074":{"content":[{"type":"text","text":"a\n"}]}})")
          == UpstreamLine::relayed);
    CHECK(s.guard.record("/ws/a.txt") != nullptr);
    // The upstream's own request, its method escaped, is relayed.
    CHECK(s.from_upstream(R"({"jsonrpc":"2.0","id":"r","metho\u0064":"roots/list"})")
          == UpstreamLine::relayed);
  }
}
