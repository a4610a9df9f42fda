#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "proxy/app/adopt_entries.hpp"
#include "proxy/app/adopt_json_spans.hpp"
#include "proxy/app/adopt_places.hpp"

using namespace fsguard;

namespace {

const std::string k_fsguard = "/opt/fsguard/bin/fsguard";

// What `claude mcp add --scope project fs -- npx -y ...server-filesystem DIR`
// writes: JSON.stringify(..., null, 2), no newline at the end.
const std::string k_claude_project = R"({
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem@2026.8.31",
        "/home/me/project"
      ],
      "env": {}
    }
  }
})";

} // namespace

TEST_SUITE("adopt_entries")
{
  TEST_CASE("the filesystem servers of the built-in profiles are told from fsguard and others")
  {
    auto kind = [](std::string command, std::vector<std::string> args) {
      return classify_launch({std::move(command), std::move(args)}, k_fsguard);
    };
    CHECK(kind("npx", {"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/p"})
          == LaunchKind::filesystem_server);
    CHECK(kind("npx", {"-y", "@agent-infra/mcp-server-filesystem", "--allowed-directories", "/p"})
          == LaunchKind::filesystem_server);
    CHECK(kind("npx", {"-y", "@wonderwhy-er/desktop-commander"}) == LaunchKind::filesystem_server);
    CHECK(kind("mcp-server-filesystem", {"/p"}) == LaunchKind::filesystem_server);
    CHECK(kind("node", {"/x/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/p"})
          == LaunchKind::filesystem_server);
    CHECK(kind("docker", {"run", "-i", "--rm", "mcp/filesystem", "/projects"})
          == LaunchKind::filesystem_server);
    CHECK(kind("docker", {"run", "-i", "docker.io/mcp/filesystem:latest", "/projects"})
          == LaunchKind::filesystem_server);
    CHECK(kind("fsguard", {"npx", "-y", "@modelcontextprotocol/server-filesystem", "/p"})
          == LaunchKind::fsguard);
    CHECK(kind(k_fsguard, {"--", "npx", "@modelcontextprotocol/server-filesystem"})
          == LaunchKind::fsguard);
    CHECK(kind("env", {"FSGUARD_MODE=warn", "/usr/bin/fsguard", "mcp-server-filesystem"})
          == LaunchKind::fsguard);
    CHECK(kind("npx", {"-y", "@modelcontextprotocol/server-github"}) == LaunchKind::other);
    CHECK(kind("docker", {"run", "-i", "mcp/filesystemish"}) == LaunchKind::other);
  }

  TEST_CASE("a guarded launch starts fsguard, then -- and the original command")
  {
    const ServerLaunch launch{"npx", {"-y", "@modelcontextprotocol/server-filesystem", "/p"}};
    CHECK(guarded_launch(launch, k_fsguard)
          == ServerLaunch{k_fsguard, {"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/p"}});
  }

  TEST_CASE("undoing a guarded launch gives back the launch it was made from, and only that")
  {
    const ServerLaunch launch{"npx", {"-y", "@modelcontextprotocol/server-filesystem", "/p"}};
    CHECK(unguarded_launch(guarded_launch(launch, k_fsguard), k_fsguard) == launch);
    CHECK_FALSE(unguarded_launch({"fsguard", {"--", "npx"}}, k_fsguard));
    CHECK_FALSE(unguarded_launch({k_fsguard, {"npx", "mcp-server-filesystem"}}, k_fsguard));
  }

  TEST_CASE("undo puts back each entry adopt rewrote in a config changed since")
  {
    const auto adopted = adopt_json_config(k_claude_project, k_fsguard);
    REQUIRE(adopted);
    std::string changed = adopted->text;
    changed.replace(changed.find("\"env\": {}"), 9, "\"env\": {\n        \"A\": \"1\"\n      }");
    std::string expected = k_claude_project;
    expected.replace(expected.find("\"env\": {}"), 9, "\"env\": {\n        \"A\": \"1\"\n      }");
    const auto undone = adopt_json_config(changed, k_fsguard, Rewrite::undo);
    REQUIRE(undone);
    CHECK(undone->adopted == std::vector<std::string>{"mcpServers.fs"});
    CHECK(undone->text == expected);
    // A config with nothing of adopt's is left as it is.
    const auto untouched = adopt_json_config(k_claude_project, k_fsguard, Rewrite::undo);
    REQUIRE(untouched);
    CHECK(untouched->adopted.empty());
    CHECK(untouched->text == k_claude_project);
  }

  TEST_CASE("a server in a container gets a note on path_map, others none")
  {
    const auto adopted = adopt_json_config(
      R"({"mcpServers": {"d": {"command": "docker", "args": ["run", "-i", "mcp/filesystem", "/p"]},
                         "n": {"command": "npx", "args": ["mcp-server-filesystem", "/p"]}}})",
      k_fsguard);
    REQUIRE(adopted);
    REQUIRE(adopted->notes.size() == 1);
    CHECK(adopted->notes[0].starts_with("mcpServers.d runs the server in a container"));
    CHECK(adopted->notes[0].find("path_map") != std::string::npos);
    CHECK(launch_note({"/usr/bin/podman", {"run", "mcp/filesystem"}}) != "");
    CHECK(launch_note({"npx", {"@wonderwhy-er/desktop-commander"}}) == "");
  }

  TEST_CASE("a whole command line in the command string cannot be guarded as it is")
  {
    CHECK(cannot_guard({"npx -y @modelcontextprotocol/server-filesystem /p", {}}).find("split it")
          != std::string::npos);
    CHECK(cannot_guard({"npx", {"-y", "@modelcontextprotocol/server-filesystem"}}).empty());
  }

  TEST_CASE("claude mcp add's .mcp.json is rewritten in its own layout, other keys kept")
  {
    const auto adopted = adopt_json_config(k_claude_project, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->adopted == std::vector<std::string>{"mcpServers.fs"});
    CHECK(adopted->text == R"({
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "/opt/fsguard/bin/fsguard",
      "args": [
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem@2026.8.31",
        "/home/me/project"
      ],
      "env": {}
    }
  }
})");
  }

  TEST_CASE("adopting an adopted config changes nothing")
  {
    const auto once = adopt_json_config(k_claude_project, k_fsguard);
    REQUIRE(once);
    const auto twice = adopt_json_config(once->text, k_fsguard);
    REQUIRE(twice);
    CHECK(twice->adopted.empty());
    CHECK(twice->guarded == std::vector<std::string>{"mcpServers.fs"});
    CHECK(twice->text == once->text);
  }

  TEST_CASE("every filesystem server of every list is adopted, every other byte left as it is")
  {
    const std::string text =
      "{\n\t\"numStartups\": 3, \"cost\": 1.0e-5,\n\t\"mcpServers\": {\n"
      "\t\t\"github\": {\"command\": \"npx\", \"args\": [\"@modelcontextprotocol/server-github\"]},\n"
      "\t\t\"dc\": {\"command\": \"npx\", \"args\": [\"@wonderwhy-er/desktop-commander\"]}\n\t},\n"
      "\t\"projects\": {\"/home/me/p\": {\"mcpServers\": {\"files\": {\n"
      "\t\t\"type\": \"stdio\",\n\t\t\"command\": \"mcp-server-filesystem\",\n"
      "\t\t\"env\": {\"A\": \"1\"}}}}}\n}\n";
    const auto adopted = adopt_json_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->adopted
          == std::vector<std::string>{"mcpServers.dc", "projects[\"/home/me/p\"].mcpServers.files"});
    CHECK(adopted->server_lists == 2);
    // A one-line array stays on one line; a missing args goes right after
    // command, on a line of its own as command is.
    CHECK(adopted->text
          == "{\n\t\"numStartups\": 3, \"cost\": 1.0e-5,\n\t\"mcpServers\": {\n"
             "\t\t\"github\": {\"command\": \"npx\", \"args\": [\"@modelcontextprotocol/server-github\"]},\n"
             "\t\t\"dc\": {\"command\": \"/opt/fsguard/bin/fsguard\", "
             "\"args\": [\"--\", \"npx\", \"@wonderwhy-er/desktop-commander\"]}\n\t},\n"
             "\t\"projects\": {\"/home/me/p\": {\"mcpServers\": {\"files\": {\n"
             "\t\t\"type\": \"stdio\",\n\t\t\"command\": \"/opt/fsguard/bin/fsguard\",\n"
             "\t\t\"args\": [\"--\", \"mcp-server-filesystem\"],\n"
             "\t\t\"env\": {\"A\": \"1\"}}}}}\n}\n");
  }

  TEST_CASE("comments, trailing commas and a compact layout are kept around the rewrite")
  {
    const std::string text = "// Cursor's servers\n{\"mcpServers\": {\"fs\": {\"command\": \"npx\","
                             " /* pinned */ \"args\":[\"mcp-server-filesystem\",\"/p\"],},},}\n";
    const auto adopted = adopt_json_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->text == "// Cursor's servers\n{\"mcpServers\": {\"fs\": {\"command\": "
                           "\"/opt/fsguard/bin/fsguard\", /* pinned */ "
                           "\"args\":[\"--\",\"npx\",\"mcp-server-filesystem\",\"/p\"],},},}\n");
  }

  TEST_CASE("VS Code's servers and mcp.servers are lists of servers too")
  {
    const auto workspace = adopt_json_config(
      R"({"servers": {"fs": {"type": "stdio", "command": "npx", "args": ["mcp-server-filesystem"]}}})",
      k_fsguard);
    REQUIRE(workspace);
    CHECK(workspace->adopted == std::vector<std::string>{"servers.fs"});
    // One line stays one line.
    CHECK(workspace->text.find('\n') == std::string::npos);
    const auto settings = adopt_json_config(
      R"({"editor.tabSize": 2, "mcp": {"servers": {"fs": {"command": "npx", "args": ["mcp-server-filesystem"]}}}})",
      k_fsguard);
    REQUIRE(settings);
    CHECK(settings->adopted == std::vector<std::string>{"mcp.servers.fs"});
  }

  TEST_CASE("a config that fsguard cannot rewrite whole is refused, saying why")
  {
    auto refusal = [](std::string_view text) {
      const auto adopted = adopt_json_config(text, k_fsguard);
      REQUIRE_FALSE(adopted);
      return adopted.error();
    };
    CHECK(refusal("{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\n"
                  "  // the server\n  \"mcp-server-filesystem\"\n]}}}")
            .find("mcpServers.a: its args hold comments") == 0);
    CHECK(refusal("{\"mcpServers\": ").find("not valid JSON") != std::string::npos);
    CHECK(refusal("[1]").find("not a JSON object") != std::string::npos);
    // A second filesystem server it cannot rewrite: nothing is rewritten.
    const std::string two = R"({"mcpServers": {
      "a": {"command": "npx", "args": ["@modelcontextprotocol/server-filesystem", "/p"]},
      "b": {"command": "npx -y @modelcontextprotocol/server-filesystem /q"}}})";
    CHECK(refusal(two).find("mcpServers.b starts a filesystem server, but its command") == 0);
    CHECK(refusal(R"({"mcpServers": {"a": {"command": "npx", "args": ["mcp-server-filesystem", 3]}}})")
            .find("not a string") != std::string::npos);
    CHECK(refusal(R"({"mcpServers": {"a": {"url": "http://h/desktop-commander"}}})")
            .find("mcpServers.a names a filesystem server") == 0);
    CHECK(refusal(R"({"mcpServers": ["mcp-server-filesystem"]})").find("not an object") != std::string::npos);
  }

  TEST_CASE("a config without a filesystem server is left byte for byte")
  {
    const std::string text = "{ \"mcpServers\" : { \"gh\": {\"command\": \"gh-mcp\"} } }\r\n";
    const auto adopted = adopt_json_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->adopted.empty());
    CHECK(adopted->text == text);
    const auto none = adopt_json_config("{\"theme\": \"dark\"}", k_fsguard);
    REQUIRE(none);
    CHECK(none->server_lists == 0);
  }

  TEST_CASE("CRLF line ends and a byte order mark are kept")
  {
    const std::string text = "\xEF\xBB\xBF{\r\n  \"mcpServers\": {\r\n    \"fs\": {\r\n      \"command\": "
                             "\"mcp-server-filesystem\"\r\n    }\r\n  }\r\n}\r\n";
    const auto adopted = adopt_json_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->text.starts_with("\xEF\xBB\xBF{\r\n  \"mcpServers\": {\r\n"));
    CHECK(adopted->text.ends_with("\r\n}\r\n"));
    CHECK(adopted->text.find("\n\n") == std::string::npos);
    CHECK(adopted->text.find("\r\r") == std::string::npos);
  }
}

