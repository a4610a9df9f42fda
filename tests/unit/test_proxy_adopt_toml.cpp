#include <doctest/doctest.h>

#include <string>

#include "proxy/app/adopt_toml.hpp"

using namespace fsguard;

namespace {

const std::string k_fsguard = "/opt/fsguard/bin/fsguard";

} // namespace

TEST_SUITE("adopt_toml")
{
  TEST_CASE("codex mcp add's table is rewritten on its command and args lines only")
  {
    // What `codex mcp add --env FSGUARD_MODE=enforce fs -- npx -y ... DIR` writes
    // (toml_edit), below settings of the user's own.
    const std::string text = "model = \"o4-mini\" # mine\n"
                             "\n"
                             "[mcp_servers.fs]\n"
                             "command = \"npx\"\n"
                             "args = [\"-y\", \"@modelcontextprotocol/server-filesystem@2026.8.31\", "
                             "\"/home/me/project\"]\n"
                             "\n"
                             "[mcp_servers.fs.env]\n"
                             "FSGUARD_MODE = \"enforce\"\n"
                             "\n"
                             "[projects.\"/home/me/project\"]\n"
                             "trust_level = \"trusted\"\n";
    const auto adopted = adopt_toml_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->adopted == std::vector<std::string>{"mcp_servers.fs"});
    std::string expected = text;
    expected.replace(expected.find("\"npx\""), 5, "\"/opt/fsguard/bin/fsguard\"");
    expected.replace(expected.find("[\"-y\""), 1, "[\"--\", \"npx\", ");
    CHECK(adopted->text == expected);
    const auto again = adopt_toml_config(adopted->text, k_fsguard);
    REQUIRE(again);
    CHECK(again->adopted.empty());
    CHECK(again->guarded == std::vector<std::string>{"mcp_servers.fs"});
    CHECK(again->text == adopted->text);
  }

  TEST_CASE("a multi-line args, literal strings, escapes and a missing args are rewritten")
  {
    const std::string text = "[mcp_servers.\"my files\"]\n"
                             "  command = 'mcp-server-filesystem'  # the program\n"
                             "  startup_timeout_sec = 60\n"
                             "[mcp_servers.dc]\r\n"
                             "command = \"npx\"\r\n"
                             "args = [\r\n"
                             "  \"@wonderwhy-er/desktop-commander\",\r\n"
                             "  \"C:\\\\dir \\\"q\\\" \\u00e9\",\r\n"
                             "]\r\n"
                             "cwd = \"/tmp\"\r\n";
    const auto adopted = adopt_toml_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->adopted == std::vector<std::string>{"mcp_servers.dc", "mcp_servers.my files"});
    CHECK(adopted->text
          == "[mcp_servers.\"my files\"]\n"
             "  command = \"/opt/fsguard/bin/fsguard\"  # the program\n"
             "  args = [\"--\", \"mcp-server-filesystem\"]\n"
             "  startup_timeout_sec = 60\n"
             "[mcp_servers.dc]\r\n"
             "command = \"/opt/fsguard/bin/fsguard\"\r\n"
             "args = [\"--\", \"npx\", \"@wonderwhy-er/desktop-commander\", \"C:\\\\dir \\\"q\\\" \xC3\xA9\"]\r\n"
             "cwd = \"/tmp\"\r\n");
  }

  TEST_CASE("a config without a filesystem server is left as it is, however it is written")
  {
    const std::string text = "[mcp_servers.gh]\ncommand = \"gh-mcp\"\nodd = {{\n";
    const auto adopted = adopt_toml_config(text, k_fsguard);
    REQUIRE(adopted);
    CHECK(adopted->text == text);
    CHECK(adopted->adopted.empty());
  }

  TEST_CASE("a filesystem server in a form the line editor does not rewrite is refused")
  {
    auto refusal = [](std::string_view text) {
      const auto adopted = adopt_toml_config(text, k_fsguard);
      REQUIRE_FALSE(adopted);
      return adopted.error();
    };
    // A server named elsewhere than in command and args, beside a table it
    // could rewrite: nothing is rewritten.
    CHECK(refusal("[mcp_servers.a]\ncommand = \"mcp-server-filesystem\"\n"
                  "[mcp_servers]\nb = { command = \"sh\", env = { P = \"mcp-server-filesystem\" } }\n")
            .find("line 4 (mcp_servers.b.env.P) names a filesystem server") == 0);
    CHECK(refusal("[mcp_servers.a]\ncommand = \"npx\"\nargs = [\n  # why\n  \"mcp-server-filesystem\",\n]\n")
            .find("without comments inside") != std::string::npos);
    CHECK(refusal("[mcp_servers.a]\ncommand = \"\"\"npx\"\"\"\nargs = [\"mcp-server-filesystem\"]\n")
            .find("names a filesystem server") != std::string::npos);
    CHECK(refusal("[mcp_servers.a]\ncommand = \"npx\"\nargs = [\"mcp-server-filesystem\"]\n"
                  "args = [\"x\"]\n")
            .find("a second time") != std::string::npos);
    CHECK(refusal("[mcp_servers.a]\ncommand = \"npx\nargs = [\"mcp-server-filesystem\"]\n")
            .find("line 2 is TOML fsguard cannot read") == 0);
    CHECK(refusal("[mcp_servers.a]\ncommand = \"npx -y @modelcontextprotocol/server-filesystem /p\"\n")
            .find("split it") != std::string::npos);
  }

  TEST_CASE("dotted keys and inline tables that give command and args are rewritten in place")
  {
    const auto dotted = adopt_toml_config(
      "mcp_servers.a.command = \"npx\"\nmcp_servers.a.args = [\"mcp-server-filesystem\"]\n", k_fsguard);
    REQUIRE(dotted);
    CHECK(dotted->text
          == "mcp_servers.a.command = \"/opt/fsguard/bin/fsguard\"\n"
             "mcp_servers.a.args = [\"--\", \"npx\", \"mcp-server-filesystem\"]\n");
    const auto inline_table = adopt_toml_config(
      "[mcp_servers]\nb = { command = \"npx\", args = [\"mcp-server-filesystem\"] }\n", k_fsguard);
    REQUIRE(inline_table);
    CHECK(inline_table->adopted == std::vector<std::string>{"mcp_servers.b"});
    const auto no_args = adopt_toml_config("[mcp_servers]\nb = { command = \"mcp-server-filesystem\" }\n",
                                           k_fsguard);
    REQUIRE_FALSE(no_args);
    CHECK(no_args.error().find("add args by hand") != std::string::npos);
  }

  TEST_CASE("undo gives each adopted table its command and args back")
  {
    const std::string text = "[mcp_servers.fs]\ncommand = 'npx' # ours\n"
                             "args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/p\"]\n"
                             "[mcp_servers.other]\ncommand = \"/opt/fsguard/bin/fsguard\"\n";
    const auto adopted = adopt_toml_config(text, k_fsguard);
    REQUIRE(adopted);
    const auto undone = adopt_toml_config(adopted->text, k_fsguard, Rewrite::undo);
    REQUIRE(undone);
    CHECK(undone->adopted == std::vector<std::string>{"mcp_servers.fs"});
    CHECK(undone->text
          == "[mcp_servers.fs]\ncommand = \"npx\" # ours\n"
             "args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/p\"]\n"
             "[mcp_servers.other]\ncommand = \"/opt/fsguard/bin/fsguard\"\n");
  }

  TEST_CASE("toml_string escapes what a basic string must")
  {
    CHECK(toml_string("a\"b\\c\td\x01") == "\"a\\\"b\\\\c\\td\\u0001\"");
  }
}
