// The session's guard: the dispatcher of every message by what its ledger
// entry expects (Expectation). Each piece of the session's state has one
// owner, which the guard holds: the call queue (CallQueue: held calls,
// files busy), what answers showed and the records they leave
// (AnswerRecords, over the Tracker), verification through the upstream
// (UpstreamVerification), the person's override (OverrideQuestions), the
// listing schedule (ListingSchedule), the identity checks (IdentityChecks)
// and the ledger of requests. Its members that use several of them are in
// guard.cpp (the dispatch), guard_decision.cpp, guard_answers.cpp,
// guard_override.cpp, guard_session.cpp and guard_identity.cpp.
// Pure: it takes messages and settings, and puts the lines to send, the log
// lines and the audit records into an Outbox. Its only I/O is the Disk.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/answer_records.hpp"
#include "proxy/guard/call_in_flight.hpp"
#include "proxy/guard/call_queue.hpp"
#include "proxy/guard/change_decision.hpp"
#include "proxy/guard/guard_settings.hpp"
#include "proxy/guard/identity_checks.hpp"
#include "proxy/guard/ledger.hpp"
#include "proxy/guard/listing_schedule.hpp"
#include "proxy/guard/override_state.hpp"
#include "proxy/jsonrpc/message.hpp"
#include "proxy/guard/outbox.hpp"
#include "proxy/guard/override_questions.hpp"
#include "proxy/guard/verdict.hpp"
#include "proxy/jsonrpc/outgoing_line.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"
#include "proxy/jsonrpc/upstream_message.hpp"
#include "proxy/guard/server_paths.hpp"
#include "proxy/guard/shared_ledger.hpp"
#include "proxy/guard/upstream_verification.hpp"
#include "proxy/guard/upstream_view.hpp"
#include "tracker/kept_texts.hpp"
#include "tracker/string_key_hash.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

class Guard {
public:
  using Clock = std::chrono::steady_clock;

  // `home` and `cwd` are the upstream's home directory and working directory.
  // With settings.verify upstream, the guard learns files from the upstream
  // and touches no `disk`.
  Guard(Disk& disk, GuardSettings settings, HomeDirectory home, std::string cwd);

  // Applies new `settings` (mode, tools, limits) without losing what was
  // read. The verify setting stays as the guard started.
  void set_settings(GuardSettings settings);

  // The key of the HMAC that makes fsguard's own requestState in the 2026
  // era (override: ask), `key`: random bytes the process made at start.
  // Without it the guard does not ask the person in that era.
  void set_request_state_key(std::string key) { m_states.set_key(std::move(key)); }
  // The upstream runs where its paths may name other files than fsguard's,
  // for the reason `why` (proxy/process/process_group.hpp): with
  // identity_check "auto", each change's files are then asked of the server.
  void set_server_elsewhere(std::string why) { m_paths.set_elsewhere(std::move(why)); }

  // Whether audit records are wanted in the Outbox.
  void set_auditing(bool auditing) { m_auditing = auditing; }

  // How the upstream resolves paths (for the relay's listing schedule).
  ServerPaths& server_paths() { return m_paths; }

  // Takes a client request `request` (parsed) whose raw text is `line`:
  // forwards it, refuses it, answers it with a veto, or holds it until
  // earlier calls on its files are answered. `content` is what the reader
  // found of params.arguments.content. `now` starts its clock. A borrowed
  // `line` goes into `out` as it is, or is copied if the guard keeps it.
  void on_client_request(OutgoingLine line, const nlohmann::json& request,
                         ContentArgument content, Outbox& out,
                         Clock::time_point now = Clock::now());

  // Takes a client notification `notification` whose raw text is `line`.
  void on_client_notification(OutgoingLine line, const nlohmann::json& notification, Outbox& out,
                              Clock::time_point now = Clock::now());

  // Takes the client's answer `response` (raw text `line`) to a request of
  // the upstream's, or of fsguard's own, which came at `now`.
  void on_client_response(OutgoingLine line, const nlohmann::json& response, Outbox& out,
                          Clock::time_point now = Clock::now());

  // The upstream sent a request `method` with id key `key`.
  void on_upstream_request(const std::string& key, std::string_view method);

