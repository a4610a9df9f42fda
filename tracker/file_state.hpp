// What fsguard knows about a file's state: stat identity plus content hash.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tracker/content_traits.hpp"

namespace fsguard {

// The stat fields that change when a file is written, replaced or touched.
struct FileStat {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint32_t mode = 0; // st_mode: type and permission bits

  bool is_regular() const { return (mode & 0170000) == 0100000; }
  bool is_directory() const { return (mode & 0170000) == 0040000; }
  bool operator==(const FileStat&) const = default;
};

// A 128-bit content hash (XXH3-128 in production; any stable hash in tests).
using ContentHash = std::array<std::uint64_t, 2>;

// `ContentHash` as 32 lowercase hex digits, for logs and veto texts.
std::string to_hex(const ContentHash& hash);

// A file's content hash and the traits found in the same pass over it.
struct ContentDigest {
  ContentHash hash{};
  ContentTraits traits;
};

// A file as fsguard saw it at `taken_at_ns` (wall clock, used only to decide
// whether the stat fields can be trusted without hashing; see racy()).
struct Fingerprint {
  FileStat stat;
  ContentHash hash{};
  std::int64_t taken_at_ns = 0;
  ContentTraits traits = {}; // of the content hashed
};

// How far a file time must lie before the moment a fingerprint was taken for
// the stat fields alone to prove "unchanged" (git's "racily clean" rule,
// with ccache's margin). Inside this window fsguard compares content.
inline constexpr std::int64_t k_racy_window_ns = 2'000'000'000;

// True when `fingerprint`'s mtime or ctime is so close to the moment it was
// taken that a later write in the same clock tick could leave stat unchanged.
bool racy(const Fingerprint& fingerprint);

// Renders `epoch_ns` as an ISO-8601 UTC time with milliseconds.
std::string format_time(std::int64_t epoch_ns);

} // namespace fsguard
