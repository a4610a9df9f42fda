#include "tracker/veto.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "tracker/file_state.hpp"

namespace fsguard {

std::string_view to_string(VetoCode code)
{
  switch (code) {
  case VetoCode::not_read: return "not_read";
  case VetoCode::partial_read: return "partial_read";
  case VetoCode::changed: return "changed";
  case VetoCode::changed_during_read: return "changed_during_read";
  case VetoCode::unresolved_path: return "unresolved_path";
  case VetoCode::cannot_inspect: return "cannot_inspect";
  case VetoCode::outside_confinement: return "outside_confinement";
  case VetoCode::unknown_outcome: return "unknown_outcome";
  case VetoCode::lossy_read: return "lossy_read";
  case VetoCode::not_visible: return "not_visible";
  case VetoCode::expired: return "expired";
  }
  return "unknown";
}

namespace {

// Whether `path` names an image or a sound, by the extensions whose files
// server-filesystem's read_media_file shows: a text read of one shows the
// agent nothing it can use.
bool is_media_path(std::string_view path)
{
  static constexpr std::array<std::string_view, 11> k_extensions{
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg", ".mp3", ".wav", ".ogg", ".flac"};
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) {
    return false;
  }
  std::string extension(path.substr(dot));
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(k_extensions.begin(), k_extensions.end(), extension) != k_extensions.end();
}

// "Read it with read_text_file (without head or tail), then retry.", or
// with the profile's media read for an image or a sound.
std::string read_whole(const ToolNames& names, std::string_view path)
{
  if (!names.read_bytes.empty() && is_media_path(path)) {
    return "Read it with " + names.read_bytes + ", then retry.";
  }
  return "Read it with " + names.read
         + (names.read_whole.empty() ? std::string() : " (" + names.read_whole + ")")
         + ", then retry.";
}

// When the agent last saw the file, and when it was modified: a
// modification time no later than the read (the change landed while the
// read was answered, or its writer kept the old time) says nothing of when.
std::string times(const Veto& veto)
{
  std::string text = "last read " + format_time(veto.seen_at_ns);
  if (veto.current_mtime_ns > veto.seen_at_ns) {
    return text + "; last modified " + format_time(veto.current_mtime_ns);
  }
  return text + "; its modification time, " + format_time(veto.current_mtime_ns)
         + ", does not show when it changed";
}

std::string size_change(const Veto& veto)
{
  if (veto.seen_size == k_unknown_size) {
    return "size now " + std::to_string(veto.current_size) + " bytes";
  }
  if (veto.seen_size == veto.current_size) {
    return "size unchanged at " + std::to_string(veto.current_size) + " bytes";
  }
  return "size " + std::to_string(veto.seen_size) + " -> "
         + std::to_string(veto.current_size) + " bytes";
}

std::string changed_text(const Veto& veto, const ToolNames& names)
{
  if (veto.undoes_shown_change) {
    return veto.path + " changed after you last read it, and fsguard showed you that change "
           "(in an earlier refusal's diff, or a note on a change it carried over). This "
           "call does not keep that change byte for byte (it would undo it, or rewrite lines "
           "it wrote), and it may have been written before you saw it. Write the current "
           "content with your change in it, and the lines that change wrote as they are now. "
           "If you mean to undo or rewrite that change: "
           + read_whole(names, veto.path);
  }
  std::string text = veto.path + " has been modified "
                     + (veto.cause.empty() ? std::string() : veto.cause + " ")
                     + "since you last read or wrote it (" + size_change(veto) + "; " + times(veto)
                     + ").";
  if (veto.diff.empty()) {
    return text + " Read it again to get its current content, then retry.";
  }
  text += " What changed, from the version you last saw to the version on disk now"
          + std::string(veto.diff_complete ? "" : " (cut: longer than fsguard shows)") + ":\n"
          + fenced_diff(veto.diff);
  if (!veto.not_rebased.empty()) {
    text += "fsguard did not apply your edit to the current content: " + veto.not_rebased + ".\n";
  }
  if (!veto.not_merged.empty()) {
    text += "fsguard did not merge your write with it: " + veto.not_merged + ".\n";
  }
  if (!veto.conflict.empty()) {
    text += "Your write could not be merged with that change. These parts conflict (between "
            "<<<<<<< and ======= your write, then what you last saw, then up to >>>>>>> the "
            "disk now):\n"
            + fenced_diff(veto.conflict);
  }
  if (veto.counts_as_read && veto.repeats_shown_diff) {
    text += "fsguard showed you this same diff when it refused an earlier call, and this call "
            "was sent before you could have read that diff, so it was made without it. That "
            "diff still counts as your read: once you have taken it in, retry against the "
            "current content (the version you last saw with the diff applied), without "
            "reading the file again.";
  } else if (veto.counts_as_read) {
    text += "This diff counts as your read: retry against the current content (the version "
            "you last saw with this diff applied), without reading the file again.";
  } else {
    text += "The diff does not show the whole file to you, so it does not count as a read. "
            + read_whole(names, veto.path);
  }
  return text;
}

} // namespace

std::string fenced_diff(std::string_view diff)
{
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : diff) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string text = fence + "diff\n" + std::string(diff);
  if (!text.ends_with('\n')) {
    text += '\n';
  }
  return text + fence + "\n";
}

