#include "proxy/session.hpp"

#include "proxy/message.hpp"

namespace fsguard {

void audit(Session& session, const nlohmann::ordered_json& record)
{
  if (const std::string problem = session.audit.write(record); !problem.empty()) {
    session.log.error(problem);
  }
}

awaitable<void> flush(Session& session, Outbox& out)
{
  for (const auto& line : out.log) {
    session.log.write(line.level, line.text);
  }
  for (const auto& record : out.decisions) {
    audit(session, record);
  }
  for (const auto& line : out.to_client) {
    co_await session.to_client.write(line); // `out` keeps it until written
  }
  for (const auto& line : out.to_upstream) {
    co_await session.upstream.input().write(line);
  }
  out.clear();
}

awaitable<void> answer_pending_with_errors(Session& session)
{
  for (auto& id : session.guard.take_unanswered()) {
    co_await send(session.to_client, error_response(id, RpcError::server_error, session.upstream.gone_message()));
  }
}

} // namespace fsguard