TEST_SUITE("adopt_json_spans")
{
  TEST_CASE("each member outside arrays is found with its key path and value; comments are blanked")
  {
    const std::string text = "{\"a\": {\"b\": [ {\"c\": 1} ], /* x */ \"d\\u0021\": \"e\",},}";
    const auto spans = json_member_spans(text);
    REQUIRE(spans);
    REQUIRE(spans->members.size() == 3);
    auto value = [&](std::size_t i) {
      const auto& member = spans->members[i];
      return text.substr(member.value_begin, member.value_end - member.value_begin);
    };
    CHECK(spans->members[0].path == std::vector<std::string>{"a"});
    CHECK(spans->members[1].path == std::vector<std::string>{"a", "b"});
    CHECK(value(1) == "[ {\"c\": 1} ]");
    CHECK(spans->members[2].path == std::vector<std::string>{"a", "d!"});
    CHECK(value(2) == "\"e\"");
    CHECK(spans->plain == "{\"a\": {\"b\": [ {\"c\": 1} ],         \"d\\u0021\": \"e\" } }");
    CHECK_FALSE(json_member_spans("{\"a\": [1, 2}"));
    CHECK_FALSE(json_member_spans(std::string(600, '[') + std::string(600, ']')));
  }
}

TEST_SUITE("adopt_places")
{
  TEST_CASE("the project configs of each directory up to the root come first, then the user's")
  {
    const auto paths = client_config_paths({"/home/me", "/home/me/p", "/home/me/.config", "/home/me/.codex"});
    REQUIRE(paths.size() >= 8);
    CHECK(paths[0] == "/home/me/p/.mcp.json");
    CHECK(paths[5] == "/home/me/.mcp.json");
    auto has = [&](const std::string& path) {
      return std::count(paths.begin(), paths.end(), path);
    };
    CHECK(has("/.mcp.json") == 1);
    CHECK(has("/home/me/.gemini/settings.json") == 1); // a project's and the user's: once
    CHECK(has("/home/me/.claude.json") == 1);
    CHECK(has("/home/me/.config/Claude/claude_desktop_config.json") == 1);
    CHECK(has("/home/me/.config/Code/User/settings.json") == 1);
    CHECK(has("/home/me/.codex/config.toml") == 1);
    CHECK(has("/home/me/.cursor/mcp.json") == 1);
  }
}
