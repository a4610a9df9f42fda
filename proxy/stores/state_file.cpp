#include "proxy/stores/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace fsguard {

namespace {

std::string describe_errno(int error_number)
{
  return std::strerror(error_number);
}

// An open file descriptor, closed when it goes.
class Descriptor {
public:
  explicit Descriptor(int fd) : m_fd(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor()
  {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  int get() const { return m_fd; }

private:
  int m_fd;
};

// The text of the file at `path`: "" if it is missing, an error (errno)
// if it cannot be read, and at most `limit` + 1 bytes (to tell it is over).
Result<std::string, int> read_text(const std::string& path, std::size_t limit)
{
  Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (file.get() < 0) {
    return errno == ENOENT ? Result<std::string, int>(std::string()) : Result<std::string, int>(errno);
  }
  struct stat info{};
  if (::fstat(file.get(), &info) != 0) {
    return errno;
  }
  if (!S_ISREG(info.st_mode)) {
    return EINVAL;
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(file.get(), buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    if (got == 0) {
      break;
    }
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > limit) {
      break;
    }
  }
  return text;
}

SavedState parse_file(const std::string& text)
{
  if (text.size() > k_state_file_max_bytes) {
    SavedState state = parse_state(std::string_view(text).substr(0, 64));
    if (state.kind != StateKind::foreign) {
      state.kind = StateKind::ours_damaged;
    }
    state.problem = "it is larger than " + std::to_string(k_state_file_max_bytes)
                    + " bytes, which fsguard never writes";
    return state;
  }
  return parse_state(text);
}

// Holds an exclusive flock(2) on a lock file beside the state file. The
// lock file is never removed: removing it would let two processes lock two
// different files of the same name.
class LockFile {
public:
  static Result<LockFile, std::string> take(const std::string& path,
                                            std::chrono::milliseconds wait)
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return "cannot open the lock file " + path + ": " + describe_errno(errno);
    }
    LockFile lock(fd);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        return lock;
      }
      if (errno != EWOULDBLOCK && errno != EINTR) {
        return "cannot lock " + path + ": " + describe_errno(errno);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return std::string(); // busy: "" is not an error
      }
      // Another fsguard holds it for a read, a merge and a write: a
      // millisecond or two.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  LockFile(LockFile&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  LockFile& operator=(LockFile&&) = delete;
  ~LockFile()
  {
    if (m_fd >= 0) {
      ::close(m_fd); // releases the lock
    }
  }

private:
  explicit LockFile(int fd) : m_fd(fd) {}
  int m_fd;
};

// Writes `text` to a new file beside `path` and renames it over `path`, so
// a reader sees the old file or the new one, never a part.
std::string replace_file(const std::string& path, const std::string& text)
{
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  Descriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                         0600));
  if (file.get() < 0) {
    return "cannot create " + temporary + ": " + describe_errno(errno);
  }
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t wrote = ::write(file.get(), text.data() + written, text.size() - written);
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      const int failure = wrote < 0 ? errno : ENOSPC;
      ::unlink(temporary.c_str());
      return "cannot write " + temporary + ": " + describe_errno(failure);
    }
    written += static_cast<std::size_t>(wrote);
  }
  // No fsync: it would hold up the relay on a slow disk, and a state file
  // lost or cut short by a crash only costs the next session re-reads (a
  // damaged file is ignored, and a record is trusted only against the disk).
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int failure = errno;
    ::unlink(temporary.c_str());
    return "cannot rename " + temporary + " to " + path + ": " + describe_errno(failure);
  }
  return {};
}

// The file that `path` names once the symbolic links it is are followed,
// link by link (a relative target is taken from the link's directory), as
// a dotfiles manager links a state file into place; `path` itself if it is
// no link, and the last target if that is missing. Links in the
// directories above need no following: the kernel follows those.
Result<std::filesystem::path, std::string> file_behind_links(const std::string& path)
{
  namespace fs = std::filesystem;
  constexpr int k_max_links = 40; // as the kernel's ELOOP limit
  fs::path current = path;
  for (int hop = 0; hop <= k_max_links; ++hop) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(current, error))) {
      return current;
    }
    const fs::path target = fs::read_symlink(current, error);
    if (error) {
      return std::string("cannot read the symbolic link " + current.string() + ": "
                         + error.message());
    }
    current = (target.is_absolute() ? target : current.parent_path() / target).lexically_normal();
  }
  return std::string("the state file " + path + " is a chain of more than "
                     + std::to_string(k_max_links) + " symbolic links");
}

} // namespace

StateFile::StateFile(std::string path, StateKey key) : m_path(std::move(path)), m_key(std::move(key))
{
}

StateFile::Loaded StateFile::load()
{
  Loaded loaded;
  auto text = read_text(m_path, k_state_file_max_bytes);
  if (!text) {
    loaded.warning = "cannot read the state file " + m_path + " (" + describe_errno(text.error())
                     + "); starting without the records of earlier sessions";
    loaded.not_saved = true;
    return loaded;
  }
  const SavedState state = parse_file(*text);
  switch (state.kind) {
  case StateKind::empty:
    break;
  case StateKind::ours:
    loaded.records = records_of(state, m_key);
    break;
  case StateKind::ours_damaged:
  case StateKind::other_version:
    loaded.warning = "ignored the state file " + m_path + ": " + state.problem
                     + "; starting without the records of earlier sessions, and replacing it";
    break;
  case StateKind::foreign:
    loaded.warning = "ignored the state file " + m_path + ": " + state.problem
                     + "; fsguard will not overwrite it, so records are not kept across "
                       "restarts until it is removed or state_file names another path";
    loaded.not_saved = true;
    break;
  }
  return loaded;
}

StateFile::Saved StateFile::save(const std::vector<SavedRecord>& records,
                                 std::chrono::milliseconds wait)
{
  // A symlinked state file stays a link: the file it leads to is replaced.
  const auto behind_links = file_behind_links(m_path);
  if (!behind_links) {
    return {Outcome::failed, behind_links.error()};
  }
  const std::string target = behind_links->string();
  const std::filesystem::path parent = behind_links->parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    std::filesystem::create_directories(parent, error);
    if (error) {
      return {Outcome::failed, "cannot create the directory " + parent.string()
                                 + " of the state file: " + error.message()};
    }
  }
  auto lock = LockFile::take(target + ".lock", wait);
  if (!lock) {
    return lock.error().empty() ? Saved{Outcome::busy, {}} : Saved{Outcome::failed, lock.error()};
  }
  auto text = read_text(target, k_state_file_max_bytes);
  if (!text) {
    return {Outcome::failed, "cannot read the state file " + target + ": "
                               + describe_errno(text.error())};
  }
  SavedState state = parse_file(*text);
  if (state.kind == StateKind::foreign) {
    return {Outcome::refused, "the state file " + m_path + " is not an fsguard state file; "
                                "fsguard does not overwrite it"};
  }
  merge_state(state, m_key, records);
  if (auto problem = replace_file(target, state_text(state)); !problem.empty()) {
    return {Outcome::failed, std::move(problem)};
  }
  return {};
}

} // namespace fsguard
