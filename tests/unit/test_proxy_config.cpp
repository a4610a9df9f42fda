#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "proxy/app/config.hpp"
#include "proxy/app/options.hpp"
#include "tracker/profiles.hpp"

using namespace fsguard;

TEST_SUITE("config")
{
  TEST_CASE("an empty config gives the defaults")
  {
    const auto config = parse_config("{}", "test");
    REQUIRE(config.ok());
    CHECK(config->mode == Mode::enforce);
    CHECK(config->max_line_bytes == k_default_max_line_bytes);
    CHECK(config->profile == "auto");
    CHECK_FALSE(config->tools);
  }

  TEST_CASE("every key is read, and comments are allowed")
  {
    const auto config = parse_config(R"({
      // enforcement
      "mode": "warn", "log_level": "debug", "partial_read_allows_write": true,
      "max_line_bytes": 2048, "tools": {"save": {"role": "write", "path": "file"}},
      "audit_log": "/tmp/fsguard-audit.jsonl"
    })", "test");
    REQUIRE(config.ok());
    CHECK(config->mode == Mode::warn);
    CHECK(config->log_level == LogLevel::debug);
    CHECK(config->partial_read_allows_write == PartialReadAllowsOverwrite::yes);
    CHECK(config->max_line_bytes == 2048);
    CHECK(config->tools->contains("save"));
    CHECK_FALSE(config->tools->contains("write_file"));
    CHECK(config->audit_log == "/tmp/fsguard-audit.jsonl");
    CHECK(config->sources.at("mode").starts_with("file "));
  }

  TEST_CASE("bad values and unknown keys are errors that name the key")
  {
    CHECK(parse_config(R"({"mode":"strict"})", "f").error().find("mode") != std::string::npos);
    CHECK(parse_config(R"({"mdoe":"warn"})", "f").error().find("mdoe") != std::string::npos);
    CHECK(parse_config(R"({"max_line_bytes":-1})", "f").error().find("max_line_bytes") != std::string::npos);
    CHECK_FALSE(parse_config("[]", "f").ok());
    CHECK(parse_config(R"({"profile":"vim"})", "f").error().find("desktop-commander") != std::string::npos);
    CHECK(parse_config(R"({"profile":"desktop-commander"})", "f")->profile == "desktop-commander");
    CHECK_FALSE(parse_config("{", "f").ok());
  }

  TEST_CASE("verify: upstream takes confine_to as the server's directories, and refuses path_map")
  {
    const auto local = parse_config(R"({"confine_to": ["/no/such/dir"]})", "f");
    REQUIRE_FALSE(local);
    CHECK(local.error().find("does not exist") != std::string::npos);
    // Keys in either order: confine_to is checked once verify is known.
    const auto upstream =
      parse_config(R"({"confine_to": ["/projects/app/../app/"], "verify": "upstream"})", "f");
    REQUIRE(upstream);
    CHECK(upstream->verify == Verify::upstream);
    CHECK(upstream->confine_to == std::vector<std::string>{"/projects/app"});
    CHECK(guard_settings(*upstream).verify == Verify::upstream);
    const auto both =
      parse_config(R"({"verify": "upstream", "path_map": {"/projects/app": "/tmp"}})", "f");
    REQUIRE_FALSE(both);
    CHECK(both.error().find("exclude each other") != std::string::npos);
    CHECK_FALSE(parse_config(R"({"verify": "remote"})", "f"));
  }

  TEST_CASE("the stale-change keys are read into the guard's settings, and checked")
  {
    const auto config = parse_config(R"({
      "stale_edit": "veto", "stale_write": "merge",
      "kept_text_file_bytes": 4096, "kept_text_total_bytes": 0,
      "diff_max_lines": 40, "diff_max_bytes": 2000
    })", "test");
    REQUIRE(config.ok());
    const GuardSettings settings = guard_settings(*config);
    CHECK(settings.stale_edit == StaleEdit::veto);
    CHECK(settings.stale_write == StaleWrite::merge);
    CHECK(settings.kept_texts == KeptTextBudget{4096, 0});
    CHECK(settings.diff_bounds == DiffBounds{40, 2000});
    const auto defaults = guard_settings(*parse_config("{}", "test"));
    CHECK(defaults.stale_edit == StaleEdit::rebase);
    CHECK(defaults.stale_write == StaleWrite::veto);
    CHECK(parse_config(R"({"stale_edit":"merge"})", "f").error().find("stale_edit") != std::string::npos);
    CHECK(parse_config(R"({"stale_write":"rebase"})", "f").error().find("stale_write") != std::string::npos);
    CHECK_FALSE(parse_config(R"({"kept_text_total_bytes":-1})", "f").ok());
    CHECK_FALSE(parse_config(R"({"diff_max_bytes":100})", "f").ok());
    CHECK_FALSE(parse_config(R"({"diff_max_lines":"many"})", "f").ok());
  }

  TEST_CASE("state_file and shared_ledger are absolute paths: ~/ is $HOME, a relative path is from the working directory")
  {
    const char* home = std::getenv("HOME");
    const std::string saved_home = home != nullptr ? home : "";
    ::setenv("HOME", "/home/tester", 1);
    const auto config = parse_config(
      R"({"state_file": "~/.local/state/fsguard/state.json", "shared_ledger": "ledger.sqlite"})", "f");
    REQUIRE(config.ok());
    CHECK(config->state_file == "/home/tester/.local/state/fsguard/state.json");
    CHECK(config->shared_ledger
          == (std::filesystem::current_path() / "ledger.sqlite").lexically_normal().string());
    CHECK(config->sources.at("state_file").starts_with("file "));
    ::setenv("HOME", "relative", 1);
    CHECK(parse_config(R"({"state_file": "~/s.json"})", "f").error().find("$HOME") != std::string::npos);
    if (home != nullptr) {
      ::setenv("HOME", saved_home.c_str(), 1);
    } else {
      ::unsetenv("HOME");
    }
    CHECK(parse_config(R"({"state_file": ""})", "f").error().find("state_file") != std::string::npos);
    CHECK(parse_config(R"({"shared_ledger": 1})", "f").error().find("shared_ledger") != std::string::npos);
    CHECK(parse_config(R"({"state_file": "/tmp/"})", "f").error().find("state_file") != std::string::npos);
    const auto defaults = parse_config("{}", "f");
    CHECK(defaults->state_file.empty());
    CHECK(defaults->shared_ledger.empty());
  }

  TEST_CASE("a config that is not valid JSON names the line and column where it stops")
  {
    const auto missing_comma = parse_config("{\n  \"mode\": \"warn\"\n  \"log_level\": \"debug\"\n}", "f.json");
    REQUIRE_FALSE(missing_comma);
    // Where the parser stopped: the end of "log_level", the token it could not take.
    CHECK(missing_comma.error().starts_with("f.json: not valid JSON at line 3, column 13: "));
    CHECK(missing_comma.error().find("expected '}'") != std::string::npos);
    const auto cut_short = parse_config("{\"mode\": ", "f.json");
    REQUIRE_FALSE(cut_short);
    CHECK(cut_short.error().find("at line 1, column 10: ") != std::string::npos);
    const auto comment = parse_config("{}\n# fsguard\n", "f.json");
    CHECK(comment.error().starts_with("f.json: not valid JSON at line 2, column 1: "));
  }

  TEST_CASE("a config file that cannot be read says why, and which option or variable named it")
  {
    const auto missing = load_config_file("/nonexistent/fsguard.json", "$FSGUARD_CONFIG");
    REQUIRE_FALSE(missing);
    CHECK(missing.error() == "cannot read config file /nonexistent/fsguard.json (named by "
                             "$FSGUARD_CONFIG): No such file or directory");
    ConfigInputs inputs;
    inputs.file = "/nonexistent/fsguard.json";
    inputs.file_named_by = "--config";
    CHECK(load_effective_config(inputs).error().find("(named by --config): No such file")
          != std::string::npos);
    const auto directory = load_config_file(std::filesystem::temp_directory_path().string(), "--config");
    REQUIRE_FALSE(directory);
    CHECK(directory.error().find("it is a directory") != std::string::npos);
  }

  TEST_CASE("an unknown key names the known key it is most likely a typo of")
  {
    CHECK(parse_config(R"({"pathmap": {}})", "f").error()
          == R"(f: unknown key "pathmap" (did you mean "path_map"?))");
    CHECK(parse_config(R"({"mdoe": "warn"})", "f").error().ends_with(R"((did you mean "mode"?))"));
    CHECK(parse_config(R"({"Stale_Edit": "veto"})", "f").error().ends_with(R"("stale_edit"?))"));
    CHECK(parse_config(R"({"colour": 1})", "f").error() == R"(f: unknown key "colour")");
  }

  TEST_CASE("every key of the config schema is known to the typo hint")
  {
    std::ifstream schema_file(FSGUARD_SOURCE_DIR "/configs/fsguard.schema.json");
    const auto schema = nlohmann::json::parse(schema_file);
    REQUIRE(schema.at("properties").size() > 20);
    for (const auto& [key, value] : schema.at("properties").items()) {
      CAPTURE(key);
      CHECK(nearest_config_key(key) == key);
      // parse_config() takes it: a bad value is an error about the value, not the key.
      const auto parsed = parse_config(nlohmann::json{{key, nlohmann::json::array({nullptr})}}.dump(), "f");
      CHECK((parsed.ok() || parsed.error().find("unknown key") == std::string::npos));
    }
  }

  TEST_CASE("the flag beats the environment, which beats the file")
  {
    CHECK(load_effective_config({std::nullopt, "warn", std::nullopt, std::nullopt})->mode == Mode::warn);
    CHECK(load_effective_config({std::nullopt, "warn", Mode::off, std::nullopt})->mode == Mode::off);
    CHECK_FALSE(load_effective_config({std::nullopt, "loud", std::nullopt, std::nullopt}).ok());
    CHECK_FALSE(load_effective_config({"/nonexistent/fsguard.json", std::nullopt, std::nullopt, std::nullopt}).ok());
  }
}

