#include "proxy/guard/override_state.hpp"

#include <array>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/jsonrpc/message.hpp"

namespace fsguard {

namespace {

constexpr char k_hex_digits[] = "0123456789abcdef";

std::string hex_of(const unsigned char* bytes, std::size_t size)
{
  std::string hex;
  hex.reserve(size * 2);
  for (std::size_t at = 0; at < size; ++at) {
    hex.push_back(k_hex_digits[bytes[at] >> 4]);
    hex.push_back(k_hex_digits[bytes[at] & 0xF]);
  }
  return hex;
}

std::string hex_of(std::string_view bytes)
{
  return hex_of(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

int nibble(char digit)
{
  if (digit >= '0' && digit <= '9') {
    return digit - '0';
  }
  if (digit >= 'a' && digit <= 'f') {
    return digit - 'a' + 10;
  }
  return -1;
}

// The bytes the lower-case hex `hex` spells; nothing if it spells none.
std::optional<std::string> bytes_of(std::string_view hex)
{
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (std::size_t at = 0; at < hex.size(); at += 2) {
    const int high = nibble(hex[at]);
    const int low = nibble(hex[at + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    bytes.push_back(static_cast<char>((high << 4) | low));
  }
  return bytes;
}

// The grant `payload` (the state's JSON, checked already) binds.
std::optional<OverrideGrant> grant_of(std::string_view payload)
{
  const auto json = nlohmann::json::parse(payload, nullptr, false);
  const auto& tool = member(json, "tool");
  const auto& digest = member(json, "arguments");
  const auto& file = member(json, "file");
  const auto& shown = member(json, "shown");
  const auto& code = member(json, "code");
  const auto& asked = member(json, "asked");
  const auto& expires = member(json, "expires");
  const auto& serial = member(json, "serial");
  if (!tool.is_string() || !digest.is_string() || !file.is_string() || !shown.is_array()
      || shown.size() != 2 || !shown[0].is_number_unsigned() || !shown[1].is_number_unsigned()
      || !code.is_number_integer() || !asked.is_number_integer() || !expires.is_number_integer()
      || !serial.is_number_unsigned()) {
    return std::nullopt;
  }
  OverrideGrant grant;
  grant.tool = tool.get<std::string>();
  grant.arguments_digest = digest.get<std::string>();
  grant.file = file.get<std::string>();
  grant.shown = {shown[0].get<std::uint64_t>(), shown[1].get<std::uint64_t>()};
  grant.code = static_cast<VetoCode>(code.get<int>());
  grant.asked_ns = asked.get<std::int64_t>();
  grant.expires_ns = expires.get<std::int64_t>();
  grant.serial = serial.get<std::uint64_t>();
  return grant;
}

} // namespace

std::string arguments_digest(const nlohmann::json& arguments,
                             const std::optional<ContentHash>& content)
{
  nlohmann::json rest = nlohmann::json::object();
  std::optional<ContentHash> content_hash = content;
  if (arguments.is_object()) {
    for (const auto& [name, value] : arguments.items()) {
      if (name != "content") {
        rest[name] = value;
      } else if (!content_hash && value.is_string()) {
        content_hash = hash_bytes(value.get_ref<const std::string&>());
      }
    }
  } else {
    rest = arguments;
  }
  const std::string text = rest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                           + "\ncontent " + (content_hash ? to_hex(*content_hash) : "none");
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return {};
  }
  return hex_of(digest.data(), size);
}

std::string OverrideStates::mac_of(std::string_view payload) const
{
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), m_key.data(), static_cast<int>(m_key.size()),
           reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac.data(),
           &size)
      == nullptr) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(mac.data()), size);
}

std::string OverrideStates::issue(OverrideGrant grant)
{
  grant.serial = ++m_next_serial;
  if (m_outstanding.size() >= k_max_outstanding) {
    m_outstanding.erase(m_outstanding.begin()); // the oldest is withdrawn
  }
  m_outstanding.emplace(grant.serial, grant.expires_ns);
  const nlohmann::ordered_json payload = {
    {"tool", grant.tool},         {"arguments", grant.arguments_digest},
    {"file", grant.file},         {"shown", {grant.shown[0], grant.shown[1]}},
    {"code", static_cast<int>(grant.code)}, {"asked", grant.asked_ns},
    {"expires", grant.expires_ns}, {"serial", grant.serial},
  };
  const std::string text = payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::string(k_own_state_prefix) + hex_of(text) + "." + hex_of(mac_of(text));
}

Result<OverrideGrant, StateProblem> OverrideStates::redeem(std::string_view state,
                                                           std::string_view tool,
                                                           std::string_view digest,
                                                           std::int64_t now_ns)
{
  if (!state.starts_with(k_own_state_prefix) || !has_key()) {
    return StateProblem::forged;
  }
  state.remove_prefix(k_own_state_prefix.size());
  const auto dot = state.find('.');
  if (dot == std::string_view::npos) {
    return StateProblem::forged;
  }
  const auto payload = bytes_of(state.substr(0, dot));
  const auto mac = bytes_of(state.substr(dot + 1));
  if (!payload || !mac) {
    return StateProblem::forged;
  }
  const std::string expected = mac_of(*payload);
  if (expected.empty() || mac->size() != expected.size()
      || CRYPTO_memcmp(mac->data(), expected.data(), expected.size()) != 0) {
    return StateProblem::forged;
  }
  auto grant = grant_of(*payload);
  if (!grant) {
    return StateProblem::forged; // cannot be: fsguard wrote it
  }
  if (grant->tool != tool || grant->arguments_digest != digest) {
    return StateProblem::other_call;
  }
  const auto outstanding = m_outstanding.find(grant->serial);
  if (now_ns > grant->expires_ns) {
    if (outstanding != m_outstanding.end()) {
      m_outstanding.erase(outstanding);
    }
    return StateProblem::expired;
  }
  if (outstanding == m_outstanding.end()) {
    return StateProblem::used;
  }
  m_outstanding.erase(outstanding);
  return std::move(*grant);
}

void OverrideStates::carry(std::string state, OverrideGrant grant)
{
  if (m_carried.size() >= k_max_carried) {
    // The one that expires first goes: the others are likelier to be retried.
    auto first = m_carried.begin();
    for (auto it = m_carried.begin(); it != m_carried.end(); ++it) {
      if (it->second.expires_ns < first->second.expires_ns) {
        first = it;
      }
    }
    m_carried.erase(first);
  }
  m_carried.insert_or_assign(std::move(state), std::move(grant));
}

std::optional<OverrideGrant> OverrideStates::take_carried(const std::string& state,
                                                          std::string_view tool,
                                                          std::string_view digest,
                                                          std::int64_t now_ns)
{
  const auto found = m_carried.find(state);
  if (found == m_carried.end() || found->second.tool != tool
      || found->second.arguments_digest != digest) {
    return std::nullopt;
  }
  OverrideGrant grant = std::move(found->second);
  m_carried.erase(found);
  if (now_ns > grant.expires_ns) {
    return std::nullopt;
  }
  return grant;
}

void OverrideStates::forget_expired(std::int64_t now_ns)
{
  std::erase_if(m_outstanding, [&](const auto& entry) { return entry.second < now_ns; });
  std::erase_if(m_carried, [&](const auto& entry) { return entry.second.expires_ns < now_ns; });
}

} // namespace fsguard
