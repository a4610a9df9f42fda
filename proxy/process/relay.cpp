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
#include "proxy/jsonrpc/message.hpp"
#include "proxy/stores/persistence.hpp"
#include "proxy/process/session.hpp"
#include "proxy/app/start_failure.hpp"
#include "proxy/process/stderr_writer.hpp"
#include "tracker/joined.hpp"

namespace fsguard {

namespace {

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

// Whether `message` answers a request of fsguard's own (its id starts with
// k_own_id_prefix), which never reaches the server.
bool answers_own_request(const ClientMessage& message)
{
  const auto& id = member(message.body, "id");
  return message.kind == MessageKind::response && id.is_string()
         && id.get_ref<const std::string&>().starts_with(k_own_id_prefix);
}

// The longest line whose parsed tree is kept for the next line to reuse
// (requests are short and alike); a longer one's is freed before fsguard
// waits on a peer, so that its memory is not held twice.
constexpr std::size_t k_reused_tree_max_line = 64 * 1024;

void free_tree_if_long(ClientMessage& message, std::size_t line_bytes)
{
  if (line_bytes > k_reused_tree_max_line) {
    release_tree(message.body);
  }
}

void free_tree_if_long(PlainCallArguments& arguments, std::size_t line_bytes)
{
  if (line_bytes > k_reused_tree_max_line) {
    release_tree(arguments.tree);
  }
}

// Takes the client's `line` (with its newline; `text` without it) without
// a parse when it is a plain tools/call (Guard::scan_plain_call), its
// arguments read into `arguments` for a guarded tool; false, `line`
// untouched, otherwise.
bool take_plain_call(Session& session, OutgoingLine& line, std::string_view text,
                     PlainCallArguments& arguments, Outbox& out)
{
  const auto call = session.guard.scan_plain_call(text, arguments);
  return call && session.guard.take_plain_call(line, *call, arguments, out);
}

// Handles one client line: `line` is the line with its newline (borrowed
// from the reader's buffer, which stays as it is until this returns), `text`
// the same without it. `message` holds the last line's parse, whose tree
// this one is read into. `out` is empty, and is left empty.
Task<void> handle_client_line(Session& session, OutgoingLine line, std::string_view text,
                              ClientMessage& message, Outbox& out)
{
  parse_client_message(text, message);
  if (message.kind == MessageKind::notification || message.kind == MessageKind::response
      || message.kind == MessageKind::other) {
    if (const auto problem = message_the_server_drops(message.body);
        !problem.empty() && !answers_own_request(message)) {
      free_tree_if_long(message, text.size());
      co_await send(session.to_client,
                    error_response(nullptr, RpcError::invalid_request,
                                   "fsguard: invalid message, which the server would drop: "
                                     + problem));
      co_return;
    }
  }
  if (message.kind == MessageKind::invalid || message.kind == MessageKind::too_deep
      || message.kind == MessageKind::bad_id || message.kind == MessageKind::batch) {
    free_tree_if_long(message, text.size()); // refused: not held while the refusal waits
  }
  switch (message.kind) {
  case MessageKind::unreadable: {
    const auto& id = member(message.body, "id");
    std::string refusal = error_response(
      id.is_string() || id.is_number() ? id : nlohmann::json(), RpcError::parse_error,
      "fsguard: parse error: the server would not read this line, as "
        + std::string(json_parse_rejects(text)) + "; send plain JSON, one message per line");
    free_tree_if_long(message, text.size());
    co_await send(session.to_client, std::move(refusal));
    co_return;
  }
  case MessageKind::invalid:
    session.log.warn("the client sent a line that is not valid JSON; answered with a parse error "
                     "and did not forward it");
    co_await send(session.to_client,
                  error_response(nullptr, RpcError::parse_error,
                                 "fsguard: parse error: the line is not valid JSON; send one "
                                 "JSON-RPC message per line"));
    co_return;
  case MessageKind::too_deep:
    co_await send(session.to_client,
                  error_response(shallow_id(text), RpcError::invalid_request,
                                 "fsguard: message refused: arrays and objects nested deeper than "
                                   + std::to_string(k_max_nesting) + " levels"));
    co_return;
  case MessageKind::bad_id:
    co_await send(session.to_client,
                  error_response(nullptr, RpcError::invalid_request,
                                 "fsguard: invalid request: the id must be a string or a number"));
    co_return;
  case MessageKind::batch:
    co_await send(session.to_client,
                  error_response(nullptr, RpcError::invalid_request,
                                 "fsguard: JSON-RPC batches are not supported; "
                                 "send each message on its own line"));
    co_return;
  case MessageKind::notification: {
    if (method_of(message.body) == "tools/call") {
      session.log.warn("dropped a tools/call sent without an id: a notification gets no answer "
                       "and cannot be guarded; the client must send it as a request with an id");
      co_return;
    }
    if (session.upstream.status()) {
      co_return;
    }
    session.guard.on_client_notification(std::move(line), message.body, out);
    free_tree_if_long(message, text.size());
    co_await flush(session, out);
    co_return;
  }
  case MessageKind::request: {
    if (session.upstream.status()) {
      std::string gone = error_response(message.body["id"], RpcError::server_error,
                                        session.upstream.gone_message());
      free_tree_if_long(message, text.size());
      co_await send(session.to_client, std::move(gone));
      co_return;
    }
    session.guard.on_client_request(std::move(line), message.body, std::move(message.content), out);
    free_tree_if_long(message, text.size());
    if (!flush_at_once(session, out)) {
      co_await flush(session, out);
    }
    co_return;
  }
  case MessageKind::response: {
    if (session.upstream.status()) {
      co_return;
    }
    session.guard.on_client_response(std::move(line), message.body, out);
    free_tree_if_long(message, text.size());
    co_await flush(session, out);
    co_return;
  }
  case MessageKind::other:
    break;
  }
  free_tree_if_long(message, text.size());
  if (!session.upstream.status()) {
    co_await send(session.upstream.input(), std::move(line).take());
  }
}

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
  Outbox out;            // reused for every line (flush empties it)
  ClientMessage message; // likewise: each line is parsed into the last one's tree
  PlainCallArguments plain; // and a plain call's arguments into the last one's
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
    if (event.status == LineStatus::too_long) {
      session.log.warn("discarded a client message longer than "
                       + std::to_string(session.config.max_line_bytes)
                       + " bytes; raise max_line_bytes in the config if such messages are "
                         "legitimate");
      co_await send(session.to_client,
                    error_response(nullptr, RpcError::invalid_request,
                                   "fsguard: message discarded: longer than max_line_bytes ("
                                     + std::to_string(session.config.max_line_bytes)
                                     + " bytes); send less per call, or raise max_line_bytes in "
                                       "fsguard's config"));
      continue;
    }
    session.heap_trimmer.on_message(event.text.size());
    if (event.text.find_first_not_of(" \t\r") == std::string_view::npos) {
      continue;
    }
    const std::size_t line_bytes = event.text.size();
    // Not copied: it goes on from the reader's buffer, unless the guard
    // keeps it or the upstream does not take it at once (then it is copied).
    OutgoingLine line = OutgoingLine::borrowed(reader.line_with_newline());
    if (!session.upstream.status() && take_plain_call(session, line, event.text, plain, out)) {
      // a tools/call in the usual shape, unparsed but for a guarded one's arguments
      free_tree_if_long(plain, line_bytes);
      if (!flush_at_once(session, out)) {
        co_await flush(session, out);
      }
      continue;
    }
    co_await handle_client_line(session, std::move(line), event.text, message, out);
    free_tree_if_long(message, line_bytes); // whichever way the line went
  }
  session.client_done = true;
  co_await wait_for_answers(session);
  co_await session.upstream.stop();
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

// What handle_upstream_line() could not send at once, to be sent in this
// order before the next line is read: the rest of the line, which is still
// in the reader's buffer, then what the guard queued.
struct UpstreamLineLeft {
  std::optional<std::string_view> line_rest; // "" if only its newline is left
  Outbox out; // reused from line to line: flush() empties it
};

// Writes `text`, an upstream line, to the client as far as the client's
// pipe takes it at once; the rest is left in `left`.
void relay_at_once(Session& session, std::string_view text, UpstreamLineLeft& left)
{
  left.line_rest = session.to_client.try_write(text);
}

// Handles one upstream line, `text` (without its newline; it stays in the
// reader's buffer, and is written to the client from there), sending what
// the pipes take at once and leaving the rest in `left`, which comes
// empty. Not a coroutine: most lines are sent at once, and a coroutine
// would cost a frame for each.
void handle_upstream_line(Session& session, std::string_view text, UpstreamLineLeft& left)
{
  session.upstream.note_answer();
  // The answer to a call fsguard only relays goes on without a skim: its
  // id is at its end. (A line in that shape that is not JSON goes on too,
  // where the skim would drop it; the guard learns nothing from either.)
  const std::string_view id_from_ends = answer_id_from_ends(text);
  const std::string key_from_ends =
    id_from_ends.empty() ? std::string() : id_key_of_raw(id_from_ends);
  // The request it answers, looked up once for all that follows.
  Ledger::Answered answered_from_ends;
  if (!key_from_ends.empty()) {
    answered_from_ends = session.guard.find_answer(key_from_ends);
    if (session.guard.close_relayed_request(answered_from_ends)) {
      relay_at_once(session, text, left);
      return;
    }
  }
  // A whole read's text, decoded as its answer is skimmed: the skim then
  // need not scan it too.
  std::optional<DecodedAnswerText> first_text;
  if (!key_from_ends.empty()) {
    if (const auto wanted = session.guard.answer_text_wanted(answered_from_ends)) {
      if (!decode_sdk_answer_text(text, id_from_ends, first_text.emplace(), *wanted)) {
        first_text.reset();
      }
    }
  }
  SkimmedMessage skimmed = first_text ? skim_message(text, first_text->end) : skim_message(text);
  std::string raw_id;
  std::string raw_method;
  if (!skimmed.is_json_object) {
    const auto parsed = parse_upstream_line(text, raw_id, raw_method);
    if (!parsed) {
      constexpr std::size_t k_shown = 500;
      session.log.warn("the upstream wrote a line that is not JSON-RPC to stdout (not relayed): "
                       + std::string(text.substr(0, k_shown))
                       + (text.size() > k_shown ? "..." : ""));
      return;
    }
    skimmed = *parsed;
  }
  if (!skimmed.raw_id.empty()) {
    // The key from the ends, when there is one, is this id's: the skim
    // found the line a JSON object with one id, and answer_key_from_ends()
    // its last member's.
    const std::string key = key_from_ends.empty() ? id_key_of_raw(skimmed.raw_id) : key_from_ends;
    if (skimmed.has_method) {
      const auto method = nlohmann::json::parse(skimmed.raw_method, nullptr, false);
      if (method.is_string()) {
        session.guard.on_upstream_request(key, method.get_ref<const std::string&>());
      }
    } else if (skimmed.has_result_or_error) {
      // The entry found from the ends is this key's, and the skim and
      // decode above changed nothing in the ledger.
      Ledger::Answered answered =
        key_from_ends.empty() ? session.guard.find_answer(key) : std::move(answered_from_ends);
      if (session.guard.on_upstream_response(std::move(answered), key, text, skimmed, left.out,
                                             Guard::Clock::now(),
                                             first_text ? &*first_text : nullptr)) {
        relay_at_once(session, text, left);
      }
      session.guard.settle_reads();
      if (!left.line_rest) {
        flush_at_once(session, left.out); // else after the line's rest
      }
      return;
    }
  }
  relay_at_once(session, text, left);
}

Task<void> relay_upstream_to_client(Session& session)
{
  LineReader reader(session.upstream.output(), session.config.max_line_bytes);
  session.heap_trimmer.watch(reader.buffer(), reader.k_buffer_bytes);
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
    if (event.status == LineStatus::too_long) {
      Outbox out;
      session.guard.on_upstream_answer_dropped(event.text, event.length,
                                               session.config.max_line_bytes, out);
      co_await flush(session, out);
      continue;
    }
    session.heap_trimmer.on_message(event.text.size());
    if (event.text.find_first_not_of(" \t\r") != std::string_view::npos) {
      handle_upstream_line(session, event.text, left);
      if (left.line_rest) {
        // The calls the answer let go are owed to the upstream meanwhile.
        note_owing_upstream(session, left.out, Owing::begins);
        co_await session.to_client.write(*std::exchange(left.line_rest, std::nullopt));
        note_owing_upstream(session, left.out, Owing::settled);
      }
      if (!left.out.empty()) {
        co_await flush(session, left.out);
      }
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
