// The tracker's Disk, on the real filesystem and clock.
#pragma once

#include <sys/types.h>

#include <memory>

#include "proxy/jsonrpc/content_hash.hpp"
#include "tracker/disk.hpp"

namespace fsguard {

class RealDisk final : public Disk {
public:
  Result<FileStat, DiskError> stat(const std::string& path) override;
  Result<ContentDigest, DiskError> hash(const std::string& path) override;
  Result<std::string, DiskError> real_path(const std::string& path) override;
  // One openat2() that meets no symlink vouches for the normal `path`
  // as it is; otherwise the kernel's name for the file it opens, or
  // realpath() where the kernel cannot give one (no /proc, a missing file).
  std::optional<DiskError> make_real_path(std::string& path) override;
  std::optional<std::int64_t> birth_seconds(const std::string& path) override;
  Result<std::string, DiskError> read(const std::string& path) override;
  ContentHash hash_of(std::string_view bytes) override;
  Result<std::vector<std::string>, DiskError> list_directory(const std::string& path) override;
  std::int64_t now_ns() override;
  // Opens the file once: fstat, read, fstat again on the one descriptor.
  // The hash then belongs to the stat of the file the path named at the
  // open, even if the path is replaced meanwhile.
  Result<Fingerprint, DiskError> fingerprint(const std::string& path) override;
  // Opens the file once: read, then fstat on the one descriptor. The read
  // stops at the size `expected` gives; the fstat tells a file that grew.
  Result<Rehash, DiskError> hash_if_unchanged(const std::string& path,
                                              const FileStat& expected) override;

private:
  // How far hash_open_file() reads.
  enum class ReadTo {
    end,  // until read() says the file ends
    size, // no further than the size given, unless it is 0 (as /proc files claim)
  };
  // Hashes (and scans) the open regular file `fd` of `size` bytes (as a
  // stat gave it), reading as far as `to` says.
  Result<ContentDigest, DiskError> hash_open_file(int fd, off_t size, ReadTo to);

  static constexpr std::size_t k_chunk = 256 * 1024;
  // How far past its stat size a file may go on while it is hashed.
  static constexpr off_t k_max_bytes_past_size = 64 * 1024 * 1024;
  // Reused by every hash: no allocation (or mmap) per file.
  std::unique_ptr<char[]> m_buffer = std::make_unique_for_overwrite<char[]>(k_chunk);
  ContentHasher m_hasher;
  ContentScanner m_scanner;
};


} // namespace fsguard
