// An in-memory Disk with a hand-driven clock, for the tracker's unit tests:
// it can rewrite a file within one clock tick, restore an mtime, or change
// a file while it is being hashed.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "tracker/disk.hpp"

namespace fsguard::testing {

// The hash the FakeDisk gives `content`: the real one (XXH3-128), so that a
// write's content hashed by the reader of its line matches the file it
// leaves.
ContentHash fake_hash(const std::string& content);

class FakeDisk final : public Disk {
public:
  FakeDisk();

  // Creates or rewrites `path` in place (same inode) at the current tick.
  void write(const std::string& path, const std::string& content);
  // Rewrites `path` in place, then puts its mtime back (cp -p, touch -d).
  void write_keeping_mtime(const std::string& path, const std::string& content);
  // Replaces `path` by a new inode (an editor's rename-over).
  void replace(const std::string& path, const std::string& content);
  void set_mtime(const std::string& path, std::int64_t mtime_ns);
  void chmod(const std::string& path, std::uint32_t permissions);
  void remove(const std::string& path);
  void make_directory(const std::string& path);
  void make_fifo(const std::string& path);
  void symlink(const std::string& path, const std::string& target);
  void fail_stat(const std::string& path, int error_number);
  // Makes hash() of `path` fail while stat() still works (e.g. EACCES).
  void fail_hash(const std::string& path, int error_number);
  // Moves the clock on by `ns` (one tick is much less than the racy window).
  void advance(std::int64_t ns) { m_now_ns += ns; }

  // The content of the regular file `path`, if there is one (for models).
  std::optional<std::string> content(const std::string& path) const;

  // Called once at the start of the next hash(), e.g. to change the file.
  std::function<void()> on_next_hash;
  // Called once as the next read() has taken the bytes it returns, e.g. to
  // change the file just after them.
  std::function<void()> after_next_read;
  int hash_calls = 0;

  Result<FileStat, DiskError> stat(const std::string& path) override;
  Result<ContentDigest, DiskError> hash(const std::string& path) override;
  Result<std::string, DiskError> real_path(const std::string& path) override;
  std::optional<std::int64_t> birth_seconds(const std::string& path) override
  {
    const auto found = births.find(path);
    return found == births.end() ? std::nullopt : std::optional<std::int64_t>(found->second);
  }
  std::map<std::string, std::int64_t> births; // set by tests
  Result<std::string, DiskError> read(const std::string& path) override;
  ContentHash hash_of(std::string_view bytes) override { return fake_hash(std::string(bytes)); }
  Result<std::vector<std::string>, DiskError> list_directory(const std::string& path) override;
  std::int64_t now_ns() override { return m_now_ns; }

private:
  struct Entry {
    FileStat stat;
    std::string content;
    std::string link_target; // non-empty: a symlink
  };

  Entry& touch_entry(const std::string& path);
  Result<std::string, DiskError> resolve(const std::string& path, int depth);

  std::map<std::string, Entry> m_entries;
  std::map<std::string, int> m_stat_errors;
  std::map<std::string, int> m_hash_errors;
  std::int64_t m_now_ns;
  std::uint64_t m_next_inode = 100;
};

} // namespace fsguard::testing
