// The session's record of what the agent has seen of each file, and the
// decision whether a write may go ahead. Pure policy: all I/O goes through
// the injected `Disk`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracker/disk.hpp"
#include "tracker/file_state.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

enum class ReadExtent { whole, partial };

// How a read showed the agent the bytes of a file.
enum class ReadView {
  bytes,      // exactly (base64: read_media_file)
  utf8_text,  // decoded as UTF-8: bytes that are not valid UTF-8 show as U+FFFD
  utf8_lines, // the same, in lines as Node's readline splits them (it also ends
              // a line at a bare "\r"), counted against "\n" (desktop-commander)
};
enum class WriteKind { overwrite, edit };
enum class PartialReadAllowsOverwrite { no, yes };

// The state of a file taken just before a read was forwarded. The hash is
// taken only when the stat alone could not prove the file unchanged later.
struct ReadStart {
  std::optional<FileStat> stat;
  std::optional<ContentHash> hash;
};

// Whether a record's content hash is known. A read whose file held still
// (same stat before and after it, not racy) is recorded at once and hashed
// just after its response is forwarded, off the agent's path; if the file
// moved in that moment, what the agent saw can no longer be hashed.
enum class HashState { known, owed, lost };

// What the agent last saw of one file.
struct SeenRecord {
  std::optional<FileStat> trusted_stat; // absent: always compare content
  ContentHash hash{};
  HashState hash_state = HashState::known;
  std::optional<ContentHash> whole_hash_before; // owed: a whole read this partial one may repeat
  std::int64_t taken_at_ns = 0;
  std::int64_t size = 0;
  ReadExtent extent = ReadExtent::whole;
  bool changed_during_read = false;
  ReadView view = ReadView::bytes; // how the agent was shown it; its own writes: exactly
  ContentTraits traits;            // of the content hashed (once the hash is known)
};

class Tracker {
public:
  explicit Tracker(Disk& disk) : m_disk(disk) {}

  // Takes the state of `path` before a read of it is forwarded.
  ReadStart begin_read(const std::string& path);

  // Records that a read of `path`, started as `start`, succeeded and showed
  // the agent the `extent` of the file, through `view`. A file that changed
  // in between is recorded as changed_during_read. Call it before the
  // response goes on; when the stat alone shows the file held still, it
  // costs one stat and leaves the hash owed to settle_reads().
  void finish_read(const std::string& path, const ReadStart& start, ReadExtent extent,
                   ReadView view);

  // Hashes the files whose reads left a hash owed. Call it once their
  // responses are on their way. A file that changed since finish_read() is
  // recorded as unknown content, and a write to it is vetoed as changed.
  void settle_reads();

  // Decides whether a `kind` write of `path` may go ahead: nothing if it may,
  // the veto otherwise. Refreshes the record when only metadata changed.
  std::optional<Veto> check_write(const std::string& path, WriteKind kind,
                                  PartialReadAllowsOverwrite partial_policy);

  // Records `path` after the agent's own successful write. `expected` is the
  // content hash the write should have produced, when known (write_file); if
  // the file holds something else, another writer was at work and the
  // agent is held to `expected`, so the next write is vetoed as changed.
  void finish_write(const std::string& path, const std::optional<ContentHash>& expected);

  // Moves the record of `from` to `to` after a successful rename.
  void finish_move(const std::string& from, const std::string& to);

  // Drops what is known of `path`, e.g. when a write's outcome is unknown.
  void forget(const std::string& path);

  // The record of `path`, if any (for tests and diagnostics).
  const SeenRecord* find(const std::string& path) const;

private:
  void settle(const std::string& path);
  // For a head/tail read: the hash of the clean whole read the agent made
  // of `path` before, if any. A partial read of that same content counts as
  // whole.
  std::optional<ContentHash> whole_read_to_repeat(const std::string& path,
                                                  ReadExtent extent) const;

  Disk& m_disk;
  std::vector<std::string> m_owed; // paths whose records may owe a hash
  std::unordered_map<std::string, SeenRecord> m_records;
};

} // namespace fsguard
