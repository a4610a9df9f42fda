#include "proxy/upstream_lifecycle.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace fsguard {

// Closes the upstream's stdin, then escalates to SIGTERM and SIGKILL on its
// process group until it has exited.
awaitable<void> stop_upstream(Session& session)
{
  if (session.stopping) {
    co_return;
  }
  session.stopping = true;
  session.to_upstream.close(); // once a write in progress ends; never waits on a stuck upstream
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
      session.log.pass_through(bytes); // never waits for fsguard's own stderr
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
  auto group_alive = [&session] { return upstream_group_alive(session.upstream); };
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

} // namespace fsguard
