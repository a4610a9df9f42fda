#include <doctest/doctest.h>

#include <string>

#include "proxy/guard/stale_change.hpp"

using namespace fsguard;

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

const EditSemantics k_server_filesystem = EditSemantics::first_exact_match;

} // namespace

TEST_SUITE("stale_change")
{
  TEST_CASE("an edit far from the outside change is carried over, and both changes survive")
  {
    const std::string seen = numbered_lines(50);
    const std::string current = replaced(seen, "line 1\n", "// formatted\n");
    const auto rebased = rebase_edits(seen, current, {{"line 40\n", "LINE 40\n"}},
                                      k_server_filesystem);
    REQUIRE(rebased);
    CHECK(*rebased == replaced(current, "line 40\n", "LINE 40\n"));
  }

  TEST_CASE("an edit of a line the outside change touched is not carried over")
  {
    const std::string seen = numbered_lines(50);
    const std::string current = replaced(seen, "line 10\n", "line 10 // changed\n");
    const auto rebased = rebase_edits(seen, current, {{"line 10\n", "LINE 10\n"}},
                                      k_server_filesystem);
    REQUIRE_FALSE(rebased);
    CHECK(rebased.error().reason.find("not in the current content") != std::string::npos);
  }

  TEST_CASE("an edit next to the changed line is not carried over")
  {
    const std::string seen = numbered_lines(50);
    const std::string current = replaced(seen, "line 10\n", "line ten\n");
    const auto rebased = rebase_edits(seen, current, {{"line 11\n", "LINE 11\n"}},
                                      k_server_filesystem);
    REQUIRE_FALSE(rebased);
    CHECK(rebased.error().reason.find("lines next to them") != std::string::npos);
  }

  TEST_CASE("an oldText the outside change made ambiguous is not carried over")
  {
    const std::string seen = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\n";
    const std::string current = seen + "beta\n"; // a second beta appears at the end
    const auto rebased = rebase_edits(seen, current, {{"beta\n", "BETA\n"}}, k_server_filesystem);
    REQUIRE_FALSE(rebased);
    CHECK(rebased.error().reason.find("more than once in the current content") != std::string::npos);
  }

  TEST_CASE("an oldText that matched twice in what the agent read is not carried over")
  {
    const std::string seen = "x\na\nb\nc\nd\ne\nf\ng\nx\nh\ni\nj\nk\n";
    const std::string current = replaced(seen, "x\na\n", "a\n"); // the first x went
    const auto rebased = rebase_edits(seen, current, {{"x\n", "X\n"}}, k_server_filesystem);
    REQUIRE_FALSE(rebased);
  }

  TEST_CASE("edits are checked in order, each on what the edits before it left")
  {
    const std::string seen = numbered_lines(40);
    const std::string current = replaced(seen, "line 1\n", "line one\n");
    const auto rebased = rebase_edits(
      seen, current, {{"line 20\n", "line twenty\n"}, {"line twenty\nline 21\n", "merged\n"}},
      k_server_filesystem);
    REQUIRE(rebased);
    CHECK(*rebased == replaced(current, "line 20\nline 21\n", "merged\n"));
  }

  TEST_CASE("a file with CRLF on disk now is not carried over: the edit would rewrite every line")
  {
    const std::string seen = "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\n";
    const std::string current = replaced(seen, "a\r\n", "A\r\n");
    CHECK_FALSE(rebase_edits(seen, current, {{"h", "H"}}, k_server_filesystem));
  }

  TEST_CASE("CRLF read, LF now: the edits apply as the server normalizes them")
  {
    const std::string seen = "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\n";
    const std::string current = "A\nb\nc\nd\ne\nf\ng\nh\n";
    const auto rebased = rebase_edits(seen, current, {{"g\r\nh", "G\r\nH"}}, k_server_filesystem);
    REQUIRE(rebased);
    CHECK(*rebased == "A\nb\nc\nd\ne\nf\nG\nH\n");
  }

  TEST_CASE("empty edits, empty oldText and unknown tools are never carried over")
  {
    const std::string seen = numbered_lines(20);
    const std::string current = replaced(seen, "line 1\n", "one\n");
    CHECK_FALSE(rebase_edits(seen, current, {}, k_server_filesystem));
    CHECK_FALSE(rebase_edits(seen, current, {{"", "prefix\n"}}, k_server_filesystem));
    CHECK_FALSE(rebase_edits(seen, current, {{"line 15\n", "x\n"}}, EditSemantics::unknown));
  }

  TEST_CASE("a newText with $ is carried over only for a server that takes it literally")
  {
    const std::string seen = numbered_lines(20);
    const std::string current = replaced(seen, "line 1\n", "one\n");
    CHECK(rebase_edits(seen, current, {{"line 15\n", "cost $& 5\n"}}, k_server_filesystem));
    CHECK_FALSE(rebase_edits(seen, current, {{"line 15\n", "cost $& 5\n"}},
                             EditSemantics::first_exact_match_dollar_patterns));
    CHECK(rebase_edits(seen, current, {{"line 15\n", "cost 5\n"}},
                       EditSemantics::first_exact_match_dollar_patterns));
  }

  TEST_CASE("edit_file's edits are read from its arguments")
  {
    const auto edits = text_edits(nlohmann::json::parse(
      R"({"path":"/a","edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":""}]})"));
    REQUIRE(edits);
    REQUIRE(edits->size() == 2);
    CHECK(edits->at(1).old_text == "c");
    CHECK_FALSE(text_edits(nlohmann::json::parse(R"({"edits":[{"oldText":"a"}]})")));
    CHECK_FALSE(text_edits(nlohmann::json::parse(R"({"edits":"a"})")));
  }

  TEST_CASE("a note is added to the content and to the structured content, with its _meta")
  {
    const std::string line =
      R"({"result":{"content":[{"type":"text","text":"diff"}],"structuredContent":{"content":"diff"}},"jsonrpc":"2.0","id":7})";
    const auto noted = with_note(line, skim_message(line), "NOTE", "fsguard/stale", {{"how", "rebase"}});
    REQUIRE(noted);
    const auto response = nlohmann::json::parse(*noted);
    CHECK(response["id"] == 7);
    CHECK(response["result"]["content"].size() == 2);
    CHECK(response["result"]["content"][0]["text"] == "diff");
    CHECK(response["result"]["content"][1]["text"] == "NOTE");
    CHECK(response["result"]["structuredContent"]["content"] == "diff\n\nNOTE");
    CHECK(response["result"]["_meta"]["fsguard/stale"]["how"] == "rebase");
    CHECK(noted->find(R"({"result":{"content":)") == 0); // the server's key order is kept
    const std::string error = R"({"jsonrpc":"2.0","id":7,"error":{"code":1}})";
    CHECK_FALSE(with_note(error, skim_message(error), "NOTE", "k", {}));
  }

  TEST_CASE("a request's content is replaced, and nothing else")
  {
    const std::string line =
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/a","content":"old"}}})";
    const auto replaced_line = with_content(line, "new\nline");
    REQUIRE(replaced_line);
    const auto request = nlohmann::json::parse(*replaced_line);
    CHECK(request["params"]["arguments"]["content"] == "new\nline");
    CHECK(request["params"]["arguments"]["path"] == "/a");
    CHECK(request["id"] == 3);
    CHECK(replaced_line->ends_with("}\n"));
    // Spliced in: the client's own spelling of the rest stays as it is.
    const std::string spaced =
      R"({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_file", )"
      R"("arguments": {"content": "old", "path": "/caf\u00e9"}}})"
      "\n";
    CHECK(with_content(spaced, "new")
          == R"({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_file", )"
             R"("arguments": {"content": "new", "path": "/caf\u00e9"}}})"
             "\n");
  }

  TEST_CASE("a write keeps a change it was shown only when it was made from the changed version")
  {
    const std::string seen = numbered_lines(40);
    const std::string shown = replaced(seen, "line 10\n", "line 10 // reviewed by Sam\n");
    // Made from the shown version: its change elsewhere, or on the same line.
    CHECK(keeps_change(seen, shown, shown));
    CHECK(keeps_change(seen, shown, replaced(shown, "line 30\n", "LINE 30\n")));
    // A line the change wrote, rewritten: from which version? fsguard cannot
    // tell, so it does not take the write to keep the change.
    CHECK_FALSE(keeps_change(seen, shown, replaced(shown, "line 10 // reviewed by Sam\n",
                                                   "LINE 10 // reviewed by Sam\n")));
    // Made from the version seen before: it would undo the change.
    CHECK_FALSE(keeps_change(seen, shown, seen));
    CHECK_FALSE(keeps_change(seen, shown, replaced(seen, "line 30\n", "LINE 30\n")));
    CHECK_FALSE(keeps_change(seen, shown, replaced(seen, "line 10\n", "LINE 10\n")));
    // A line the change took away must stay away.
    const std::string deleted = replaced(seen, "line 20\n", "");
    CHECK(keeps_change(seen, deleted, replaced(deleted, "line 5\n", "five\n")));
    CHECK_FALSE(keeps_change(seen, deleted, replaced(seen, "line 5\n", "five\n")));
  }

  TEST_CASE("a write keeps a white-space change byte for byte, even next to its own change")
  {
    std::string seen;
    for (int line = 1; line <= 12; ++line) {
      seen += "  line " + std::to_string(line) + "   \n";
    }
    // A formatter strips the trailing blanks; another re-indents.
    std::string stripped;
    std::string indented;
    for (int line = 1; line <= 12; ++line) {
      stripped += "  line " + std::to_string(line) + "\n";
      indented += "    line " + std::to_string(line) + "   \n";
    }
    for (const auto& shown : {stripped, indented}) {
      CAPTURE(shown);
      const std::string next = shown.substr(0, shown.find('\n') + 1);
      CHECK(keeps_change(seen, shown, shown + "line 13\n"));
      CHECK(keeps_change(seen, shown, next + "inserted\n" + shown.substr(next.size())));
      CHECK_FALSE(keeps_change(seen, shown, seen + "line 13\n"));
    }
  }

  TEST_CASE("a write keeps a change inside a word, next to its own change")
  {
    const std::string seen = "connect(\n  retries=5)\nreturn\n";
    const std::string shown = "connect(\n  retries=5,\n)\nreturn\n";
    CHECK(keeps_change(seen, shown, "connect(\n  retries=5,\n)\nreturn value\n"));
    CHECK(keeps_change(seen, shown, "// retry\nconnect(\n  retries=5,\n)\nreturn\n"));
    CHECK_FALSE(keeps_change(seen, shown, "connect(\n  retries=5)\nreturn value\n"));
  }

  TEST_CASE("a change of a last line without a final newline is kept by a write that adds lines")
  {
    const std::string seen = "first\nretries=5)";
    const std::string shown = "first\nretries=5,";
    CHECK(keeps_change(seen, shown, shown));
    CHECK(keeps_change(seen, shown, shown + "\nthird\n"));
    CHECK(keeps_change(seen, shown, "zeroth\n" + shown));
    CHECK_FALSE(keeps_change(seen, shown, seen + "\nthird\n"));
    CHECK_FALSE(keeps_change(seen, shown, "first\nretries=6,"));
    // A change that adds the final newline is kept only with it.
    CHECK(keeps_change("a\nb", "a\nb\n", "a\nb\nc\n"));
    CHECK_FALSE(keeps_change("a\nb", "a\nb\n", "a\nb"));
    CHECK_FALSE(keeps_change("a\nb", "a\nb\n", "z\nb"));
  }

  TEST_CASE("nothing may be written where the change took lines away")
  {
    const std::string seen = numbered_lines(10);
    const std::string shown = replaced(seen, "line 5\nline 6\n", "");
    CHECK(keeps_change(seen, shown, replaced(shown, "line 9\n", "nine\n")));
    CHECK(keeps_change(seen, shown, replaced(shown, "line 7\n", ""))); // more taken away
    // Written back, or written over where they were: from which version?
    CHECK_FALSE(keeps_change(seen, shown, seen));
    CHECK_FALSE(keeps_change(seen, shown, replaced(seen, "line 5\n", "five\n")));
    CHECK_FALSE(keeps_change(seen, shown, replaced(shown, "line 7\n", "seven\n")));
  }
}
