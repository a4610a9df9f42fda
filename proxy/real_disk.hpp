// The tracker's Disk, on the real filesystem and clock.
#pragma once

#include <memory>

#include "proxy/content_hash.hpp"
#include "tracker/disk.hpp"

namespace fsguard {

class RealDisk final : public Disk {
public:
  Result<FileStat, DiskError> stat(const std::string& path) override;
  Result<ContentHash, DiskError> hash(const std::string& path) override;
  Result<std::string, DiskError> real_path(const std::string& path) override;
  Result<std::vector<std::string>, DiskError> list_directory(const std::string& path) override;
  std::int64_t now_ns() override;

private:
  static constexpr std::size_t k_chunk = 256 * 1024;
  // Reused by every hash: no allocation (or mmap) per file.
  std::unique_ptr<char[]> m_buffer = std::make_unique_for_overwrite<char[]>(k_chunk);
  ContentHasher m_hasher;
};


} // namespace fsguard
