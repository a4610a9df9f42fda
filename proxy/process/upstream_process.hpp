// The upstream server's process as the session sees it: the one owner of
// its stdin writer, its status, its stderr tail, and its shutdown (stdin
// closed, then SIGTERM, then SIGKILL of its process group).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "proxy/process/child_process.hpp"
#include "proxy/process/executor.hpp"
#include "proxy/process/line_writer.hpp"
#include "proxy/app/log.hpp"
#include "proxy/process/stderr_tail.hpp"

namespace fsguard {

// Grace periods of the shutdown: stdin closed, then SIGTERM, then SIGKILL.
inline constexpr std::chrono::seconds k_shutdown_step{2};
// How long the first grace period, and the wait for the upstream's last
// output, go on at most while the upstream keeps writing messages: it is
// still answering, as fast as fsguard's client takes the answers.
inline constexpr std::chrono::seconds k_shutdown_answering_limit{60};

// "status N", or "killed by signal N" for a `status` of 128+N.
std::string describe_status(int status);

class UpstreamProcess {
public:
  using Writer = LineWriter<Descriptor>;

  // Takes over the started `child`; `log` explains its exit.
  UpstreamProcess(boost::asio::io_context& context, Upstream child, Log& log);

  // The writer of the upstream's stdin: every line to the upstream goes here.
  Writer& input() { return m_input; }
  // The upstream's stdout, for the relay's reader.
  Descriptor& output() { return m_child.output; }

  // Its exit status, once it has exited.
  const std::optional<int>& status() const { return m_status; }
  // True if it exited before fsguard asked it to stop.
  bool exited_early() const { return m_exited_early; }
  // The error text for requests it can no longer answer.
  std::string gone_message() const;
  // Why it may see other files than fsguard under the same paths, started
  // as `command` (see upstream_runs_elsewhere); once its processes run.
  std::optional<std::string> runs_elsewhere(const std::vector<std::string>& command) const
  {
    return upstream_runs_elsewhere(m_child, command);
  }

  // The upstream wrote a message (an exit before any is explained as such).
  void note_answer()
  {
    m_answered = true;
    ++m_messages;
  }
  // Its stdout has ended.
  void note_output_ended();

  // Closes its stdin, then escalates to SIGTERM and SIGKILL on its process
  // group until it has exited; not while it still writes messages (up to
  // k_shutdown_answering_limit): what holds it up then is a client that
  // reads slowly. Does nothing the second time.
  Task<void> stop();
  // fsguard was told to stop (a signal): stop() and drain_output() no
  // longer wait beyond the grace period in progress for messages to end.
  void hurry() { m_hurried = true; }
  // Copies its stderr to fsguard's stderr as it comes, keeping the tail.
  Task<void> relay_stderr();
  // Waits for it to exit, records its status and explains an unexpected exit.
  Task<void> wait();
  // Once it has exited: SIGTERM its process group, then SIGKILL whatever is
  // left after the grace period.
  Task<void> clear_group();
  // Waits at most the grace period for its stdout to end (a process outside
  // its group may hold it), then stops reading it; as long as messages
  // still come, up to k_shutdown_answering_limit.
  Task<void> drain_output();

private:
  // Waits on `timer` a grace period at a time until one passes without a
  // message from the upstream, or `done()`, or k_shutdown_answering_limit,
  // or hurry().
  template <typename Done> Task<void> wait_while_answering(Timer& timer, Done done);

  boost::asio::io_context& m_context;
  Upstream m_child;
  Log& m_log;
  Writer m_input;
  std::optional<int> m_status;
  bool m_exited_early = false;
  bool m_stopping = false;
  bool m_answered = false;
  bool m_output_ended = false;
  bool m_hurried = false; // hurry()
  std::uint64_t m_messages = 0; // written by the upstream so far
  Timer m_shutdown_timer;
  Timer m_output_timer; // cancelled when its stdout ends
  StderrTail m_stderr_tail;
};

} // namespace fsguard
