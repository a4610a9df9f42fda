// One session's shared state, and the few operations every part of the
// relay uses on it: a line writer for each output stream, and the answers
// owed to the client when the upstream is gone.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "proxy/audit_log.hpp"
#include "proxy/child_process.hpp"
#include "proxy/config.hpp"
#include "proxy/guard.hpp"
#include "proxy/heap.hpp"
#include "proxy/line_writer.hpp"
#include "proxy/log.hpp"
#include "proxy/outbox.hpp"
#include "proxy/real_disk.hpp"
#include "proxy/stderr_tail.hpp"

namespace fsguard {

namespace asio = boost::asio;
using asio::awaitable;
using namespace std::chrono_literals;

constexpr auto k_use = asio::as_tuple(asio::use_awaitable);

// Grace periods of the shutdown: stdin closed, then SIGTERM, then SIGKILL.
constexpr auto k_shutdown_step = 2s;
// How long fsguard keeps answering the client after the upstream died.
constexpr auto k_linger_after_upstream_exit = 2s;

struct Session {
  Session(asio::io_context& io, Upstream upstream_process, const Config& settings, Log& logger,
          HomeDirectory home, std::string cwd)
    : context(io),
      upstream(std::move(upstream_process)),
      client_in(context, STDIN_FILENO),
      client_out(context, STDOUT_FILENO),
      to_upstream(upstream.input, logger, "upstream"),
      to_client(client_out, logger, "client"),
      guard(disk, guard_settings(settings), std::move(home), std::move(cwd)),
      config(settings),
      log(logger),
      shutdown_timer(context),
      expiry_timer(context),
      linger_timer(context),
      output_done(context, asio::steady_timer::time_point::max()),
      heap_trimmer(context.get_executor())
  {
    // No read of a larger file reaches the agent whole (see RealDisk).
    disk.set_max_hash_bytes(static_cast<std::int64_t>(settings.max_line_bytes));
  }

  asio::io_context& context;
  Upstream upstream;
  asio::posix::stream_descriptor client_in;
  asio::posix::stream_descriptor client_out;
  LineWriter<asio::posix::stream_descriptor> to_upstream;
  LineWriter<asio::posix::stream_descriptor> to_client;
  RealDisk disk;
  Guard guard;
  Config config;
  Log& log;

  std::optional<int> upstream_status; // set once the upstream has exited
  bool upstream_exited_early = false; // before fsguard asked it to stop
  bool stopping = false;
  bool client_done = false;
  bool upstream_output_done = false;
  bool listing_scheduled = false;
  asio::steady_timer shutdown_timer;
  asio::steady_timer expiry_timer; // ticks for Guard::expire
  asio::steady_timer linger_timer;
  asio::steady_timer output_done; // cancelled when the upstream's stdout ends
  StderrTail stderr_tail;
  bool upstream_answered = false; // the upstream has written at least one message
  ConfigInputs inputs;            // to merge a changed config file again
  AuditLog audit;
  HeapTrimmer heap_trimmer;
};

// "status N", or "killed by signal N" for a `status` of 128+N.
std::string describe_status(int status);

// Writes `line` to one output stream (see LineWriter::write).
template <class Writer>
awaitable<void> send(Writer& writer, std::string line)
{
  co_await writer.write(line);
}

// Appends `record` to the session's audit log; a failed append is logged
// once per outage.
void audit(Session& session, const nlohmann::ordered_json& record);

// Writes what the guard wants sent, logged and audited.
awaitable<void> flush(Session& session, Outbox& out);

// The error text for requests the exited upstream cannot answer.
std::string upstream_gone_message(const Session& session);

// Answers every request still waiting for the upstream with an error.
awaitable<void> answer_pending_with_errors(Session& session);

} // namespace fsguard
