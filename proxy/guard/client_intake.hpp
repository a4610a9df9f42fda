// The client's side of the relay, without the I/O: each whole line the
// client sends goes in, and what is to be sent, logged and audited comes
// out in an Outbox. It picks the fast path for a plain tools/call, parses
// every other line once, refuses what fsguard or the server cannot take
// (bad JSON, batches, ids the server would drop...), and hands the rest to
// the Guard.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/guard/guard.hpp"
#include "proxy/guard/outbox.hpp"
#include "proxy/jsonrpc/client_message.hpp"
#include "proxy/jsonrpc/outgoing_line.hpp"
#include "proxy/jsonrpc/plain_tool_call.hpp"

namespace fsguard {

class ClientIntake {
public:
  using Clock = Guard::Clock;

  // Hands the lines to `guard`, which must outlive the intake.
  explicit ClientIntake(Guard& guard) : m_guard(guard) {}

  // Takes the client's whole line `line` (with its newline; lent from the
  // reader's buffer, which must stay as it is until this returns), which
  // came at `now`: into `out` go the lines to send (the line itself, as it
  // is, or fsguard's answer), log lines and audit records. `out` holds
  // nothing of this line's that depends on the buffer once it is written
  // or made owned (Outbox::own_lines). A line of white space is skipped.
  void take(OutgoingLine line, Clock::time_point now, Outbox& out);

  // A client line longer than `limit` (max_line_bytes) was discarded as it
  // streamed in: answered with an error.
  void take_too_long(std::size_t limit, Outbox& out);

  // The upstream has exited: requests are answered with `message`, and
  // nothing more goes to it. Called again, the message is the latest.
  void upstream_gone(std::string message) { m_upstream_gone = std::move(message); }

private:
  // Takes the line parsed, as take() does any line the fast path leaves.
  void take_parsed(OutgoingLine line, std::string_view text, Clock::time_point now, Outbox& out);

  Guard& m_guard;
  // Reused from line to line: each line is read into the tree the last one
  // left (see parse_client_message), a plain call's arguments likewise.
  ClientMessage m_message;
  PlainCallArguments m_plain;
  std::optional<std::string> m_upstream_gone;
};

} // namespace fsguard
