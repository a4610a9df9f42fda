// The upstream's side of the relay, without the I/O: each whole line the
// upstream writes goes in, and out come whether the line goes on to the
// client as it is, and an Outbox of what else is to be sent, logged and
// audited. The answer to a call fsguard only relays goes on unread past
// its id; every other line is read once (UpstreamMessage: skimmed, parsed
// only when the guard asks) and handed to the Guard.
#pragma once

#include <cstddef>
#include <string_view>

#include "proxy/guard/guard.hpp"
#include "proxy/guard/outbox.hpp"
#include "proxy/jsonrpc/upstream_message.hpp"

namespace fsguard {

// What becomes of an upstream line (UpstreamIntake::take).
enum class UpstreamLine {
  blank,    // white space only: no message, nothing sent
  relayed,  // goes to the client as it is, before what the Outbox holds
  withheld, // not sent as it is: fsguard's own answer, not JSON, or replaced in the Outbox
};

class UpstreamIntake {
public:
  using Clock = Guard::Clock;

  // Hands the lines to `guard`, which must outlive the intake.
  explicit UpstreamIntake(Guard& guard) : m_guard(guard) {}

  // Takes the upstream's whole line `text` (without its newline), which
  // came at `now`, putting what else is to be done into `out`. The line
  // must stay where it is until line_sent(): the guard reads what a read
  // showed from it then.
  [[nodiscard]] UpstreamLine take(std::string_view text, Clock::time_point now, Outbox& out);

  // The line take() last took has been handed to the client's stream (or
  // was withheld): the guard records what the answer showed or changed
  // (Guard::settle_reads), so the agent does not wait for that. Lines that
  // are no answer owe nothing.
  void line_sent()
  {
    if (m_answer_taken) {
      m_answer_taken = false;
      m_guard.settle_reads();
    }
  }

  // The upstream's line whose last bytes are `tail` was `length` bytes,
  // over the `limit` of max_line_bytes, and was dropped as it streamed in
  // (see Guard::on_upstream_answer_dropped).
  void take_too_long(std::string_view tail, std::size_t length, std::size_t limit,
                     Clock::time_point now, Outbox& out)
  {
    m_guard.on_upstream_answer_dropped(tail, length, limit, out, now);
  }

private:
  Guard& m_guard;
  UpstreamMessage m_message; // reused from line to line
  bool m_answer_taken = false; // the last line was an answer the guard took
};

} // namespace fsguard
