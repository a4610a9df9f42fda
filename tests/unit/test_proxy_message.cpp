#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/rpc_error.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
#include "proxy/stores/real_disk.hpp"

using namespace fsguard;

TEST_SUITE("message")
{
  TEST_CASE("client lines are classified as requests, notifications, responses, batches or junk")
  {
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})").kind == MessageKind::request);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":"a","method":"x"})").kind == MessageKind::request);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").kind == MessageKind::notification);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":0,"result":{"roots":[]}})").kind == MessageKind::response);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"x"}})").kind == MessageKind::response);
    CHECK(parse_client_message(R"([{"jsonrpc":"2.0","id":1,"method":"tools/call"}])").kind == MessageKind::batch);
    CHECK(parse_client_message(R"({"hello":"world"})").kind == MessageKind::other);
    CHECK(parse_client_message("42").kind == MessageKind::other);
    CHECK(parse_client_message("{not json").kind == MessageKind::invalid);
    CHECK(parse_client_message("").kind == MessageKind::invalid);
    CHECK(parse_client_message("{\"id\":1,\"method\":\"x\xff\"}").kind == MessageKind::request);
    CHECK(parse_client_message("{\"id\":1,\"method\":\"x\"}\r").kind == MessageKind::request);
    CHECK(parse_client_message("{\"id\":1,\xff\"method\":\"x\"}").kind == MessageKind::invalid);
  }

  TEST_CASE("invalid UTF-8 inside strings is read as the upstream reads it, with U+FFFD")
  {
    const auto message = parse_client_message(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
      "\"arguments\":{\"path\":\"/ws/a\xff.txt\"}}}");
    REQUIRE(message.kind == MessageKind::request);
    CHECK(message.body["params"]["arguments"]["path"] == "/ws/a\xEF\xBF\xBD.txt");
  }

  TEST_CASE("deeply nested messages are refused before they are parsed")
  {
    const std::string deep_id = "{\"jsonrpc\":\"2.0\",\"id\":" + std::string(100'000, '[')
                                + std::string(100'000, ']') + ",\"method\":\"x\"}";
    CHECK(parse_client_message(deep_id).kind == MessageKind::too_deep);
    CHECK(parse_client_message(std::string(1 << 20, '{')).kind == MessageKind::too_deep);
    CHECK(nesting_depth(R"({"a":[{"b":"[[[[{{{{\"]]]"}]})") == 3);
    const std::string at_limit = std::string(k_max_nesting, '[') + std::string(k_max_nesting, ']');
    CHECK(parse_client_message(at_limit).kind == MessageKind::batch);
  }

  TEST_CASE("a request whose id is not a string or a number is invalid")
  {
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":[1],"method":"x"})").kind == MessageKind::bad_id);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":{"a":1},"method":"x"})").kind == MessageKind::bad_id);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":null,"method":"x"})").kind == MessageKind::bad_id);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":-3,"method":"x"})").kind == MessageKind::request);
  }

  TEST_CASE("lone surrogate escapes are read as JSON.parse and Node's file names read them")
  {
    const auto message = parse_client_message(
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"p":"/ws/a\ud800b","q":"\\ud800","r":"\ud83d\ude00"}})");
    REQUIRE(message.kind == MessageKind::request);
    CHECK(message.body["params"]["p"] == "/ws/a\xEF\xBF\xBD" "b");
    CHECK(message.body["params"]["q"] == "\\ud800");
    CHECK(message.body["params"]["r"] == "\xF0\x9F\x98\x80");
  }

  TEST_CASE("a write's content is hashed and left out of the parsed message")
  {
    const auto message = parse_client_message(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file",)"
      R"("arguments":{"path":"/a","content":"first","content":"hello \u00e9","edits":[{"content":"kept"}]}}})");
    REQUIRE(message.kind == MessageKind::request);
    REQUIRE(message.content.hash.has_value());
    CHECK(*message.content.hash == hash_bytes("hello \xC3\xA9"));
    CHECK_FALSE(message.body["params"]["arguments"].contains("content"));
    CHECK(message.body["params"]["arguments"]["path"] == "/a");
    CHECK(message.body["params"]["arguments"]["edits"][0]["content"] == "kept");
    const auto not_string = parse_client_message(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/a","content":5}}})");
    CHECK_FALSE(not_string.content.hash.has_value());

    // Large lines take the streaming path; the outcome is the same.
    const std::string big(200'000, 'z');
    const auto large = parse_client_message(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file",)"
      R"("arguments":{"path":"/b","content":"first","content":")" + big + R"("}}})");
    REQUIRE(large.kind == MessageKind::request);
    REQUIRE(large.content.hash.has_value());
    CHECK(*large.content.hash == hash_bytes(big));
    CHECK_FALSE(large.body["params"]["arguments"].contains("content"));
    CHECK(large.body["params"]["arguments"]["path"] == "/b");
  }

  TEST_CASE("duplicate keys resolve to the last one, as JSON.parse in the upstream does")
  {
    const auto message = parse_client_message(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"})");
    CHECK(method_of(message.body) == "tools/call");
  }

  TEST_CASE("a valid line nested deeper than the limit is refused, one at the limit is read")
  {
    const auto nested = [](std::size_t depth) {
      return R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":)" + std::string(depth - 2, '[')
             + std::string(depth - 2, ']') + "}}";
    };
    const auto at_limit = parse_client_message(nested(k_max_nesting));
    CHECK(at_limit.kind == MessageKind::request);
    CHECK(at_limit.body["params"].contains("a"));
    CHECK(parse_client_message(nested(k_max_nesting + 1)).kind == MessageKind::too_deep);
  }

  TEST_CASE("a write's content counts toward the nesting limit like any other value")
  {
    // params.arguments is 3 deep: content nested k_max_nesting - 2 makes
    // the line one too deep, and fsguard must refuse it, not relay it.
    const auto with_content = [](std::size_t inner) {
      return R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/x","content":)"
             + std::string(inner, '[') + std::string(inner, ']') + "}}}";
    };
    CHECK(parse_client_message(with_content(k_max_nesting - 3)).kind == MessageKind::request);
    CHECK(parse_client_message(with_content(k_max_nesting - 2)).kind == MessageKind::too_deep);
  }

  TEST_CASE("the rule a request breaks that makes the server drop it is named, the first one first")
  {
    const auto problem = [](const char* text) {
      return request_the_server_drops(nlohmann::json::parse(text));
    };
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m"})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":"a","method":"m","params":{"_meta":{"progressToken":7}}})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":-9007199254740991,"method":"m","params":{"_meta":{"progressToken":"t"}}})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":9007199254740991,"method":"m","params":{"_meta":{}}})").empty());
    CHECK(problem(R"({"id":1,"method":5,"result":1})") == R"("jsonrpc" must be "2.0")");
    CHECK(problem(R"({"jsonrpc":2,"id":1,"method":"m"})") == R"("jsonrpc" must be "2.0")");
    CHECK(problem("[1]") == R"("jsonrpc" must be "2.0")");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"result":1})") == R"("method" must be a string)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","error":{},"params":[]})")
          == R"(a request has no "result" or "error")");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","_meta":{}})")
          == R"(a request has no members but "jsonrpc", "id", "method" and "params")");
    CHECK(problem(R"({"jsonrpc":"2.0","id":[],"method":"m","params":null})") == R"("params" must be an object)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":[]}})")
          == R"("params._meta" must be an object)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1.5,"method":"m","params":{"_meta":{"progressToken":1.5}}})")
          == R"("params._meta.progressToken" must be a string or an integer)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1e300}}})")
          == R"("params._meta.progressToken" must be a string or an integer)");
    // JSON.parse reads an integral float as the integer, which the SDK's
    // schema takes: the server answers these.
    CHECK(problem(R"({"jsonrpc":"2.0","id":7.0,"method":"m"})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":9e0,"method":"m"})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":-0.0,"method":"m"})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":9007199254740991.0,"method":"m"})").empty());
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":3.0}}})")
            .empty());
    const std::string bad_id = "the id must be a string or an integer of at most 2^53-1 in size";
    CHECK(problem(R"({"jsonrpc":"2.0","method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":null,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":1.5,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":9007199254740992.0,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":1e300,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":9007199254740992,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":-9007199254740992,"method":"m"})") == bad_id);
    CHECK(problem(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"})") == bad_id); // no |x|
  }

  TEST_CASE("what JSON.parse rejects and nlohmann reads is told apart, its id kept")
  {
    const std::string request = R"({"jsonrpc":"2.0","id":7,"method":"ping"})";
    CHECK(json_parse_rejects(request).empty());
    CHECK(json_parse_rejects("\xEF\xBB\xBF" + request) == "it begins with a byte-order mark");
    CHECK(json_parse_rejects(" \xEF\xBB\xBF" + request).empty()); // no JSON either way
    for (const std::string& line : {"\xEF\xBB\xBF" + request, request + std::string(1, '\0'),
                                    request + std::string(1, '\0') + "garbage"}) {
      CAPTURE(line);
      const auto message = parse_client_message(line);
      CHECK(message.kind == MessageKind::unreadable);
      CHECK(message.body["id"] == 7); // answered under it
    }
    CHECK(json_parse_rejects(request + std::string(1, '\0')) == "it holds a NUL byte");
    // Inside a string or before the JSON, neither parser reads it.
    CHECK(parse_client_message(std::string(1, '\0') + request).kind == MessageKind::invalid);
    CHECK(parse_client_message(R"({"jsonrpc":"2.0","id":"a)" + std::string(1, '\0') + R"(","method":"m"})")
            .kind
          == MessageKind::invalid);
  }

  TEST_CASE("a number too large for a double is read as JSON.parse reads it, not refused")
  {
    const auto message = parse_client_message(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":1e400,"b":-1E+999,"c":"1e400"}}})");
    REQUIRE(message.kind == MessageKind::request);
    const auto& arguments = message.body["params"]["arguments"];
    CHECK(arguments["a"].get<double>() == std::numeric_limits<double>::max());
    CHECK(arguments["b"].get<double>() == -std::numeric_limits<double>::max());
    CHECK(arguments["c"] == "1e400"); // a string is left as it is
    // As an id or a token it is no safe integer, as Infinity is not.
    CHECK_FALSE(request_the_server_drops(parse_client_message(
                                           R"({"jsonrpc":"2.0","id":1e400,"method":"m"})")
                                           .body)
                  .empty());
  }

  TEST_CASE("the rule a message that is no request breaks, that makes the server drop it, is named")
  {
    const auto problem = [](const char* text) {
      return message_the_server_drops(nlohmann::json::parse(text));
    };
    // What the SDK's JSONRPCMessageSchema takes.
    for (const char* taken :
         {R"({"jsonrpc":"2.0","method":"notifications/x"})",
          R"({"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":3.0},"x":1}})",
          R"({"jsonrpc":"2.0","id":1,"result":{}})", R"({"jsonrpc":"2.0","id":"a","result":{"_meta":{}}})",
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":[1]}})",
          R"({"jsonrpc":"2.0","error":{"code":-1.0,"message":"m","extra":1}})",
          R"({"jsonrpc":"2.0","method":"n","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}})"}) {
      CAPTURE(taken);
      CHECK(problem(taken).empty());
    }
    CHECK(problem("5") == "a message is a JSON object");
    CHECK(problem(R"({"method":"n"})") == R"("jsonrpc" must be "2.0")");
    CHECK(problem(R"({"jsonrpc":"2.0","method":"n","x":1})")
          == R"(a message has no members but "jsonrpc", "id", "method", "params", "result" and "error")");
    CHECK(problem(R"({"jsonrpc":"2.0","method":5})") == R"("method" must be a string)");
    CHECK(problem(R"({"jsonrpc":"2.0","method":"n","result":{}})")
          == R"(a notification has no "result" or "error")");
    CHECK(problem(R"({"jsonrpc":"2.0","method":"n","params":null})") == R"("params" must be an object)");
    CHECK(problem(R"({"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":1.5}}})")
          == R"("params._meta.progressToken" must be a string or an integer)");
    CHECK(problem(R"({"jsonrpc":"2.0","method":"n","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":1}}}})")
          == R"("params._meta.io.modelcontextprotocol/related-task" must be an object with a string taskId)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"params":{}})") == R"("params" belongs to a request or a notification)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1.5,"result":{}})")
          == "the id must be a string or an integer of at most 2^53-1 in size");
    CHECK(problem(R"({"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}})")
          == "the id must be a string or an integer of at most 2^53-1 in size");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}})")
          == R"(an answer has a "result" or an "error", not both)");
    CHECK(problem(R"({"jsonrpc":"2.0","result":{}})") == R"(an answer with a "result" has an id)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"result":[]})") == R"("result" must be an object)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"result":{"_meta":{"progressToken":null}}})")
          == R"("result._meta.progressToken" must be a string or an integer)");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})")
          == R"("error" must be an object with an integer "code" and a string "message")");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1})") == R"(a message has a "method", a "result" or an "error")");
    // A request is judged as request_the_server_drops() judges it.
    CHECK(problem(R"({"jsonrpc":"2.0","id":1.5,"method":"m"})")
          == "the id must be a string or an integer of at most 2^53-1 in size");
    CHECK(problem(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/related-task":5}}})")
          == R"("params._meta.io.modelcontextprotocol/related-task" must be an object with a string taskId)");
  }

  TEST_CASE("a released tree is null, however its arrays and objects nest")
  {
    auto tree = nlohmann::json::parse(
      R"({"a":[1,{"b":[[],{},"s",[{"c":null}]]}],"d":{"e":{"f":"text longer than sixteen bytes"}}})");
    release_tree(tree);
    CHECK(tree.is_null());
    auto deep = nlohmann::json::parse(std::string(k_max_nesting, '[') + std::string(k_max_nesting, ']'));
    release_tree(deep);
    CHECK(deep.is_null());
    nlohmann::json text = "a string";
    release_tree(text);
    CHECK(text.is_null());
  }

  TEST_CASE("ids that the peer echoes as equal get the same key")
  {
    CHECK(id_key(nlohmann::json(1)) == id_key(nlohmann::json(1.0)));
    CHECK(id_key(nlohmann::json(1)) != id_key(nlohmann::json("1")));
    CHECK(id_key(nlohmann::json("a")) == "\"a\"");
    CHECK(id_key(nlohmann::json(-7)) == "-7");
    CHECK(id_key(nlohmann::json(18446744073709551615ULL)) == "18446744073709551615");
    CHECK(id_key(nlohmann::json(2.5)) == "2.5");
    CHECK(id_key(nlohmann::json(9007199254740991.0)) == "9007199254740991");
    CHECK(id_key(nlohmann::json(-9.0e15)) == "-9000000000000000");
    CHECK(id_key(nlohmann::json(-0.0)) == "0");
    for (const char* text : {"", "a b/c:1", "fsguard/7", "tab\t", "quote\"", "back\\slash", "\x7f",
                             "caf\xc3\xa9", "bad\xff", "\x01"}) {
      CAPTURE(text);
      const nlohmann::json id(text);
      CHECK(id_key(id) == id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    // The same key from the raw text, parsed or not.
    for (const char* raw : {"0", "-0", "7", "-7", "007", "123456789012345678", "1234567890123456789",
                            "18446744073709551615", "18446744073709551616", "1.0", "1e3", "-1.5",
                            "\"a\"", "\"\"", "\"a b/c:1\"", "\"\\u0041\"", "\"caf\xc3\xa9\"",
                            "\"\x7f\"", "\"tab\\t\"", "{}", "x", "\"open"}) {
      CAPTURE(raw);
      const auto parsed = nlohmann::json::parse(raw, nullptr, false);
      CHECK(id_key_of_raw(raw) == (parsed.is_discarded() ? std::string() : id_key(parsed)));
    }
  }

  TEST_CASE("skimming finds the id and the kind of an upstream line without parsing it")
  {
    const std::string big(1 << 20, 'x');
    const std::string line = R"({"result":{"content":[{"type":"text","text":")" + big
                             + R"(\" \\\"}"}]},"jsonrpc":"2.0","id":17})";
    const auto skimmed = skim_message(line);
    CHECK(skimmed.is_json_object);
    CHECK(skimmed.has_result_or_error);
    CHECK_FALSE(skimmed.has_method);
    CHECK(skimmed.raw_id == "17");

    const auto request = skim_message(R"({"method":"roots/list","jsonrpc":"2.0","id":"s-0"})");
    CHECK(request.has_method);
    CHECK(request.raw_id == "\"s-0\"");
  }

  TEST_CASE("skimming rejects what is not a JSON object")
  {
    CHECK_FALSE(skim_message("Secure MCP Filesystem Server running on stdio").is_json_object);
    CHECK_FALSE(skim_message(R"({"id":1,"result":{"a":"b"})").is_json_object);
    CHECK_FALSE(skim_message(R"({"id":1} trailing)").is_json_object);
    CHECK_FALSE(skim_message(R"({"\u0069d":1,"result":{}})").is_json_object);
    CHECK(skim_message(R"(  {"id" : 1 , "result" : [ ] }  )").is_json_object);
    // A NUL ends a literal, and is no JSON.
    CHECK_FALSE(skim_message(std::string("{\"id\":1\0}", 9)).is_json_object);
    CHECK_FALSE(skim_message(std::string("{\"id\":1,\"result\":{\"isError\":true\0}}", 33)).is_json_object);
  }

  TEST_CASE("skimming ends a literal at a separator or white space")
  {
    for (const std::string space : {" ", "\t", "\r", "\n"}) {
      CAPTURE(space);
      // The skim's views point into the line, which must outlive them.
      const std::string line = R"({"result":{"isError":true)" + space + R"(},"id":-12.5e3)" + space + "}";
      const auto skimmed = skim_message(line);
      CHECK(skimmed.raw_id == "-12.5e3");
      CHECK(skimmed.result.raw_is_error == "true");
    }
    const auto skimmed = skim_message(R"({"result":{"isError":true,"a":null},"id":-12.5e3,"jsonrpc":"2.0"})");
    CHECK(skimmed.raw_id == "-12.5e3");
    CHECK(skimmed.result.raw_is_error == "true");
    CHECK(skim_message(R"({"result":{"isError":false},"id":7})").raw_id == "7");
    CHECK_FALSE(skim_message(R"({"id":1]})").is_json_object);
    // In a result, a quote or a bracket ends one too: the walk fails there,
    // and the result is skipped as a whole, which these end elsewhere.
    CHECK_FALSE(skim_message(R"({"result":{"isError":tr"ue},"id":1})").is_json_object);
    CHECK_FALSE(skim_message(R"({"result":{"isError":tr[ue},"id":1})").is_json_object);
    CHECK_FALSE(skim_message(R"({"result":{"isError":tr{ue},"id":1})").is_json_object);
    const auto balanced = skim_message(R"({"result":{"isError":tr"ue"},"id":1})");
    CHECK_FALSE(balanced.result.walked);
    CHECK(balanced.raw_id == "1");
  }

  TEST_CASE("a skim tells a tool call's success without parsing the content")
  {
    auto succeeded = [](std::string_view line) { return skim_tool_succeeded(skim_message(line)); };
    CHECK(*succeeded(R"({"result":{"content":[{"type":"text","text":"isError: true"}]},"jsonrpc":"2.0","id":1})"));
    CHECK(*succeeded(R"({"result":{"content":[],"isError":false},"id":1})"));
    CHECK_FALSE(*succeeded(R"({"result":{"content":[],"isError":true},"id":1})"));
    CHECK_FALSE(*succeeded(R"({"result":{"isError" : true ,"content":[]},"id":1})"));
    CHECK_FALSE(*succeeded(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}})"));
    CHECK_FALSE(succeeded(R"({"result":{"isError":true,"isError":false},"id":1})"));
    CHECK_FALSE(succeeded(R"({"result":{"\u0069sError":true},"id":1})"));
    CHECK_FALSE(succeeded(R"({"result":{},"result":{},"id":1})"));
    CHECK_FALSE(succeeded("not json"));
  }

  TEST_CASE("one skim of a response answers for its result as skimming the result again would")
  {
    const std::vector<std::string> lines = {
      R"({"result":{"content":[{"type":"text","text":"a\"b"}],"structuredContent":{"content":"a\"b"}},"jsonrpc":"2.0","id":1})",
      R"({"result":{"content":[{"type":"text","text":"x"},{"type":"image"}],"isError":false},"id":2})",
      R"({"result":{"content":[{"text":"x","type":"text","text":"y"}]},"id":3})",
      R"({"result":{"content":[{"type":"text","text":"x"]},"id":4})",
      R"({"result":{"content":["text"]},"id":5})",
      R"({"result":{"content":[]},"id":6})",
      R"({"result":{"content":{"type":"text"}},"id":7})",
      R"({"result":{"content":[{"type":"text","text":1}],"content":[]},"id":8})",
      R"({"result":{"isError":true,"content":[{"type":"text","text":"no"}]},"id":9})",
      R"({"result":{"content":[{"type":"text","text":"x"}],"isError":true,"isError":false},"id":10})",
      R"({"result":{"content":[{"type":"text","text":"x"}] ] },"id":11})",
      R"({"result":"text","id":12})",
      R"({"result":{ "content" : [ { "type" : "text" , "text" : "x" } ] } ,"id":13})",
      // Malformed: literals with quotes or brackets in them, which a walk and
      // a skip of the whole would end at different places.
      R"({"result":{"content":[{"type":"text","text":"x","z":a"b"}]},"id":14})",
      R"({"result":{"a":x"}","content":[]},"id":15})",
      R"({"result":{"content":[{"k":)" "\xff\\\"a\xff\"b\"}]},\"id\":16}",
      R"({"result":{"isError":t{rue},"content":[]},"id":17})",
    };
    for (const auto& line : lines) {
      CAPTURE(line);
      const SkimmedMessage once = skim_message(line);
      SkimmedMessage again = once;
      again.result = {}; // the functions skim raw_result themselves
      CHECK(skim_tool_succeeded(once) == skim_tool_succeeded(again));
      CHECK(skim_shows_content(once) == skim_shows_content(again));
      CHECK(skim_first_text(once) == skim_first_text(again));
    }
    CHECK(skim_message(lines[0]).result.walked);
    CHECK(*skim_first_text(skim_message(lines[0])) == R"("a\"b")");
    CHECK(*skim_first_text(skim_message(lines[12])) == R"("x")");
    CHECK_FALSE(skim_first_text(skim_message(lines[2])));
  }

  // An answer line in the bytes the MCP SDK writes for a tool's result of
  // one text block, with `raw_text` as T and `raw_id` as the id;
  // `structured` is the raw structuredContent member, or "" for none.
  std::string sdk_answer(std::string_view raw_text, std::string_view raw_id, std::string_view structured)
  {
    std::string line = R"({"result":{"content":[{"type":"text","text":)";
    line += raw_text;
    line += "}]";
    if (!structured.empty()) {
      line += R"(,"structuredContent":)";
      line += structured;
    }
    line += R"(},"jsonrpc":"2.0","id":)";
    line += raw_id;
    line += "}";
    return line;
  }

  TEST_CASE("an answer in the SDK's bytes skims as the walk over any object skims it")
  {
    const std::vector<std::string> texts = {
      R"("line one\nline two\n")", R"("")", R"("a\\")", R"("a\"")", R"("\\\\")",
      R"("x\\\"y")", R"("Successfully wrote to notes.txt")", R"("\"")", R"("\\\"\\")",
    };
    const std::vector<std::string> ids = {
      "0", "17", "-3", "1.5", "1e3", R"("s-1")", R"("a\"b")", R"("")", R"("\\")", "null", "true",
      "{}", "[1]", R"({"id":2})", "1x", R"(")", "", "7,", R"(1"2)",
    };
    const std::vector<std::string> structured = {
      "", R"({"content":"x"})", R"({"content":[{"type":"text","text":"x"}]})", "{}", "[]", "1",
      R"(tru"e)", R"({"content":"a\"}"})", R"({"content":"x")", "",
    };
    int answers = 0;
    for (const auto& text : texts) {
      for (const auto& id : ids) {
        for (const auto& member : structured) {
          const std::string line = sdk_answer(text, id, member);
          CAPTURE(line);
          const SkimmedMessage skimmed = skim_message(line);
          CHECK(skimmed == skim_message_generic(line));
          if (skimmed.is_json_object) {
            ++answers;
            CHECK(skim_first_text(skimmed) == text);
            CHECK(skimmed.raw_id == id);
          }
        }
      }
    }
    CHECK(answers > 0);
    // The line read_text_file's answer is, as the SDK writes it.
    const std::string text = R"("# Notes\nfirst line\n\tsecond \"quoted\" line\n")";
    const std::string line = sdk_answer(text, "42", R"({"content":)" + text + "}");
    const SkimmedMessage skimmed = skim_message(line);
    REQUIRE(skimmed.is_json_object);
    CHECK(skimmed.raw_id == "42");
    CHECK(*skim_first_text(skimmed) == text);
    CHECK(*skim_tool_succeeded(skimmed));
    CHECK(*skim_shows_content(skimmed));
    CHECK(skimmed.raw_result == line.substr(10, line.find(R"(,"jsonrpc")") - 10));
  }

  TEST_CASE("a line that differs from the SDK's bytes anywhere skims as the walk over any object skims it")
  {
    const std::vector<std::string> lines = {
      sdk_answer(R"("a\nb\\")", "5", R"({"content":"a\nb\\"})"),
      sdk_answer(R"("x\"")", R"("s-1")", ""),
      sdk_answer(R"("")", "-12", "{}"),
      R"({"result":{"content":[{"type":"text","text":"no"}],"isError":true},"jsonrpc":"2.0","id":3})",
      R"({"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"content":"x"},"isError":false},"jsonrpc":"2.0","id":4})",
      R"({"result":{"content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},"jsonrpc":"2.0","id":5})",
      R"({"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"content":"x"}},"jsonrpc":"2.0","id":6,"id":7})",
    };
    const std::string changes = std::string(" \"\\{}[],:x0\n\ttr") + '\0';
    int lines_tried = 0;
    int differing = 0;
    const auto compare = [&](const std::string& line) {
      ++lines_tried;
      if (!(skim_message(line) == skim_message_generic(line))) {
        ++differing;
        FAIL_CHECK("skims differ: " << line);
      }
    };
    for (const auto& line : lines) {
      for (std::size_t at = 0; at <= line.size(); ++at) {
        compare(line.substr(0, at));
        for (const char c : changes) {
          compare(line.substr(0, at) + c + line.substr(at));
          if (at < line.size()) {
            std::string changed = line;
            changed[at] = c;
            compare(changed);
          }
        }
        if (at < line.size()) {
          compare(line.substr(0, at) + line.substr(at + 1));
        }
      }
    }
    CHECK(lines_tried > 10000);
    CHECK(differing == 0);
  }

  TEST_CASE("error responses are well-formed JSON-RPC lines")
  {
    const std::string line = error_response(nullptr, RpcError::parse_error, "parse error");
    REQUIRE(line.back() == '\n');
    const auto parsed = nlohmann::json::parse(line);
    CHECK(parsed["jsonrpc"] == "2.0");
    CHECK(parsed["id"].is_null());
    CHECK(parsed["error"]["code"] == -32700);
  }
}

