// Verification through the upstream ("verify": "upstream"): fsguard cannot
// see the server's files, so it reads them through the server's own read
// tool before a change is decided (the UpstreamView, a Disk the tracker
// decides on), and checks what a partial read was cut from by reading the
// file whole before and after it (PartialCheck). This class owns the view,
// fsguard's own reads and the partial checks; it records what they prove
// in the tracker. Inactive (no view) with verify: local.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/answer_records.hpp"
#include "proxy/guard/call_in_flight.hpp"
#include "proxy/guard/call_queue.hpp"
#include "proxy/guard/guard_settings.hpp"
#include "proxy/guard/ledger.hpp"
#include "proxy/guard/outbox.hpp"
#include "proxy/guard/server_paths.hpp"
#include "proxy/guard/upstream_view.hpp"
#include "proxy/jsonrpc/message.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

// A partial read through the upstream (verify: upstream): fsguard reads
// its file whole before the read goes upstream (the read waits for that
// answer: the server serves requests concurrently, so a read sent with
// the part could find the file after it) and again once it is answered.
// The part counts only if both found the same content and the part is in
// it (the file held still around the read, as a stat shows with verify:
// local); the record is then that content, partly seen.
struct PartialCheck {
  std::string file;
  std::string raw; // the path as the client spelled it
  std::string after_key;
  std::optional<UpstreamRead> before;
  std::optional<UpstreamRead> after;
  std::optional<std::string> shown; // the part, once the read is answered
  ReadView view = ReadView::utf8_text;
  std::string reason;
  std::uint64_t shown_at = 0;
  std::chrono::steady_clock::time_point asked{};
  bool holds_file = false; // calls on the file wait for it
};

class UpstreamVerification {
public:
  using Clock = std::chrono::steady_clock;

  // With `verify` upstream, a view of the server's files that asks `disk`
  // only for the time. What the checks prove goes to `tracker`; fsguard's
  // own reads are entered in `ledger`; a partial check holds its file in
  // `busy`; a whole read's text is kept in `records`. `paths` spells files
  // as the server does and `settings` gives the log level. All are the
  // guard's, and may be constructed after this.
  UpstreamVerification(Verify verify, Disk& disk, Tracker& tracker, Ledger& ledger,
                       BusyFiles& busy, AnswerRecords& records, const ServerPaths& paths,
                       const GuardSettings& settings);

  // The view of the server's files; null with verify: local.
  UpstreamView* view() const { return m_view.get(); }

  // The files whose content a change by `call` is decided on (a move's
  // destination; a write's or an edit's file), or that a partial read
  // `call` is cut from; `tools` is the tools map in force.
  std::vector<std::size_t> verified_files(const CallInFlight& call, const ToolMap& tools) const;
  // Asks the upstream for the files `call`'s change is decided on (or its
  // partial read is cut from), unless their text is at hand, in requests
  // carrying `envelope`. True while it must wait.
  bool awaits_upstream(const CallInFlight& call, const ToolMap& tools,
                       const nlohmann::json& envelope, Outbox& out, Clock::time_point now);

  // What an answer to fsguard's own read was for.
  enum class Answer {
    nothing,       // no longer awaited
    partial_check, // a partial check's second read: the check is done
    file_read,     // a file's text a decision waits for
  };
  // Takes the upstream's answer `read` to fsguard's read `key`.
  Answer on_verify_answer(const std::string& key, const UpstreamRead& read, Outbox& out);

  // Starts a partial check for each file of the partial read `call`, about
  // to go upstream at `now`, whose whole text fsguard read before it.
  void begin_partial_checks(CallInFlight& call, const ToolMap& tools, Clock::time_point now);
  // Drops the partial checks of `call` that hold no file: its read failed
  // or was given up on.
  void drop_unused_checks(const CallInFlight& call);

  // Records what the successful read `call` (its `answer`; `response`
  // parsed where it had to be) showed, from the text it showed; a part
  // asks for the whole file again.
  void record_read(const CallInFlight& call, UpstreamMessage& answer,
                   const nlohmann::json& response, ReadExtent extent, const std::string& reason,
                   std::uint64_t shown_at, const ToolMap& tools, const nlohmann::json& envelope,
                   Outbox& out);
  // Records `file` after the agent's change `call`, which should have left
  // `expected` (`expected_text` where known).
  void record_change(const CallInFlight& call, const std::string& file,
                     const std::optional<ContentHash>& expected,
                     const std::optional<std::string>& expected_text, ReadExtent extent,
                     std::uint64_t known_since);

  // Gives up on fsguard's own reads and partial checks asked before
  // `before`: their changes are refused, their parts license nothing.
  // True if any was given up on.
  bool expire(Clock::time_point before);
  // Forgets every partial check (the session is over).
  void clear();

private:
  // Sends fsguard's own read of `raw` (the server's spelling of a file),
  // returning its id key.
  std::string ask_upstream(const std::string& raw, const ToolMap& tools,
                           const nlohmann::json& envelope, Outbox& out);
  // Records partial check `number` once all three of its texts are in.
  void finish_partial_check(std::uint64_t number, Outbox& out);
  // Drops partial check `number`, freeing its file.
  void drop_partial_check(std::uint64_t number);

  std::unique_ptr<UpstreamView> m_view; // verify: upstream
  Tracker& m_tracker;
  Ledger& m_ledger;
  BusyFiles& m_busy;
  AnswerRecords& m_records;
  const ServerPaths& m_paths;
  const GuardSettings& m_settings;
  std::map<std::uint64_t, PartialCheck> m_partial_checks; // by number
  std::map<std::string, std::uint64_t> m_partial_reads;    // fsguard's read's id key -> check
  std::uint64_t m_next_partial_check = 0;
  std::uint64_t m_next_verify = 0;
};

} // namespace fsguard
