// Per-change proof that a file fsguard checks is the file the server will
// write, where the server sees its files through another mount view
// (path_map): before a change, fsguard asks the server's get_file_info of
// the very path and compares it with its own stat (tracker/file_identity).
// This class keeps those questions and their answers, one decision long.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracker/file_identity.hpp"
#include "tracker/string_key_hash.hpp"

namespace fsguard {

// The request line (ending in "\n") of fsguard's get_file_info `id` of the
// server's `path`, with the 2026 era's `envelope` as params._meta (null:
// none, in a 2025-era session).
std::string identity_request(const std::string& id, const std::string& path,
                             const nlohmann::json& envelope);

// What the upstream's answer `response` to such a request reports.
ServerFileReport identity_outcome(const nlohmann::json& response);

class IdentityChecks {
public:
  using Clock = std::chrono::steady_clock;

  // fsguard asked the server about `file` (canonical) with request `key` at `now`.
  void asked(const std::string& file, std::string key, Clock::time_point now);
  // Whether a question about `file` is asked and not answered yet.
  bool asking(const std::string& file) const { return m_asked.contains(file); }
  // Takes the answer `report` to request `key`; returns its file, if that
  // answer is still awaited.
  std::optional<std::string> answered(const std::string& key, ServerFileReport report);
  // The server's report of `file` at hand; null if none.
  const ServerFileReport* known(const std::string& file) const;
  // Drops the report of `file`: it holds only for the decision it was asked for.
  void forget(const std::string& file) { m_known.erase(file); }
  // The files asked before `before` and still unanswered, now reported unknown.
  std::vector<std::string> expire(Clock::time_point before);

private:
  struct Asked {
    std::string key;
    Clock::time_point at{};
  };
  std::unordered_map<std::string, Asked, StringKeyHash> m_asked;            // by file
  std::unordered_map<std::string, ServerFileReport, StringKeyHash> m_known; // by file
};

} // namespace fsguard
