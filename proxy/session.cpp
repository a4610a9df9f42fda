#include "proxy/session.hpp"

#include "proxy/message.hpp"

namespace fsguard {

std::string describe_status(int status)
{
  if (status >= 128) {
    return "killed by signal " + std::to_string(status - 128);
  }
  return "status " + std::to_string(status);
}

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
  for (auto& id : session.guard.take_unanswered()) {
    co_await send(session.to_client, error_response(id, RpcError::server_error, upstream_gone_message(session)));
  }
}

} // namespace fsguard
