// The session's guard: decides each file tool call on its way upstream, and
// records what each guarded response showed or changed. It owns the tracker,
// the in-flight bookkeeping and the knowledge of how the upstream resolves
// paths; it does no I/O beyond the Disk.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/audit_log.hpp"
#include "proxy/config.hpp"
#include "proxy/log.hpp"
#include "proxy/message.hpp"
#include "proxy/outbox.hpp"
#include "proxy/server_paths.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

class Guard {
public:
  // `home` and `cwd` are the upstream's home directory and working directory.
  Guard(Disk& disk, const Config& config, const Log& log, HomeDirectory home, std::string cwd);

  // Applies a new config (mode, tools) without losing what was read.
  void set_config(const Config& config)
  {
    m_config = config;
    m_paths.set_custom_tools(config.tools.has_value());
  }

  // Where guarded decisions are recorded (nothing: not recorded).
  void set_audit_log(const AuditLog* audit) { m_audit = audit; }

  // Takes a client tools/call `request` (parsed) whose raw text is `line`:
  // forwards it, answers it with a veto, or parks it until earlier guarded
  // calls on the same file have their responses.
  // `content_hash` is the hash of params.arguments.content, if a string.
  void on_tool_call(std::string line, const nlohmann::json& request,
                    const std::optional<ContentHash>& content_hash, Outbox& out);

  // Takes the client's notifications/cancelled `params`.
  void on_cancelled(const nlohmann::json& params, Outbox& out);

  // How the upstream resolves paths; the relay reports the messages that
  // teach it (initialize, roots/list and their responses).
  ServerPaths& server_paths() { return m_paths; }

  // True if the upstream's response with id `key` must be read (parsed).
  bool awaits(const std::string& key) const
  {
    return m_in_flight.contains(key) || m_paths.awaits_upstream(key);
  }

  // Takes the upstream's response `line` to `key`, already `skimmed` by the
  // relay; may release parked calls into `out`. Returns false if the
  // response must not reach the client. Parses the line fully only when its
  // content matters.
  bool on_response(const std::string& key, std::string_view line, const SkimmedMessage& skimmed,
                   Outbox& out);

  // Hashes the files of reads whose responses have just been forwarded
  // (see Tracker::settle_reads): the agent's wait does not include it.
  void settle_reads() { m_tracker.settle_reads(); }

private:
  struct Call {
    nlohmann::json id;
    GuardedCall what;
    std::vector<std::optional<std::string>> files; // canonical; none if unresolved
    std::vector<PathError> problems;               // why a file is unresolved
    std::vector<ReadStart> read_starts;
    std::optional<ContentHash> expected; // write_file: hash of the content
  };
  struct Parked {
    std::string line;
    Call call;
    nlohmann::json request;            // set when awaiting the directories
    std::optional<ContentHash> content_hash;
    bool awaiting_directories = false; // re-described once they are known
  };

  Call describe(const nlohmann::json& request, GuardedCall what,
                const std::optional<ContentHash>& content_hash);
  std::optional<Veto> confinement_veto(const Call& call);
  bool blocked(const Call& call, std::size_t parked_before) const;
  void start(std::string line, Call call, Outbox& out);
  std::optional<Veto> decide_write(const Call& call);
  void refuse(const Call& call, const Veto& veto, Outbox& out);
  void audit(const Call& call, std::string_view decision, const std::optional<Veto>& veto,
             std::int64_t latency_us) const;
  void record_response(const Call& call, const nlohmann::json& response);
  void mark_busy(const Call& call, int delta);
  void release_parked(Outbox& out);
  bool awaits_directories(const Call& call) const;
  void after_listing(Outbox& out);

  Disk& m_disk;
  Config m_config;
  const Log& m_log;
  const AuditLog* m_audit = nullptr;
  Tracker m_tracker;
  ServerPaths m_paths;
  std::unordered_map<std::string, Call> m_in_flight; // by id_key
  std::unordered_map<std::string, int> m_busy_files;  // canonical path -> calls
  std::deque<Parked> m_parked;
  // Listings asked for calls awaiting the directories, and how many at most
  // before those calls are decided with what is known.
  int m_listings_for_waiting = 0;
  static constexpr int k_max_listings_for_waiting = 50;
};

} // namespace fsguard
