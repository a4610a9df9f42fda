// The requestState of fsguard's own question to the person in the 2026
// era (override: ask in a session without server-to-client requests): the
// vetoed call is answered with resultType "input_required", and the
// client's retry brings the person's answer and this state back. The state
// binds what the person was asked about, under an HMAC-SHA-256 with a key
// fsguard's process made at start and never shows (OpenSSL's libcrypto), so
// that only fsguard can have made it; each is good for one retry before it
// expires. Pure: the key and the time come in from the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracker/file_state.hpp"
#include "tracker/result.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

// The prefix of every requestState fsguard makes: a retry whose state
// starts with it is fsguard's to check, and never reaches the server.
inline constexpr std::string_view k_own_state_prefix = "fsguard/1.";

// What a state binds: the call the person was asked about, what its file
// held when they were shown it, the refusal they may lift, and when.
struct OverrideGrant {
  std::string tool;
  std::string arguments_digest; // arguments_digest() of the call's arguments and content
  std::string file;             // fsguard's canonical path of the file asked about
  ContentHash shown{};          // the hash of what the person was shown of it
  VetoCode code = VetoCode::not_read; // the refusal the person was asked to lift
  std::int64_t asked_ns = 0;    // the guard's clock when the question went out
  std::int64_t expires_ns = 0;  // no retry is taken after this
  std::uint64_t serial = 0;     // one retry a state
};

// Why a retry's state is refused.
enum class StateProblem {
  forged,     // not made by this fsguard process, or altered
  other_call, // made for a call of another tool or other arguments
  expired,    // the person's time to answer was over
  used,       // answered once already (a replay), or withdrawn
};

// The SHA-256 (hex) of a call's `arguments` as JSON (its members in key
// order), to bind a state to them: a write's content by its hash,
// `content` (the reader's, which may have taken it out of the tree; if
// none, the tree's own content is hashed). "" if they cannot be written.
std::string arguments_digest(const nlohmann::json& arguments,
                             const std::optional<ContentHash>& content = std::nullopt);

// The states fsguard issued and not yet taken back: issue() makes one,
// redeem() checks and uses it up.
class OverrideStates {
public:
  // The HMAC key, `key`: random bytes made outside (proxy/process). Without
  // one no state is issued (has_key() false).
  void set_key(std::string key) { m_key = std::move(key); }
  bool has_key() const { return !m_key.empty(); }

  // A state binding `grant` (its serial is set here), good until
  // grant.expires_ns.
  std::string issue(OverrideGrant grant);

  // The grant `state` binds, when it is one this object issued, for a call
  // of `tool` with arguments of digest `digest`, unexpired at `now_ns` and
  // not used before; it is used up. Otherwise why not.
  Result<OverrideGrant, StateProblem> redeem(std::string_view state, std::string_view tool,
                                             std::string_view digest, std::int64_t now_ns);

  // Keeps `grant` for the retry that will carry the server's own `state`:
  // the server answered input_required to the change the person allowed,
  // and its retry is the same change.
  void carry(std::string state, OverrideGrant grant);

  // The grant kept for the server's `state`, for a call of `tool` with
  // arguments of digest `digest`, unexpired at `now_ns`; taken once.
  std::optional<OverrideGrant> take_carried(const std::string& state, std::string_view tool,
                                            std::string_view digest, std::int64_t now_ns);

  // Whether no grant is kept for a server's state (take_carried() finds none).
  bool carries_nothing() const { return m_carried.empty(); }

  // Forgets the states expired at `now_ns`.
  void forget_expired(std::int64_t now_ns);

private:
  // The most states kept at once; the oldest is withdrawn past it.
  static constexpr std::size_t k_max_outstanding = 256;
  static constexpr std::size_t k_max_carried = 64;

  std::string mac_of(std::string_view payload) const;

  std::string m_key;
  std::uint64_t m_next_serial = 0;
  std::map<std::uint64_t, std::int64_t> m_outstanding; // serial -> expiry
  std::map<std::string, OverrideGrant> m_carried;      // the server's state -> grant
};

} // namespace fsguard
