#include "proxy/guard/client_intake.hpp"

#include "proxy/jsonrpc/ids.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/lenient_json.hpp"
#include "proxy/jsonrpc/rpc_error.hpp"
#include "proxy/jsonrpc/sdk_schema.hpp"

namespace fsguard {

namespace {

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

void free_tree_if_long(nlohmann::json& tree, std::size_t line_bytes)
{
  if (line_bytes > k_reused_tree_max_line) {
    release_tree(tree);
  }
}

} // namespace

void ClientIntake::take(OutgoingLine line, Clock::time_point now, Outbox& out)
{
  std::string_view text = line.text();
  text.remove_suffix(text.ends_with('\n') ? 1 : 0);
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) {
    return;
  }
  if (!m_upstream_gone) {
    // The commonest line first: a tools/call in the usual shape, unparsed
    // but for a guarded one's arguments.
    const auto call = m_guard.scan_plain_call(text, m_plain);
    if (call && m_guard.take_plain_call(line, *call, m_plain, out, now)) {
      free_tree_if_long(m_plain.tree, text.size());
      return;
    }
  }
  take_parsed(std::move(line), text, now, out);
  free_tree_if_long(m_message.body, text.size()); // whichever way the line went
}

void ClientIntake::take_parsed(OutgoingLine line, std::string_view text, Clock::time_point now,
                               Outbox& out)
{
  ClientMessage& message = m_message;
  parse_client_message(text, message);
  if (message.kind == MessageKind::notification || message.kind == MessageKind::response
      || message.kind == MessageKind::other) {
    if (const auto problem = message_the_server_drops(message.body);
        !problem.empty() && !answers_own_request(message)) {
      out.to_client.push_back(error_response(
        nullptr, RpcError::invalid_request,
        "fsguard: invalid message, which the server would drop: " + problem));
      return;
    }
  }
  switch (message.kind) {
  case MessageKind::unreadable: {
    const auto& id = member(message.body, "id");
    out.to_client.push_back(error_response(
      id.is_string() || id.is_number() ? id : nlohmann::json(), RpcError::parse_error,
      "fsguard: parse error: the server would not read this line, as "
        + std::string(json_parse_rejects(text)) + "; send plain JSON, one message per line"));
    return;
  }
  case MessageKind::invalid:
    out.say(LogLevel::warn, "the client sent a line that is not valid JSON; answered with a "
                            "parse error and did not forward it");
    out.to_client.push_back(error_response(nullptr, RpcError::parse_error,
                                           "fsguard: parse error: the line is not valid JSON; "
                                           "send one JSON-RPC message per line"));
    return;
  case MessageKind::too_deep:
    out.to_client.push_back(
      error_response(shallow_id(text), RpcError::invalid_request,
                     "fsguard: message refused: arrays and objects nested deeper than "
                       + std::to_string(k_max_nesting) + " levels"));
    return;
  case MessageKind::bad_id:
    out.to_client.push_back(
      error_response(nullptr, RpcError::invalid_request,
                     "fsguard: invalid request: the id must be a string or a number"));
    return;
  case MessageKind::batch:
    out.to_client.push_back(error_response(nullptr, RpcError::invalid_request,
                                           "fsguard: JSON-RPC batches are not supported; "
                                           "send each message on its own line"));
    return;
  case MessageKind::notification:
    if (method_of(message.body) == "tools/call") {
      out.say(LogLevel::warn,
              "dropped a tools/call sent without an id: a notification gets no answer and "
              "cannot be guarded; the client must send it as a request with an id");
      return;
    }
    if (!m_upstream_gone) {
      m_guard.on_client_notification(std::move(line), message.body, out, now);
    }
    return;
  case MessageKind::request:
    if (m_upstream_gone) {
      out.to_client.push_back(
        error_response(member(message.body, "id"), RpcError::server_error, *m_upstream_gone));
      return;
    }
    m_guard.on_client_request(std::move(line), message.body, std::move(message.content), out,
                              now);
    return;
  case MessageKind::response:
    if (!m_upstream_gone) {
      m_guard.on_client_response(std::move(line), message.body, out, now);
    }
    return;
  case MessageKind::other:
    if (!m_upstream_gone) {
      out.to_upstream.push_back(std::move(line));
    }
    return;
  }
}

void ClientIntake::take_too_long(std::size_t limit, Outbox& out)
{
  out.say(LogLevel::warn, "discarded a client message longer than " + std::to_string(limit)
                            + " bytes; raise max_line_bytes in the config if such messages are "
                              "legitimate");
  out.to_client.push_back(error_response(
    nullptr, RpcError::invalid_request,
    "fsguard: message discarded: longer than max_line_bytes (" + std::to_string(limit)
      + " bytes); send less per call, or raise max_line_bytes in fsguard's config"));
}

} // namespace fsguard
