// How each server fsguard has a profile for shows a file's times in the
// text of its get_file_info answer, and the reader of a time in that text.
// The servers print the same "key: value" lines from Node's fs.stat (size,
// created, modified, accessed, isDirectory, isFile, permissions); they
// differ in how a Date is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fsguard {

// How a server's get_file_info writes a time.
enum class FileInfoFormat {
  // fsguard does not know how the server shows a file (no profile, or one
  // without get_file_info): its answer proves nothing.
  none,
  // A JavaScript Date's toString(), to the second: "modified: Mon Nov 23
  // 2026 08:39:57 GMT+0100 (Central European Standard Time)".
  // @modelcontextprotocol/server-filesystem, and @agent-infra's fork.
  date_text,
  // JSON.stringify of the Date, quoted, to the millisecond: `modified:
  // "2026-11-23T07:39:57.123Z"`. @wonderwhy-er/desktop-commander.
  iso_json,
};

// A time as get_file_info shows it.
struct ShownTime {
  enum class Precision { second, millisecond };
  std::int64_t ms = 0; // since the epoch; a whole second's when `precision` is second
  Precision precision = Precision::second;
};

// The time of `key` ("modified", "created") in the text `info` of a
// get_file_info answer written in `format`; nothing if the line is absent
// or of another shape (or `format` is none).
std::optional<ShownTime> file_info_time(std::string_view info, const std::string& key,
                                        FileInfoFormat format);

// The milliseconds since the epoch of a Date's toISOString()
// ("2026-11-23T07:39:57.123Z", years 0000 to 9999); nothing for any other shape.
std::optional<std::int64_t> iso_date_milliseconds(std::string_view text);

} // namespace fsguard
