// The session's guard: decides each guarded tools/call on its way upstream,
// and records what each guarded response showed or changed. It owns the
// tracker and the in-flight bookkeeping; it does no I/O beyond the Disk.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/config.hpp"
#include "proxy/log.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

// Lines the guard wants sent, in order.
struct Outbox {
  std::vector<std::string> to_upstream;
  std::vector<std::string> to_client;
  std::vector<std::string> answered; // id_keys of requests fsguard answered itself
};

class Guard {
public:
  Guard(Disk& disk, const Config& config, const Log& log);

  // Applies a new config (mode, tools) without losing what was read.
  void set_config(const Config& config) { m_config = config; }

  // Takes a client tools/call `request` (parsed) whose raw text is `line`:
  // forwards it, answers it with a veto, or parks it until earlier guarded
  // calls on the same file have their responses.
  void on_tool_call(std::string line, const nlohmann::json& request, Outbox& out);

  // True if the upstream response with id `key` belongs to a guarded call.
  bool awaits(const std::string& key) const { return m_in_flight.contains(key); }
  bool awaits_any() const { return !m_in_flight.empty(); }

  // Takes the upstream's `response` to the guarded call `key`; may release
  // parked calls into `out`.
  void on_response(const std::string& key, const nlohmann::json& response, Outbox& out);

  // Takes the client's notifications/cancelled `params`.
  void on_cancelled(const nlohmann::json& params, Outbox& out);

private:
  struct Call {
    nlohmann::json id;
    GuardedCall what;
    std::vector<std::optional<std::string>> files; // canonical; none if unresolved
    std::vector<ReadStart> read_starts;
    std::optional<ContentHash> expected; // write_file: hash of the content
  };
  struct Parked {
    std::string line;
    Call call;
  };

  std::optional<Call> describe(const nlohmann::json& request);
  bool blocked(const Call& call, std::size_t parked_before) const;
  void start(std::string line, Call call, Outbox& out);
  std::optional<Veto> decide_write(const Call& call);
  void refuse(const Call& call, const Veto& veto, Outbox& out);
  void record_response(const Call& call, const nlohmann::json& response);
  void mark_busy(const Call& call, int delta);
  void release_parked(Outbox& out);

  Disk& m_disk;
  Config m_config;
  const Log& m_log;
  Tracker m_tracker;
  std::unordered_map<std::string, Call> m_in_flight; // by id_key
  std::unordered_map<std::string, int> m_busy_files;  // canonical path -> calls
  std::deque<Parked> m_parked;
};

} // namespace fsguard
