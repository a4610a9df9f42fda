#include "proxy/stores/real_disk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tracker/path.hpp"
#include "tracker/server_filesystem.hpp"

namespace fsguard {

namespace {

// A regular file open for reading, with the fstat taken when it was opened.
struct RegularFile {
  int fd = -1;
  struct ::stat info{};

  RegularFile() = default;
  RegularFile(RegularFile&& other) noexcept : fd(std::exchange(other.fd, -1)), info(other.info) {}
  RegularFile& operator=(RegularFile&&) = delete;
  ~RegularFile()
  {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

struct DirectoryCloser {
  void operator()(DIR* directory) const { ::closedir(directory); }
};

// Whether the path names an existing entry reached through no symlink: one
// openat2() with RESOLVE_NO_SYMLINKS walks the path once, where realpath()
// reads every component's link in a walk of its own. Nothing if the kernel
// cannot tell (no openat2, or some other error): realpath() decides then.
std::optional<bool> exists_without_symlinks(const std::string& path)
{
  static bool unsupported = false;
  if (unsupported) {
    return std::nullopt;
  }
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC; // without O_NOFOLLOW, a symlink at the end is refused too
  how.resolve = RESOLVE_NO_SYMLINKS;
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return true;
  }
  if (errno == ENOSYS || errno == EPERM) {
    unsupported = true; // an old kernel, or a seccomp filter that refuses it
  }
  return std::nullopt;
}

// Replaces `path` with the name the kernel gives the file it opens: what
// realpath() makes of it, found in one walk of the path (an O_PATH open,
// then a readlink() of its /proc/self/fd entry) where realpath() stats and
// reads every component in turn. False, and `path` left as it was, when
// the kernel cannot tell: the path does not open, /proc is not mounted,
// the name is too long, or the file is gone by the time it is named.
bool kernel_real_path(std::string& path)
{
  static bool no_proc = false;
  if (no_proc) {
    return false;
  }
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC); // O_PATH: a FIFO opens without waiting
  if (fd < 0) {
    return false; // missing, a loop, no search permission: realpath() says which
  }
  constexpr std::string_view prefix = "/proc/self/fd/";
  char link[prefix.size() + 12]{};
  std::copy(prefix.begin(), prefix.end(), link);
  *std::to_chars(link + prefix.size(), link + sizeof link - 1, fd).ptr = '\0';
  char buffer[PATH_MAX];
  const ssize_t length = ::readlink(link, buffer, sizeof buffer);
  const int readlink_error = errno;
  ::close(fd);
  if (length < 0 && readlink_error == ENOENT) {
    no_proc = true; // the descriptor is open, so /proc is not there
  }
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof buffer) {
    return false;
  }
  const std::string_view name(buffer, static_cast<std::size_t>(length));
  // Not a path from the root: unreachable from this process's root, or
  // unlinked since the open (" (deleted)").
  if (name.front() != '/' || name.ends_with(" (deleted)")) {
    return false;
  }
  path.assign(name);
  return true;
}

// Replaces `path` with what realpath() makes of it; leaves it as it was
// and returns why when that fails.
std::optional<DiskError> libc_real_path(std::string& path)
{
  // Into a buffer of its own, which saves an allocation; a result longer
  // than PATH_MAX only fits one that realpath() allocates.
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) != nullptr) {
    path.assign(buffer);
    return std::nullopt;
  }
  if (errno != ENAMETOOLONG) {
    return DiskError{errno};
  }
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  if (!resolved) {
    return DiskError{errno};
  }
  path.assign(resolved.get());
  return std::nullopt;
}

// Replaces `path` with its real path, as the kernel names it or else as
// realpath() makes it; leaves it as it was and returns why when neither can.
std::optional<DiskError> replace_with_real_path(std::string& path)
{
  if (kernel_real_path(path)) {
    return std::nullopt;
  }
  return libc_real_path(path);
}

FileStat stat_of(const struct ::stat& info)
{
  FileStat stat;
  stat.device = info.st_dev;
  stat.inode = info.st_ino;
  stat.size = info.st_size;
  stat.mtime_ns = info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec;
  stat.ctime_ns = info.st_ctim.tv_sec * 1'000'000'000LL + info.st_ctim.tv_nsec;
  stat.mode = info.st_mode;
  return stat;
}

// Opens `path` to read it, if it is a regular file (EINVAL otherwise).
// O_NONBLOCK: opening a FIFO must never wait for a writer.
Result<RegularFile, DiskError> open_regular(const std::string& path)
{
  RegularFile file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0 || ::fstat(file.fd, &file.info) != 0) {
    return DiskError{errno};
  }
  if (!S_ISREG(file.info.st_mode)) {
    return DiskError{EINVAL};
  }
  return file;
}

} // namespace

Result<FileStat, DiskError> RealDisk::stat(const std::string& path)
{
  struct ::stat info{};
  if (::stat(path.c_str(), &info) != 0) {
    return DiskError{errno};
  }
  return stat_of(info);
}

Result<ContentDigest, DiskError> RealDisk::hash(const std::string& path)
{
  const auto file = open_regular(path);
  if (!file) {
    return file.error();
  }
  return hash_open_file(file->fd, file->info.st_size, ReadTo::end);
}

