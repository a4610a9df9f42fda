#include "proxy/guard/stale_change.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "proxy/jsonrpc/answer_text.hpp"
#include "proxy/jsonrpc/json_members.hpp"
#include "proxy/jsonrpc/upstream_skim.hpp"
#include "tracker/unified_diff.hpp"

namespace fsguard {

namespace {

// The first line of `text`, shortened, to name an edit in a reason.
std::string excerpt(std::string_view text)
{
  constexpr std::size_t k_shown = 60;
  std::string_view line = text.substr(0, text.find('\n'));
  // Cut when longer than shown, or when more follows the first line's "\n".
  const bool cut = line.size() > k_shown || text.size() > line.size() + 1;
  line = line.substr(0, k_shown);
  while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) {
    line.remove_suffix(1); // never cut a UTF-8 sequence in two
  }
  if (!line.empty() && static_cast<unsigned char>(line.back()) >= 0xC0) {
    line.remove_suffix(1);
  }
  return "\"" + std::string(line) + (cut ? "..." : "") + "\"";
}

enum class Matches { none, one, several };

// Where `needle` occurs in `text`, if exactly once (overlapping
// occurrences count).
Matches find_once(std::string_view text, std::string_view needle, std::size_t& at)
{
  at = text.find(needle);
  if (at == std::string_view::npos) {
    return Matches::none;
  }
  return text.find(needle, at + 1) == std::string_view::npos ? Matches::one : Matches::several;
}

} // namespace

std::optional<std::vector<TextEdit>> text_edits(const nlohmann::json& arguments)
{
  const auto& edits = member(arguments, "edits");
  if (!edits.is_array()) {
    return std::nullopt;
  }
  std::vector<TextEdit> result;
  for (const auto& edit : edits) {
    const auto& old_text = member(edit, "oldText");
    const auto& new_text = member(edit, "newText");
    if (!old_text.is_string() || !new_text.is_string()) {
      return std::nullopt;
    }
    result.push_back(TextEdit{old_text.get<std::string>(), new_text.get<std::string>()});
  }
  return result;
}

Result<std::string, NotRebased> rebase_edits(std::string_view seen, std::string_view current,
                                             const std::vector<TextEdit>& edits,
                                             EditSemantics semantics)
{
  if (semantics == EditSemantics::unknown) {
    return NotRebased{"fsguard cannot tell how this tool applies its edits"};
  }
  if (edits.empty()) {
    return NotRebased{"the call has no edits"};
  }
  if (current.find("\r\n") != std::string_view::npos) {
    // The server would turn every CRLF of the file into LF, lines the
    // outside change wrote included.
    return NotRebased{"the file on disk now has CRLF line endings, which the edit would turn "
                      "into LF throughout"};
  }
  const std::string base = without_carriage_returns(seen);
  std::string ours = base;
  std::string theirs(current);
  for (std::size_t index = 0; index < edits.size(); ++index) {
    const std::string old_text = without_carriage_returns(edits[index].old_text);
    const std::string new_text = without_carriage_returns(edits[index].new_text);
    const std::string which = edits.size() == 1 ? std::string("the oldText")
                                                : "the oldText of edit " + std::to_string(index + 1);
    if (old_text.empty()) {
      return NotRebased{which + " is empty, which inserts at the start of the file"};
    }
    if (semantics == EditSemantics::first_exact_match_dollar_patterns
        && new_text.find('$') != std::string::npos) {
      return NotRebased{"the newText holds \"$\", which this server reads as a replacement "
                        "pattern"};
    }
    std::size_t at_ours = 0;
    std::size_t at_theirs = 0;
    switch (find_once(theirs, old_text, at_theirs)) {
    case Matches::none:
      return NotRebased{which + " " + excerpt(old_text)
                        + " is not in the current content exactly as given"};
    case Matches::several:
      return NotRebased{which + " " + excerpt(old_text)
                        + " occurs more than once in the current content"};
    case Matches::one:
      break;
    }
    if (find_once(ours, old_text, at_ours) != Matches::one) {
      return NotRebased{which + " " + excerpt(old_text)
                        + " does not occur exactly once in the version you last saw"};
    }
    ours.replace(at_ours, old_text.size(), new_text);
    theirs.replace(at_theirs, old_text.size(), new_text);
  }
  const auto merged = merge_texts(base, ours, current, "as you last saw it", "your edit",
                                  "on disk now");
  if (!merged || !merged->clean) {
    return NotRebased{"it changes lines that the other change touched, or lines next to them"};
  }
  if (merged->text != theirs) {
    return NotRebased{"in the current content it would not land where it lands in the version "
                      "you last saw"};
  }
  return theirs;
}

std::optional<MergedText> merge_write(std::string_view seen, std::string_view written,
                                      std::string_view current)
{
  return merge_texts(seen, written, current, "as you last saw it", "your write", "on disk now");
}

namespace {

// `text` ending in "\n": a last line without one is compared as the line it
// would be with one (the final newline itself is looked at apart).
std::string with_final_newline(std::string_view text)
{
  std::string lines(text);
  if (!lines.empty() && !lines.ends_with('\n')) {
    lines += '\n';
  }
  return lines;
}

bool ends_line(std::string_view text)
{
  return text.empty() || text.ends_with('\n');
}

} // namespace