TEST_SUITE("message")
{
  TEST_CASE("an SDK answer's text is decoded as it is skimmed, where its ends tell where it ends")
  {
    const std::vector<std::string> texts = {
      R"("")", R"("a")", R"("line one\nline two\n")", R"("quote \" and backslash \\")",
      R"("ends in a backslash \\")", R"("caf\u00e9 \ud83d\ude00 é")",
      "\"" + std::string(5000, 'x') + "\\n" + std::string(3000, 'y') + "\""};
    const std::vector<std::string> ids = {"5", "-12", "0", R"("a-1")", R"("a\"b")"};
    for (const auto& text : texts) {
      for (const auto& id : ids) {
        for (const bool structured : {true, false}) {
          const std::string line = R"({"result":{"content":[{"type":"text","text":)" + text
                                   + (structured ? R"(}],"structuredContent":{"content":)" + text + "}}"
                                                 : std::string("}]}"))
                                   + R"(,"jsonrpc":"2.0","id":)" + id + "}";
          CAPTURE(line);
          DecodedAnswerText decoded;
          REQUIRE(decode_sdk_answer_text(line, answer_id_from_ends(line), decoded, 1 << 20));
          const auto expected = decoded_json_text(text, 1 << 20);
          REQUIRE(expected);
          CHECK(decoded.decoded.text == expected->text.view());
          CHECK(decoded.decoded.facts == expected->facts);
          const std::size_t text_at = line.find(text);
          CHECK(decoded.end == line.data() + text_at + text.size());
          // The skim told where the text ends finds what it finds alone.
          const SkimmedMessage hinted = skim_message(line, decoded.end);
          CHECK(hinted == skim_message(line));
          CHECK(hinted.is_json_object);
          CHECK(skim_first_text(hinted) == std::optional<std::string_view>(text));
        }
      }
    }
  }

  TEST_CASE("an answer's text is not decoded as it is skimmed where its ends do not tell its end")
  {
    const auto decodes = [](const std::string& line, std::size_t max_bytes = 1 << 20) {
      DecodedAnswerText decoded;
      return decode_sdk_answer_text(line, answer_id_from_ends(line), decoded, max_bytes);
    };
    const std::string head = R"({"result":{"content":[{"type":"text","text":)";
    const std::string tail = R"(,"jsonrpc":"2.0","id":5})";
    CHECK(decodes(head + R"("ab"}],"structuredContent":{"content":"ab"}})" + tail));
    // structuredContent with another text: its length does not split evenly,
    // or splits where no text ends.
    CHECK_FALSE(decodes(head + R"("ab"}],"structuredContent":{"content":"abc"}})" + tail));
    CHECK_FALSE(decodes(head + R"("ab"}],"structuredContent":{"content":"abcd"}})" + tail));
    // A string that ends before the place its ends tell.
    CHECK_FALSE(decodes(head + R"("a","b":"c"}],"structuredContent":{"content":"a","b":"c"}})" + tail));
    // Other shapes, and strings the decoder leaves to the full parser.
    CHECK_FALSE(decodes(head + R"("ab"}],"isError":true},"jsonrpc":"2.0","id":5})"));
    CHECK_FALSE(decodes(head + R"("a\ud800"}]})" + tail));
    CHECK_FALSE(decodes(head + "\"a\xff\"}]}" + tail));
    CHECK_FALSE(decodes(head + "\"a\tb\"}]}" + tail));
    CHECK_FALSE(decodes(head + R"(5}]})" + tail));
    CHECK_FALSE(decodes(head));
    CHECK_FALSE(decodes(head + R"("ab"}]})"));
    // Longer than the bytes asked for.
    CHECK(decodes(head + R"("abcd"}]})" + tail, 4));
    CHECK_FALSE(decodes(head + R"("abcde"}]})" + tail, 4));
  }

  TEST_CASE("a successful answer in the SDK's shape gives its id key from its ends")
  {
    CHECK(answer_key_from_ends(R"({"result":{"content":[{"type":"text","text":"a"}]},"jsonrpc":"2.0","id":5})")
          == "5");
    CHECK(answer_key_from_ends(R"({"result":{},"jsonrpc":"2.0","id":"a-1"})") == R"("a-1")");
    // The id a result holds at its own end is not the answer's.
    CHECK(answer_key_from_ends(R"({"result":{"x":1,"id":5}})").empty());
    // Not a successful answer in that shape: left to the skim.
    CHECK(answer_key_from_ends(R"({"jsonrpc":"2.0","id":5,"result":{}})").empty());
    CHECK(answer_key_from_ends(R"({"error":{"code":-1},"jsonrpc":"2.0","id":5})").empty());
    CHECK(answer_key_from_ends(R"({"method":"roots/list","jsonrpc":"2.0","id":5})").empty());
    CHECK(answer_key_from_ends(R"( {"result":{},"jsonrpc":"2.0","id":5})").empty());
    CHECK(answer_key_from_ends(R"({"result":{},"jsonrpc":"2.0","id":null})").empty());
    CHECK(answer_key_from_ends("").empty());
  }

  TEST_CASE("the id at the end of an answer too long to keep is found in its last bytes")
  {
    CHECK(trailing_id(R"(x"}},"jsonrpc":"2.0","id":5})") == "5");
    CHECK(trailing_id(R"(x"}},"jsonrpc":"2.0","id":-12}  )"
                      "\r\n") == "-12");
    CHECK(trailing_id(R"(x"}},"jsonrpc":"2.0","id":"a\"b"})") == R"("a\"b")");
    CHECK(trailing_id(R"(x"}},"jsonrpc":"2.0","id":"a\\"})") == R"("a\\")");
    CHECK(trailing_id(R"(x"}},"jsonrpc":"2.0","id" : 7 })") == "7");
    CHECK(trailing_id(R"(text with "id":3} inside a string")").empty());
    CHECK(trailing_id(R"(x","id":null})").empty());
    CHECK(trailing_id(R"(x","myid":3})").empty());
    CHECK(trailing_id("").empty());
  }
}
