// The per-change proof that the file fsguard checks is the file the server
// writes (proxy/guard/guard_identity.cpp), in every setup: path_map, an
// upstream that runs elsewhere, identity_check "every_change".
#include <doctest/doctest.h>

#include "guard_session.hpp"

namespace {

// The only line the last step sent upstream, if it is fsguard's
// get_file_info of the server's `path`.
bool asked_about(const Session& s, const std::string& path)
{
  if (s.out.to_upstream.size() != 1) {
    return false;
  }
  const auto asked = nlohmann::json::parse(s.out.to_upstream.front().text());
  return asked["params"]["name"] == "get_file_info" && asked["params"]["arguments"]["path"] == path;
}

GuardSettings mapped()
{
  GuardSettings settings;
  settings.path_map = PathMap({PathMapping{"/projects/app", "/ws"}});
  return settings;
}

// A session under path_map where the agent read /projects/app/a.txt
// ("one\n", as /snapshot/a.txt keeps it for the server's view when asked)
// and sent write 2 of it.
void read_then_write(Session& s)
{
  s.disk.make_directory("/snapshot");
  s.disk.write("/ws/a.txt", "one\n");
  s.disk.write("/snapshot/a.txt", "one\n");
  s.call(1, "read_text_file", {{"path", "/projects/app/a.txt"}});
  REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{1});
  s.answer_text(1, "one\n");
  s.call(2, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "mine\n"}});
}

} // namespace

