#include "proxy/process/session.hpp"

#include "proxy/jsonrpc/message.hpp"

namespace fsguard {

void audit(Session& session, const nlohmann::ordered_json& record)
{
  if (const std::string problem = session.audit.write(record); !problem.empty()) {
    session.log.error(problem);
  }
}

namespace {

std::string_view text_of(const std::string& line) { return line; }
std::string_view text_of(const OutgoingLine& line) { return line.text(); }

void drop_front(std::string& line, std::size_t count) { line.erase(0, count); }
void drop_front(OutgoingLine& line, std::size_t count) { line.drop_front(count); }

// Writes the first of `lines` that `writer` takes at once, and removes them
// (and the written part of the line it took in part). True if none is left.
template <class Writer, class Line>
bool send_at_once(Writer& writer, std::vector<Line>& lines)
{
  std::size_t sent = 0;
  for (; sent < lines.size(); ++sent) {
    Line& line = lines[sent];
    const std::string_view text = text_of(line);
    if (const auto rest = writer.try_write(text)) {
      drop_front(line, text.size() - rest->size()); // "" still owes its newline
      break;
    }
  }
  lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(sent));
  return lines.empty();
}

} // namespace

void note_owing_upstream(Session& session, const Outbox& out, Owing owing)
{
  if (!out.to_upstream.empty()) {
    session.outboxes_owing_upstream += owing == Owing::begins ? 1 : -1;
  }
}

bool flush_at_once(Session& session, Outbox& out)
{
  for (const auto& line : out.log) {
    session.log.write(line.level, line.text);
  }
  out.log.clear();
  for (const auto& record : out.decisions) {
    audit(session, record);
  }
  out.decisions.clear();
  // The client's lines first, as flush() sends them.
  return send_at_once(session.to_client, out.to_client)
         && send_at_once(session.upstream.input(), out.to_upstream);
}

Task<void> flush(Session& session, Outbox& out)
{
  if (flush_at_once(session, out)) {
    co_return;
  }
  out.own_lines(); // no line waits on the reader's buffer
  note_owing_upstream(session, out, Owing::begins);
  for (const auto& line : out.to_client) {
    co_await session.to_client.write(line); // `out` keeps it until written
  }
  for (const auto& line : out.to_upstream) {
    co_await session.upstream.input().write(line.text());
  }
  note_owing_upstream(session, out, Owing::settled);
  out.clear();
}

Task<void> answer_pending_with_errors(Session& session)
{
  for (auto& id : session.guard.take_unanswered()) {
    co_await send(session.to_client, error_response(id, RpcError::server_error, session.upstream.gone_message()));
  }
}

} // namespace fsguard
