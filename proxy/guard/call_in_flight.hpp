// A guarded tools/call as fsguard described it when it went upstream: the
// files it names, what their state was before a read, and what a write
// should leave behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <nlohmann/json.hpp>

#include "tracker/path.hpp"
#include "tracker/text_bytes.hpp"
#include "tracker/tool_map.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

// One slot per path argument of a call, kept inside the call for the one
// or two paths nearly every call has: no allocation of its own.
template <class Slot>
using FileSlots = boost::container::small_vector<Slot, 2>;

// A change fsguard carried over to content the agent had not seen: a stale
// edit applied to the current content, or a stale write merged with it.
struct CarriedOver {
  enum class How { rebase, merge };
  How how = How::rebase;
  ContentHash seen{};    // what the agent last saw
  ContentHash current{}; // what was on disk when fsguard decided
  std::string note;      // added to the answer for the agent
  bool shows_whole = false; // the note's diff is complete: the agent knows the result whole
  std::string result;    // what the change should leave (kept once it did)
};

// What a write puts in its file, as fsguard holds it until the write is done.
struct WrittenContent {
  TextBytes bytes;                 // the text, or its raw JSON string if `raw`
  bool raw = true;                 // decoded only once the answer is relayed
  std::optional<ContentHash> hash{}; // the text's, when the reader hashed it
  // The text's traits, when what the reader's decoder saw tells them.
  std::optional<ContentTraits> traits{};
};

struct CallInFlight {
  nlohmann::json id;
  GuardedCall what;
  FileSlots<std::optional<std::string>> files; // canonical; none if unresolved
  // Why each file is unresolved: one a file, or none when all resolved.
  std::vector<PathError> problems;
  FileSlots<ReadStart> read_starts;
  // verify: upstream: per file, the partial check of a partial read (0: none).
  std::vector<std::uint64_t> partial_checks;
  std::optional<ContentHash> expected; // write_file: hash of the content
  // The extent of the read that licensed an edit, per file (an edit leaves
  // a record no wider than that).
  FileSlots<ReadExtent> licensed_extent;
  // An edit whose result is its diff: the file's content as the check found
  // it (what the agent saw), to apply the diff to; none if unknown.
  std::optional<std::string> edit_base;
  std::optional<CarriedOver> carried; // a stale change fsguard carried over
  // A write's content, when small enough to keep once it is written: the
  // agent knows it whole.
  std::optional<WrittenContent> written;
  std::uint64_t sent_at = 0; // the guard's moment when the client sent it
  std::chrono::steady_clock::time_point started{};
  bool expired = false; // no answer in time: it no longer holds other calls
};

} // namespace fsguard
