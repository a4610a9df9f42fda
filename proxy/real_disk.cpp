#include "proxy/real_disk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <memory>

namespace fsguard {

namespace {

struct FileCloser {
  void operator()(const int* fd) const { ::close(*fd); }
};

struct DirectoryCloser {
  void operator()(DIR* directory) const { ::closedir(directory); }
};

} // namespace

Result<FileStat, DiskError> RealDisk::stat(const std::string& path)
{
  struct ::stat info{};
  if (::stat(path.c_str(), &info) != 0) {
    return DiskError{errno};
  }
  FileStat stat;
  stat.device = info.st_dev;
  stat.inode = info.st_ino;
  stat.size = info.st_size;
  stat.mtime_ns = info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec;
  stat.ctime_ns = info.st_ctim.tv_sec * 1'000'000'000LL + info.st_ctim.tv_nsec;
  stat.mode = info.st_mode;
  return stat;
}

Result<ContentHash, DiskError> RealDisk::hash(const std::string& path)
{
  // O_NONBLOCK: opening a FIFO must never wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return DiskError{errno};
  }
  std::unique_ptr<const int, FileCloser> closer(&fd);
  struct ::stat info{};
  if (::fstat(fd, &info) != 0) {
    return DiskError{errno};
  }
  if (!S_ISREG(info.st_mode)) {
    return DiskError{EINVAL};
  }
  m_hasher.reset();
  off_t total = 0;
  for (;;) {
    const ssize_t count = ::read(fd, m_buffer.get(), k_chunk);
    if (count < 0) {
      if (errno == EINTR) {
        continue;
      }
      return DiskError{errno};
    }
    if (count == 0) {
      break;
    }
    m_hasher.append(m_buffer.get(), static_cast<std::size_t>(count));
    total += count;
    if (static_cast<std::size_t>(count) < k_chunk && info.st_size > 0 && total >= info.st_size) {
      // A short read at the size fstat gave is the end: spare the read of 0.
      // (Files that claim size 0, as in /proc, are read until read() says so.)
      break;
    }
  }
  return m_hasher.digest();
}

Result<std::string, DiskError> RealDisk::real_path(const std::string& path)
{
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  if (!resolved) {
    return DiskError{errno};
  }
  return std::string(resolved.get());
}

Result<std::vector<std::string>, DiskError> RealDisk::list_directory(const std::string& path)
{
  std::unique_ptr<DIR, DirectoryCloser> directory(::opendir(path.c_str()));
  if (!directory) {
    return DiskError{errno};
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(directory.get())) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      names.emplace_back(name);
    }
  }
  return names;
}

std::int64_t RealDisk::now_ns()
{
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

} // namespace fsguard