  // Takes the upstream's answer `answer` to `key`; may release held calls
  // into `out`. Returns false if the answer must not reach the client as it
  // is: it is dropped, or `out` carries fsguard's version of it (a stale
  // change fsguard carried over, with a note for the agent). Asks for the
  // answer's tree only when its content matters, and may take the text
  // decoded as it was skimmed. The answer's line must stay valid until the
  // next settle_reads(), which reads the text a read showed from it.
  // `answered` is what find_answer(key) found, with nothing changed since.
  bool on_upstream_response(Ledger::Answered answered, const std::string& key,
                            UpstreamMessage& answer, Outbox& out, Clock::time_point now);

  // The request that the upstream's answer `key` answers, found once and
  // handed to close_relayed_request(), answer_text_wanted() and
  // on_upstream_response(), so that none of them looks the key up again.
  Ledger::Answered find_answer(const std::string& key)
  {
    return m_ledger.find_answered(Peer::upstream, key);
  }

  // The most bytes of text worth decoding as the upstream's answer that
  // `answered` answers is skimmed (decode_sdk_answer_text()): its call is a
  // whole read whose text fsguard keeps, and would decode anyway. Nothing
  // for any other answer.
  std::optional<std::size_t> answer_text_wanted(const Ledger::Answered& answered) const;

  // A client's tools/call of the plain shape (scan_plain_tool_call) that
  // the guard takes without a parse, as scan_plain_call() found it.
  struct PlainCall {
    PlainToolCall scanned;                     // views into the line
    const ToolMap::value_type* tool = nullptr; // the guarded tool; null: one only relayed
  };

  // The client's line `text` (without its newline) when it is a tools/call
  // of the plain shape of a tool fsguard only relays or guards; for a
  // guarded one, its arguments are read into `arguments`. Nothing for
  // anything else, which on_client_request() takes: the client's listing of
  // allowed directories, any call before the initialize result, another
  // shape, arguments the fast reader leaves to the full parse.
  std::optional<PlainCall> scan_plain_call(std::string_view text,
                                           PlainCallArguments& arguments) const;

  // Takes the plain call `call` that scan_plain_call() has just found in
  // the client's `line` (with its newline), with the `arguments` it read
  // (their content is moved from), exactly as on_client_request() takes
  // the line parsed: recorded in the ledger, and forwarded, or for a
  // guarded tool run, refused or held. False, with `line` untouched and
  // nothing recorded, when its id is still pending (on_client_request()
  // refuses it). `now` starts its clock.
  bool take_plain_call(OutgoingLine& line, const PlainCall& call, PlainCallArguments& arguments,
                       Outbox& out, Clock::time_point now = Clock::now());

  // If the client's request that the upstream's answer `key` answers is one
  // fsguard only relays (Expectation::relay: a call of a tool it does not
  // guard), closes it and returns true: the answer needs nothing else from
  // the guard, so it goes to the client without a skim. False, and nothing
  // closed, otherwise: on_upstream_response() takes the answer.
  bool close_relayed_request(Ledger::Answered& answered)
  {
    return m_ledger.close_if(answered, Expectation::relay); // as on_upstream_response() would
  }
  bool close_relayed_request(const std::string& key)
  {
    auto answered = find_answer(key);
    return close_relayed_request(answered);
  }

  // The upstream's answer whose last bytes are `tail` was `length` bytes,
  // over `limit`, and was dropped: its request, if fsguard can tell which,
  // is answered with an error rather than left waiting for ever.
  void on_upstream_answer_dropped(std::string_view tail, std::size_t length, std::size_t limit,
                                  Outbox& out, Clock::time_point now = Clock::now());

  // Records the changes whose answers have just been forwarded (the file's
  // fingerprint after each), hashes the files of reads whose responses have
  // (see Tracker::settle_reads), and keeps the texts those reads showed
  // whole where they match the files' hashes: the agent's wait does not
  // include it. Every decision on a change settles first.
  void settle_reads();

  // Guarded calls unanswered for longer than the call timeout at `now`
  // stop holding back the calls behind them; their files need a new read.
  void expire(Clock::time_point now, Outbox& out);

  // What the guard does with time, called every fraction of a second:
  // expire() and, while the server's allowed directories are in doubt, ask
  // for them again after a growing pause. The guard alone decides when.
  void tick(Clock::time_point now, Outbox& out);
  // How soon tick() should come again: often while the directories are in
  // doubt, seldom otherwise.
  std::chrono::milliseconds tick_pause() const
  {
    return std::chrono::milliseconds(m_paths.in_doubt() ? 50 : 500);
  }

