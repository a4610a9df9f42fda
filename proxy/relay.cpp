#include "proxy/relay.hpp"

#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "proxy/audit_log.hpp"
#include "proxy/child_process.hpp"
#include "proxy/config_watch.hpp"
#include "proxy/framing.hpp"
#include "proxy/guard.hpp"
#include "proxy/message.hpp"
#include "proxy/real_disk.hpp"
#include "proxy/stderr_tail.hpp"

namespace fsguard {

namespace asio = boost::asio;
using asio::awaitable;
using namespace std::chrono_literals;

namespace {

constexpr auto k_use = asio::as_tuple(asio::use_awaitable);

// Lines waiting for one output stream. One writer coroutine drains it, so
// writes never overlap; its bounded capacity pushes back on the producers.
using LineQueue = asio::experimental::channel<void(boost::system::error_code, std::string)>;
// One line waiting per stream bounds fsguard's memory to a few times the
// largest message, and stops reading a peer while the other is slow.
constexpr std::size_t k_queue_capacity = 1;

// Grace periods of the shutdown: stdin closed, then SIGTERM, then SIGKILL.
constexpr auto k_shutdown_step = 2s;
// How long fsguard keeps answering the client after the upstream died.
constexpr auto k_linger_after_upstream_exit = 2s;

struct Session {
  Session(asio::io_context& io, Upstream upstream_process, const Config& settings, Log& logger,
          std::string home, std::string cwd)
    : context(io),
      upstream(std::move(upstream_process)),
      client_in(context, STDIN_FILENO),
      client_out(context, STDOUT_FILENO),
      to_upstream(context, k_queue_capacity),
      to_client(context, k_queue_capacity),
      guard(disk, settings, logger, std::move(home), std::move(cwd)),
      config(settings),
      log(logger),
      shutdown_timer(context),
      linger_timer(context),
      output_done(context, asio::steady_timer::time_point::max())
  {
  }

  asio::io_context& context;
  Upstream upstream;
  asio::posix::stream_descriptor client_in;
  asio::posix::stream_descriptor client_out;
  LineQueue to_upstream;
  LineQueue to_client;
  RealDisk disk;
  Guard guard;
  Config config;
  Log& log;

