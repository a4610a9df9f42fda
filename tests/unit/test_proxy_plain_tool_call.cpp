#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"

using namespace fsguard;

namespace {

// A filter that gives every tool the same use, noting the names asked.
class UseFor final : public PlainCallFilter {
public:
  explicit UseFor(PlainCallUse use) : m_use(use) {}

  PlainCallUse use_of(std::string_view name) override
  {
    asked.emplace_back(name);
    return m_use;
  }

  std::vector<std::string> asked;

private:
  PlainCallUse m_use;
};

// The scan of a call fsguard relays.
std::optional<PlainToolCall> scan(std::string_view line)
{
  UseFor relay(PlainCallUse::relay);
  return scan_plain_tool_call(line, relay);
}

// The scan of a call fsguard guards, its arguments read into `arguments`.
std::optional<PlainToolCall> scan_guarded(std::string_view line, PlainCallArguments& arguments)
{
  UseFor guard(PlainCallUse::guard);
  return scan_plain_tool_call(line, guard, &arguments);
}

// The arguments the scan read, the full parse reads the same way.
void check_arguments_agree(std::string_view line, const PlainCallArguments& arguments)
{
  const ClientMessage message = parse_client_message(line);
  const auto& full = member(member(message.body, "params"), "arguments");
  CHECK(full == arguments.tree);
  CHECK(full.type() == arguments.tree.type());
  CHECK(message.content.hash == arguments.content.hash);
  CHECK(message.content.text == arguments.content.text);
  CHECK(message.content.traits == arguments.content.traits);
}

// What the scan accepted, the full parse reads the same way.
void check_full_parse_agrees(std::string_view line, const PlainToolCall& call)
{
  const ClientMessage message = parse_client_message(line);
  REQUIRE(message.kind == MessageKind::request);
  CHECK(request_the_server_drops(message.body).empty());
  CHECK(method_of(message.body) == "tools/call");
  CHECK(id_key(message.body["id"]) == id_key_of_raw(call.raw_id));
  CHECK(plain_id(call.raw_id) == message.body["id"]);
  CHECK(message.body["params"]["name"] == call.name);
}

} // namespace