  // True while fsguard holds client calls that have not gone upstream yet
  // (waiting behind others, or for the person's answer).
  bool holds_calls() const
  {
    return m_queue.holds_calls() || !m_overrides.empty();
  }

  // The client has gone: no question to the person can be answered now.
  void on_client_gone(Outbox& out, Clock::time_point now = Clock::now());

  // Removes the client's unanswered requests (held ones included) and
  // returns their ids, to answer them when the upstream is gone.
  std::vector<nlohmann::json> take_unanswered();

  // The tracker's record of `path` (tests and diagnostics).
  const SeenRecord* record(const std::string& path) const { return m_tracker.find(path); }

  // The texts kept of what the agent saw whole (tests and diagnostics).
  const KeptTexts& kept_texts() const { return m_records.kept(); }

  // Takes the records `saved` by an earlier session that its files still
  // bear out (see Tracker::restore), before the first call: the agent knows
  // them from moment 0. Returns how many it took.
  std::size_t restore(const std::vector<SavedRecord>& saved);

  // The records to save for a later session, at most `limit` (see
  // Tracker::saved), and a number that goes up when they may have changed.
  std::vector<SavedRecord> saved_records(std::size_t limit) const { return m_tracker.saved(limit); }
  std::uint64_t records_generation() const { return m_tracker.generation(); }

  // Leaves what the guard knows of each file (the tracker's records, the
  // kept texts) to the process's exit rather than freeing it node by node
  // when the guard is destroyed, which costs more with every file read.
  // Only for a guard whose process exits next, once its records are saved:
  // the guard knows no file afterwards.
  void leave_files_to_exit();

  // The ledger the writes of every session sharing it go to, and a changed
  // veto asks who wrote the content on disk (nullptr: none). Not owned.
  void set_shared_ledger(SharedLedger* ledger) { m_records.set_shared_ledger(ledger); }

private:
  // What a held call needs to run once the queue lets it (CallQueue's
  // payload): the line and what the guard read of it.
  struct HeldCall {
    std::string line; // owned: the reader's buffer moves on while it waits
    nlohmann::json id;
    std::string tool;
    nlohmann::json arguments; // as parsed, minus a write's content
    ContentArgument content;
    std::string key;
    std::uint64_t sent_at = 0;
  };
  using Queue = CallQueue<HeldCall>;

