// One session's shared state, and the few operations every part of the
// relay uses on it: a line writer for each output stream, and the answers
// owed to the client when the upstream is gone.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "proxy/stores/audit_log.hpp"
#include "proxy/process/child_process.hpp"
#include "proxy/app/config.hpp"
#include "proxy/process/executor.hpp"
#include "proxy/guard/guard.hpp"
#include "proxy/process/heap.hpp"
#include "proxy/process/line_writer.hpp"
#include "proxy/process/request_state_key.hpp"
#include "proxy/app/log.hpp"
#include "proxy/guard/outbox.hpp"
#include "proxy/stores/real_disk.hpp"
#include "proxy/stores/sqlite_ledger.hpp"
#include "proxy/stores/state_file.hpp"
#include "proxy/process/upstream_process.hpp"

namespace fsguard {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// How long fsguard keeps answering the client after the upstream died.
constexpr auto k_linger_after_upstream_exit = 2s;

struct Session {
  Session(asio::io_context& io, Upstream upstream_process, const Config& settings, Log& logger,
          HomeDirectory home, std::string cwd)
    : context(io),
      upstream(io, std::move(upstream_process), logger),
      client_in(context, STDIN_FILENO),
      client_out(context, STDOUT_FILENO),
      to_client(client_out, logger, "client"),
      guard(disk, guard_settings(settings), std::move(home), std::move(cwd)),
      config(settings),
      log(logger),
      tick_timer(context),
      linger_timer(context),
      heap_trimmer(context.get_executor()),
      state_timer(context)
  {
    // No read of a larger file reaches the agent whole (see RealDisk).
    disk.set_max_hash_bytes(static_cast<std::int64_t>(settings.max_line_bytes));
    guard.set_request_state_key(request_state_key());
  }

  asio::io_context& context;
  UpstreamProcess upstream; // its stdin writer, status and shutdown
  Descriptor client_in;
  Descriptor client_out;
  LineWriter<Descriptor> to_client;
  RealDisk disk;
  Guard guard;
  Config config;
  Log& log;

  bool client_done = false; // fsguard reads no more client lines
  // Outboxes whose lines for the upstream (calls the guard let go, its own
  // requests) wait behind a write: at the client's EOF the upstream's stdin
  // stays open until they are written, as for a held call.
  int outboxes_owing_upstream = 0;
  Timer tick_timer;         // ticks for Guard::tick
  Timer linger_timer;
  ConfigInputs inputs;            // to merge a changed config file again
  std::vector<std::string> command; // the upstream's
  bool where_upstream_runs_known = false; // see learn_where_upstream_runs()
  AuditLog audit;
  HeapTrimmer heap_trimmer;

  // "state_file" and "shared_ledger" (see proxy/stores/persistence.hpp).
  Timer state_timer;
  StateKey state_key;
  std::optional<StateFile> state;
  std::optional<std::uint64_t> state_saved; // the records' generation saved last
  bool state_failing = false;
  std::unique_ptr<SqliteLedger> shared_ledger; // the guard uses it
};

// Writes `line` to one output stream (see LineWriter::write).
template <class Writer>
Task<void> send(Writer& writer, std::string line)
{
  co_await writer.write(line);
}

// Appends `record` to the session's audit log; a failed append is logged
// once per outage.
void audit(Session& session, const nlohmann::ordered_json& record);

// Logs and audits what `out` holds, and writes the lines that the client
// and the upstream take at once (try_write), without a coroutine frame or a
// pass through the event loop; what is written leaves `out`. True if `out`
// is empty; otherwise flush() writes the rest, in order. The hot path
// calls this first: nearly every message's lines go at once.
bool flush_at_once(Session& session, Outbox& out);

// Writes what the guard wants sent, logged and audited, and empties `out`
// (keeping its room for the next message).
Task<void> flush(Session& session, Outbox& out);

// Notes that `out`, if it holds lines for the upstream, owes them while its
// sender awaits a write (Session::outboxes_owing_upstream), and, with
// Owing::settled, that it no longer does. Not a destructor's work: a
// coroutine frame may be destroyed after the session.
enum class Owing { begins, settled };
void note_owing_upstream(Session& session, const Outbox& out, Owing owing);

// Answers every request still waiting for the upstream with an error.
Task<void> answer_pending_with_errors(Session& session);

} // namespace fsguard
