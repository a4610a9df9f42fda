#include "tracker/veto.hpp"

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
  }
  return "unknown";
}

namespace {

constexpr std::string_view k_read_whole =
  "Read it with read_text_file (without head or tail), then retry.";

std::string size_change(const Veto& veto)
{
  if (veto.seen_size == veto.current_size) {
    return "size unchanged at " + std::to_string(veto.current_size) + " bytes";
  }
  return "size " + std::to_string(veto.seen_size) + " -> "
         + std::to_string(veto.current_size) + " bytes";
}

} // namespace

std::string veto_text(std::string_view tool, const Veto& veto)
{
  std::string text = "fsguard refused " + std::string(tool) + ": ";
  switch (veto.code) {
  case VetoCode::not_read:
    if (!veto.reason.empty()) {
      text += veto.path + " " + veto.reason + ". ";
      text += k_read_whole;
      break;
    }
    text += veto.path + " already exists and has not been read in this session, "
            "so this would overwrite content you have not seen. ";
    text += k_read_whole;
    break;
  case VetoCode::partial_read:
    if (!veto.reason.empty()) {
      text += veto.path + " was only partly shown to you (" + veto.reason
              + "), so overwriting it would replace content you have not seen. Read it in "
                "parts (head/tail) and change it with edit_file instead.";
      break;
    }
    text += veto.path + " was only partly read (head/tail, or an edit licensed by such a "
            "read) in this session, so overwriting it would replace lines you have not "
            "seen. ";
    text += k_read_whole;
    break;
  case VetoCode::changed:
    text += veto.path + " has been modified since you last read it ("
            + size_change(veto) + "; last read " + format_time(veto.seen_at_ns)
            + "; last modified " + format_time(veto.current_mtime_ns)
            + "). Read it again to get its current content, then retry.";
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
              "you have not seen. Make the file readable, read it, then retry.";
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
  case VetoCode::lossy_read:
    text += veto.path + " is not valid UTF-8, so reading it as text showed U+FFFD "
            "replacement characters where some of its bytes are, and writing it as text "
            "would replace those bytes for good (edit_file too: it rewrites the whole file "
            "as text). It cannot be changed safely with read_text_file, write_file or "
            "edit_file. Leave it as it is, or have it converted to UTF-8 outside this session "
            "and read it again. To replace the whole file on purpose, read its exact bytes "
            "with read_media_file first, then retry write_file.";
    break;
  }
  return text;
}

} // namespace fsguard
