#include <doctest/doctest.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "tracker/profiles.hpp"
#include "tracker/tool_map.hpp"

using namespace fsguard;
using nlohmann::json;

TEST_SUITE("tool_map")
{
  TEST_CASE("server-filesystem's reads, writes, edits and moves are guarded; other file tools are only confined")
  {
    const ToolMap tools = server_filesystem_tools();
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}})->role == ToolRole::read);
    CHECK(describe_call(tools, "read_file", json{{"path", "/a"}})->role == ToolRole::read);
    CHECK(describe_call(tools, "read_media_file", json{{"path", "/a"}})->role == ToolRole::read);
    CHECK(describe_call(tools, "write_file", json{{"path", "/a"}, {"content", ""}})->role == ToolRole::write);
    CHECK(describe_call(tools, "edit_file", json{{"path", "/a"}, {"edits", json::array()}})->role == ToolRole::edit);
    CHECK(describe_call(tools, "move_file", json{{"source", "/a"}, {"destination", "/b"}})->role == ToolRole::move);
    for (const char* other : {"list_directory", "list_directory_with_sizes", "directory_tree",
                              "search_files", "get_file_info", "create_directory"}) {
      CAPTURE(other);
      CHECK(describe_call(tools, other, json{{"path", "/a"}})->role == ToolRole::other);
      CHECK(only_confined(tools, other));
    }
    CHECK_FALSE(describe_call(tools, "list_allowed_directories", json::object()));
    CHECK_FALSE(describe_call(tools, "unknown", json{{"path", "/a"}}));
    for (const char* not_only : {"read_text_file", "write_file", "edit_file", "move_file",
                                 "list_allowed_directories", "unknown"}) {
      CAPTURE(not_only);
      CHECK_FALSE(only_confined(tools, not_only)); // guarded, or not in the map at all
    }
  }

  TEST_CASE("a tool whose role an argument selects is never only confined")
  {
    ToolSpec spec;
    spec.role = ToolRole::other;
    spec.path_argument = "path";
    spec.role_argument = "mode";
    spec.role_by_value = {{"overwrite", ToolRole::write}};
    const ToolMap tools{{"touch", spec}};
    CHECK(describe_call(tools, "touch", json{{"path", "/a"}, {"mode", "overwrite"}})->role == ToolRole::write);
    CHECK_FALSE(only_confined(tools, "touch"));
  }

  TEST_CASE("head or tail make a read partial, unless the server would ignore them")
  {
    const ToolMap tools = server_filesystem_tools();
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}, {"head", 2}})->extent == ReadExtent::partial);
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}, {"tail", 1}})->extent == ReadExtent::partial);
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}, {"head", 0}})->extent == ReadExtent::whole);
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}, {"head", nullptr}})->extent == ReadExtent::whole);
    CHECK(describe_call(tools, "read_text_file", json{{"path", "/a"}, {"head", "2"}})->extent == ReadExtent::partial);
  }

  TEST_CASE("only a literal dryRun true makes an edit unguarded (but still confined)")
  {
    const ToolMap tools = server_filesystem_tools();
    CHECK(describe_call(tools, "edit_file", json{{"path", "/a"}, {"dryRun", true}})->role == ToolRole::other);
    CHECK(describe_call(tools, "edit_file", json{{"path", "/a"}, {"dryRun", false}})->role == ToolRole::edit);
    CHECK(describe_call(tools, "edit_file", json{{"path", "/a"}, {"dryRun", "true"}})->role == ToolRole::edit);
    CHECK(describe_call(tools, "edit_file", json{{"path", "/a"}, {"dryRun", 1}})->role == ToolRole::edit);
  }

  TEST_CASE("path arguments that are missing or not strings are kept as unknown")
  {
    const ToolMap tools = server_filesystem_tools();
    const auto call = describe_call(tools, "write_file", json{{"path", 5}});
    REQUIRE(call);
    REQUIRE(call->paths.size() == 1);
    CHECK_FALSE(call->paths[0].raw);
    CHECK_FALSE(describe_call(tools, "write_file", json::array())->paths[0].raw);
    const auto many = describe_call(tools, "read_multiple_files", json{{"paths", {"/a", 3, "/b"}}});
    REQUIRE(many->paths.size() == 3);
    CHECK(many->path_list);
    CHECK(*many->paths[0].raw == "/a");
    CHECK_FALSE(many->paths[1].raw);
    const auto move = describe_call(tools, "move_file", json{{"source", "/a"}, {"destination", "/b"}});
    REQUIRE(move->paths.size() == 2);
    CHECK(*move->paths[1].raw == "/b");
  }

  TEST_CASE("a tool map from the config replaces the built-in one, and typos are errors")
  {
    const auto parsed = parse_tool_map(json::parse(R"({
      "fetch": {"role": "read", "path": "file"},
      "save":  {"role": "write", "path": "file"},
      "patch": {"role": "edit", "path": "target", "dry_run": "preview"},
      "mv":    {"role": "move", "source": "from", "destination": "to"}
    })"));
    REQUIRE(parsed.ok());
    CHECK(*describe_call(*parsed, "save", json{{"file", "/x"}})->paths[0].raw == "/x");
    CHECK(describe_call(*parsed, "patch", json{{"target", "/x"}, {"preview", true}})->role == ToolRole::other);
    CHECK_FALSE(describe_call(*parsed, "write_file", json{{"path", "/x"}}));
    CHECK_FALSE(parse_tool_map(json::parse(R"({"x": {"role": "delete"}})")).ok());
    CHECK_FALSE(parse_tool_map(json::parse(R"({"x": {"role": "read", "pth": "p"}})")).ok());
    CHECK_FALSE(parse_tool_map(json::parse(R"({"x": {"role": "move", "source": "s"}})")).ok());
    CHECK_FALSE(parse_tool_map(json::parse(R"([])")).ok());
  }
}