Result<std::string, DiskError> RealDisk::read(const std::string& path)
{
  const auto file = open_regular(path);
  if (!file) {
    return file.error();
  }
  if (file->info.st_size > max_hash_bytes()) {
    return DiskError{EFBIG};
  }
  std::string bytes;
  for (;;) {
    const std::size_t at = bytes.size();
    bytes.resize(at + k_chunk);
    const ssize_t count = ::read(file->fd, bytes.data() + at, k_chunk);
    if (count < 0 && errno == EINTR) {
      bytes.resize(at);
      continue;
    }
    if (count < 0) {
      return DiskError{errno};
    }
    bytes.resize(at + static_cast<std::size_t>(count));
    if (count == 0) {
      return bytes;
    }
    if (static_cast<std::int64_t>(bytes.size()) > max_hash_bytes()) {
      return DiskError{EFBIG};
    }
  }
}

ContentHash RealDisk::hash_of(std::string_view bytes)
{
  return hash_bytes(bytes);
}

Result<ContentDigest, DiskError> RealDisk::hash_open_file(int fd, off_t size, ReadTo to)
{
  m_hasher.reset();
  m_scanner.reset();
  const bool to_size = to == ReadTo::size && size > 0;
  off_t total = 0;
  for (;;) {
    std::size_t want = k_chunk;
    if (to_size) {
      if (total >= size) {
        break;
      }
      want = static_cast<std::size_t>(std::min<off_t>(size - total, k_chunk));
    }
    const ssize_t count = ::read(fd, m_buffer.get(), want);
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
    // The bytes are at hand: whether they are valid UTF-8 costs no extra read.
    m_scanner.append(std::string_view(m_buffer.get(), static_cast<std::size_t>(count)));
    total += count;
    if (total > size + k_max_bytes_past_size) {
      // Pseudo files (/proc/self/pagemap) claim a size of 0 and never end:
      // no file the agent could have read whole grows this far while read.
      return DiskError{EFBIG};
    }
    if (static_cast<std::size_t>(count) < k_chunk && size > 0 && total >= size) {
      // A short read at the size fstat gave is the end: spare the read of 0.
      // (Files that claim size 0, as in /proc, are read until read() says so.)
      break;
    }
  }
  return ContentDigest{m_hasher.digest(), m_scanner.traits()};
}

Result<Fingerprint, DiskError> RealDisk::fingerprint(const std::string& path)
{
  constexpr int k_attempts = 3; // as take_fingerprint: a file being rewritten gets a few tries
  for (int attempt = 0; attempt < k_attempts; ++attempt) {
    Fingerprint fingerprint;
    fingerprint.taken_at_ns = now_ns();
    const auto file = open_regular(path);
    if (!file) {
      return file.error();
    }
    if (file->info.st_size > max_hash_bytes()) {
      return DiskError{EFBIG};
    }
    auto hash = hash_open_file(file->fd, file->info.st_size, ReadTo::end);
    if (!hash) {
      return hash.error();
    }
    struct ::stat after{};
    if (::fstat(file->fd, &after) != 0) {
      return DiskError{errno};
    }
    fingerprint.stat = stat_of(after);
    if (stat_of(file->info) == fingerprint.stat) {
      fingerprint.hash = hash->hash;
      fingerprint.traits = hash->traits;
      return fingerprint;
    }
  }
  return DiskError{EAGAIN};
}

Result<Rehash, DiskError> RealDisk::hash_if_unchanged(const std::string& path,
                                                      const FileStat& expected)
{
  if (!expected.is_regular()) {
    return DiskError{EINVAL};
  }
  if (expected.size > max_hash_bytes()) {
    return DiskError{EFBIG};
  }
  // No fstat before the read (one syscall fewer than fingerprint()): the
  // fstat after it must give `expected`, so the file held still from when
  // the caller took that stat until the read was done. What is read of a
  // file that is not that one (a FIFO or a device renamed in meanwhile) is
  // never used, and reading stops at the size `expected` gives.
  RegularFile file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0) {
    return DiskError{errno};
  }
  auto digest = hash_open_file(file.fd, static_cast<off_t>(expected.size), ReadTo::size);
  if (::fstat(file.fd, &file.info) != 0) {
    return DiskError{errno};
  }
  Rehash rehash{stat_of(file.info), std::nullopt};
  if (rehash.stat != expected) {
    return rehash; // changed, or another file now: an error reading it says no more
  }
  if (!digest) {
    return digest.error();
  }
  rehash.digest = *digest;
  return rehash;
}

std::optional<std::int64_t> RealDisk::birth_seconds(const std::string& path)
{
  struct statx found{};
  if (::statx(AT_FDCWD, path.c_str(), 0, STATX_BTIME, &found) != 0
      || (found.stx_mask & STATX_BTIME) == 0) {
    return std::nullopt;
  }
  // As the server shows it: the guard and --check-setup compare the two.
  return node_shown_second(found.stx_btime.tv_sec, found.stx_btime.tv_nsec);
}

Result<std::string, DiskError> RealDisk::real_path(const std::string& path)
{
  std::string real = path;
  if (auto problem = is_lexically_normal(path) ? make_real_path(real) : replace_with_real_path(real)) {
    return *std::move(problem);
  }
  return real;
}

std::optional<DiskError> RealDisk::make_real_path(std::string& path)
{
  if (exists_without_symlinks(path).value_or(false)) {
    return std::nullopt; // what realpath() would return, in one walk
  }
  return replace_with_real_path(path);
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