  // Client requests not yet answered, by id_key, to answer if the upstream dies.
  std::unordered_map<std::string, nlohmann::json> pending;
  std::optional<int> upstream_status; // set once the upstream has exited
  bool upstream_exited_early = false; // before fsguard asked it to stop
  bool stopping = false;
  bool client_done = false;
  bool upstream_output_done = false;
  bool listing_scheduled = false;
  asio::steady_timer shutdown_timer;
  asio::steady_timer linger_timer;
  asio::steady_timer output_done; // cancelled when the upstream's stdout ends
  StderrTail stderr_tail;
  bool upstream_answered = false; // the upstream has written at least one message
  ConfigInputs inputs;            // to merge a changed config file again
  AuditLog audit;
};

// An empty string in a LineQueue means "no more lines".
const std::string k_end_of_stream;

std::string describe_status(int status)
{
  if (status >= 128) {
    return "killed by signal " + std::to_string(status - 128);
  }
  return "status " + std::to_string(status);
}

template <class Stream>
awaitable<void> drain_queue(LineQueue& queue, Stream& stream, Session& session,
                            const char* peer)
{
  bool broken = false;
  for (;;) {
    auto [error, line] = co_await queue.async_receive(k_use);
    if (error || line.empty()) {
      break;
    }
    if (broken) {
      continue; // keep draining so producers never block on a dead peer
    }
    auto [write_error, written] = co_await asio::async_write(stream, asio::buffer(line), k_use);
    if (write_error) {
      broken = true;
      session.log.info(std::string("cannot write to the ") + peer + ": " + write_error.message());
    }
  }
  boost::system::error_code ignored;
  stream.close(ignored);
}

awaitable<void> send(LineQueue& queue, std::string line)
{
  co_await queue.async_send(boost::system::error_code{}, std::move(line), k_use);
}

awaitable<void> flush(Session& session, Outbox& out)
{
  for (const auto& key : out.answered) {
    session.pending.erase(key);
  }
  for (auto& line : out.to_client) {
    co_await send(session.to_client, std::move(line));
  }
  for (auto& line : out.to_upstream) {
    co_await send(session.to_upstream, std::move(line));
  }
  out = Outbox{};
}

std::string upstream_gone_message(const Session& session)
{
  return "fsguard: the upstream server exited (" + describe_status(*session.upstream_status)
         + ") and cannot answer; restart the MCP server to continue";
}

awaitable<void> answer_pending_with_errors(Session& session)
{
  auto pending = std::move(session.pending);
  session.pending.clear();
  for (auto& [key, id] : pending) {
    co_await send(session.to_client, error_response(id, -32000, upstream_gone_message(session)));
  }
}

// Closes the upstream's stdin, then escalates to SIGTERM and SIGKILL on its
// process group until it has exited.
awaitable<void> stop_upstream(Session& session)
{
  if (session.stopping) {
    co_return;
  }
  session.stopping = true;
  co_await send(session.to_upstream, k_end_of_stream);
  for (int signal_number : {0, SIGTERM, SIGKILL}) {
    if (session.upstream_status) {
      co_return;
    }
    if (signal_number != 0) {
      session.log.info(std::string("the upstream did not exit; sending ")
                       + (signal_number == SIGTERM ? "SIGTERM" : "SIGKILL"));
      signal_upstream_group(session.upstream, signal_number);
    }
    session.shutdown_timer.expires_after(k_shutdown_step);
    co_await session.shutdown_timer.async_wait(k_use);
  }
}

// While the upstream's allowed directories are in doubt (a roots change in
// progress), ask again after a growing pause, so relative paths resolve again
// as soon as the server has settled.
awaitable<void> ask_for_listing_later(Session& session)
{
  auto delay = std::chrono::milliseconds(50);
  for (int attempt = 0; attempt < 12 && !session.upstream_status; ++attempt) {
    asio::steady_timer pause(session.context, delay);
    co_await pause.async_wait(k_use);
    if (!session.guard.server_paths().wants_listing()) {
      continue;
    }
    Outbox out;
    session.guard.server_paths().ask_for_listing(out);
    co_await flush(session, out);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
  session.listing_scheduled = false;
}

void schedule_listing(Session& session)
{
  if (!session.listing_scheduled && session.guard.server_paths().wants_listing()) {
    session.listing_scheduled = true;
    asio::co_spawn(session.context, ask_for_listing_later(session), asio::detached);
  }
}

// The id of a message refused unparsed, found by a skim, if it is a plain
// string or number; null otherwise.
nlohmann::json shallow_id(std::string_view text)
{
  const SkimmedMessage skimmed = skim_message(text);
  if (skimmed.raw_id.empty() || nesting_depth(skimmed.raw_id) > 0) {
    return nullptr;
  }
  auto id = nlohmann::json::parse(skimmed.raw_id, nullptr, false);
  return id.is_string() || id.is_number() ? id : nlohmann::json();
}

// Handles one client line: `line` is the line with its newline (owned, to
// forward without copying), `text` the same without it.
awaitable<void> handle_client_line(Session& session, std::string line)
{
  const std::string_view text(line.data(), line.size() - 1);
  ClientMessage message = parse_client_message(text);
  switch (message.kind) {
  case MessageKind::invalid:
    session.log.warn("the client sent a line that is not valid JSON; answered with a parse error");
    co_await send(session.to_client,
                  error_response(nullptr, -32700, "fsguard: parse error: the line is not valid JSON"));
    co_return;
  case MessageKind::too_deep:
    co_await send(session.to_client,
                  error_response(shallow_id(text), -32600,
                                 "fsguard: message refused: arrays and objects nested deeper than "
                                   + std::to_string(k_max_nesting) + " levels"));
    co_return;
  case MessageKind::bad_id:
    co_await send(session.to_client,
                  error_response(nullptr, -32600,
                                 "fsguard: invalid request: the id must be a string or a number"));
    co_return;
  case MessageKind::batch:
    co_await send(session.to_client,
                  error_response(nullptr, -32600,
                                 "fsguard: JSON-RPC batches are not supported; "
                                 "send each message on its own line"));
    co_return;
  case MessageKind::notification:
    if (method_of(message.body) == "tools/call") {
      session.log.warn("dropped a tools/call without an id (a notification cannot be guarded)");
      co_return;
    }
    if (method_of(message.body) == "notifications/cancelled") {
      Outbox out;
      session.guard.on_cancelled(message.body.value("params", nlohmann::json::object()), out);
      co_await flush(session, out);
    }
    break;
  case MessageKind::request: {
    const nlohmann::json& id = message.body["id"];
    if (session.upstream_status) {
      co_await send(session.to_client, error_response(id, -32000, upstream_gone_message(session)));
      co_return;
    }
    if (id.is_string() && id.get_ref<const std::string&>().starts_with(k_own_id_prefix)) {
      co_await send(session.to_client,
                    error_response(id, -32600,
                                   "fsguard: request ids starting with \"fsguard/\" are "
                                   "reserved for fsguard's own requests; use another id"));
      co_return;
    }
    session.pending[id_key(id)] = id;
    session.guard.server_paths().on_client_request(method_of(message.body), id_key(id));
    if (method_of(message.body) == "tools/call") {
      Outbox out;
      session.guard.on_tool_call(std::move(line), message.body, message.content_hash, out);
      message.body = nullptr; // free the parsed copy before waiting on a slow peer
      co_await flush(session, out);
      co_return;
    }
    break;
  }
  case MessageKind::response: {
    const std::string key = id_key(message.body["id"]);
    if (session.guard.server_paths().awaits_client(key) && !session.upstream_status) {
      // The client's roots: forward them first, then ask the server which
      // directories it adopted.
      co_await send(session.to_upstream, std::move(line));
      Outbox out;
      session.guard.server_paths().on_client_response(key, message.body, out);
      co_await flush(session, out);
      schedule_listing(session);
      co_return;
    }
    break;
  }
  case MessageKind::other:
    break;
  }
  message.body = nullptr;
  if (!session.upstream_status) {
    co_await send(session.to_upstream, std::move(line));
  }
}

awaitable<void> relay_client_to_upstream(Session& session)
{
  LineReader reader(session.client_in, session.config.max_line_bytes);
  for (;;) {
    reader.set_max_line_bytes(session.config.max_line_bytes); // it may be reloaded
    const LineEvent event = co_await reader.next();
    if (event.status == LineStatus::eof || session.client_done) {
      break;
    }
    if (event.status == LineStatus::too_long) {
      session.log.warn("discarded a client message longer than "
                       + std::to_string(session.config.max_line_bytes) + " bytes");
      co_await send(session.to_client,
                    error_response(nullptr, -32600,
                                   "fsguard: message discarded: longer than max_line_bytes ("
                                     + std::to_string(session.config.max_line_bytes)
                                     + " bytes)"));
      continue;
    }
    if (event.text.find_first_not_of(" \t\r") == std::string_view::npos) {
      continue;
    }
    co_await handle_client_line(session, reader.take_line());
  }
  session.client_done = true;
  co_await stop_upstream(session);
}

// The id key and method of an upstream line that the skim could not read
// (escaped or repeated keys): from a full parse, or nothing if not JSON.
std::optional<SkimmedMessage> parse_upstream_line(std::string_view text,
                                                  std::string& raw_id, std::string& raw_method)
{
  if (nesting_depth(text) > k_max_nesting) {
    return std::nullopt;
  }
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) {
    return std::nullopt;
  }
  SkimmedMessage message;
  message.is_json_object = parsed.is_object();
  if (parsed.is_object()) {
    if (parsed.contains("id")) {
      raw_id = parsed["id"].dump();
      message.raw_id = raw_id;
    }
    if (parsed.contains("method")) {
      message.has_method = true;
      raw_method = parsed["method"].dump();
      message.raw_method = raw_method;
    }
    message.has_result_or_error = parsed.contains("result") || parsed.contains("error");
  }
  return message;
}

// Handles one upstream line, owned with its newline as for the client.
awaitable<void> handle_upstream_line(Session& session, std::string line)
{
  const std::string_view text(line.data(), line.size() - 1);
  session.upstream_answered = true;
  SkimmedMessage skimmed = skim_message(text);
  std::string raw_id;
  std::string raw_method;
  if (!skimmed.is_json_object) {
    const auto parsed = parse_upstream_line(text, raw_id, raw_method);
    if (!parsed) {
      constexpr std::size_t k_shown = 500;
      session.log.warn("the upstream wrote a line that is not JSON-RPC to stdout (not relayed): "
                       + std::string(text.substr(0, k_shown))
                       + (text.size() > k_shown ? "..." : ""));
      co_return;
    }
    skimmed = *parsed;
  }
  if (!skimmed.raw_id.empty()) {
    const auto id = nlohmann::json::parse(skimmed.raw_id, nullptr, false);
    const std::string key = id.is_discarded() ? std::string() : id_key(id);
    if (skimmed.has_method) {
      const auto method = nlohmann::json::parse(skimmed.raw_method, nullptr, false);
      if (method.is_string()) {
        session.guard.server_paths().on_server_request(method.get_ref<const std::string&>(), key);
      }
    } else if (skimmed.has_result_or_error) {
      session.pending.erase(key);
      if (session.guard.awaits(key)) {
        Outbox out;
        if (session.guard.on_response(key, text, out)) {
          co_await send(session.to_client, std::move(line));
        }
        co_await flush(session, out);
        schedule_listing(session);
        co_return;
      }
    }
  }
  co_await send(session.to_client, std::move(line));
}

awaitable<void> relay_upstream_to_client(Session& session)
{
  LineReader reader(session.upstream.output, session.config.max_line_bytes);
  for (;;) {
    reader.set_max_line_bytes(session.config.max_line_bytes);
    const LineEvent event = co_await reader.next();
    if (event.status == LineStatus::eof) {
      break;
    }
    if (event.status == LineStatus::too_long) {
      session.log.error("dropped an upstream message longer than "
                        + std::to_string(session.config.max_line_bytes)
                        + " bytes; raise max_line_bytes in the config to relay it");
      continue;
    }
    if (event.text.find_first_not_of(" \t\r") != std::string_view::npos) {
      co_await handle_upstream_line(session, reader.take_line());
    }
  }
  session.upstream_output_done = true;
  session.output_done.cancel();
}

// Copies the upstream's stderr to fsguard's stderr as it comes, keeping the
// tail to explain an early exit.
awaitable<void> relay_upstream_stderr(Session& session)
{
  std::array<char, 16 * 1024> buffer;
  for (;;) {
    auto [error, count] = co_await session.upstream.errors.async_read_some(
      asio::buffer(buffer), k_use);
    if (count > 0) {
      const std::string_view bytes(buffer.data(), count);
      session.stderr_tail.append(bytes);
      write_to_stderr(bytes);
    }
    if (error) {
      break;
    }
  }
}

awaitable<void> wait_for_upstream(Session& session)
{
  co_await session.upstream.process.async_wait(k_use);
  const int native = session.upstream.process.native_exit_code();
  const int status = WIFSIGNALED(native) ? 128 + WTERMSIG(native) : WEXITSTATUS(native);
  session.upstream_status = status;
  session.upstream_exited_early = !session.stopping;
  session.shutdown_timer.cancel();
  const std::string tail = session.stderr_tail.text();
  const std::string explained = tail.empty() ? "; it wrote nothing to stderr"
                                             : "; the end of its stderr:\n" + tail;
  if (session.upstream_exited_early) {
    session.log.error(std::string("the upstream server exited unexpectedly (")
                      + describe_status(status) + ")"
                      + (session.upstream_answered ? "" : " before answering anything")
                      + explained);
  } else if (status != 0 && !session.upstream_answered) {
    session.log.error("the upstream server failed (" + describe_status(status)
                      + ") before answering anything" + explained);
  } else {
    session.log.info("the upstream server exited (" + describe_status(status) + ")");
  }
}

// Once the upstream has exited, nothing of its process group may stay:
// SIGTERM, a grace period, then SIGKILL for whatever ignored it.
awaitable<void> clear_upstream_group(Session& session)
{
  const pid_t group = session.upstream.process.id();
  auto group_alive = [group] { return group > 0 && (::kill(-group, 0) == 0 || errno == EPERM); };
  if (!group_alive()) {
    co_return;
  }
  signal_upstream_group(session.upstream, SIGTERM);
  constexpr auto k_poll = 50ms;
  for (auto waited = 0ms; waited < k_shutdown_step; waited += k_poll) {
    asio::steady_timer pause(session.context, k_poll);
    co_await pause.async_wait(k_use);
    if (!group_alive()) {
      co_return;
    }
  }
  session.log.info("processes the upstream left behind ignored SIGTERM; sending SIGKILL");
  signal_upstream_group(session.upstream, SIGKILL);
}

// Runs the session's parts and ends it in order: once the upstream has
// exited and its output is drained, pending requests are answered, and the
// client's output is closed.
awaitable<void> supervise(Session& session)
{
  auto executor = co_await asio::this_coro::executor;
  asio::co_spawn(executor, drain_queue(session.to_upstream, session.upstream.input, session, "upstream"),
                 asio::detached);
  asio::co_spawn(executor, relay_upstream_to_client(session), asio::detached);
  asio::co_spawn(executor, relay_upstream_stderr(session), asio::detached);
  asio::co_spawn(executor, relay_client_to_upstream(session), asio::detached);

  co_await wait_for_upstream(session);
  co_await clear_upstream_group(session);
  if (!session.upstream_output_done) {
    // Relay what it wrote last; but a process outside its group may still
    // hold its stdout, so do not wait for ever.
    session.output_done.expires_after(k_shutdown_step);
    co_await session.output_done.async_wait(k_use);
    if (!session.upstream_output_done) {
      session.log.warn("the upstream's stdout stayed open after it exited; stopped reading it");
      boost::system::error_code ignored;
      session.upstream.output.close(ignored);
    }
  }
  co_await answer_pending_with_errors(session);
  if (session.upstream_exited_early && !session.client_done) {
    // Answer what the client sends next for a moment, then hang up so the
    // client sees the server is gone.
    session.linger_timer.expires_after(k_linger_after_upstream_exit);
    co_await session.linger_timer.async_wait(k_use);
  }
  session.client_done = true;
  boost::system::error_code ignored;
  session.client_in.cancel(ignored);
  session.to_upstream.close();
  co_await send(session.to_client, k_end_of_stream);
}

// Applies a changed config file: a valid one replaces the config in force
// (what was read stays known); a broken one is rejected and the last good
// config stays.
void reload_config(Session& session)
{
  auto loaded = load_effective_config(session.inputs);
  if (!loaded) {
    session.log.error("config not reloaded, the last good config stays in force: "
                      + loaded.error());
    session.audit.write({{"event", "config_reload"}, {"file", *session.inputs.file},
                         {"result", "rejected"}, {"reason", loaded.error()}});
    return;
  }
  Config config = std::move(loaded).value();
  const Mode previous = session.config.mode;
  if (config.audit_log != session.audit.path()) {
    if (config.audit_log.empty()) {
      session.audit = AuditLog();
    } else if (auto reopened = AuditLog::open(config.audit_log)) {
      session.audit = std::move(reopened).value();
    } else {
      session.log.error(reopened.error() + "; keeping the previous audit log");
      config.audit_log = session.audit.path();
    }
  }
  session.config = config;
  session.guard.set_config(config);
  session.log.set_level(config.log_level);
  session.log.info("reloaded the config from " + *session.inputs.file + " (mode "
                   + std::string(to_string(config.mode)) + ")");
  session.audit.write({{"event", "config_reload"}, {"file", *session.inputs.file},
                       {"result", "applied"}});
  if (config.mode != previous) {
    session.log.warn("mode changed from " + std::string(to_string(previous)) + " to "
                     + std::string(to_string(config.mode)));
    session.audit.write({{"event", "mode_change"}, {"from", to_string(previous)},
                         {"to", to_string(config.mode)}, {"source", config.sources["mode"]}});
  }
}

awaitable<void> watch_config(Session& session)
{
  if (!session.inputs.file) {
    co_return;
  }
  auto watch = ConfigWatch::start(session.context, *session.inputs.file);
  if (!watch) {
    session.log.warn(watch.error() + "; config changes need a restart");
    co_return;
  }
  while (!session.upstream_status && co_await (*watch)->next_change()) {
    if (!session.upstream_status) {
      reload_config(session);
    }
  }
}

awaitable<void> handle_signals(Session& session, asio::signal_set& signals)
{
  auto [error, signal_number] = co_await signals.async_wait(k_use);
  if (error) {
    co_return;
  }
  session.log.info("received signal " + std::to_string(signal_number) + "; shutting down");
  session.client_done = true;
  boost::system::error_code ignored;
  session.client_in.cancel(ignored);
  co_await stop_upstream(session);
}

// The upstream inherits fsguard's environment and working directory; Node's
// os.homedir() reads $HOME first, then the password database.
std::string home_directory()
{
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  if (const passwd* entry = ::getpwuid(::getuid()); entry != nullptr && entry->pw_dir != nullptr) {
    return entry->pw_dir;
  }
  return {};
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
  log.summary("guarding \"" + joined(command, " ") + "\" (profile: "
              + (config.tools ? std::string("the config's tools map")
                              : config.profile == "auto" ? std::string("detected from the server")
                                                         : config.profile)
              + ", mode: "
              + std::string(to_string(config.mode)) + ", config: "
              + (inputs.file ? *inputs.file : std::string("none")) + ", audit log: "
              + (audit.enabled() ? audit.path() : std::string("off")) + ")");
  asio::io_context context;
  auto upstream = start_upstream(context, command);
  if (!upstream) {
    log.error(upstream.error());
    return 1;
  }
  Session session(context, std::move(upstream).value(), config, log, home_directory(),
                  working_directory());
  session.inputs = inputs;
  session.audit = std::move(audit);
  session.guard.set_audit_log(&session.audit);
  asio::signal_set signals(context, SIGTERM, SIGINT, SIGHUP);

  asio::steady_timer last_words(context);

  // The session ends when the client's output has been flushed and closed.
  asio::co_spawn(context, drain_queue(session.to_client, session.client_out, session, "client"),
                 [&](std::exception_ptr) { context.stop(); });
  asio::co_spawn(context, handle_signals(session, signals), asio::detached);
  asio::co_spawn(context, watch_config(session), asio::detached);
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

  const int status = session.upstream_status.value_or(1);
  if (session.upstream_exited_early && status == 0) {
    return 1; // the session broke off; never report success for that
  }
  return status;
}

} // namespace fsguard
