#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "proxy/guard/override_prompt.hpp"

using namespace fsguard;
using namespace std::chrono_literals;

namespace {

// The message and the allow field's description of the question asking to
// let `tool` go ahead despite `veto`, with `preview`.
struct Question {
  std::string message;
  std::string description;
};

Question asked(const std::string& tool, const Veto& veto, const FilePreview* preview = nullptr)
{
  const auto request = nlohmann::json::parse(override_request("fsguard/override/1", tool, veto,
                                                              preview));
  return {request["params"]["message"],
          request["params"]["requestedSchema"]["properties"]["allow"]["description"]};
}

nlohmann::json result(const nlohmann::json& body)
{
  return {{"jsonrpc", "2.0"}, {"id", "fsguard/override/1"}, {"result", body}};
}

} // namespace

TEST_SUITE("override prompt")
{
  TEST_CASE("the agent's path and tool are quoted, their control characters shown")
  {
    Veto veto;
    veto.code = VetoCode::not_read;
    veto.path = "/ws/notes.txt\", it is a new, empty file. Nothing would be lost.\nAllow this one "
                "write?\n\n";
    const Question question = asked("write_file\nYes", veto);
    CHECK(question.message.starts_with(
      "The agent's \"write_file\\nYes\" of \"/ws/notes.txt\\\", it is a new, empty file. Nothing "
      "would be lost.\\nAllow this one write?\\n\\n\" was stopped by fsguard: the file exists"));
    // The one line break before fsguard's question is fsguard's own.
    CHECK(question.message.find("\nAllow this one write?") == question.message.rfind('\n'));
    CHECK(question.description.find('\n') == std::string::npos);
    CHECK(question.description.find("\"/ws/notes.txt\\\", it is") != std::string::npos);
  }

  TEST_CASE("the cause of a change is quoted, as fsguard told it to the agent")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a.txt";
    veto.cause = "by your own write_file of /ws/b\nAllow? through fsguard";
    CHECK(asked("write_file", veto).message.find(
            "Who changed it, as fsguard told the agent: \"by your own write_file of "
            "/ws/b\\nAllow? through fsguard\".")
          != std::string::npos);
    veto.cause = "outside fsguard";
    CHECK(asked("write_file", veto).message.find("modified outside fsguard after the agent")
          != std::string::npos);
  }

  TEST_CASE("the diff is headed for the person: the path quoted, the versions the agent's")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a\nb.txt";
    veto.diff = "--- /ws/a\nb.txt\t(as you last saw it)\n+++ /ws/a\nb.txt\t(on disk now)\n"
                "@@ -1 +1 @@\n-one\n+two\x1b[2J\n";
    veto.diff_complete = true;
    const std::string message = asked("write_file", veto).message;
    CHECK(message.find("```diff\n--- \"/ws/a\\nb.txt\"\t(as the agent last saw it)\n"
                       "+++ \"/ws/a\\nb.txt\"\t(on disk now)\n"
                       "@@ -1 +1 @@\n-one\n+two\\u001b[2J\n```\n\nAllow this one write?")
          != std::string::npos);
    CHECK(message.find("as you last saw it") == std::string::npos);
  }

  TEST_CASE("a not_read question shows the size and the first lines of what would be replaced")
  {
    Veto veto;
    veto.code = VetoCode::not_read;
    veto.path = "/ws/a.txt";
    std::string content;
    for (int line = 1; line <= 30; ++line) {
      content += "line " + std::to_string(line) + "\n";
    }
    const FilePreview preview = preview_of(content);
    CHECK(preview.size == static_cast<std::int64_t>(content.size()));
    CHECK_FALSE(preview.whole);
    const std::string message = asked("write_file", veto, &preview).message;
    CHECK(message.find("The file now holds " + std::to_string(content.size())
                       + " bytes; the first of them:\n```\n| line 1\n| line 2\n")
          != std::string::npos);
    CHECK(message.find("| line 20\n```\n(the rest is not shown)") != std::string::npos);
    CHECK(message.find("line 21") == std::string::npos);

    const FilePreview small = preview_of("Allow this one write?\n```\nx");
    CHECK(small.whole);
    CHECK(asked("write_file", veto, &small).message.find(
            "all of them:\n```\n| Allow this one write?\n| ```\n| x\n```\n\nAllow")
          != std::string::npos);
  }

  TEST_CASE("a preview is bounded in bytes, cut at a character, and not shown for bytes that "
            "are not text")
  {
    const std::string long_line = std::string(2047, 'a') + "é and more\n";
    const FilePreview cut = preview_of(long_line);
    CHECK(cut.first_lines == std::string(2047, 'a'));
    CHECK_FALSE(cut.whole);
    CHECK(preview_of(std::string("\x89PNG\r\n\x1a\n\0\0", 10)).lines
          == FilePreview::Lines::not_text);
    Veto veto;
    veto.path = "/ws/a.png";
    const FilePreview binary = preview_of("\xFF\xFE");
    CHECK(asked("write_file", veto, &binary).message.find(
            "The file now holds 2 bytes, which are not UTF-8 text, so its lines are not shown.")
          != std::string::npos);
    FilePreview large;
    large.size = 5'000'000;
    CHECK(asked("write_file", veto, &large).message.find("holds 5000000 bytes, too many")
          != std::string::npos);
  }

  TEST_CASE("each answer of the client is read as what it is")
  {
    const auto accepted = [](const nlohmann::json& allow) {
      return read_override_answer(result({{"action", "accept"}, {"content", {{"allow", allow}}}}));
    };
    CHECK(accepted(true).answer == OverrideAnswer::allow);
    CHECK(accepted(false).answer == OverrideAnswer::not_confirmed);
    CHECK(accepted("true").answer == OverrideAnswer::not_confirmed);
    CHECK(read_override_answer(result({{"action", "accept"}})).answer
          == OverrideAnswer::not_confirmed);
    CHECK(read_override_answer(result({{"action", "decline"}})).answer == OverrideAnswer::decline);
    CHECK(read_override_answer(result({{"action", "cancel"}})).answer == OverrideAnswer::cancel);
    CHECK(read_override_answer(result({{"action", "maybe"}})).answer == OverrideAnswer::unreadable);
    CHECK(read_override_answer(result(nullptr)).answer == OverrideAnswer::unreadable);
    const auto error = read_override_answer(
      {{"jsonrpc", "2.0"}, {"id", "x"}, {"error", {{"code", -32601}, {"message", "no UI"}}}});
    CHECK(error.answer == OverrideAnswer::error);
    CHECK(error.error == "no UI");
  }

  TEST_CASE("a cancel is not a decline, and neither is reported as the user's when it came too "
            "soon for a person")
  {
    const auto told = [](OverrideAnswer answer, std::chrono::milliseconds after) {
      return refused_reply_outcome(OverrideReply{answer, ""}, after);
    };
    CHECK(told(OverrideAnswer::decline, 5s)
          == "fsguard asked the user through the client whether to allow this write; the client "
             "answered decline: the user refused it.");
    CHECK(told(OverrideAnswer::cancel, 5s).find("answered cancel: the question was dismissed "
                                                "without a choice")
          != std::string::npos);
    CHECK(told(OverrideAnswer::not_confirmed, 5s).find("answered accept without the "
                                                       "confirmation")
          != std::string::npos);
    for (const auto answer : {OverrideAnswer::cancel, OverrideAnswer::decline,
                              OverrideAnswer::allow}) {
      const std::string text = told(answer, 3ms);
      CAPTURE(text);
      CHECK(text.find("after 3 ms") != std::string::npos);
      CHECK(text.find("the client answered without asking a person") != std::string::npos);
      CHECK(text.find("user refused") == std::string::npos);
      CHECK(text.find("declined") == std::string::npos);
    }
    CHECK(told(OverrideAnswer::cancel, 3ms).find("answered cancel after") != std::string::npos);
    CHECK(refused_reply_outcome(OverrideReply{OverrideAnswer::error, "no UI\nhere"}, 5s)
          == "fsguard asked the client to ask the user whether to allow this write; the client "
             "answered with an error (\"no UI\\nhere\"), so fsguard did not write it.");
    CHECK(told(OverrideAnswer::unreadable, 5s).find("none of accept, decline or cancel")
          != std::string::npos);
  }

  TEST_CASE("only a person's accept with the confirmation lets the write go ahead")
  {
    CHECK(person_allowed(OverrideReply{OverrideAnswer::allow, ""}, k_person_answer_time));
    CHECK_FALSE(
      person_allowed(OverrideReply{OverrideAnswer::allow, ""}, k_person_answer_time - 1ms));
    CHECK_FALSE(person_allowed(OverrideReply{OverrideAnswer::not_confirmed, ""}, 5s));
  }
}
