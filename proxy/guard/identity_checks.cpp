#include "proxy/guard/identity_checks.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "proxy/jsonrpc/message.hpp"
#include "proxy/jsonrpc/protocol_era.hpp"

namespace fsguard {

std::string identity_request(const std::string& id, const std::string& path,
                             const nlohmann::json& envelope)
{
  const nlohmann::json message = {
    {"jsonrpc", "2.0"},
    {"id", id},
    {"method", "tools/call"},
    {"params", {{"name", "get_file_info"}, {"arguments", {{"path", path}}}}},
  };
  return own_request_line(message, envelope);
}

ServerFileReport identity_outcome(const nlohmann::json& response, FileInfoFormat format)
{
  const auto& result = member(response, "result");
  const auto& content = member(result, "content");
  const auto& text = content.is_array() && content.size() == 1 ? member(content.front(), "text")
                                                                : nlohmann::json();
  if (!result.is_object() || !text.is_string()) {
    ServerFileReport report;
    const auto& message = member(member(response, "error"), "message");
    report.reason = message.is_string() ? message.get<std::string>()
                                        : std::string("its answer held no text");
    return report;
  }
  const auto& is_error = member(result, "isError");
  return parse_server_file_report(text.get_ref<const std::string&>(),
                                  is_error.is_boolean() && is_error.get<bool>(), format);
}

void IdentityChecks::asked(const std::string& file, std::string key, Clock::time_point now,
                           std::uint64_t moment, std::optional<FileStat> local)
{
  m_known.erase(file);
  m_asked[file] = Asked{std::move(key), now, moment, std::move(local)};
}

std::optional<std::string> IdentityChecks::answered(const std::string& key,
                                                    ServerFileReport report, Clock::time_point now)
{
  const auto found = std::find_if(m_asked.begin(), m_asked.end(),
                                  [&](const auto& entry) { return entry.second.key == key; });
  if (found == m_asked.end()) {
    return std::nullopt; // given up on
  }
  std::string file = found->first;
  Asked asked = std::move(found->second);
  m_asked.erase(found);
  m_known[file] = Known{IdentityReport{std::move(report), std::move(asked.local), asked.moment},
                        now};
  return file;
}

const IdentityReport* IdentityChecks::known(const std::string& file, std::uint64_t sent_at) const
{
  const auto found = m_known.find(file);
  if (found == m_known.end() || found->second.report.asked_moment < sent_at) {
    return nullptr;
  }
  return &found->second.report;
}

std::vector<std::string> IdentityChecks::expire(Clock::time_point now, Clock::duration timeout)
{
  const Clock::time_point before = now - timeout;
  std::erase_if(m_known, [&](const auto& entry) { return entry.second.at < before; });
  std::vector<std::string> expired;
  for (auto entry = m_asked.begin(); entry != m_asked.end();) {
    if (entry->second.at < before) {
      expired.push_back(entry->first);
      ServerFileReport report;
      report.reason = "it did not answer fsguard's get_file_info within call_timeout_s";
      // Reported now, for the calls waiting on it (their moments are older).
      m_known[entry->first] =
        Known{IdentityReport{std::move(report), std::move(entry->second.local),
                             entry->second.moment},
              now};
      entry = m_asked.erase(entry);
    } else {
      ++entry;
    }
  }
  std::erase_if(m_asks, [&](const auto& entry) {
    return !m_asked.contains(entry.first) && !m_known.contains(entry.first);
  });
  return expired;
}

} // namespace fsguard
