#include "tracker/disk.hpp"

#include <cerrno>
#include <cstring>

namespace fsguard {

bool DiskError::missing() const
{
  return error_number == ENOENT || error_number == ENOTDIR;
}

std::string DiskError::describe() const
{
  if (!detail.empty()) {
    return detail;
  }
  if (error_number == EFBIG) {
    return "it is larger than the most fsguard hashes (max_line_bytes), so no read of it "
           "through fsguard shows all of it";
  }
  return std::strerror(error_number);
}

std::optional<DiskError> Disk::make_real_path(std::string& path)
{
  auto real = real_path(path);
  if (!real) {
    return real.error();
  }
  path = std::move(real).value();
  return std::nullopt;
}

Result<Fingerprint, DiskError> Disk::fingerprint(const std::string& path)
{
  return take_fingerprint(*this, path);
}

Result<Rehash, DiskError> Disk::hash_if_unchanged(const std::string& path,
                                                  const FileStat& expected)
{
  auto taken = fingerprint(path);
  if (!taken) {
    return taken.error();
  }
  Rehash rehash{taken->stat, std::nullopt};
  if (taken->stat == expected) {
    rehash.digest = ContentDigest{taken->hash, taken->traits};
  }
  return rehash;
}

Result<Fingerprint, DiskError> take_fingerprint(Disk& disk, const std::string& path)
{
  // stat, hash, stat again: the hash belongs to the stat only if the file
  // held still in between. A file being rewritten gets a few more tries.
  constexpr int k_attempts = 3;
  for (int attempt = 0; attempt < k_attempts; ++attempt) {
    Fingerprint fingerprint;
    fingerprint.taken_at_ns = disk.now_ns();
    auto before = disk.stat(path);
    if (!before) {
      return before.error();
    }
    if (before->size > disk.max_hash_bytes()) {
      return DiskError{EFBIG};
    }
    auto hash = disk.hash(path);
    if (!hash) {
      return hash.error();
    }
    auto after = disk.stat(path);
    if (!after) {
      return after.error();
    }
    if (*before == *after) {
      fingerprint.stat = *after;
      fingerprint.hash = hash->hash;
      fingerprint.traits = hash->traits;
      return fingerprint;
    }
  }
  return DiskError{EAGAIN};
}

} // namespace fsguard
