// The optional JSONL audit log: one line per guarded decision, config
// reload and mode change. Each line is one O_APPEND write(), so several
// fsguard processes can share the file without interleaving lines.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tracker/result.hpp"

namespace fsguard {

class AuditLog {
public:
  AuditLog() = default;
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;
  AuditLog(AuditLog&& other) noexcept;
  AuditLog& operator=(AuditLog&& other) noexcept;
  ~AuditLog();

  // Opens (creating if needed) `path` for appending. Errors name the path.
  static Result<AuditLog, std::string> open(const std::string& path);

  bool enabled() const { return m_fd >= 0; }
  const std::string& path() const { return m_path; }

  // Appends `record` as one line, with "time" (UTC, ms) and "pid" first.
  // Returns a line for stderr when an outage starts (a failed append, e.g.
  // ENOSPC) or ends (with how many records were lost), "" otherwise: a
  // failure is reported once per outage, not once per record.
  std::string write(const nlohmann::ordered_json& record);

private:
  int m_fd = -1;
  std::string m_path;
  bool m_failing = false;
  std::size_t m_lost = 0; // records lost in the current outage
};

} // namespace fsguard
