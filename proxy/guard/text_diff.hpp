// Line diffs and three-way merges of texts, both by libgit2 (git's xdiff),
// so that the diff fsguard shows and the merge it trusts see the same lines.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsguard {

// How much of a diff fsguard shows: whole lines, at most `max_lines` of
// them (headers included) and `max_bytes` in all.
struct DiffBounds {
  std::size_t max_lines = 150;
  std::size_t max_bytes = 6144;
  bool operator==(const DiffBounds&) const = default;
};

struct TextDiff {
  std::string text;      // "" when the texts are equal
  bool complete = true;  // false: cut at the bounds (a line says so at the end)
};

// The unified diff, with 3 lines of context and line numbers in its hunk
// headers, from `before` to `after`, headed "--- `before_label`" and
// "+++ `after_label`". Whole hunks are shown while they fit in `bounds`; the
// hunk that does not is shown up to the bounds, then a line says how many
// diff lines were left out. A line without a final newline is followed by
// "\ No newline at end of file".
TextDiff diff_texts(std::string_view before, std::string_view after,
                    std::string_view before_label, std::string_view after_label,
                    const DiffBounds& bounds);

struct MergedText {
  bool clean = false;
  std::string text; // the merge; when not clean, with diff3-style conflict markers
};

// The three-way merge of `ours` and `theirs`, each changed from `base`, as
// `git merge-file --diff3` makes it (changes on adjacent lines conflict).
// Conflict markers name `ours_label`, `base_label` and `theirs_label`.
// Nothing if libgit2 fails.
std::optional<MergedText> merge_texts(std::string_view base, std::string_view ours,
                                      std::string_view theirs, const std::string& base_label,
                                      const std::string& ours_label,
                                      const std::string& theirs_label,
                                      unsigned short marker_size = 0); // 0: git's 7

// One changed place of a line diff: the lines [old_first, old_first +
// old_count) of the text before gave way to [new_first, new_first +
// new_count) of the text after (0-based line indexes; a count of 0 is a
// place between lines: before the line with that index).
struct LineChange {
  std::size_t old_first = 0;
  std::size_t old_count = 0;
  std::size_t new_first = 0;
  std::size_t new_count = 0;
};

// The changed places of the line diff (libgit2's, no context) from
// `before` to `after`, in order; nothing if libgit2 fails. Lines are
// compared byte for byte, with their end of line.
std::optional<std::vector<LineChange>> line_changes(std::string_view before,
                                                    std::string_view after);

// The conflicting regions of `merged` (from merge_texts), each with up to
// 2 lines around it, separated by "..." lines; cut at `bounds`.
std::string conflict_hunks(std::string_view merged, const DiffBounds& bounds);

} // namespace fsguard
