// The one decision on every change: whether a call that would destroy
// bytes of a file may go ahead, be carried over to the file's current
// content, or is refused, from what the agent knew when it sent the call.
// Pure: Guard gathers the facts (the tracker's check, the keep-the-change
// rule's finding) and asks; this library links neither Asio nor a disk.
#pragma once

#include <cstdint>
#include <optional>

#include "tracker/tracker.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

// Every way a call can destroy bytes of a file. A path added later (a
// task-backed call, say) is added here, and so asks the same questions.
enum class ChangePath {
  write,             // write_file: the whole content replaced
  edit,              // edit_file: its text matched on the content
  rebased_edit,      // an edit carried over to content changed since the agent saw it
  merged_write,      // a write merged with content changed since the agent saw it
  move_destination,  // a move onto an existing file (some servers replace it)
  move_source,       // the file a move takes away: its bytes go with it
  accepted_override, // a vetoed change the person allowed, decided again
};

// What the agent must have seen of a file for a change by `path`: the
// whole of it (overwrite), or the text the change matches (edit).
WriteKind write_kind(ChangePath path);

// Whether a change by `path` leaves a whole content of the agent's (a
// write, a merge, a move's source bytes), which must keep a change the
// agent knows only from fsguard's own text (the keep-the-change rule).
bool replaces_content(ChangePath path);

// Whether a change sent at `sent_at` is bound by the keep-the-change rule
// of `record` (null: no record): the record is known from fsguard's own
// text over a version the agent read, and the call was sent before the
// agent read the file itself again.
bool bound_to_shown_change(const SeenRecord* record, std::uint64_t sent_at);

// What the keep-the-change rule found of the content a change leaves.
enum class ShownChange {
  not_bound, // no change shown binds the call, or the path leaves no whole content
  kept,      // every line the change wrote is in it, byte for byte
  not_kept,  // undone, rewritten, or not known (a text evicted, too large)
};

// What Guard found of one file of a call, for decide().
struct ChangeFacts {
  ChangePath path = ChangePath::write;
  std::optional<Veto> check{}; // the tracker's check for write_kind(path); nothing: passed
  ShownChange shown = ShownChange::not_bound;
  // A stale change carried over (rebased_edit, merged_write): the veto it
  // would have had otherwise.
  std::optional<Veto> carried_over{};
  // accepted_override: the code of the veto the person allowed, for the
  // content they were shown (the caller checks the file still holds it).
  std::optional<VetoCode> accepted{};
};

enum class ChangeOutcome { allow, rebase, merge, veto };

// The decision, and its reason: the veto (for a rebase or a merge, the
// veto it carried over).
struct ChangeDecision {
  ChangeOutcome outcome = ChangeOutcome::allow;
  std::optional<Veto> veto;
};

// Decides a change of one file from `facts`, the same way for every path.
// `file` names it in a veto of the keep-the-change rule.
ChangeDecision decide(const ChangeFacts& facts, const std::string& file);

} // namespace fsguard