TEST_SUITE("guard: the file fsguard checks is the server's")
{
  TEST_CASE("with identity_check every_change and no map, a mount inside the directory on the "
            "server's side only is caught before the write")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    Session s(settings);
    // fsguard sees an empty mount point; the server's container has notes there.
    s.disk.make_directory("/ws/notes");
    s.disk.make_directory("/mounted");
    s.disk.write("/mounted/n.txt", "the person's notes\n");
    s.call(1, "write_file", {{"path", "/ws/notes/n.txt"}, {"content", "blind\n"}});
    REQUIRE(asked_about(s, "/ws/notes/n.txt"));
    s.answer_file_info("/mounted/n.txt");
    REQUIRE(s.answered(1) == "not_visible");
    CHECK(s.client_text(1).find("the server has a file of 19 bytes") != std::string::npos);
    // The same file on both sides goes ahead, as it would unchecked.
    s.disk.write("/ws/a.txt", "one\n");
    s.read_content(2, "/ws/a.txt");
    s.call(3, "write_file", {{"path", "/ws/a.txt"}, {"content", "two\n"}});
    REQUIRE(asked_about(s, "/ws/a.txt"));
    s.answer_file_info("/ws/a.txt");
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("an upstream that runs elsewhere is asked about each file with identity_check auto; "
            "one that runs in fsguard's view is not")
  {
    Session here;
    here.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "x\n"}});
    CHECK(here.forwarded_ids() == std::vector<nlohmann::json>{1}); // no question

    Session elsewhere;
    elsewhere.guard.set_server_elsewhere("the upstream command runs docker, a container runtime");
    elsewhere.disk.make_directory("/ws/notes");
    elsewhere.disk.make_directory("/mounted");
    elsewhere.disk.write("/mounted/n.txt", "the person's notes\n");
    elsewhere.call(1, "write_file", {{"path", "/ws/notes/n.txt"}, {"content", "blind\n"}});
    REQUIRE(asked_about(elsewhere, "/ws/notes/n.txt"));
    elsewhere.answer_file_info("/mounted/n.txt");
    CHECK(elsewhere.answered(1) == "not_visible");
  }

  TEST_CASE("a report asked for a call since cancelled does not decide a later call")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    s.call(1, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "x\n"}});
    REQUIRE(asked_about(s, "/projects/app/new.txt"));
    auto question = std::move(s.out);
    s.notify({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
              {"params", {{"requestId", 1}}}});
    s.out = std::move(question);
    s.answer_file_info("/ws/new.txt"); // missing on both sides, then
    CHECK(s.forwarded_ids().empty());
    // Later the server's side holds a file there that fsguard does not see.
    s.disk.make_directory("/mounted");
    s.disk.write("/mounted/new.txt", "the server's\n");
    s.call(2, "write_file", {{"path", "/projects/app/new.txt"}, {"content", "y\n"}});
    REQUIRE(asked_about(s, "/projects/app/new.txt")); // asked again, not the old report
    s.answer_file_info("/mounted/new.txt");
    CHECK(s.answered(2) == "not_visible");
  }

  TEST_CASE("a file that changes on fsguard's side while the server is asked is asked about "
            "again, and the change is then decided as a change, not as another file")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    read_then_write(s);
    REQUIRE(asked_about(s, "/projects/app/a.txt"));
    s.disk.advance(2'000'000'000LL);
    s.disk.write("/ws/a.txt", "a person's save\n"); // lands between the answer and the stat
    s.answer_file_info("/snapshot/a.txt");
    REQUIRE(asked_about(s, "/projects/app/a.txt")); // asked again
    CHECK(s.out.to_client.empty());
    s.answer_file_info("/ws/a.txt");
    CHECK(s.answered(2) == "changed");
  }

  TEST_CASE("a file that keeps changing while fsguard compares it is refused after three "
            "questions, saying why")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    read_then_write(s);
    for (int round = 0; round < IdentityChecks::k_most_asks; ++round) {
      REQUIRE(asked_about(s, "/projects/app/a.txt"));
      s.disk.advance(2'000'000'000LL);
      s.disk.write("/ws/a.txt", "a log line, and another " + std::to_string(round) + "\n");
      s.answer_file_info("/snapshot/a.txt");
    }
    REQUIRE(s.answered(2) == "cannot_inspect");
    CHECK(s.client_text(2).find("changed each of the 3 times") != std::string::npos);
    CHECK(s.client_text(2).find("Wait until it holds still") != std::string::npos);
    CHECK(s.client_text(2).find("Make the file readable") == std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a server with no get_file_info fsguard reads cannot prove its files: a change is "
            "refused, naming the remedy")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    ToolMap tools = server_filesystem_tools();
    tools.erase("get_file_info");
    settings.tools = tools;
    Session s(settings);
    s.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "x\n"}});
    REQUIRE(s.answered(1) == "cannot_inspect");
    const std::string text = s.client_text(1);
    CHECK(text.find("no get_file_info") != std::string::npos);
    CHECK(text.find("\"verify\": \"upstream\" in fsguard's config (without path_map)")
          != std::string::npos);
    // The directory is visible: the text does not say otherwise.
    CHECK(text.find("is not visible") == std::string::npos);
    CHECK(text.find("Make the file readable") == std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a move of a file onto itself is proven and decided, not read past its report")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    Session s(settings);
    s.disk.write("/ws/a.txt", "one\n");
    s.read_content(1, "/ws/a.txt");
    s.call(2, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/./a.txt"}});
    // Each of the server's paths is asked about: they name one file here,
    // which the server's side might not.
    REQUIRE(s.out.to_upstream.size() == 2);
    auto questions = std::move(s.out);
    for (auto& question : questions.to_upstream) {
      s.out = Outbox{};
      s.out.to_upstream.push_back(std::move(question));
      s.answer_file_info("/ws/a.txt");
    }
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{2});
  }

  TEST_CASE("two server paths that name one file on fsguard's side are each asked about: a "
            "symlink that points elsewhere on the server's side is caught")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    s.disk.write("/ws/a.txt", "one\n");
    s.disk.symlink("/ws/link.txt", "/ws/a.txt"); // on the server's side: another file
    s.disk.make_directory("/other");
    s.disk.write("/other/x.txt", "the other mount's file\n");
    s.call(1, "read_text_file", {{"path", "/projects/app/a.txt"}});
    s.answer_text(1, "one\n");
    s.call(2, "move_file", {{"source", "/projects/app/a.txt"},
                            {"destination", "/projects/app/link.txt"}});
    REQUIRE(s.out.to_upstream.size() == 2);
    auto questions = std::move(s.out);
    for (auto& question : questions.to_upstream) {
      const auto asked = nlohmann::json::parse(question.text());
      const bool link = asked["params"]["arguments"]["path"] == "/projects/app/link.txt";
      s.out = Outbox{};
      s.out.to_upstream.push_back(std::move(question));
      s.answer_file_info(link ? "/other/x.txt" : "/ws/a.txt");
    }
    CHECK(s.answered(2) == "not_visible");
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a move whose source changes while fsguard asks is asked about again alone: the "
            "destination's report is kept until the move is decided")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    read_then_write(s); // write 2 is asked about; let it be decided first
    s.answer_file_info("/ws/a.txt");
    REQUIRE(s.forwarded_ids() == std::vector<nlohmann::json>{2});
    s.answer_text(2, "Successfully wrote to /projects/app/a.txt");
    s.disk.write("/ws/a.txt", "mine\n");
    s.disk.write("/snapshot/a.txt", "mine\n");
    s.call(3, "move_file", {{"source", "/projects/app/a.txt"}, {"destination", "/projects/app/b.txt"}});
    REQUIRE(s.out.to_upstream.size() == 2); // both asked about together
    auto questions = std::move(s.out);
    s.disk.advance(2'000'000'000LL);
    s.disk.write("/ws/a.txt", "a person's save\n"); // lands while fsguard asks
    // The destination's answer first, then the source's (the snapshot).
    s.out.to_upstream.push_back(std::move(questions.to_upstream[1]));
    s.answer_file_info("/ws/b.txt");
    CHECK(s.out.to_upstream.empty()); // waits for the source
    s.out = Outbox{};
    s.out.to_upstream.push_back(std::move(questions.to_upstream[0]));
    s.answer_file_info("/snapshot/a.txt");
    REQUIRE(asked_about(s, "/projects/app/a.txt")); // the source alone, asked again
    s.answer_file_info("/ws/a.txt");
    // Proven: the move goes (a move keeps the source's content, whoever changed it).
    CHECK(s.forwarded_ids() == std::vector<nlohmann::json>{3});
  }

  TEST_CASE("a move whose source the server answers about slowly and whose destination it never "
            "answers about is decided, not asked about forever")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    Session s(settings);
    s.disk.write("/ws/a.txt", "one\n");
    s.read_content(1, "/ws/a.txt");
    s.call(2, "move_file", {{"source", "/ws/a.txt"}, {"destination", "/ws/b.txt"}});
    REQUIRE(s.out.to_upstream.size() == 2);
    const auto question_of = [&](const std::string& path) {
      for (const auto& line : s.out.to_upstream) {
        const auto asked = nlohmann::json::parse(line.text());
        if (asked["params"]["arguments"]["path"] == path) {
          return asked["id"];
        }
      }
      return nlohmann::json();
    };
    const auto tick = [&](std::chrono::milliseconds by) {
      s.now += by;
      s.out = Outbox{};
      s.guard.tick(s.now, s.out);
      s.out.own_lines();
    };
    const auto decided_now = [&] {
      const auto forwarded = s.forwarded_ids();
      return !s.answered(2).empty()
             || std::find(forwarded.begin(), forwarded.end(), nlohmann::json(2)) != forwarded.end();
    };
    // Only the source's question is ever answered, a tick after it was
    // asked; the destination's never.
    const auto answer_source = [&](const nlohmann::json& id) {
      std::vector<OutgoingLine> kept;
      kept.push_back(OutgoingLine(nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                                                        {"params", {{"name", "get_file_info"},
                                                                    {"arguments", {{"path", "/ws/a.txt"}}}}}}.dump() + "\n"));
      s.out.to_upstream = std::move(kept);
      s.answer_file_info("/ws/a.txt");
    };
    nlohmann::json source = question_of("/ws/a.txt");
    REQUIRE(source.is_string());
    bool decided = false;
    for (int round = 0; round < 5 && !decided; ++round) {
      tick(std::chrono::seconds(1));
      decided = decided_now();
      if (decided) {
        break;
      }
      answer_source(source);
      decided = decided_now();
      if (decided) {
        break;
      }
      tick(std::chrono::seconds(60));
      decided = decided_now();
      source = question_of("/ws/a.txt");
      if (!source.is_string()) {
        break;
      }
    }
    CHECK(decided);
  }
  TEST_CASE("a server that never answers fsguard's get_file_info has the change refused as cannot_inspect "
            "after call_timeout, saying it did not answer, not that the file is another")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    Session s(settings);
    s.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "x\n"}});
    REQUIRE(asked_about(s, "/ws/new.txt"));
    s.now += std::chrono::seconds(61);
    s.out = Outbox{};
    s.guard.tick(s.now, s.out);
    s.out.own_lines();
    REQUIRE(s.answered(1) == "cannot_inspect");
    CHECK(s.client_text(1).find("did not answer fsguard's get_file_info") != std::string::npos);
    CHECK(s.client_text(1).find("setup problem") == std::string::npos);
    CHECK(s.client_text(1).find("Retry in a moment") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a get_file_info the server answers with an error refuses the change as "
            "cannot_inspect, with the server's words")
  {
    GuardSettings settings;
    settings.identity_check = IdentityCheck::every_change;
    Session s(settings);
    s.call(1, "write_file", {{"path", "/ws/new.txt"}, {"content", "x\n"}});
    REQUIRE(asked_about(s, "/ws/new.txt"));
    const auto asked = nlohmann::json::parse(s.out.to_upstream.front().text());
    s.upstream_line(nlohmann::json{{"jsonrpc", "2.0"}, {"id", asked["id"]},
                                   {"error", {{"code", -32603}, {"message", "EMFILE: too many open files"}}}}
                      .dump());
    REQUIRE(s.answered(1) == "cannot_inspect");
    CHECK(s.client_text(1).find("EMFILE: too many open files") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }

  TEST_CASE("a file fsguard cannot stat is refused as cannot_inspect, not as another file")
  {
    Session s(mapped(), "test-client", "0.2.0", {"/projects/app"});
    s.disk.write("/ws/a.txt", "one\n");
    s.disk.fail_stat("/ws/a.txt", EACCES);
    s.call(1, "write_file", {{"path", "/projects/app/a.txt"}, {"content", "x\n"}});
    REQUIRE(asked_about(s, "/projects/app/a.txt"));
    const auto asked = nlohmann::json::parse(s.out.to_upstream.front().text());
    s.answer_text(asked["id"], "size: 4\nmodified: Mon Nov 23 2026 10:00:00 GMT+0000 "
                               "(Coordinated Universal Time)\nisDirectory: false");
    REQUIRE(s.answered(1) == "cannot_inspect");
    CHECK(s.client_text(1).find("fsguard cannot stat it") != std::string::npos);
    CHECK(s.forwarded_ids().empty());
  }
}
