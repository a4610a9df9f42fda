// The guard driven message by message, as the relay drives it, for the
// guard's unit tests: the test plays both the client and the upstream.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "fake_disk.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/guard.hpp"
#include "proxy/guard/upstream_intake.hpp"
#include "proxy/jsonrpc/json_reader.hpp"
#include "tracker/profiles.hpp"
#include "tracker/server_filesystem.hpp"

using namespace fsguard;
using fsguard::testing::fake_hash;
using fsguard::testing::FakeDisk;

namespace {

using Clock = std::chrono::steady_clock;

// A unified diff that replaces all of `before` (lines ending in "\n") by
// `after`, in the shape server-filesystem's edit_file answers with.
[[maybe_unused]] std::string diff_of(const std::string& before, const std::string& after)
{
  const auto lines = [](const std::string& text) {
    std::vector<std::string> result;
    for (std::size_t at = 0; at < text.size();) {
      const auto end = text.find('\n', at);
      result.push_back(text.substr(at, end - at + 1));
      at = end + 1;
    }
    return result;
  };
  const auto old_lines = lines(before);
  const auto new_lines = lines(after);
  std::string diff = "```diff\nIndex: f\n===\n--- f\toriginal\n+++ f\tmodified\n@@ -1,"
                     + std::to_string(old_lines.size()) + " +1," + std::to_string(new_lines.size())
                     + " @@\n";
  for (const auto& line : old_lines) diff += "-" + line;
  for (const auto& line : new_lines) diff += "+" + line;
  return diff + "```\n\n";
}

// A guard in front of a pretend server-filesystem serving /ws, driven
// message by message: the test plays both the client and the upstream.
struct Session {
  FakeDisk disk;
  Guard guard;
  // The guard is driven as the relay drives it: each line through its intake.
  ClientIntake client{guard};
  UpstreamIntake upstream{guard};
  Outbox out;
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  PlainCallArguments plain_arguments; // for tests of Guard::scan_plain_call
  std::string reader_buffer; // the relay's reader's, which the client's lines are lent from

  // `server_version` "1.2.29" makes the server @agent-infra's fork.
  // `listed`: the server's allowed directories, as it spells them.
  explicit Session(GuardSettings settings = {}, std::string client = "test-client",
                   std::string server_version = "0.2.0",
                   std::vector<std::string> listed = {"/ws"}, bool elicits = false)
    : guard(disk, std::move(settings), "/home", "/ws")
  {
    disk.make_directory("/ws");
    disk.make_directory("/ws2");
    disk.advance(10'000'000'000LL); // files made by tests are past the racy window
    nlohmann::json capabilities = nlohmann::json::object();
    if (elicits) {
      capabilities["elicitation"] = nlohmann::json::object();
    }
    request(json_line({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                       {"params", {{"clientInfo", {{"name", client}, {"version", "1"}}},
                                   {"capabilities", capabilities}}}}));
    answer(0, {{"serverInfo", {{"name", "secure-filesystem-server"}, {"version", server_version}}}});
    if (server_version == "0.2.0") {
      list_directories(listed);
    }
  }

  // A guard before the session: the test sends initialize and answers it.
  struct Uninitialized {};
  explicit Session(Uninitialized, GuardSettings settings = {})
    : guard(disk, std::move(settings), "/home", "/ws")
  {
    disk.make_directory("/ws");
    disk.advance(10'000'000'000LL);
  }

  // The client's initialize, as request `id`.
  void initialize(const nlohmann::json& id = 0)
  {
    request(json_line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "initialize"},
                       {"params", {{"clientInfo", {{"name", "test-client"}, {"version", "1"}}},
                                   {"capabilities", nlohmann::json::object()}}}}));
  }

  static std::string json_line(const nlohmann::json& message) { return message.dump() + "\n"; }

  // The client's `line`, taken as the relay takes it (ClientIntake): lent
  // from the reader's buffer (reader_buffer), which is overwritten
  // afterwards, as the reader reads on (read_on).
  void request(const std::string& line)
  {
    out = Outbox{};
    reader_buffer = line;
    client.take(OutgoingLine::borrowed(reader_buffer), now, out);
    read_on();
  }

  // What the relay does before its reader reads on: the lines a step sent
  // are written (here made owned, for the test to read), and the reader's
  // buffer is reused, which a line the guard kept borrowed would show.
  void read_on()
  {
    out.own_lines();
    std::fill(reader_buffer.begin(), reader_buffer.end(), '#');
  }

