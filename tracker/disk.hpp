// The tracker's view of the filesystem and the clock, injected so that the
// policy can be tested without touching a disk or sleeping (ninja's
// DiskInterface pattern). proxy/stores/real_disk.hpp provides the real one.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracker/file_state.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// Why a path could not be inspected: ENOENT means "does not exist", any other
// errno means fsguard cannot tell (and must fail closed).
struct DiskError {
  DiskError() = default;
  explicit DiskError(int error, std::string what = {})
    : error_number(error), detail(std::move(what))
  {
  }
  int error_number = 0;
  std::string detail; // what went wrong, when errno alone does not say it
  bool missing() const;
  std::string describe() const;
};

// What Disk::hash_if_unchanged() found: the file's stat, taken after its
// bytes were read, and their digest only if that stat is the one expected.
struct Rehash {
  FileStat stat;
  std::optional<ContentDigest> digest;
};

class Disk {
public:
  virtual ~Disk() = default;

  // stat() of `path`, following symlinks.
  virtual Result<FileStat, DiskError> stat(const std::string& path) = 0;

  // Content hash and traits of the regular file at `path`, from one read of
  // it. Never blocks on a FIFO.
  virtual Result<ContentDigest, DiskError> hash(const std::string& path) = 0;

  // realpath() of `path`, which must exist.
  virtual Result<std::string, DiskError> real_path(const std::string& path) = 0;

  // Replaces `path`, absolute and lexically normal (is_lexically_normal),
  // with its real_path(); leaves it as it was and returns why when that
  // fails. For a caller that has normalised the path already: no copy of
  // it, and no second look at its spelling.
  virtual std::optional<DiskError> make_real_path(std::string& path);

  // When `path` was created, in whole seconds since the epoch, if its
  // filesystem keeps that.
  virtual std::optional<std::int64_t> birth_seconds(const std::string& path) = 0;

  // The bytes of the regular file at `path`; EFBIG past max_hash_bytes().
  virtual Result<std::string, DiskError> read(const std::string& path) = 0;

  // The content hash of `bytes`, equal to hash() of a file holding them.
  virtual ContentHash hash_of(std::string_view bytes) = 0;

  // Names of the entries of directory `path` (without "." and "..").
  virtual Result<std::vector<std::string>, DiskError>
  list_directory(const std::string& path) = 0;

  // Wall-clock now, in nanoseconds since the epoch.
  virtual std::int64_t now_ns() = 0;

  // The stat and content hash of the regular file at `path`, taken so that
  // the one belongs to the other (see take_fingerprint, which this does
  // unless a Disk knows a cheaper way).
  virtual Result<Fingerprint, DiskError> fingerprint(const std::string& path);

  // The digest of `path` if its stat, taken after one read of it, is still
  // `expected`: a stat the caller took earlier and trusts (racy() clears
  // it), so any write since shows in it and no stat before the read is
  // needed. Never blocks on a FIFO.
  virtual Result<Rehash, DiskError> hash_if_unchanged(const std::string& path,
                                                      const FileStat& expected);

  // Files larger than `bytes` are never hashed: fingerprint() fails with
  // EFBIG, so file work on the one relay thread stays bounded.
  void set_max_hash_bytes(std::int64_t bytes) { m_max_hash_bytes = bytes; }
  std::int64_t max_hash_bytes() const { return m_max_hash_bytes; }

private:
  std::int64_t m_max_hash_bytes = std::numeric_limits<std::int64_t>::max();
};

// stat(), hash() and stat() again of `path`, as one fingerprint stamped with
// the time taken *before* the first stat (so racy() errs towards hashing).
// Fails with EAGAIN if the file keeps changing while it is hashed. A file
// that is not regular fails as hash() fails.
Result<Fingerprint, DiskError> take_fingerprint(Disk& disk, const std::string& path);

} // namespace fsguard
