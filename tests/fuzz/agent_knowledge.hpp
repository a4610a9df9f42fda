// What fuzz_ledger's model of the agent knows of a file's contents, and the
// text rules it judges a change by. Pure: no guard, no disk.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fsguard::fuzz {

// How the agent knows one content of a file.
struct Knowledge {
  // It knows every byte of it: it saw it whole, wrote it, or took in a
  // complete diff of fsguard's over a content it knew whole.
  bool whole = false;
  // It saw every byte itself: a whole read's answer, or its own write or
  // edit of a content it had seen whole itself. Only such a content can
  // license destroying bytes the agent knows from fsguard's texts alone.
  bool own_whole = false;

  Knowledge& operator|=(const Knowledge& other)
  {
    whole = whole || other.whole;
    own_whole = own_whole || other.own_whole;
    return *this;
  }
};

// Every content the agent has known a file to hold, and how.
using Known = std::map<std::string, Knowledge>;

// When the agent last viewed a file (any view), and last saw it whole for
// itself: what read_ttl_s counts from (nothing: never). fsguard's own
// diffs and notes, which show the changed lines only, renew neither.
struct ViewClock {
  std::optional<std::int64_t> any_ns;
  std::optional<std::int64_t> whole_ns;
};

// The lines of `text`, each with its "\n". The model's contents always end
// in "\n", and no line repeats within a file (every new line carries a
// fresh number), so line-by-line comparisons are unambiguous.
std::vector<std::string> lines_of(const std::string& text);
std::string joined_lines(const std::vector<std::string>& lines);

// `text` with `old_text` replaced by `new_text`, if it occurs exactly once.
std::optional<std::string> replaced_once(std::string text, const std::string& old_text,
                                         const std::string& new_text);

// The model's own three-way merge, line by line, of texts with the same
// number of lines: each line as whichever side changed it; nothing on a
// conflict or when the line counts differ.
std::optional<std::string> merged_by_line(const std::string& base, const std::string& ours,
                                          const std::string& theirs);

// The keep-the-change rule as the spec states it, in the model's terms:
// `leaves`, put in place of `now`, keeps byte for byte every line the
// change from `base` to `now` wrote, so every line it destroys is one of
// `base`'s, which the agent knew. (The model's lines never repeat, so the
// lines a change wrote are those of `now` that `base` has not.)
bool keeps_change(const std::string& base, const std::string& now, const std::string& leaves);

// The diff in a fenced ```diff block of `text`, or "".
std::string fenced_diff_in(const std::string& text);

} // namespace fsguard::fuzz