std::string veto_text(std::string_view tool, const Veto& veto, const ToolNames& names)
{
  std::string text = "fsguard refused " + std::string(tool) + ": ";
  switch (veto.code) {
  case VetoCode::not_read:
    if (!veto.reason.empty()) {
      text += veto.path + " " + veto.reason + ". ";
      text += read_whole(names, veto.path);
      break;
    }
    text += veto.path + " already exists and has not been read in this session, "
            "so this would overwrite content you have not seen. ";
    text += read_whole(names, veto.path);
    break;
  case VetoCode::partial_read:
    if (!veto.reason.empty()) {
      text += veto.path + " was only partly shown to you (" + veto.reason
              + "), so overwriting it would replace content you have not seen. Read it in "
                "parts and change it with "
              + names.edit + " instead.";
      break;
    }
    text += veto.path + " was only partly read (a partial view, or an edit licensed by one) "
            "in this session, so overwriting it would replace lines you have not seen. ";
    text += read_whole(names, veto.path);
    break;
  case VetoCode::changed:
    text += changed_text(veto, names);
    break;
  case VetoCode::changed_during_read:
    text += veto.path + " changed while it was being read, so what you saw may "
            "not be what is on disk. Read it again, then retry.";
    break;
  case VetoCode::unresolved_path:
    text += "cannot tell which file \"" + veto.path + "\" names (" + veto.reason
            + "), so it cannot check that the write is safe. "
              "Retry with the file's absolute path.";
    break;
  case VetoCode::cannot_inspect:
    text += "cannot inspect " + veto.path + " (" + veto.reason
            + "), so it cannot tell whether the write would overwrite changes "
              "you have not seen. "
            + (veto.remedy.empty() ? std::string("Make the file readable, read it, then retry.")
                                   : veto.remedy);
    break;
  case VetoCode::outside_confinement:
    text += veto.path + " is outside the directories this session is confined to "
            "(confine_to: " + veto.reason + "). Use a path inside them.";
    break;
  case VetoCode::unknown_outcome:
    if (!veto.reason.empty()) {
      text += veto.reason + ", so it cannot tell what " + veto.path
              + " holds now. Read it again, then retry.";
      break;
    }
    text += "an earlier change to " + veto.path + " through fsguard was cancelled or not "
            "answered in time, so nobody knows what the file holds now. Read it again, "
            "then retry.";
    break;
  case VetoCode::not_visible:
    text += "the server's directory " + veto.reason + " is not visible to fsguard ("
            + (veto.cause.empty() ? std::string("it does not exist on fsguard's side")
                                  : veto.cause)
            + "), so fsguard cannot tell whether this write to " + veto.path + " would overwrite content you "
            "have not seen. The server runs where fsguard cannot see its files, such as a "
            "container. This is a setup problem that retrying will not fix: tell the user to "
            "set \"path_map\" in fsguard's config, mapping " + veto.reason + " to the "
            "directory fsguard sees it as, or, where fsguard cannot reach the files at all, "
            "\"verify\": \"upstream\" (fsguard --check-setup shows what fsguard sees).";
    break;
  case VetoCode::expired:
    text += "you last read or wrote " + veto.path + " " + std::to_string(veto.age_s)
            + " s ago, longer than this session trusts a read (read_ttl_s: "
            + std::to_string(veto.ttl_s) + "), so what you saw may no longer be what is on "
            "disk. " + read_whole(names, veto.path);
    break;
  case VetoCode::lossy_read:
    text += veto.path + " is not valid UTF-8, so reading it as text showed U+FFFD "
            "replacement characters where some of its bytes are, and writing it as text "
            "would replace those bytes for good (" + names.edit + " too: it rewrites the whole "
            "file as text). It cannot be changed safely with " + names.read + ", " + names.write
            + " or " + names.edit + ". Leave it as it is, or have it converted to UTF-8 outside "
            "this session and read it again.";
    if (!names.read_bytes.empty()) {
      text += " To replace the whole file on purpose, read its exact bytes with "
              + names.read_bytes + " first, then retry " + names.write + ".";
    }
    break;
  }
  if (!veto.override_outcome.empty()) {
    text += " " + veto.override_outcome;
  } else if (veto.person_unreachable) {
    text += " fsguard is set to let the user allow such a write, but this client cannot ask "
            "the user (it does not support MCP elicitation).";
  }
  return text;
}

} // namespace fsguard