TEST_SUITE("profiles")
{
  TEST_CASE("profiles are chosen from the server's name and version")
  {
    CHECK(profile_for_server("secure-filesystem-server", "0.2.0")->name == "server-filesystem");
    CHECK(profile_for_server("secure-filesystem-server", "1.2.29")->name == "agent-infra-filesystem");
    CHECK(profile_for_server("desktop-commander", "0.2.52")->name == "desktop-commander");
    CHECK_FALSE(profile_for_server("example-servers/everything", "1.0.0"));
    CHECK(profile_named("server-filesystem")->rules == PathRules::server_filesystem);
    CHECK(profile_named("agent-infra-filesystem")->rules == PathRules::working_directory);
    CHECK_FALSE(profile_named("auto"));
  }

  TEST_CASE("desktop-commander: append is an edit, edit_block names its file in file_path")
  {
    const ToolMap tools = profile_named("desktop-commander")->tools;
    CHECK(describe_call(tools, "write_file", json{{"path", "/a"}})->role == ToolRole::write);
    CHECK(describe_call(tools, "write_file", json{{"path", "/a"}, {"mode", "rewrite"}})->role == ToolRole::write);
    CHECK(describe_call(tools, "write_file", json{{"path", "/a"}, {"mode", "append"}})->role == ToolRole::edit);
    const auto edit = describe_call(tools, "edit_block", json{{"file_path", "/f"}, {"old_string", "x"}});
    CHECK(edit->role == ToolRole::edit);
    CHECK(*edit->paths[0].raw == "/f");
    CHECK_FALSE(describe_call(tools, "read_multiple_files", json{{"paths", {"/a"}}}));
    CHECK_FALSE(describe_call(tools, "read_file", json{{"path", "/a"}})->whole_if_status.empty());
  }

  TEST_CASE("desktop-commander: a write to a converted format is known by its extension, in any case")
  {
    const ToolMap tools = profile_named("desktop-commander")->tools;
    CHECK(describe_call(tools, "write_file", json{{"path", "/a/report.docx"}})->content_converted);
    CHECK(describe_call(tools, "write_file", json{{"path", "/a/REPORT.DocX"}})->content_converted);
    CHECK(describe_call(tools, "write_file", json{{"path", "/a/Photo.JPG"}})->content_converted);
    CHECK_FALSE(describe_call(tools, "write_file", json{{"path", "/a/report.docx.txt"}})->content_converted);
    CHECK_FALSE(describe_call(tools, "write_file", json{{"path", "docx"}})->content_converted);
  }

  TEST_CASE("desktop-commander: write_pdf writes to outputPath, or over path when outputPath is unset")
  {
    const ToolMap tools = profile_named("desktop-commander")->tools;
    const auto to_output = describe_call(tools, "write_pdf",
                                         json{{"path", "/in.pdf"}, {"outputPath", "/out.pdf"}, {"content", "# x"}});
    CHECK(to_output->role == ToolRole::write);
    CHECK(*to_output->paths.at(0).raw == "/out.pdf");
    CHECK_FALSE(to_output->content_is_file); // Markdown, not the PDF's bytes
    for (const json& unset : {json(""), json(nullptr)}) {
      const json arguments = {{"path", "/in.pdf"}, {"content", json::array()}, {"outputPath", unset}};
      CAPTURE(arguments.dump());
      CHECK(*describe_call(tools, "write_pdf", arguments)->paths.at(0).raw == "/in.pdf");
    }
    CHECK(*describe_call(tools, "write_pdf", json{{"path", "/in.pdf"}})->paths.at(0).raw == "/in.pdf");
    // Any other outputPath names no file fsguard can check: refused as unresolved.
    CHECK_FALSE(describe_call(tools, "write_pdf", json{{"path", "/in.pdf"}, {"outputPath", 7}})->paths.at(0).raw);
    CHECK(describe_call(server_filesystem_tools(), "write_file", json{{"path", "/a"}})->content_is_file);
  }

  TEST_CASE("each built-in profile names its unguarded tools, none of them also guarded")
  {
    for (const char* name : {"server-filesystem", "agent-infra-filesystem", "desktop-commander"}) {
      CAPTURE(name);
      const Profile profile = *profile_named(name);
      CHECK_FALSE(profile.unguarded.empty());
      for (const auto& [tool, reason] : profile.unguarded) {
        CAPTURE(tool);
        CHECK_FALSE(profile.tools.contains(tool));
        CHECK_FALSE(reason.empty());
      }
    }
    CHECK(profile_named("desktop-commander")->unguarded.contains("start_process"));
  }

  TEST_CASE("desktop-commander's status makes a read whole only when the lines read equal the total and none remain")
  {
    const std::regex whole(profile_named("desktop-commander")->tools.at("read_file").whole_if_status);
    CHECK(std::regex_match("[Reading 600 lines from start (total: 600 lines, 0 remaining)]", whole));
    CHECK(std::regex_match("[Reading 0 lines from start (total: 0 lines, 0 remaining)]", whole));
    // readline ended lines at bare carriage returns too: the numbers disagree.
    CHECK_FALSE(std::regex_match("[Reading 1000 lines from start (total: 600 lines, 0 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 60 lines from start (total: 600 lines, 0 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 600 lines from start (total: 60 lines, 0 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 1000 lines from start (total: 1500 lines, 500 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 10 lines from line 5 (total: 10 lines, 0 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 010 lines from start (total: 10 lines, 0 remaining)]", whole));
    CHECK_FALSE(std::regex_match("[Reading 10 lines from start]", whole));
  }

  TEST_CASE("each profile's texts name its own tools")
  {
    const ToolNames reference = tool_names(profile_named("server-filesystem")->tools);
    CHECK(reference.read == "read_text_file");
    CHECK(reference.read_whole == "without head or tail");
    CHECK(reference.read_bytes == "read_media_file");
    CHECK(reference.write == "write_file");
    CHECK(reference.edit == "edit_file");
    const ToolNames fork = tool_names(profile_named("agent-infra-filesystem")->tools);
    CHECK(fork.read == "read_file");
    CHECK(fork.read_whole.empty());
    CHECK(fork.read_bytes.empty());
    const ToolNames commander = tool_names(profile_named("desktop-commander")->tools);
    CHECK(commander.read == "read_file");
    CHECK(commander.read_whole.find("line count") != std::string::npos);
    CHECK(commander.edit == "edit_block");
    CHECK(commander.write == "write_file");
    const auto custom = parse_tool_map(nlohmann::json::parse(
      R"({"view": {"role": "read", "path": "file", "partial_if_set": ["start", "end"]},
          "str_replace": {"role": "edit", "path": "file"}})"));
    REQUIRE(custom.ok());
    const ToolNames names = tool_names(*custom);
    CHECK(names.read == "view");
    CHECK(names.read_whole == "without start or end");
    CHECK(names.edit == "str_replace");
    CHECK(names.write == "write_file"); // none in the map: the default stands in
  }

  TEST_CASE("only the edit tools fsguard can reproduce are rebased")
  {
    CHECK(profile_named("server-filesystem")->tools.at("edit_file").edit_semantics
          == EditSemantics::first_exact_match);
    CHECK(profile_named("agent-infra-filesystem")->tools.at("edit_file").edit_semantics
          == EditSemantics::first_exact_match_dollar_patterns);
    CHECK(profile_named("desktop-commander")->tools.at("edit_block").edit_semantics
          == EditSemantics::unknown);
    const auto custom = parse_tool_map(nlohmann::json::parse(R"({"e": {"role": "edit"}})"));
    CHECK(custom->at("e").edit_semantics == EditSemantics::unknown);
  }
}
