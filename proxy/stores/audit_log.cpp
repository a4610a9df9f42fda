#include "proxy/stores/audit_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "tracker/file_state.hpp"

namespace fsguard {

AuditLog::AuditLog(AuditLog&& other) noexcept
  : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)),
    m_failing(other.m_failing), m_lost(other.m_lost)
{
}

AuditLog& AuditLog::operator=(AuditLog&& other) noexcept
{
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = std::exchange(other.m_fd, -1);
    m_path = std::move(other.m_path);
    m_failing = other.m_failing;
    m_lost = other.m_lost;
  }
  return *this;
}

AuditLog::~AuditLog()
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Result<AuditLog, std::string> AuditLog::open(const std::string& path)
{
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "cannot open the audit log " + path + ": " + std::strerror(errno);
  }
  AuditLog log;
  log.m_fd = fd;
  log.m_path = path;
  return log;
}

std::string AuditLog::write(const nlohmann::ordered_json& record)
{
  if (m_fd < 0) {
    return {};
  }
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  nlohmann::ordered_json line = {
    {"time", format_time(now.tv_sec * 1'000'000'000LL + now.tv_nsec)},
    {"pid", static_cast<long>(::getpid())},
  };
  for (const auto& [key, value] : record.items()) {
    line[key] = value;
  }
  const std::string text =
    line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // One write: O_APPEND makes it land whole at the end of the file.
  const ssize_t written = ::write(m_fd, text.data(), text.size());
  if (written == static_cast<ssize_t>(text.size())) {
    if (!m_failing) {
      return {};
    }
    m_failing = false;
    return "the audit log " + m_path + " takes records again; " + std::to_string(std::exchange(m_lost, 0))
           + " were lost while it failed";
  }
  const int failure = written < 0 ? errno : ENOSPC;
  ++m_lost;
  if (m_failing) {
    return {};
  }
  m_failing = true;
  return "cannot append to the audit log " + m_path + ": " + std::strerror(failure)
         + "; records are lost until it takes them again (reported once)";
}

} // namespace fsguard