  // Whether the client's `line` (with its newline) is one the intake takes
  // by the fast path, unparsed (Guard::scan_plain_call).
  bool plain(const std::string& line)
  {
    PlainCallArguments arguments;
    return guard.scan_plain_call(std::string_view(line).substr(0, line.find('\n')), arguments)
      .has_value();
  }

  // A tools/call of `tool` with `arguments` as request `id`.
  void call(const nlohmann::json& id, const std::string& tool, nlohmann::json arguments)
  {
    request(json_line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                       {"params", {{"name", tool}, {"arguments", arguments}}}}));
  }

  // The server asks for the client's roots, and the client answers `uri`.
  void roots_changed(const std::string& uri)
  {
    upstream_line(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})");
    request(json_line({{"jsonrpc", "2.0"}, {"id", 0}, {"result", {{"roots", {{{"uri", uri}}}}}}}));
  }

  void notify(const nlohmann::json& message)
  {
    request(json_line(message));
  }

  // The upstream's `line` (without its newline), taken as the relay takes
  // it (UpstreamIntake); the guard is told it has gone on unless `settled`
  // is false. Returns whether it is relayed as it is.
  bool upstream_line(const std::string& line, bool settled = true)
  {
    out = Outbox{};
    answer_buffer = line; // the upstream reader's, which the guard may read until settled
    const UpstreamLine fate = upstream.take(answer_buffer, now, out);
    if (settled) {
      upstream.line_sent();
    }
    return fate == UpstreamLine::relayed;
  }
  std::string answer_buffer;

  // The upstream answers `id` with `result`; returns whether it is relayed.
  bool answer(const nlohmann::json& id, const nlohmann::json& result)
  {
    return upstream_line(nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
  }

  // The upstream answers `id` with `text` as answer_text() does, but the
  // guard is not yet told the answer has gone on (no settle_reads()).
  bool answer_text_unsettled(const nlohmann::json& id, const std::string& text)
  {
    return upstream_line(nlohmann::json{{"jsonrpc", "2.0"},
                                        {"id", id},
                                        {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}
                           .dump(),
                         false);
  }

  bool answer_text(const nlohmann::json& id, const std::string& text)
  {
    return answer(id, {{"content", {{{"type", "text"}, {"text", text}}}}});
  }

  // Answers the listing fsguard asked for last with `directories`.
  void list_directories(const std::vector<std::string>& directories, bool then_probes = true)
  {
    REQUIRE_FALSE(out.to_upstream.empty());
    const auto asked = nlohmann::json::parse(out.to_upstream.back().text());
    REQUIRE(asked["params"]["name"] == "list_allowed_directories");
    std::string text = "Allowed directories:";
    for (const auto& directory : directories) {
      text += "\n" + directory;
    }
    CHECK_FALSE(answer_text(asked["id"], text)); // fsguard's own: never relayed
    if (then_probes) {
      answer_probes();
    }
  }

  // Answers fsguard's get_file_info probes of the allowed directories
  // sent in the last step: created at `disk.births` of the directory, or
  // at 0 (a filesystem that keeps no creation times), shifted by `shift`.
  void answer_probes(std::int64_t shift = 0)
  {
    std::vector<std::string> sent;
    for (const auto& line : out.to_upstream) {
      sent.emplace_back(line.text());
    }
    for (const auto& line : sent) {
      const auto asked = nlohmann::json::parse(line);
      if (asked["params"]["name"] != "get_file_info") {
        continue;
      }
      const std::string directory = asked["params"]["arguments"]["path"];
      const auto born = disk.births.contains(directory) ? disk.births[directory] + shift : 0;
      char created[64];
      std::time_t when = static_cast<std::time_t>(born);
      std::strftime(created, sizeof created, "%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)",
                    std::gmtime(&when));
      CHECK_FALSE(answer_text(asked["id"], std::string("size: 4096\ncreated: ") + created
                                             + "\nisDirectory: true"));
    }
  }

  // Answers fsguard's get_file_info of a file before a change (path_map),
  // sent in the last step, as server-filesystem would of the fake disk's
  // `local`: its size, modification second and type, or ENOENT. With
  // `format` iso_json, as desktop-commander would: the time quoted, to the
  // millisecond, and "Error: " before ENOENT.
  void answer_file_info(const std::string& local,
                        FileInfoFormat format = FileInfoFormat::date_text)
  {
    REQUIRE_FALSE(out.to_upstream.empty());
    const auto asked = nlohmann::json::parse(out.to_upstream.back().text());
    REQUIRE(asked["params"]["name"] == "get_file_info");
    const auto found = disk.stat(local);
    const bool commander = format == FileInfoFormat::iso_json;
    if (!found) {
      const std::string text = std::string(commander ? "Error: " : "")
                               + "ENOENT: no such file or directory, stat '"
                               + asked["params"]["arguments"]["path"].get<std::string>() + "'";
      CHECK_FALSE(answer(asked["id"], {{"content", {{{"type", "text"}, {"text", text}}}},
                                       {"isError", true}}));
      return;
    }
    const std::int64_t ms =
      node_shown_millisecond(found->mtime_ns / 1'000'000'000, found->mtime_ns % 1'000'000'000);
    const auto when = static_cast<std::time_t>(ms / 1000);
    char modified[96];
    if (commander) {
      std::strftime(modified, sizeof modified, "\"%Y-%m-%dT%H:%M:%S", std::gmtime(&when));
      std::snprintf(modified + std::strlen(modified), 8, ".%03dZ\"", static_cast<int>(ms % 1000));
    } else {
      std::strftime(modified, sizeof modified,
                    "%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)",
                    std::gmtime(&when));
    }
    CHECK_FALSE(answer_text(asked["id"], "size: " + std::to_string(found->size)
                                           + "\nmodified: " + modified + "\nisDirectory: "
                                           + (found->is_directory() ? "true" : "false")));
  }

  // The upstream ids of the lines forwarded by the last step.
  std::vector<nlohmann::json> forwarded_ids() const
  {
    std::vector<nlohmann::json> ids;
    for (const auto& line : out.to_upstream) {
      ids.push_back(nlohmann::json::parse(line.text()).value("id", nlohmann::json()));
    }
    return ids;
  }

  // The veto code of the client line answering `id` in the last step, "" if
  // none, or the error code as text for a JSON-RPC error.
  std::string answered(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      if (!message.contains("id") || message["id"] != id) {
        continue; // notifications (a cancel) have no id
      }
      if (message.contains("error")) {
        return std::to_string(message["error"]["code"].get<int>());
      }
      return message["result"]["_meta"]["fsguard/veto"]["code"].get<std::string>();
    }
    return "";
  }

  // A read of `path` answered with `text`, as server-filesystem would.
  void read(int id, const std::string& path, nlohmann::json extra = nlohmann::json::object())
  {
    extra["path"] = path;
    call(id, "read_text_file", extra);
    REQUIRE(forwarded_ids() == std::vector<nlohmann::json>{id});
    answer_text(id, "shown");
  }

  // A whole read of `path` with `tool`, answered with the file's content as
  // server-filesystem answers: the text in content and structuredContent.
  void read_content(int id, const std::string& path, const std::string& tool = "read_text_file")
  {
    call(id, tool, {{"path", path}});
    REQUIRE(forwarded_ids() == std::vector<nlohmann::json>{id});
    const std::string text = *disk.content(path);
    answer(id, {{"content", {{{"type", "text"}, {"text", text}}}},
                {"structuredContent", {{"content", text}}}});
  }

  // The upstream answers `id` with `text` in the very bytes the MCP SDK
  // writes (the text in content and structuredContent). Returns whether it
  // is relayed.
  bool answer_in_sdk_bytes(int id, const std::string& text)
  {
    const std::string raw_text = nlohmann::json(text).dump();
    return upstream_line(R"({"result":{"content":[{"type":"text","text":)" + raw_text
                         + R"(}],"structuredContent":{"content":)" + raw_text
                         + R"(}},"jsonrpc":"2.0","id":)" + std::to_string(id) + "}");
  }

  // The answer to `id` the last step sent the client, parsed.
  nlohmann::json client_line(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_client) {
      const auto message = nlohmann::json::parse(line);
      if (message.contains("id") && message["id"] == id) {
        return message;
      }
    }
    return nullptr;
  }

  // The text of the answer to `id` the last step sent the client.
  std::string client_text(const nlohmann::json& id) const
  {
    const auto message = client_line(id);
    std::string text;
    if (message.is_object()) {
      for (const auto& block : message["result"]["content"]) {
        text += block["text"].get<std::string>();
      }
    }
    return text;
  }

  // The params.arguments of the request with `id` the last step forwarded.
  nlohmann::json forwarded_arguments(const nlohmann::json& id) const
  {
    for (const auto& line : out.to_upstream) {
      const auto message = nlohmann::json::parse(line.text());
      if (message.value("id", nlohmann::json()) == id) {
        return message["params"]["arguments"];
      }
    }
    return nullptr;
  }
};

} // namespace
