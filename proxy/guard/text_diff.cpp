#include "proxy/guard/text_diff.hpp"

#include <cstdint>
#include <vector>

#include <git2.h>

namespace fsguard {

namespace {

// libgit2 wants one git_libgit2_init() before use; it is reference-counted
// and the library lives as long as the process.
void use_libgit2()
{
  static const int k_ready = git_libgit2_init();
  (void)k_ready;
}

// The options of a line diff of two texts taken as text whatever their
// bytes, with `context_lines` of context around each change (libgit2 ready).
git_diff_options text_diff_options(std::uint32_t context_lines)
{
  use_libgit2();
  git_diff_options options;
  git_diff_options_init(&options, GIT_DIFF_OPTIONS_VERSION);
  options.flags = GIT_DIFF_FORCE_TEXT;
  options.context_lines = context_lines;
  options.interhunk_lines = 0;
  return options;
}

struct Hunk {
  std::string header;
  std::vector<std::string> lines;
};

struct Collected {
  std::vector<Hunk> hunks;
};

int on_hunk(const git_diff_delta*, const git_diff_hunk* hunk, void* payload)
{
  auto& collected = *static_cast<Collected*>(payload);
  collected.hunks.push_back(Hunk{"@@ -" + std::to_string(hunk->old_start) + ","
                                   + std::to_string(hunk->old_lines) + " +"
                                   + std::to_string(hunk->new_start) + ","
                                   + std::to_string(hunk->new_lines) + " @@\n",
                                 {}});
  return 0;
}

int on_line(const git_diff_delta*, const git_diff_hunk*, const git_diff_line* line, void* payload)
{
  auto& collected = *static_cast<Collected*>(payload);
  const char origin = line->origin;
  if ((origin != ' ' && origin != '+' && origin != '-') || collected.hunks.empty()) {
    return 0; // the end-of-file markers: written below, after the line they mark
  }
  std::string text(1, origin);
  text.append(line->content, line->content_len);
  if (!text.ends_with('\n')) {
    text += "\n\\ No newline at end of file\n";
  }
  collected.hunks.back().lines.push_back(std::move(text));
  return 0;
}

class Budget {
public:
  explicit Budget(const DiffBounds& bounds) : m_bounds(bounds) {}
  bool fits(std::size_t lines, std::size_t bytes) const
  {
    return m_lines + lines <= m_bounds.max_lines && m_bytes + bytes <= m_bounds.max_bytes;
  }
  void take(std::size_t lines, std::size_t bytes)
  {
    m_lines += lines;
    m_bytes += bytes;
  }

private:
  DiffBounds m_bounds;
  std::size_t m_lines = 0;
  std::size_t m_bytes = 0;
};

std::size_t bytes_of(const Hunk& hunk)
{
  std::size_t bytes = hunk.header.size();
  for (const auto& line : hunk.lines) {
    bytes += line.size();
  }
  return bytes;
}

} // namespace

TextDiff diff_texts(std::string_view before, std::string_view after,
                    std::string_view before_label, std::string_view after_label,
                    const DiffBounds& bounds)
{
  TextDiff diff;
  if (before == after) {
    return diff;
  }
  git_diff_options options = text_diff_options(3);
  Collected collected;
  const int error = git_diff_buffers(before.data(), before.size(), nullptr, after.data(),
                                     after.size(), nullptr, &options, nullptr, nullptr, on_hunk,
                                     on_line, &collected);
  const std::string head = "--- " + std::string(before_label) + "\n+++ " + std::string(after_label)
                           + "\n";
  Budget budget(bounds);
  if (error != 0 || !budget.fits(2, head.size())) {
    diff.complete = false;
    return diff;
  }
  diff.text = head;
  budget.take(2, head.size());
  std::size_t left_out = 0;
  for (std::size_t index = 0; index < collected.hunks.size(); ++index) {
    const Hunk& hunk = collected.hunks[index];
    if (left_out > 0) {
      left_out += 1 + hunk.lines.size();
      continue;
    }
    if (budget.fits(1 + hunk.lines.size(), bytes_of(hunk))) {
      budget.take(1 + hunk.lines.size(), bytes_of(hunk));
      diff.text += hunk.header;
      for (const auto& line : hunk.lines) {
        diff.text += line;
      }
      continue;
    }
    // The first hunk that does not fit is shown as far as it fits, so that
    // a single large change still shows where it starts.
    std::size_t shown = 0;
    if (budget.fits(1, hunk.header.size())) {
      budget.take(1, hunk.header.size());
      diff.text += hunk.header;
      for (; shown < hunk.lines.size() && budget.fits(1, hunk.lines[shown].size()); ++shown) {
        budget.take(1, hunk.lines[shown].size());
        diff.text += hunk.lines[shown];
      }
      left_out = hunk.lines.size() - shown;
    } else {
      left_out = 1 + hunk.lines.size();
    }
    if (left_out == 0) {
      left_out = 1; // only the header fit: say so all the same
    }
  }
  if (left_out > 0) {
    diff.complete = false;
    diff.text += "[fsguard cut the diff here: " + std::to_string(left_out)
                 + " more diff lines are not shown]\n";
  }
  return diff;
}

std::optional<MergedText> merge_texts(std::string_view base, std::string_view ours,
                                      std::string_view theirs, const std::string& base_label,
                                      const std::string& ours_label,
                                      const std::string& theirs_label,
                                      unsigned short marker_size)
{
  use_libgit2();
  const auto input = [](std::string_view text) {
    git_merge_file_input file;
    git_merge_file_input_init(&file, GIT_MERGE_FILE_INPUT_VERSION);
    file.ptr = text.data();
    file.size = text.size();
    return file;
  };
  const git_merge_file_input ancestor = input(base);
  const git_merge_file_input our_file = input(ours);
  const git_merge_file_input their_file = input(theirs);
  git_merge_file_options options;
  git_merge_file_options_init(&options, GIT_MERGE_FILE_OPTIONS_VERSION);
  options.ancestor_label = base_label.c_str();
  options.our_label = ours_label.c_str();
  options.their_label = theirs_label.c_str();
  options.favor = GIT_MERGE_FILE_FAVOR_NORMAL;
  options.flags = GIT_MERGE_FILE_STYLE_DIFF3;
  if (marker_size > 0) {
    options.marker_size = marker_size;
  }
  git_merge_file_result result{};
  if (git_merge_file(&result, &ancestor, &our_file, &their_file, &options) != 0) {
    return std::nullopt;
  }
  MergedText merged;
  merged.clean = result.automergeable != 0;
  const bool has_text = result.ptr != nullptr;
  if (has_text) {
    merged.text.assign(result.ptr, result.len);
  }
  git_merge_file_result_free(&result);
  if (!has_text && !(base.empty() && ours.empty() && theirs.empty())) {
    merged.clean = false; // a binary merge: libgit2 chose no side
  }
  return merged;
}

namespace {

int on_change(const git_diff_delta*, const git_diff_hunk* hunk, void* payload)
{
  // git numbers lines from 1, and names the line before an empty side.
  const auto first = [](int start, int count) {
    return static_cast<std::size_t>(count > 0 ? start - 1 : start);
  };
  static_cast<std::vector<LineChange>*>(payload)->push_back(
    LineChange{first(hunk->old_start, hunk->old_lines), static_cast<std::size_t>(hunk->old_lines),
               first(hunk->new_start, hunk->new_lines), static_cast<std::size_t>(hunk->new_lines)});
  return 0;
}

} // namespace

std::optional<std::vector<LineChange>> line_changes(std::string_view before,
                                                    std::string_view after)
{
  std::vector<LineChange> changes;
  if (before == after) {
    return changes;
  }
  git_diff_options options = text_diff_options(0);
  if (git_diff_buffers(before.data(), before.size(), nullptr, after.data(), after.size(), nullptr,
                       &options, nullptr, nullptr, on_change, nullptr, &changes)
      != 0) {
    return std::nullopt;
  }
  return changes;
}

std::string conflict_hunks(std::string_view merged, const DiffBounds& bounds)
{
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < merged.size();) {
    const auto end = merged.find('\n', at);
    const std::size_t length = end == std::string_view::npos ? merged.size() - at : end - at + 1;
    lines.push_back(merged.substr(at, length));
    at += length;
  }
  constexpr std::size_t k_around = 2;
  constexpr std::size_t k_marker = 7;
  std::vector<bool> shown(lines.size(), false);
  for (std::size_t index = 0; index < lines.size(); ++index) {
    if (!lines[index].starts_with(std::string(k_marker, '<'))) {
      continue;
    }
    std::size_t end = index;
    while (end < lines.size() && !lines[end].starts_with(std::string(k_marker, '>'))) {
      ++end;
    }
    const std::size_t first = index >= k_around ? index - k_around : 0;
    const std::size_t last = std::min(lines.size() - 1, end + k_around);
    for (std::size_t line = first; line <= last; ++line) {
      shown[line] = true;
    }
    index = end;
  }
  std::string text;
  Budget budget(bounds);
  bool gap = false;
  for (std::size_t index = 0; index < lines.size(); ++index) {
    if (!shown[index]) {
      gap = !text.empty();
      continue;
    }
    std::string line(lines[index]);
    if (!line.ends_with('\n')) {
      line += '\n';
    }
    if (gap) {
      line = "...\n" + line;
      gap = false;
    }
    if (!budget.fits(1, line.size())) {
      text += "[fsguard cut the conflicts here]\n";
      break;
    }
    budget.take(1, line.size());
    text += line;
  }
  return text;
}

} // namespace fsguard
