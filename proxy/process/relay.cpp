#include "proxy/process/relay.hpp"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>

#include "proxy/app/config_reload.hpp"
#include "proxy/process/framing.hpp"
#include "proxy/process/heap.hpp"
#include "proxy/guard/client_intake.hpp"
#include "proxy/guard/upstream_intake.hpp"
#include "proxy/stores/persistence.hpp"
#include "proxy/process/session.hpp"
#include "proxy/app/start_failure.hpp"
#include "proxy/process/stderr_writer.hpp"
#include "tracker/joined.hpp"

namespace fsguard {

namespace {

// At the client's EOF, the calls fsguard still holds go upstream as the
// calls before them are answered, before the upstream's stdin is closed
// (the server answers what it has read before it exits): held, or let go
// but still waiting behind a write (a long answer to a slow client).
// Bounded: after the call timeout, Guard::expire lets held calls go ahead
// anyway.
Task<void> wait_for_answers(Session& session)
{
  constexpr auto k_poll = 20ms;
  const auto deadline =
    std::chrono::steady_clock::now() + session.config.call_timeout + k_shutdown_step;
  while ((session.guard.holds_calls() || session.outboxes_owing_upstream > 0)
         && !session.upstream.status()
         && std::chrono::steady_clock::now() < deadline) {
    Timer pause(session.context, k_poll);
    co_await pause.async_wait(k_use);
  }
}

// Ticks Guard::tick: a call the upstream never answers stops holding back
// the calls behind it, and directories in doubt are asked for again.
Task<void> tick_guard(Session& session)
{
  while (!session.upstream.status()) {
    session.tick_timer.expires_after(session.guard.tick_pause());
    co_await session.tick_timer.async_wait(k_use);
    Outbox out;
    session.guard.tick(std::chrono::steady_clock::now(), out);
    co_await flush(session, out);
  }
}

Task<void> relay_client_to_upstream(Session& session)
{
  LineReader reader(session.client_in, session.config.max_line_bytes);
  session.heap_trimmer.watch(reader.buffer(), reader.k_buffer_bytes);
  ClientIntake intake(session.guard);
  Outbox out; // reused for every line (flush empties it)
  for (;;) {
    reader.set_max_line_bytes(session.config.max_line_bytes); // it may be reloaded
    auto next = reader.try_next(); // as reader.next(), in this coroutine's frame
    while (!next) {
      reader.note_read(co_await reader.read_more());
      next = reader.try_next();
    }
    const LineEvent event = *next;
    if (event.status == LineStatus::eof || session.client_done) {
      break;
    }
    if (session.upstream.status()) {
      intake.upstream_gone(session.upstream.gone_message());
    }
    if (event.status == LineStatus::too_long) {
      intake.take_too_long(session.config.max_line_bytes, out);
    } else {
      session.heap_trimmer.on_message(event.text.size());
      // Not copied: it goes on from the reader's buffer, unless the guard
      // keeps it or the upstream does not take it at once (then it is copied).
      intake.take(OutgoingLine::borrowed(reader.line_with_newline()), std::chrono::steady_clock::now(),
                  out);
    }
    if (!flush_at_once(session, out)) {
      co_await flush(session, out);
    }
  }
  session.client_done = true;
  co_await wait_for_answers(session);
  co_await session.upstream.stop();
}

// What an upstream line left to send once what the client's pipe took at
// once is written, in this order before the next line is read: the rest of
// the line, which is still in the reader's buffer, then what the guard
// queued.
struct UpstreamLineLeft {
  std::optional<std::string_view> line_rest; // "" if only its newline is left
  Outbox out; // reused from line to line: flush() empties it
};

// Once the upstream wrote its first line its processes run: whether one of
// them (or its command) runs where fsguard's paths may not be the
// server's. Before any change is decided: guarded calls wait for the
// initialize result.
void learn_where_upstream_runs(Session& session)
{
  session.where_upstream_runs_known = true;
  if (auto why = session.upstream.runs_elsewhere(session.command)) {
    session.log.info(
      *why + ", so its paths may name other files than fsguard's: "
      + (session.config.verify == Verify::upstream
           ? std::string("with verify upstream fsguard reads each file through the server")
           : std::string("fsguard asks the server about each file before a change "
                         "(get_file_info), and refuses the change if it cannot")));
    session.guard.set_server_elsewhere(std::move(*why));
  }
}

Task<void> relay_upstream_to_client(Session& session)
{
  LineReader reader(session.upstream.output(), session.config.max_line_bytes);
  session.heap_trimmer.watch(reader.buffer(), reader.k_buffer_bytes);
  UpstreamIntake intake(session.guard);
  UpstreamLineLeft left;
  for (;;) {
    reader.set_max_line_bytes(session.config.max_line_bytes);
    auto next = reader.try_next(); // as reader.next(), in this coroutine's frame
    while (!next) {
      reader.note_read(co_await reader.read_more());
      next = reader.try_next();
    }
    const LineEvent event = *next;
    if (event.status == LineStatus::eof) {
      break;
    }
    if (!session.where_upstream_runs_known) {
      learn_where_upstream_runs(session);
    }
    if (event.status == LineStatus::too_long) {
      intake.take_too_long(event.text, event.length, session.config.max_line_bytes,
                           std::chrono::steady_clock::now(), left.out);
      co_await flush(session, left.out);
      continue;
    }
    session.heap_trimmer.on_message(event.text.size());
    // Sent from the reader's buffer, as far as the client's pipe takes it
    // at once; the guard records what it showed once it is on its way.
    const UpstreamLine fate = intake.take(event.text, std::chrono::steady_clock::now(), left.out);
    if (fate == UpstreamLine::blank) {
      continue;
    }
    session.upstream.note_answer();
    if (fate == UpstreamLine::relayed) {
      left.line_rest = session.to_client.try_write(event.text);
    }
    intake.line_sent();
    if (!left.line_rest) {
      if (!left.out.empty()) {
        flush_at_once(session, left.out); // else after the line's rest
      }
    } else {
      // The calls the answer let go are owed to the upstream meanwhile.
      note_owing_upstream(session, left.out, Owing::begins);
      co_await session.to_client.write(*std::exchange(left.line_rest, std::nullopt));
      note_owing_upstream(session, left.out, Owing::settled);
    }
    if (!left.out.empty()) {
      co_await flush(session, left.out);
    }
  }
  session.upstream.note_output_ended();
}

// Runs the session's parts and ends it in order: once the upstream has
// exited and its output is drained, pending requests are answered, and the
// client's output is closed.
Task<void> supervise(Session& session)
{
  auto executor = co_await asio::this_coro::executor;
  asio::co_spawn(executor, relay_upstream_to_client(session), asio::detached);
  asio::co_spawn(executor, session.upstream.relay_stderr(), asio::detached);
  asio::co_spawn(executor, relay_client_to_upstream(session), asio::detached);
  asio::co_spawn(executor, tick_guard(session), asio::detached);

  co_await session.upstream.wait();
  session.tick_timer.cancel();
  co_await session.upstream.clear_group();
  co_await session.upstream.drain_output(); // relay what it wrote last
  {
    // The errors owed for unanswered calls wait behind any line still being
    // written: a client that stopped reading gets them for a moment, then
    // its output is given up on (closed once that line is written), as
    // run_session does once this ends, and the session ends.
    Timer give_up(executor, k_shutdown_step);
    give_up.async_wait([&session](boost::system::error_code error) {
      if (!error) {
        session.to_client.close();
      }
    });
    co_await answer_pending_with_errors(session);
    give_up.cancel();
  }
  if (session.upstream.exited_early() && !session.client_done) {
    // Answer what the client sends next for a moment, then hang up so the
    // client sees the server is gone.
    session.linger_timer.expires_after(k_linger_after_upstream_exit);
    co_await session.linger_timer.async_wait(k_use);
  }
  session.client_done = true;
  boost::system::error_code ignored;
  session.client_in.cancel(ignored);
  session.upstream.input().close();
  session.to_client.close(); // once its last line is written
}

// On SIGTERM, SIGINT or SIGHUP: stops reading the client and shuts the
// upstream down in order.
Task<void> handle_signals(Session& session, asio::signal_set& signals)
{
  auto [error, signal_number] = co_await signals.async_wait(k_use);
  if (error) {
    co_return;
  }
  session.log.info("received signal " + std::to_string(signal_number) + "; shutting down");
  session.client_done = true;
  boost::system::error_code ignored;
  session.client_in.cancel(ignored);
  // A stop() already under way (the client's EOF) may be waiting for the
  // upstream to finish answering: a signal cuts that wait short.
  session.upstream.hurry();
  co_await session.upstream.stop();
}

// The upstream inherits fsguard's environment and working directory. Node's
// os.homedir() (libuv) takes $HOME whenever it is set, even to "" or a
// relative path, and only then the password database.
HomeDirectory home_directory()
{
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    return std::string(home);
  }
  if (const passwd* entry = ::getpwuid(::getuid()); entry != nullptr && entry->pw_dir != nullptr) {
    return std::string(entry->pw_dir);
  }
  return std::nullopt;
}

std::string working_directory()
{
  std::error_code error;
  const auto cwd = std::filesystem::current_path(error);
  return error ? std::string() : cwd.string();
}

} // namespace

