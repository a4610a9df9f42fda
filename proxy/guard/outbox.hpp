// What the guard wants done after it handled one message: lines to send,
// log lines and audit records. The guard itself does no I/O.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/log_level.hpp"
#include "proxy/jsonrpc/outgoing_line.hpp"

namespace fsguard {

struct LogLine {
  LogLevel level = LogLevel::info;
  std::string text;
};

struct Outbox {
  // The client's line among them may be borrowed from the reader's buffer
  // (see OutgoingLine): written at once, or made owned by own_lines().
  std::vector<OutgoingLine> to_upstream;
  std::vector<std::string> to_client;
  std::vector<LogLine> log;
  std::vector<nlohmann::ordered_json> decisions; // audit records

  void say(LogLevel level, std::string text) { log.push_back({level, std::move(text)}); }

  // Whether nothing is left in it to send, log or audit.
  bool empty() const
  {
    return to_upstream.empty() && to_client.empty() && log.empty() && decisions.empty();
  }

  // Makes every line to the upstream a string of its own, so that none
  // depends on the reader's buffer any more: before anything waits with
  // lines still in the Outbox.
  void own_lines()
  {
    for (auto& line : to_upstream) {
      line.own();
    }
  }

  // Empties it, keeping the vectors' room: one Outbox serves every client
  // line, without allocating its vectors again for each.
  void clear()
  {
    to_upstream.clear();
    to_client.clear();
    log.clear();
    decisions.clear();
  }
};

} // namespace fsguard
