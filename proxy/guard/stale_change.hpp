// A change the agent asks for on a file that changed since it last saw it:
// carrying an edit over to the current content (a rebase), merging a write
// with the current content, and the notes that tell the agent so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/text_diff.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
#include "tracker/result.hpp"
#include "tracker/tool_map.hpp"

namespace fsguard {

// One {oldText, newText} edit of an edit_file call.
struct TextEdit {
  std::string old_text;
  std::string new_text;
};

// The edits in the `arguments` of an edit_file call; nothing if they are
// missing or not all {oldText: string, newText: string}.
std::optional<std::vector<TextEdit>> text_edits(const nlohmann::json& arguments);

// Why an edit could not be carried over to the current content.
struct NotRebased {
  std::string reason;
};

// What `edits`, applied as `semantics` says, will leave of `current`, when
// that is safe although the agent last saw `seen`: each oldText matches
// exactly once in the current content and exactly once in what the agent
// saw (as the edits before it left each), and the three-way merge of the
// edits (on `seen`) with the outside change (`seen` to `current`) is clean
// and equal to what the edits leave of `current`. So every edit lands where
// it would have landed on `seen`, and every line the outside change touched
// survives. The reason otherwise.
Result<std::string, NotRebased> rebase_edits(std::string_view seen, std::string_view current,
                                             const std::vector<TextEdit>& edits,
                                             EditSemantics semantics);

// The three-way merge of a write of `written` with the change from `seen`
// (what the agent last saw) to `current` (the disk now); nothing if the
// merge library fails.
std::optional<MergedText> merge_write(std::string_view seen, std::string_view written,
                                      std::string_view current);

// Whether a whole write of `written`, which the agent may have made from
// `seen` before it took in fsguard's text showing it `shown`, keeps the
// change from `seen` to `shown` byte for byte. Lines are diffed (a last
// line without "\n" as if it had one): every line the change wrote must
// be in the write unchanged (the diff from `shown` to `written` rewrites
// or drops none of them), and nothing may be written where the change
// took lines away; a change of the final newline
// must be kept too. A write that rewrites those lines is not taken to keep
// the change: fsguard cannot tell from which version it was made.
bool keeps_change(std::string_view seen, std::string_view shown, std::string_view written);

// The note added to the result of an edit of `path` carried over to its
// current content: it names the `cause` of the change and shows `diff`
// (from what the agent saw to the content the edit was applied to).
std::string rebase_note(const std::string& path, const std::string& cause, const TextDiff& diff);

// The note added to the result of a write of `path` that fsguard merged
// with a change by `cause`: `diff` goes from the agent's content to the
// merge, which is what was written.
std::string merge_note(const std::string& path, const std::string& cause, const TextDiff& diff);

// The upstream's tools/call answer `line` (`skimmed`) with `note` added for
// the agent: as one more text block at the end of result.content, and at
// the end of result.structuredContent.content when that is a string
// (server-filesystem declares it in its output schema, and some clients
// show only it), with `meta` as result._meta[`meta_key`]. The additions are
// spliced into the server's bytes, which stay as they are. Nothing when
// `line` is not a result with one content array, or when the skim cannot
// read it.
std::optional<std::string> with_note(std::string_view line, const SkimmedMessage& skimmed,
                                     const std::string& note, const std::string& meta_key,
                                     const nlohmann::ordered_json& meta);

// `line` (a client's tools/call request) with params.arguments.content
// replaced by `content`, and nothing else changed; nothing if `line` has no
// such string that a skim finds (one content member, no escaped keys).
std::optional<std::string> with_content(std::string_view line, const std::string& content);

} // namespace fsguard
