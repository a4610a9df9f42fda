// Whether the file fsguard checks is the file the server will write: what
// the server reports of a path (its get_file_info) compared with fsguard's
// own stat of the path it maps that path to. Where the server runs in
// another mount view (path_map), a mount inside a served directory, a
// symlink that crosses mounts or a wrong map make the two differ.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/disk.hpp"
#include "tracker/file_info.hpp"
#include "tracker/file_state.hpp"
#include "tracker/result.hpp"

namespace fsguard {

// What the server reported of one path.
struct ServerFileReport {
  enum class Outcome { exists, missing, unknown };
  Outcome outcome = Outcome::unknown;
  std::int64_t size = 0;          // exists
  ShownTime modified;             // exists: the modification time, as the server shows it
  bool is_directory = false;      // exists
  std::string reason;             // unknown: why, in the server's words
};

// The report in the text of a get_file_info result written in `format`
// ("size: 12\nmodified: Mon Nov 23 2026 …\nisDirectory: false…", or
// desktop-commander's `modified: "2026-11-23T07:39:57.123Z"`), or in its
// error text (`is_error`): Node's ENOENT, or a missing parent, is a missing
// file; anything else, a text of another shape, or a `format` of none, is unknown.
ServerFileReport parse_server_file_report(std::string_view text, bool is_error,
                                          FileInfoFormat format);

// Why fsguard's `local` stat of a path (a missing file: an error of ENOENT)
// shows another file than the server's `report` of it; nothing when they
// agree (both missing; or both there, of one type, size, and modification
// time as Node shows it, to the second or the millisecond the report
// gives). Timestamps alone prove little, so size and existence are
// compared too; a report fsguard could not read is a difference.
std::optional<std::string> identity_difference(const ServerFileReport& report,
                                               const Result<FileStat, DiskError>& local);

// A directory's entries: name -> whether it is a directory.
using DirectoryEntries = std::map<std::string, bool>;

// The entries in the text of server-filesystem's list_directory result
// ("[FILE] a.txt\n[DIR] src"); nothing if a line has another shape.
std::optional<DirectoryEntries> parse_directory_listing(std::string_view text);

// How the `server`'s entries of a directory differ from fsguard's `local`
// ones (a name one side lacks, or of another type), in a few words naming
// at most three; nothing when they are the same.
std::optional<std::string> listing_difference(const DirectoryEntries& server,
                                              const DirectoryEntries& local);

} // namespace fsguard
