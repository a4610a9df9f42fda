// The state file on disk ("state_file"): the records of what the agent saw,
// read by the next fsguard on the same upstream. Replaced atomically (a
// temporary file renamed over it), merged under a lock file so that
// several fsguard processes sharing it keep each other's records.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tracker/saved_state.hpp"

namespace fsguard {

// A state file this large is not read: fsguard never writes one (its
// records are capped), so something else did.
inline constexpr std::size_t k_state_file_max_bytes = 16 * 1024 * 1024;

class StateFile {
public:
  // The state file at `path`, for the records of the upstream `key`.
  // Touches nothing yet.
  StateFile(std::string path, StateKey key);

  const std::string& path() const { return m_path; }

  // What load() found.
  struct Loaded {
    std::vector<SavedRecord> records; // saved for this upstream
    std::string warning;              // why the file was ignored; "" if it was not
    // The warning says that records cannot be saved there either (a file
    // that is not a state file, or one that cannot be read).
    bool not_saved = false;
  };

  // Reads the records saved for this upstream. A file that is missing or
  // empty gives none, silently; one that is damaged, of another version or
  // not a state file gives none and a warning.
  Loaded load();

  // Merges `records` into the file and replaces it, holding its lock file
  // (`path`.lock) while it reads, merges and writes; creates missing
  // parent directories. Waits up to `wait` for another process's lock, and
  // returns `busy` if it is still held. A file that is not a state file is
  // never overwritten (`refused`).
  enum class Outcome { saved, busy, refused, failed };
  struct Saved {
    Outcome outcome = Outcome::saved;
    std::string problem; // for `refused` and `failed`
  };
  Saved save(const std::vector<SavedRecord>& records, std::chrono::milliseconds wait);

private:
  std::string m_path;
  StateKey m_key;
};

} // namespace fsguard