int run_session(const ConfigInputs& inputs, const Config& config,
                const std::vector<std::string>& command, Log& log)
{
  AuditLog audit;
  if (!config.audit_log.empty()) {
    auto opened = AuditLog::open(config.audit_log);
    if (!opened) {
      log.error(opened.error());
      return 2; // a config problem, like any other
    }
    audit = std::move(opened).value();
  }
  log.info("guarding \"" + joined(command, " ") + "\" (profile: "
              + (config.tools ? std::string("the config's tools map")
                              : config.profile == "auto" ? std::string("detected from the server")
                                                         : config.profile)
              + ", mode: "
              + std::string(to_string(config.mode)) + ", config: "
              + (inputs.file ? *inputs.file : std::string("none")) + ", audit log: "
              + (audit.enabled() ? audit.path() : std::string("off")) + ")");
  keep_large_blocks_on_heap();
  // One thread runs everything (no thread is ever started, and signals come
  // in through Asio's own pipe), so the scheduler and the reactor need no
  // locks: about 1,300 instructions fewer per guarded read.
  asio::io_context context(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE);
  auto upstream = start_upstream(context, command);
  if (!upstream) {
    log.error(upstream.error());
    answer_first_request(start_failure_message(upstream.error()));
    return 1;
  }
  Session session(context, std::move(upstream).value(), config, log, home_directory(),
                  working_directory());
  StderrWriter stderr_writer(context.get_executor());
  const LogSinkScope log_to_writer(log, stderr_writer);
  asio::co_spawn(context, stderr_writer.drain(), asio::detached);
  session.inputs = inputs;
  session.command = command;
  session.audit = std::move(audit);
  session.guard.set_auditing(session.audit.enabled());
  open_persistence(session, command);
  asio::signal_set signals(context, SIGTERM, SIGINT, SIGHUP);

  Timer last_words(context);

  // The session ends when the client's output has been flushed and closed.
  asio::co_spawn(context, session.to_client.closed(), [&](std::exception_ptr) { context.stop(); });
  asio::co_spawn(context, handle_signals(session, signals), asio::detached);
  asio::co_spawn(context, watch_config(session), asio::detached);
  asio::co_spawn(context, keep_state(session), asio::detached);
  asio::co_spawn(context, supervise(session), [&](std::exception_ptr failure) {
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& exception) {
        log.error(std::string("internal error: ") + exception.what());
      }
    }
    signals.cancel();
    // A client that stopped reading must not keep fsguard alive.
    last_words.expires_after(k_shutdown_step);
    last_words.async_wait([&](boost::system::error_code) { context.stop(); });
  });
  context.run();
  save_state(session, k_state_exit_wait);
  stderr_writer.finish(k_stderr_grace);
  // The records are saved: what the guard knows of each file need not be
  // freed piece by piece (about 1,000 instructions a file read). Everything
  // else is destroyed as usual: the upstream reaped, the shared ledger and
  // the audit log closed.
  session.guard.leave_files_to_exit();

  const int status = session.upstream.status().value_or(1);
  if (session.upstream.exited_early() && status == 0) {
    return 1; // the session broke off; never report success for that
  }
  return status;
}

} // namespace fsguard