TEST_SUITE("options")
{
  TEST_CASE("options before -- and the upstream command after it")
  {
    const auto options = parse_options({"--mode", "warn", "-c", "f.json", "--log-level=debug",
                                        "--", "node", "server.js", "--mode", "x"});
    REQUIRE(options.ok());
    CHECK(*options->mode == Mode::warn);
    CHECK(*options->config_path == "f.json");
    CHECK(*options->log_level == LogLevel::debug);
    CHECK(options->upstream == std::vector<std::string>{"node", "server.js", "--mode", "x"});
  }

  TEST_CASE("the first argument that is not an option starts the upstream command, without --")
  {
    const auto options = parse_options({"--mode", "warn", "npx", "-y", "server", "--mode", "x"});
    REQUIRE(options);
    CHECK(*options->mode == Mode::warn);
    CHECK(options->upstream == std::vector<std::string>{"npx", "-y", "server", "--mode", "x"});
    CHECK(parse_options({"node", "server.js"})->upstream
          == std::vector<std::string>{"node", "server.js"});
    CHECK(parse_options({"--", "--weird-program"})->upstream
          == std::vector<std::string>{"--weird-program"});
    const auto unknown = parse_options({"--frobnicate", "node"});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().find("--help") != std::string::npos);
  }

  TEST_CASE("unknown options and bad values are usage errors")
  {
    CHECK_FALSE(parse_options({"--frobnicate"}).ok());
    CHECK_FALSE(parse_options({"--mode", "loud"}).ok());
    CHECK_FALSE(parse_options({"--config"}).ok());
    CHECK_FALSE(parse_options({"--print-profile"}).ok());
  }

  TEST_CASE("adopt as the first argument is fsguard's own command, not an upstream")
  {
    const auto shown = parse_options({"adopt"});
    REQUIRE(shown);
    REQUIRE(shown->adopt);
    CHECK(shown->adopt->action == AdoptAction::show);
    CHECK(shown->upstream.empty());
    const auto applied = parse_options({"adopt", "a.json", "--apply", "--", "--odd.json"});
    REQUIRE(applied);
    CHECK(applied->adopt->action == AdoptAction::apply);
    CHECK(applied->adopt->files == std::vector<std::string>{"a.json", "--odd.json"});
    CHECK(parse_options({"adopt", "--undo"})->adopt->action == AdoptAction::undo);
    CHECK(parse_options({"adopt", "--help"})->help);
    CHECK_FALSE(parse_options({"adopt", "--apply", "--undo"}));
    CHECK_FALSE(parse_options({"adopt", "--mode", "warn"}));
    // Anywhere else it is the upstream's.
    CHECK(parse_options({"--", "adopt"})->upstream == std::vector<std::string>{"adopt"});
    CHECK_FALSE(parse_options({"--mode", "warn", "adopt"})->adopt);
  }

  TEST_CASE("--print-profile names a built-in profile, printed with its guarded and unguarded tools")
  {
    CHECK(*parse_options({"--print-profile", "desktop-commander"})->print_profile == "desktop-commander");
    CHECK(*parse_options({"--print-profile=server-filesystem"})->print_profile == "server-filesystem");
    const auto printed = nlohmann::json::parse(describe_profile(*profile_named("desktop-commander")));
    CHECK(printed["profile"] == "desktop-commander");
    CHECK(printed["tools"]["write_pdf"]["path"] == "outputPath");
    CHECK(printed["tools"]["write_pdf"]["path_if_unset"] == "path");
    CHECK(printed["tools"]["write_file"]["role_by"]["mode"]["append"] == "edit");
    CHECK(printed["unguarded"]["start_process"].is_string());
  }
}
