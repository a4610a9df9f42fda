// The two eras of MCP that fsguard speaks on both sides: the 2025 era, where
// an initialize handshake tells the server once who the client is, and the
// stateless 2026-07-28 revision, where every request carries that in its
// _meta envelope and servers answer server/discover. What each request
// tells of its client, what a result tells of its server, and what era the
// session is in, as the v2 SDK decides it. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/upstream_message.hpp"

namespace fsguard {

// The era a session runs in.
enum class Era {
  handshake, // 2025 and before: initialize, then requests without an envelope
  stateless, // 2026-07-28: every request carries the _meta envelope
};

// The _meta keys of the 2026-07-28 revision.
inline constexpr char k_protocol_version_key[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char k_client_info_key[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char k_client_capabilities_key[] = "io.modelcontextprotocol/clientCapabilities";
inline constexpr char k_server_info_key[] = "io.modelcontextprotocol/serverInfo";

// What one request of the client's says of the client.
struct ClientFacts {
  Era era = Era::handshake;
  std::string protocol_version;    // "" when the request does not name one
  std::optional<std::string> name; // clientInfo.name, when the request gives it
  bool elicits = false;            // its capabilities declare form elicitation
};

// Whether a client's initialize `capabilities` declare form elicitation:
// `elicitation` is an object, empty (spec 2025-06-18) or with `form`.
bool client_elicits(const nlohmann::json& capabilities);

// What the client's `request` (parsed) says of the client: the 2026 era's
// envelope in params._meta, or an initialize's params; nothing for any
// other request (a 2025-era request says nothing of its client).
std::optional<ClientFacts> client_facts(const nlohmann::json& request);

// The same from a request's params._meta alone (`meta`, parsed): nothing
// unless it is the 2026 era's envelope (it names the protocol version).
std::optional<ClientFacts> envelope_facts(const nlohmann::json& meta);

// The same from the JSON text of params._meta, `raw_meta`, as the scan of a
// plain tools/call found it (PlainToolCall::envelope), which it leaves
// unparsed.
std::optional<ClientFacts> envelope_facts_of_raw(std::string_view raw_meta);

// The serverInfo in an initialize or server/discover `result`: its own
// member, or in the 2026 era the one in its _meta; null if neither.
const nlohmann::json& server_info(const nlohmann::json& result);

// The resultType of the upstream's `answer` when it says the work is not
// done ("task", "input_required", or anything but "complete"); nothing for
// a finished result, an error, or a 2025-era result (which has none). Asks
// for the answer's tree only when its line names a resultType.
std::optional<std::string> unfinished_result_type(UpstreamMessage& answer);

// Adds resultType "complete" to `result`, fsguard's own answer to a
// request of a session in `era`, when that era requires it.
void stamp_result(nlohmann::ordered_json& result, Era era);

// The era of the session, fixed as the v2 SDK's server fixes it: by the
// client's first request (initialize, or any request without the envelope:
// 2025; one with it: 2026), and again by an initialize (the client's
// fallback after a server/discover the server refused). Unlike the server,
// a first request with neither envelope nor initialize (a bare ping) fixes
// it only until a request with the envelope comes before any initialize. It also makes the
// envelope of fsguard's own requests to the server.
class SessionEra {
public:
  // Takes what the client's request of `method` said of the client
  // (`facts`, nothing: no envelope). Returns true when it opens a
  // 2026-era session whose server fsguard must still ask about (the
  // request is not the client's own server/discover).
  bool on_client_request(const std::optional<ClientFacts>& facts, std::string_view method);

  // True once the client's first request has fixed the era.
  bool known() const { return m_known; }
  // The session's era (the 2025 era until it is known).
  Era era() const { return m_era; }

  // The params._meta of fsguard's own requests to the server: the 2026
  // era's envelope in the client's protocol version, declaring no
  // capability; null in a 2025-era session, whose requests carry none.
  const nlohmann::json& own_envelope() const { return m_own_envelope; }

  // The client's name, as its latest request that named it gave it.
  const std::string& client_name() const { return m_client_name; }
  // Whether the client's latest request declared form elicitation.
  bool declares_elicitation() const { return m_elicits; }

private:
  bool m_known = false;
  bool m_initialized = false; // the client sent an initialize
  Era m_era = Era::handshake;
  nlohmann::json m_own_envelope; // null in the 2025 era
  std::string m_client_name;
  bool m_elicits = false;
};

// `message`, one of fsguard's own requests to the server, as a line (with
// its newline), carrying `envelope` (SessionEra::own_envelope()) as its
// params._meta unless that is null.
std::string own_request_line(nlohmann::json message, const nlohmann::json& envelope);

} // namespace fsguard
