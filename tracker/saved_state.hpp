// The text of a state file (the "state_file" key): the records of what the
// agent saw, kept for the next fsguard on the same upstream. Pure: parsing,
// merging and writing the text; proxy/stores/state_file.hpp does the file I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/tracker.hpp"

namespace fsguard {

// The version of the state file's layout. Another version's records are
// not read (the hash or the layout may differ), and are replaced.
inline constexpr int k_state_version = 1;

// At most this many records are kept in a state file, the most recently
// taken first: about 250 bytes each, so the file stays under about 250 KiB
// and is rewritten in well under a millisecond.
inline constexpr std::size_t k_state_records_kept = 1000;

// Which upstream records belong to: its command line and the working
// directory it runs in (a relative path in the command means another
// project in another directory).
struct StateKey {
  std::vector<std::string> command;
  std::string cwd;

  bool operator==(const StateKey&) const = default;
};

// What a state file's text turned out to be.
enum class StateKind {
  empty,         // no file, or an empty one: nothing to read
  ours,          // a state file of this version
  ours_damaged,  // written by fsguard (it starts as fsguard writes it), but unreadable
  other_version, // a state file of another version
  foreign,       // not a state file: fsguard never overwrites it
};

// The records of one upstream.
struct StateSection {
  StateKey key;
  std::vector<SavedRecord> records;
};

struct SavedState {
  StateKind kind = StateKind::empty;
  std::string problem; // why it is not `ours` or `empty`
  std::vector<StateSection> sections;
};

// Reads a state file's `text`. Never throws: text it cannot read whole is
// `ours_damaged` or `foreign`, with the `problem`.
SavedState parse_state(std::string_view text);

// The records `state` holds for `key`; none unless it is `ours`.
std::vector<SavedRecord> records_of(const SavedState& state, const StateKey& key);

// Merges `mine`, the records of `key`, into `state` (whatever it held
// unless it is `ours` is dropped): for a path in both, the one taken later
// stays. Then only the `limit` most recently taken records of all
// sections stay.
void merge_state(SavedState& state, const StateKey& key, const std::vector<SavedRecord>& mine,
                 std::size_t limit = k_state_records_kept);

// `state`'s sections as a state file's text (of kind `ours`).
std::string state_text(const SavedState& state);

} // namespace fsguard
