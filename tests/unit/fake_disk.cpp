#include "fake_disk.hpp"

#include <cerrno>

#include "proxy/jsonrpc/content_hash.hpp"

namespace fsguard::testing {

namespace {

constexpr std::uint32_t k_regular = 0100644;
constexpr std::uint32_t k_directory = 0040755;
constexpr std::uint32_t k_fifo = 0010644;

std::string parent_of(const std::string& path)
{
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

ContentHash fake_hash(const std::string& content)
{
  return hash_bytes(content);
}

FakeDisk::FakeDisk() : m_now_ns(1'800'000'000'000'000'000LL)
{
  m_entries["/"].stat.mode = k_directory;
}

FakeDisk::Entry& FakeDisk::touch_entry(const std::string& path)
{
  auto [found, created] = m_entries.try_emplace(path);
  if (created) {
    found->second.stat.inode = m_next_inode++;
    found->second.stat.device = 1;
    found->second.stat.mode = k_regular;
  }
  return found->second;
}

void FakeDisk::write(const std::string& path, const std::string& content)
{
  Entry& entry = touch_entry(path);
  entry.content = content;
  entry.stat.size = static_cast<std::int64_t>(content.size());
  entry.stat.mtime_ns = m_now_ns;
  entry.stat.ctime_ns = m_now_ns;
}

void FakeDisk::write_keeping_mtime(const std::string& path, const std::string& content)
{
  const std::int64_t mtime = touch_entry(path).stat.mtime_ns;
  write(path, content);
  m_entries[path].stat.mtime_ns = mtime;
}

void FakeDisk::replace(const std::string& path, const std::string& content)
{
  m_entries.erase(path);
  write(path, content);
}

void FakeDisk::set_mtime(const std::string& path, std::int64_t mtime_ns)
{
  Entry& entry = touch_entry(path);
  entry.stat.mtime_ns = mtime_ns;
  entry.stat.ctime_ns = m_now_ns;
}

void FakeDisk::chmod(const std::string& path, std::uint32_t permissions)
{
  Entry& entry = touch_entry(path);
  entry.stat.mode = (entry.stat.mode & 0170000) | permissions;
  entry.stat.ctime_ns = m_now_ns;
}

Result<std::string, DiskError> FakeDisk::read(const std::string& path)
{
  auto resolved = real_path(path);
  if (!resolved) {
    return resolved.error();
  }
  const auto found = m_entries.find(*resolved);
  if (found == m_entries.end()) {
    return DiskError{ENOENT};
  }
  if (!found->second.stat.is_regular()) {
    return DiskError{EINVAL};
  }
  if (found->second.stat.size > max_hash_bytes()) {
    return DiskError{EFBIG};
  }
  std::string bytes = found->second.content;
  if (after_next_read) {
    auto hook = std::move(after_next_read);
    after_next_read = nullptr;
    hook();
  }
  return bytes;
}

std::optional<std::string> FakeDisk::content(const std::string& path) const
{
  const auto found = m_entries.find(path);
  if (found == m_entries.end() || !found->second.stat.is_regular()
      || !found->second.link_target.empty()) {
    return std::nullopt;
  }
  return found->second.content;
}

void FakeDisk::remove(const std::string& path)
{
  m_entries.erase(path);
}

void FakeDisk::make_directory(const std::string& path)
{
  touch_entry(path).stat.mode = k_directory;
}

void FakeDisk::make_fifo(const std::string& path)
{
  touch_entry(path).stat.mode = k_fifo;
}

void FakeDisk::symlink(const std::string& path, const std::string& target)
{
  touch_entry(path).link_target = target;
}

void FakeDisk::fail_stat(const std::string& path, int error_number)
{
  m_stat_errors[path] = error_number;
}

Result<std::string, DiskError> FakeDisk::resolve(const std::string& path, int depth)
{
  if (depth > 16) {
    return DiskError{ELOOP};
  }
  // Walk the components, following symlinks at every step.
  std::string resolved;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) {
      slash = path.size();
    }
    const std::string name = path.substr(start, slash - start);
    start = slash + 1;
    if (name.empty() || name == ".") {
      continue;
    }
    if (name == "..") {
      resolved = parent_of(resolved.empty() ? "/" : resolved);
      if (resolved == "/") resolved.clear();
      continue;
    }
    const std::string candidate = resolved + "/" + name;
    const auto found = m_entries.find(candidate);
    if (found == m_entries.end()) {
      return DiskError{ENOENT};
    }
    if (!found->second.link_target.empty()) {
      const std::string& target = found->second.link_target;
      auto target_path = target.front() == '/' ? target : (resolved.empty() ? "" : resolved) + "/" + target;
      auto followed = resolve(target_path, depth + 1);
      if (!followed) {
        return followed.error();
      }
      resolved = *followed == "/" ? "" : *followed;
      continue;
    }
    resolved = candidate;
  }
  return resolved.empty() ? std::string("/") : resolved;
}

Result<FileStat, DiskError> FakeDisk::stat(const std::string& path)
{
  if (const auto error = m_stat_errors.find(path); error != m_stat_errors.end()) {
    return DiskError{error->second};
  }
  auto resolved = resolve(path, 0);
  if (!resolved) {
    return resolved.error();
  }
  return m_entries.at(*resolved).stat;
}

void FakeDisk::fail_hash(const std::string& path, int error_number)
{
  m_hash_errors[path] = error_number;
}

Result<ContentDigest, DiskError> FakeDisk::hash(const std::string& path)
{
  ++hash_calls;
  if (on_next_hash) {
    auto hook = std::move(on_next_hash);
    on_next_hash = nullptr;
    hook();
  }
  if (const auto failing = m_hash_errors.find(path); failing != m_hash_errors.end()) {
    return DiskError{failing->second};
  }
  auto resolved = resolve(path, 0);
  if (!resolved) {
    return resolved.error();
  }
  const Entry& entry = m_entries.at(*resolved);
  if (!entry.stat.is_regular()) {
    return DiskError{EINVAL};
  }
  return ContentDigest{fake_hash(entry.content), content_traits(entry.content)};
}

Result<std::string, DiskError> FakeDisk::real_path(const std::string& path)
{
  return resolve(path, 0);
}

Result<std::vector<std::string>, DiskError> FakeDisk::list_directory(const std::string& path)
{
  auto resolved = resolve(path, 0);
  if (!resolved) {
    return resolved.error();
  }
  const std::string prefix = *resolved == "/" ? "/" : *resolved + "/";
  std::vector<std::string> names;
  for (const auto& [entry_path, entry] : m_entries) {
    if (entry_path.size() > prefix.size() && entry_path.starts_with(prefix)
        && entry_path.find('/', prefix.size()) == std::string::npos) {
      names.push_back(entry_path.substr(prefix.size()));
    }
  }
  return names;
}

} // namespace fsguard::testing