TEST_SUITE("plain tool call")
{
  TEST_CASE("the shapes clients write are read without a tree")
  {
    const std::vector<std::string> lines = {
      // the TypeScript SDK's order
      R"({"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/ws"}},"jsonrpc":"2.0","id":5})",
      // jsonrpc first, spaces, a string id, a negative id
      R"( { "jsonrpc" : "2.0", "id" : "req-1", "method" : "tools/call", "params" : { "name" : "search_files", "arguments" : { "pattern" : "*.md", "excludePatterns" : [] } } } )",
      R"({"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"get_file_info"}})",
      R"({"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{"path":"/ws"},"name":"directory_tree"}})",
      R"({"jsonrpc":"2.0","id":9007199254740991,"method":"tools/call","params":{"name":"x","arguments":null}})",
      // arguments of any JSON: escapes, UTF-8, numbers, literals, nesting
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\"\\\n\u00e9\ud83d\ude00","b":"caf)" "\xc3\xa9" R"(","c":[1,-2.5,0,true,false,null,{}],"d":{"e":[[]]},"a":1}}})",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\r",
      // the SDK's client with a progress callback
      R"({"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":4}},"jsonrpc":"2.0","id":4})",
      R"({"method":"tools/call","params":{"_meta":{"progressToken":"p-1","other":[1,{"a":null}]},"name":"x"},"jsonrpc":"2.0","id":5})",
      R"({"method":"tools/call","params":{"name":"x","_meta":{}},"jsonrpc":"2.0","id":6})",
    };
    PlainCallArguments arguments; // reused, as the relay reuses it
    for (const auto& line : lines) {
      CAPTURE(line);
      const auto call = scan(line);
      REQUIRE(call);
      CHECK(call->use == PlainCallUse::relay);
      check_full_parse_agrees(line, *call);
      const auto guarded = scan_guarded(line, arguments);
      REQUIRE(guarded);
      CHECK(guarded->use == PlainCallUse::guard);
      check_full_parse_agrees(line, *guarded);
      check_arguments_agree(line, arguments);
    }
    const auto first = scan(lines[0]);
    CHECK(first->raw_id == "5");
    CHECK(first->name == "list_directory");
    CHECK(scan(lines[1])->raw_id == R"("req-1")");
    CHECK(scan(lines[2])->raw_id == "-3");
  }

  TEST_CASE("anything else is left to the full parse")
  {
    const std::string head = R"({"jsonrpc":"2.0","method":"tools/call",)";
    const std::vector<std::string> lines = {
      // not JSON, or not all of it
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}} x)",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x",}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":01}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":tru}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\x"}}})",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"a\":\"\t\"}}}",
      // strings the full parse repairs as the upstream reads them
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"a\":\"\xff\"}}}",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\ud800"}}})",
      // numbers a double may not hold
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1e999}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":12345678901234567890}}})",
      // members that are missing, repeated, other or odd
      R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}})",
      R"({"id":1,"method":"tools/call","params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}})",
      R"({"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"arguments":{}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":{}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1.5}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":null}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1,"progressToken":"a"}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":[]}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/related-task":5}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{},"_meta":{}}})",
      R"({"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x\u0041"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"x"}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]})",
      // ids that are not their own key, or not the client's to use
      head + R"("id":1.0,"params":{"name":"x"}})",
      head + R"("id":1e2,"params":{"name":"x"}})",
      head + R"("id":-0,"params":{"name":"x"}})",
      head + R"("id":007,"params":{"name":"x"}})",
      head + R"("id":9007199254740992,"params":{"name":"x"}})",
      head + R"("id":null,"params":{"name":"x"}})",
      head + R"("id":"a\"b","params":{"name":"x"}})",
      head + R"("id":"fsguard/1","params":{"name":"x"}})",
      head + "\"id\":\"caf\xc3\xa9\",\"params\":{\"name\":\"x\"}}",
      // not an object
      R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}])",
      "",
    };
    PlainCallArguments arguments;
    for (const auto& line : lines) {
      CAPTURE(line);
      CHECK_FALSE(scan(line));
      if (line.find("e999") != std::string::npos) {
        CHECK_FALSE(scan_guarded(line, arguments)); // no double holds it
      } else if (line.find("12345678901234567890") != std::string::npos) {
        // The full parse reads it (an unsigned integer), and so does the
        // reader of a guarded call's arguments.
        REQUIRE(scan_guarded(line, arguments));
        check_arguments_agree(line, arguments);
      } else {
        CHECK_FALSE(scan_guarded(line, arguments));
      }
    }
  }

  TEST_CASE("a guarded call's arguments are read as the full parse reads them, its content apart")
  {
    const std::vector<std::string> lines = {
      R"({"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a.txt","head":3}},"jsonrpc":"2.0","id":7})",
      // a write: the content hashed and kept, not in the tree
      R"({"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/ws/a.txt","content":"one\ntwo \u00e9"}},"jsonrpc":"2.0","id":8})",
      // the arguments before the name, and a content that is not a string
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"content":[1],"path":"/ws/b"},"name":"write_file"}})",
      // repeated keys inside the arguments: the last one counts
      R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"write_file","arguments":{"content":"a","path":"/x","content":"b","path":"/ws/c"}}})",
      // no arguments
      R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"write_file"}})",
      // the last line's tree reused for other shapes
      R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/ws/d","edits":[{"oldText":"a","newText":"b"}],"dryRun":false}}})",
      R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"move_file","arguments":["/ws/e"]}})",
    };
    PlainCallArguments arguments;
    for (const auto& line : lines) {
      CAPTURE(line);
      const auto call = scan_guarded(line, arguments);
      REQUIRE(call);
      check_full_parse_agrees(line, *call);
      check_arguments_agree(line, arguments);
    }
    REQUIRE(scan_guarded(lines[1], arguments));
    CHECK(arguments.tree == nlohmann::json{{"path", "/ws/a.txt"}});
    CHECK(arguments.content.text == std::optional<std::string>("one\ntwo \u00e9"));
    CHECK(arguments.content.hash);
    REQUIRE(scan_guarded(lines[3], arguments));
    CHECK(arguments.tree == nlohmann::json{{"path", "/ws/c"}});
    CHECK(arguments.content.text == std::optional<std::string>("b"));
    // Without a place to read the arguments into, a call to guard is left
    // to the full parse.
    UseFor guard(PlainCallUse::guard);
    CHECK_FALSE(scan_plain_tool_call(lines[0], guard));
  }

  TEST_CASE("arguments nested as deep as the full parse allows, and no deeper")
  {
    const auto nested = [](std::size_t arrays) {
      return R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":)"
             + std::string(arrays, '[') + std::string(arrays, ']') + "}}";
    };
    const std::size_t most = k_max_nesting - 2; // inside the message and params
    const auto deepest = nested(most);
    REQUIRE(scan(deepest));
    check_full_parse_agrees(deepest, *scan(deepest));
    CHECK_FALSE(scan(nested(most + 1)));
    CHECK(parse_client_message(nested(most + 1)).kind == MessageKind::too_deep);
  }

  TEST_CASE("the scan stops at a tool name it is not asked for")
  {
    const std::string line =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/ws/a"}}})";
    UseFor none(PlainCallUse::none);
    PlainCallArguments arguments;
    CHECK_FALSE(scan_plain_tool_call(line, none, &arguments));
    CHECK(none.asked == std::vector<std::string>{"read_text_file"});
    CHECK(arguments.tree.is_null()); // stopped before the arguments
  }

  TEST_CASE("a 2026-era call's _meta envelope is handed on as its text, and no other _meta is")
  {
    const std::string meta =
      R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.80"},"io.modelcontextprotocol/clientCapabilities":{}})";
    const std::string line = R"({"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/ws/a","content":"x"},"_meta":)"
                             + meta + R"(},"jsonrpc":"2.0","id":0})";
    PlainCallArguments arguments;
    const auto guarded = scan_guarded(line, arguments);
    REQUIRE(guarded);
    CHECK(guarded->envelope == meta);
    check_full_parse_agrees(line, *guarded);
    REQUIRE(scan(line));
    CHECK(scan(line)->envelope == meta);
    CHECK(scan(R"({"method":"tools/call","params":{"name":"x","_meta":{"progressToken":4}},"jsonrpc":"2.0","id":4})")
            ->envelope.empty());
    CHECK(scan(R"({"method":"tools/call","params":{"name":"x"},"jsonrpc":"2.0","id":4})")->envelope.empty());
  }
}