bool keeps_change(std::string_view seen, std::string_view shown, std::string_view written)
{
  if (ends_line(seen) != ends_line(shown) && ends_line(written) != ends_line(shown)) {
    return false; // the change added or took away the final newline, the write does not
  }
  const std::string before = with_final_newline(seen);
  const std::string after = with_final_newline(shown);
  const std::string rewritten = with_final_newline(written);
  const auto change = line_changes(before, after);
  const auto edits = line_changes(after, rewritten);
  if (!change || !edits) {
    return false;
  }
  // The lines of `shown` the change wrote, and the places between its
  // lines where it took lines away.
  std::vector<bool> changed_line(static_cast<std::size_t>(std::count(after.begin(), after.end(),
                                                                     '\n')),
                                 false);
  std::vector<std::size_t> removed_at;
  for (const auto& hunk : *change) {
    for (std::size_t line = hunk.new_first; line < hunk.new_first + hunk.new_count; ++line) {
      changed_line[line] = true;
    }
    if (hunk.new_count == 0) {
      removed_at.push_back(hunk.new_first);
    }
  }
  for (const auto& edit : *edits) {
    const std::size_t end = edit.old_first + edit.old_count;
    for (std::size_t line = edit.old_first; line < end; ++line) {
      if (changed_line[line]) {
        return false; // the write rewrites or drops a line the change wrote
      }
    }
    if (edit.new_count == 0) {
      continue; // lines taken away restore nothing
    }
    for (const std::size_t at : removed_at) {
      if (edit.old_first <= at && at <= end) {
        return false; // lines written where the change took lines away
      }
    }
  }
  return true;
}

std::string rebase_note(const std::string& path, const std::string& cause, const TextDiff& diff)
{
  std::string note = "fsguard: " + path + " had been modified " + cause
                     + " since you last read or wrote it, in lines your edit does not touch, so your "
                       "edit was applied to the current content and the other change was kept. "
                       "The other change, from the version you last saw to the version your "
                       "edit was applied to"
                     + (diff.complete ? "" : " (cut: longer than fsguard shows)") + ":\n"
                     + fenced_diff(diff.text);
  note += diff.complete ? "With this diff and your edit's diff, you know the whole file as it is "
                          "now."
                        : "The diff is cut, so read the file again before you rewrite it whole.";
  return note;
}

std::string merge_note(const std::string& path, const std::string& cause, const TextDiff& diff)
{
  std::string note = "fsguard: " + path + " had been modified " + cause
                     + " since you last read or wrote it. Your write was merged three ways with that "
                       "change (from what you last saw, to your content and to the disk), and "
                       "the merge is what was written. What the merge changed in your content"
                     + (diff.complete ? "" : " (cut: longer than fsguard shows)") + ":\n"
                     + fenced_diff(diff.text);
  note += diff.complete ? "With this diff, you know the whole file as it is now."
                        : "The diff is cut, so read the file again before you rewrite it whole.";
  return note;
}

namespace {

// `value` as fsguard writes JSON into a line.
std::string dumped(const nlohmann::ordered_json& value)
{
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Whether the raw array or object `raw` has no members.
bool empty_raw(std::string_view raw)
{
  return raw.find_first_not_of(" \t\r\n", 1) == raw.size() - 1;
}

// Bytes put in place of `erased` bytes at `at` in a line.
struct Splice {
  const char* at;
  std::size_t erased;
  std::string text;
};

// `line` with `splices` (none overlapping) made.
std::string spliced(std::string_view line, std::vector<Splice> splices)
{
  std::sort(splices.begin(), splices.end(),
            [](const Splice& a, const Splice& b) { return a.at < b.at; });
  std::string result;
  result.reserve(line.size() + 256);
  const char* copied = line.data();
  for (const auto& splice : splices) {
    result.append(copied, splice.at);
    result += splice.text;
    copied = splice.at + splice.erased;
  }
  result.append(copied, line.data() + line.size());
  return result;
}

} // namespace

std::optional<std::string> with_note(std::string_view line, const SkimmedMessage& skimmed,
                                     const std::string& note, const std::string& meta_key,
                                     const nlohmann::ordered_json& meta)
{
  // Spliced into the server's bytes, which are not written again: only a
  // result read by the skim, with one content array.
  if (!skimmed.is_json_object || skimmed.has_error || skimmed.results != 1
      || !skimmed.raw_result.starts_with('{')) {
    return std::nullopt;
  }
  const std::string_view result = skimmed.raw_result;
  const auto content = skim_member(result, "content");
  if (!content || !content->starts_with('[')) {
    return std::nullopt;
  }
  std::vector<Splice> splices;
  const nlohmann::ordered_json block = {{"type", "text"}, {"text", note}};
  splices.push_back({content->data() + content->size() - 1, 0,
                     (empty_raw(*content) ? "" : ",") + dumped(block)});
  if (const auto structured = skim_member(result, "structuredContent");
      structured && structured->starts_with('{')) {
    if (const auto text = skim_member(*structured, "content"); text && text->starts_with('"')) {
      const auto decoded = decoded_json_string(*text, std::numeric_limits<std::size_t>::max());
      if (!decoded) {
        return std::nullopt;
      }
      splices.push_back({text->data(), text->size(), dumped(*decoded + "\n\n" + note)});
    }
  }
  const std::string member = dumped(meta_key) + ":" + dumped(meta);
  if (const auto own = skim_member(result, "_meta"); own && own->starts_with('{')) {
    splices.push_back({own->data() + own->size() - 1, 0, (empty_raw(*own) ? "" : ",") + member});
  } else {
    // A last "_meta" is the one JSON.parse keeps, whatever came before.
    splices.push_back({result.data() + result.size() - 1, 0, ",\"_meta\":{" + member + "}"});
  }
  return spliced(line, std::move(splices));
}

std::optional<std::string> with_content(std::string_view line, const std::string& content)
{
  const auto raw = skim_content_argument(line);
  if (!raw) {
    return std::nullopt;
  }
  std::string rewritten = spliced(line, {{raw->data(), raw->size(), dumped(content)}});
  if (!rewritten.ends_with('\n')) {
    rewritten += '\n';
  }
  return rewritten;
}

} // namespace fsguard
