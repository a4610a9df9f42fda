#include "proxy/audit_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "tracker/file_state.hpp"

namespace fsguard {

AuditLog::AuditLog(AuditLog&& other) noexcept
  : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path))
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

void AuditLog::write(const nlohmann::ordered_json& record) const
{
  if (m_fd < 0) {
    return;
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
  [[maybe_unused]] const ssize_t written = ::write(m_fd, text.data(), text.size());
}

} // namespace fsguard