  enum class Outcome { ran, held, waiting_for_directories, waiting_for_session };
  struct Attempt {
    Outcome outcome = Outcome::ran;
    std::optional<CallInFlight> call; // held: as described now
  };
  const ToolMap& tools() const;
  // The tool `name` and its spec when fsguard guards its calls; null when it
  // only relays them: a tool it does not know, or one only confine_to looks
  // at while confine_to is empty.
  const ToolMap::value_type* guarded_tool(std::string_view name) const;
  // Whether the answer to the client's call of tool `name` tells fsguard the
  // allowed directories: list_allowed_directories, when it reads them and
  // the tools map does not name that tool.
  bool reads_client_listing(std::string_view name) const;
  // The call `what` with id `id` as it goes upstream: its files resolved
  // now; `content_hash` is its content's, for a write.
  std::unique_ptr<CallInFlight> describe(const nlohmann::json& id, GuardedCall&& what,
                                         const std::optional<ContentHash>& content_hash) const;
  // Runs the client's call `line` (id `id`, its key `key`, ledger entry
  // `entry`) with `arguments` (as parsed), which the tool map in force now
  // describes as `what` (nothing: no longer a file tool), unless it must
  // wait for the calls held before it or in flight (the queue), or for the
  // server's directories.
  Attempt try_run(OutgoingLine& line, const nlohmann::json& id, const nlohmann::json& arguments,
                  std::optional<GuardedCall>&& what, ContentArgument& content,
                  const std::string& key, PendingRequest& entry, std::uint64_t sent_at,
                  Outbox& out, Clock::time_point now);
  // Runs, refuses or holds the client's guarded call `line` (id `id`, its
  // key `key`, ledger entry `entry` just opened) of `tool` with
  // `arguments`, described as `what`; `content` is what the reader found
  // of its content.
  void run_new_call(OutgoingLine& line, const nlohmann::json& id, const std::string& key,
                    const std::string& tool, const nlohmann::json& arguments,
                    std::optional<GuardedCall>&& what, ContentArgument content,
                    PendingRequest& entry, Outbox& out, Clock::time_point now);
  bool awaits_directories(const CallInFlight& call) const;
  // Whether fsguard knows the session: the initialize result named the
  // server (its tools map), and its allowed directories are learned where
  // it has them. Until then no call the guard describes is decided.
  bool knows_session() const
  {
    return m_paths.knows_server() && !m_paths.learning_directories();
  }
  // Refuses the calls that waited longer than the call timeout at `now`
  // for fsguard to know the session.
  void refuse_overdue_session_waits(Clock::time_point now, Outbox& out);
  // Refuses at once the calls that waited for the initialize result, when
  // the server answered it with the error `refused_initialize`.
  void refuse_session_waits_after(const nlohmann::json& refused_initialize, Outbox& out);
  // The view of the server's files with verify: upstream; null with verify: local.
  UpstreamView* view() const { return m_verification.view(); }
  // Takes the upstream's answer `line` to fsguard's read `key`.
  void on_verify_answer(const std::string& key, const UpstreamRead& read, Outbox& out,
                        Clock::time_point now);
  // Why each change's files are asked of the server before it goes
  // (proxy/guard/guard_identity.cpp); "" when fsguard's paths are the server's.
  std::string why_check_each_change() const;
  // Whether the server has a get_file_info whose answer fsguard reads.
  bool reads_file_info() const;
  // The files of `call` whose identity it is decided on: those of a change,
  // when why_check_each_change() says so.
  std::vector<std::size_t> identity_files(const CallInFlight& call) const;
  // Asks the server's get_file_info of its path `raw` of `file`.
  void ask_identity(const std::string& file, const std::string& raw, Outbox& out,
                    Clock::time_point now);
  struct IdentityVerdict {
    bool waits = false;       // a question about a file is open: decide on its answer
    std::optional<Veto> veto; // a file is not proven the server's
  };
  // Whether the server's reports prove each of those files is fsguard's:
  // asks about those not reported since the call was sent (again about a
  // file that changed on fsguard's side while it asked), or refuses when
  // a report shows another file than fsguard's stat (not_visible), or the
  // server cannot be asked; the reports are used up.
  IdentityVerdict prove_identity(const CallInFlight& call, Outbox& out, Clock::time_point now);
  // Takes the upstream's `report` for fsguard's get_file_info `key`.
  void on_identity_answer(const std::string& key, ServerFileReport report, Outbox& out,
                          Clock::time_point now);
  std::optional<Veto> confinement_veto(const CallInFlight& call) const;
  bool server_refuses(const std::string& file) const;
  // The content of `file` if it still is what the agent's record shows.
  std::optional<std::string> content_seen(const std::string& file);
  // Decides the call `call` (raw request `line`, its `arguments` as parsed,
  // id key `key`, ledger entry `entry`) and sends it upstream, or refuses it.
  void start(OutgoingLine line, const nlohmann::json& arguments,
             std::unique_ptr<CallInFlight> call, const std::string& key,
             PendingRequest& entry, Outbox& out, Clock::time_point now);
  // Refuses the change `call` (upstream key `key`) with `verdict`'s veto,
  // recording what the veto shows the agent.
  void veto_change(const CallInFlight& call, const std::string& key, Verdict& verdict,
                   std::int64_t latency_us, Outbox& out, Clock::time_point now);
  // Sends the call `call` (raw request `line`) upstream, recording it in its
  // ledger entry `entry`.
  void forward(OutgoingLine line, std::unique_ptr<CallInFlight> call, PendingRequest& entry,
               Outbox& out, Clock::time_point now);
  // Whether to ask the person about `veto` before refusing.
  bool asks_person(const Veto& veto) const;
  void ask_person(OutgoingLine line, const nlohmann::json& arguments, CallInFlight call,
                  const std::string& key, Verdict verdict, Outbox& out, Clock::time_point now);
  // The client's `answer`, at `now`, to the override question `key`; or its
  // absence (`answer` null), `no_answer` saying why, e.g. "no answer came
  // within 30 s, so fsguard withdrew the question".
  void settle_override(const std::string& key, const nlohmann::json* answer,
                       std::string_view no_answer, Outbox& out, Clock::time_point now);
  // Decides the change `call` (raw request `line`, rewritten when a stale
  // write is merged; its `arguments` as parsed): each file's facts gathered
  // and handed to decide() (proxy/guard/change_decision.hpp), the one
  // decision on every change.
  Verdict decide_change(CallInFlight& call, OutgoingLine& line, const nlohmann::json& arguments);
  // The path by which `call` changes its file number `index`.
  static ChangePath change_path(const CallInFlight& call, std::size_t index);
  // The decision on `call` (raw request `line`), whose veto of code
  // `accepted` the person allowed for the content they were shown (the
  // caller checks the file still holds it): the same decide() as every
  // change, as ChangePath::accepted_override, so a rule the person was not
  // asked about (the keep-the-change rule, a check that now finds another
  // veto) still refuses it. For settle_override() on an accept.
  ChangeDecision decide_accepted(const CallInFlight& call, std::string_view line,
                                 VetoCode accepted);
  // What the keep-the-change rule finds of the content that `call` (raw
  // request `line`), a change of `file` by `path`, would leave: a write's
  // content, a move's source bytes.
  ShownChange shown_change(const CallInFlight& call, std::string_view line, ChangePath path,
                           const std::string& file);
  // Whether `written` (nothing: not known) keeps the change `record`'s
  // shown_over names, as the kept texts of both its versions show it.
  bool keeps_shown_change(const SeenRecord& record, const std::optional<std::string>& written);
  // The content of the write `call` (raw request `line`), if at most the
  // kept texts' file size and with the content hash the call was described
  // with.
  std::optional<std::string> checked_written_text(const CallInFlight& call, std::string_view line);
  // The content the write `call` (raw request `line`) puts in its file, if
  // at most `max_bytes`: as the reader decoded it, or else from the line.
  static std::optional<std::string> written_text(const CallInFlight& call, std::string_view line,
                                                 std::size_t max_bytes);
  // The `veto` of a change of `file` that changed since the agent saw it,
  // made into what the agent can act on: the diff, a rebase or a merge.
  Verdict stale_change(CallInFlight& call, OutgoingLine& line, const nlohmann::json& arguments,
                       const std::string& file, Veto veto);
  // Whether the client shows the model all of `answer` (see client_limits).
  bool client_shows_whole(std::string_view answer) const;
  void refuse(const CallInFlight& call, const std::string& key, Veto veto, Outbox& out);
  // `file` (fsguard's canonical path) as the server spells it (path_map).
  std::string server_spelling(const std::string& file) const;
  // The veto of a change to `file` below a server directory fsguard cannot
  // see; nothing if it can.
  std::optional<Veto> unseen_veto(const std::string& file) const;
  void answer_error(const nlohmann::json& id, RpcError code, std::string_view message, Outbox& out);
  void audit(const CallInFlight& call, std::string_view decision, const std::optional<Veto>& veto,
             std::int64_t latency_us, Outbox& out) const;
  // Takes what the client's request of `method` said of the client
  // (`facts`): the session's era, the client's name and capabilities.
  // True when it opened a 2026-era session whose server fsguard must ask
  // about (ask_server()).
  bool learn_client(const std::optional<ClientFacts>& facts, std::string_view method);
  // Sends fsguard's own server/discover, in the session's era, to learn
  // which server it is (what initialize tells in the 2025 era).
  void ask_server(Outbox& out);
  // The 2026 era's round trips (proxy/guard/guard_round_trip.cpp).
  // When the `answer` at `now` to the change (a write, an edit, a
  // move) of the ledger entry
  // `answered` says it has not finished, returns true: input_required
  // records nothing (the retry is a new call; after an override the
  // person allowed, its grant is kept for the server's state); a task, or
  // another resultType, records the files' outcome as unknown. False for
  // any other answer.
  bool unfinished_change(const PendingRequest& answered, UpstreamMessage& answer, Outbox& out,
                         Clock::time_point now);
  // What take_retry() did with a client's tools/call.
  enum class RetryTake {
    none,    // no retry of fsguard's: the line goes on as any call
    refused, // a state claiming to be fsguard's that is not good: answered in `out`
    taken,   // `retry` holds the grant and the person's answer
  };
  // Takes the client's tools/call `request` (parsed; raw `line`; the
  // `content` the reader took out of it) at `now` when it carries
  // fsguard's own requestState, or the server's after a change the person
  // allowed: checks it, and strips fsguard's own requestState and
  // inputResponses member from `line`.
  RetryTake take_retry(OutgoingLine& line, const nlohmann::json& request,
                       const ContentArgument& content, std::unique_ptr<OverrideRetry>& retry,
                       Outbox& out, Clock::time_point now);
  // Decides the change `owned` (raw `line`, key `key`) whose ledger
  // `entry` carries a retry, by the person's answer: allowed over what they
  // were shown, it is decided again as ChangePath::accepted_override and
  // forwarded, or refused (true). False, with the retry's outcome set, when
  // the answer did not allow it: it is decided as any call, and refused
  // whatever that decides (keep_refused).
  bool settle_retry(OutgoingLine& line, std::unique_ptr<CallInFlight>& owned,
                    const std::string& key, PendingRequest& entry, Outbox& out,
                    Clock::time_point now);
  // The `verdict` of a retry whose answer did not allow its change (`entry`
  // carries it, its outcome set): when the decision let the change go (the
  // agent read the file while the person decided, say), it is refused all
  // the same, with the refusal the person was asked about, as the 2025
  // era's answer settles the vetoed call.
  static void keep_refused(Verdict& verdict, const PendingRequest& entry);
  // Whether to answer the vetoed change of ledger `entry` with fsguard's
  // own question, in the 2026 era.
  bool asks_in_answer(const Veto& veto, const PendingRequest& entry) const;
  // Answers the change `call` (its `arguments` as parsed, key `key`),
  // refused with `verdict`, with resultType input_required: fsguard's
  // question and a requestState binding it.
  void ask_in_answer(const CallInFlight& call, const nlohmann::json& arguments,
                     const std::string& key, Verdict& verdict, Outbox& out,
                     Clock::time_point now);
  // In the 2026 era, what the veto of the change of `entry` says of the
  // person: their answer to a retry, or that the request did not declare
  // elicitation.
  void note_override_outcome(Veto& veto, const PendingRequest& entry) const;
  // The hash of what a question about `veto` shows the person of its file,
  // and its `preview` for a not_read; nothing if the file cannot be read.
  std::optional<ContentHash> question_shown(const Veto& veto, std::optional<FilePreview>& preview);
  // A guarded change's `line` as it goes upstream in the 2026 era: without
  // the Tasks extension in its envelope, so the server answers it at once.
  void forward_change_line(OutgoingLine& line) const;
  // Records what `call`'s `answer` showed or changed. Returns false when
  // `out` carries fsguard's version of the answer instead (a note on a
  // stale change it carried over).
  bool record_answer(CallInFlight& call, UpstreamMessage& answer, Outbox& out,
                     Clock::time_point now);
  // Whether the text that `call`, a read, shows of its one file is kept
  // once its answer shows it whole (record_answer(); answer_text_wanted()
  // asks before the answer is skimmed).
  bool keeps_text_shown(const CallInFlight& call) const;
  // `delta` +1: `call` is in flight on its files (or asked about); -1: done.
  void mark_busy(const CallInFlight& call, int delta);
  // Sets why `held` waits, and the files it waits with, from `attempt`.
  static void hold_again(Queue::Held& held, Attempt&& attempt);
  void release_held(Outbox& out, Clock::time_point now);
  void after_listing(Outbox& out, Clock::time_point now);

  Queue m_queue; // held calls, files busy, moves in flight, partial-check holds
  // verify: upstream: the view of the server's files, fsguard's own reads,
  // the partial checks. First: the Disk below may be its view.
  UpstreamVerification m_verification;
  Disk& m_disk;                         // the view, or the disk given
  GuardSettings m_settings;
  bool m_auditing = false;
  Tracker m_tracker;
  // What answers showed and the records they leave; the kept texts; moments.
  AnswerRecords m_records;
  Ledger m_ledger;
  ServerPaths m_paths;
  SessionEra m_era; // the session's era, and what the client's requests said of it
  std::string m_client_name; // clientInfo.name from initialize or the 2026 envelope
  bool m_client_elicits = false; // it declared form elicitation, and fsguard can ask it
  OverrideQuestions m_overrides; // override: ask: the questions to the person
  OverrideStates m_states; // the 2026 era's: the requestState of fsguard's questions
  IdentityChecks m_identity;          // the server's reports of files before changes
  // When fsguard asks for the server's directories again, and how long a
  // call waits for them.
  ListingSchedule m_listings;
};

} // namespace fsguard
