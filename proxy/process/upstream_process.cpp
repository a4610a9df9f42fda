#include "proxy/process/upstream_process.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <array>

namespace fsguard {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::string describe_status(int status)
{
  if (status >= 128) {
    return "killed by signal " + std::to_string(status - 128);
  }
  return "status " + std::to_string(status);
}

UpstreamProcess::UpstreamProcess(asio::io_context& context, Upstream child, Log& log)
  : m_context(context), m_child(std::move(child)), m_log(log),
    m_input(m_child.input, log, "upstream"), m_shutdown_timer(context),
    m_output_timer(context, Timer::time_point::max())
{
}

std::string UpstreamProcess::gone_message() const
{
  const std::string last_words = m_stderr_tail.last_words();
  const std::string said = last_words.empty() ? "it wrote nothing to stderr"
                                              : "its stderr: \"" + last_words + "\"";
  const std::string how = describe_status(m_status.value_or(1));
  if (!m_answered) {
    // It never started: restarting runs the same command again.
    return "fsguard: the MCP server that fsguard starts exited (" + how
           + ") before answering; " + said + ". Check the server command in your MCP "
           "client's config (what follows fsguard and its options)";
  }
  return "fsguard: the upstream server exited (" + how + ") and cannot answer; " + said
         + ". Restart the MCP server to continue";
}

void UpstreamProcess::note_output_ended()
{
  m_output_ended = true;
  m_output_timer.cancel();
}

Task<void> UpstreamProcess::stop()
{
  if (m_stopping) {
    co_return;
  }
  m_stopping = true;
  m_input.close(); // once a write in progress ends; never waits on a stuck upstream
  for (int signal_number : {0, SIGTERM, SIGKILL}) {
    if (m_status) {
      co_return;
    }
    if (signal_number != 0) {
      m_log.info(std::string("the upstream did not exit; sending ")
                 + (signal_number == SIGTERM ? "SIGTERM" : "SIGKILL"));
      signal_upstream_group(m_child, signal_number);
      m_shutdown_timer.expires_after(k_shutdown_step);
      co_await m_shutdown_timer.async_wait(k_use);
      continue;
    }
    co_await wait_while_answering(m_shutdown_timer, [this] { return m_status.has_value(); });
  }
}

template <typename Done> Task<void> UpstreamProcess::wait_while_answering(Timer& timer, Done done)
{
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    const std::uint64_t messages = m_messages;
    timer.expires_after(k_shutdown_step);
    co_await timer.async_wait(k_use);
    if (done() || m_messages == messages || m_hurried
        || std::chrono::steady_clock::now() - began >= k_shutdown_answering_limit) {
      co_return;
    }
  }
}

Task<void> UpstreamProcess::relay_stderr()
{
  std::array<char, 16 * 1024> buffer;
  for (;;) {
    auto [error, count] = co_await m_child.errors.async_read_some(asio::buffer(buffer), k_use);
    if (count > 0) {
      const std::string_view bytes(buffer.data(), count);
      m_stderr_tail.append(bytes);
      m_log.pass_through(bytes); // never waits for fsguard's own stderr
    }
    if (error) {
      break;
    }
  }
}

Task<void> UpstreamProcess::wait()
{
  co_await m_child.process.async_wait(k_use);
  const int native = m_child.process.native_exit_code();
  const int status = WIFSIGNALED(native) ? 128 + WTERMSIG(native) : WEXITSTATUS(native);
  m_status = status;
  m_exited_early = !m_stopping;
  m_shutdown_timer.cancel();
  const std::string tail = m_stderr_tail.text();
  const std::string explained = tail.empty() ? "; it wrote nothing to stderr"
                                             : "; the end of its stderr:\n" + tail;
  if (m_exited_early) {
    m_log.error(std::string("the upstream server exited unexpectedly (") + describe_status(status)
                + ")" + (m_answered ? "" : " before answering anything") + explained);
  } else if (status != 0 && !m_answered) {
    m_log.error("the upstream server failed (" + describe_status(status)
                + ") before answering anything" + explained);
  } else {
    m_log.info("the upstream server exited (" + describe_status(status) + ")");
  }
}

Task<void> UpstreamProcess::clear_group()
{
  if (!upstream_group_alive(m_child)) {
    co_return;
  }
  signal_upstream_group(m_child, SIGTERM);
  constexpr auto k_poll = 50ms;
  for (auto waited = 0ms; waited < k_shutdown_step; waited += k_poll) {
    Timer pause(m_context, k_poll);
    co_await pause.async_wait(k_use);
    if (!upstream_group_alive(m_child)) {
      co_return;
    }
  }
  m_log.info("processes the upstream left behind ignored SIGTERM; sending SIGKILL");
  signal_upstream_group(m_child, SIGKILL);
}

Task<void> UpstreamProcess::drain_output()
{
  if (m_output_ended) {
    co_return;
  }
  co_await wait_while_answering(m_output_timer, [this] { return m_output_ended; });
  if (!m_output_ended) {
    m_log.warn("the upstream's stdout stayed open after it exited; stopped reading it");
    boost::system::error_code ignored;
    m_child.output.close(ignored);
  }
}

} // namespace fsguard
