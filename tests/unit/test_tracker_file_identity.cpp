#include <doctest/doctest.h>

#include <cerrno>

#include "tracker/file_identity.hpp"

using namespace fsguard;

namespace {

// What server-filesystem's get_file_info shows of a 12-byte file modified
// at 2026-11-23 07:39:57 UTC (shown in a zone one hour east).
constexpr std::string_view k_info = "size: 12\n"
                                    "created: Mon Nov 23 2026 08:39:50 GMT+0100 (CET)\n"
                                    "modified: Mon Nov 23 2026 08:39:57 GMT+0100 (CET)\n"
                                    "accessed: Mon Nov 23 2026 08:39:57 GMT+0100 (CET)\n"
                                    "isDirectory: false\n"
                                    "isFile: true\n"
                                    "permissions: 644";
constexpr std::int64_t k_modified_s = 1795419597; // 2026-11-23T07:39:57Z

FileStat file_of(std::int64_t size, std::int64_t mtime_ns)
{
  FileStat stat;
  stat.size = size;
  stat.mtime_ns = mtime_ns;
  stat.mode = 0100644;
  return stat;
}

Result<FileStat, DiskError> missing()
{
  return DiskError{ENOENT};
}

} // namespace

TEST_SUITE("file_identity")
{
  TEST_CASE("get_file_info's text gives the size, the modification second and the type")
  {
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::date_text);
    REQUIRE(report.outcome == ServerFileReport::Outcome::exists);
    CHECK(report.size == 12);
    CHECK(report.modified.ms == k_modified_s * 1000);
    CHECK(report.modified.precision == ShownTime::Precision::second);
    CHECK_FALSE(report.is_directory);
    CHECK(parse_server_file_report("Error: ENOENT: no such file or directory, stat '/p/x'", true,
                                   FileInfoFormat::date_text)
            .outcome
          == ServerFileReport::Outcome::missing);
    CHECK(parse_server_file_report("Error: Parent directory does not exist: /p/d", true,
                                   FileInfoFormat::date_text)
            .outcome
          == ServerFileReport::Outcome::missing);
    const auto denied = parse_server_file_report(
      "Error: Access denied - path outside allowed directories", true, FileInfoFormat::date_text);
    CHECK(denied.outcome == ServerFileReport::Outcome::unknown);
    CHECK(parse_server_file_report("size: twelve\nmodified: x", false, FileInfoFormat::date_text)
            .outcome
          == ServerFileReport::Outcome::unknown);
  }

  TEST_CASE("the same file on both sides agrees: size, type and the second Node shows")
  {
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::date_text);
    CHECK_FALSE(identity_difference(report, file_of(12, k_modified_s * 1'000'000'000 + 5)));
    // Node rounds to the millisecond: the last half millisecond shows as the next second.
    CHECK_FALSE(
      identity_difference(report, file_of(12, (k_modified_s - 1) * 1'000'000'000 + 999'600'000)));
    ServerFileReport gone;
    gone.outcome = ServerFileReport::Outcome::missing;
    CHECK_FALSE(identity_difference(gone, missing())); // a new file on both sides
  }

  TEST_CASE("a file the server has and fsguard does not is another file (a mount, a link, a map)")
  {
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::date_text);
    const auto difference = identity_difference(report, missing());
    REQUIRE(difference);
    CHECK(difference->find("the server has a file of 12 bytes") != std::string::npos);
    CHECK(difference->find("fsguard sees none") != std::string::npos);
    ServerFileReport gone;
    gone.outcome = ServerFileReport::Outcome::missing;
    CHECK(identity_difference(gone, file_of(12, k_modified_s * 1'000'000'000)));
  }

  TEST_CASE("a file of another size or another second is another file")
  {
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::date_text);
    CHECK(identity_difference(report, file_of(13, k_modified_s * 1'000'000'000)));
    CHECK(identity_difference(report, file_of(12, (k_modified_s + 1) * 1'000'000'000)));
    FileStat directory = file_of(12, k_modified_s * 1'000'000'000);
    directory.mode = 0040755;
    CHECK(identity_difference(report, directory));
  }

  TEST_CASE("what fsguard cannot read or stat proves nothing")
  {
    ServerFileReport unknown;
    unknown.reason = "Access denied";
    CHECK(identity_difference(unknown, missing()));
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::date_text);
    CHECK(identity_difference(report, Result<FileStat, DiskError>(DiskError{EACCES, "denied"})));
  }
}

namespace {

// The real answers of the other servers fsguard has profiles for, to
// get_file_info (captured from @wonderwhy-er/desktop-commander 0.2.52 and
// @agent-infra/mcp-server-filesystem 1.2.29 under Node 20, TZ=Europe/Paris)
// of a 12-byte a.txt whose mtime is 1700000000.987 (utimes), a directory,
// an image, a missing file and a file whose directory is missing.
constexpr std::string_view k_desktop_commander_file =
  "size: 12\n"
  "created: \"2026-11-28T03:32:29.067Z\"\n"
  "modified: \"2023-11-14T22:13:20.987Z\"\n"
  "accessed: \"2026-11-28T03:32:30.364Z\"\n"
  "isDirectory: false\n"
  "isFile: true\n"
  "permissions: 644\n"
  "fileType: text\n"
  "lineCount: 2\n"
  "lastLine: 1\n"
  "appendPosition: 2";
constexpr std::string_view k_desktop_commander_directory =
  "size: 4096\n"
  "created: \"2026-11-28T03:32:29.067Z\"\n"
  "modified: \"2026-11-28T03:32:29.067Z\"\n"
  "accessed: \"2026-11-28T03:32:29.067Z\"\n"
  "isDirectory: true\n"
  "isFile: false\n"
  "permissions: 755\n"
  "fileType: text";
constexpr std::string_view k_desktop_commander_image =
  "size: 7\n"
  "created: \"2026-11-28T03:32:29.067Z\"\n"
  "modified: \"2026-11-28T03:32:29.067Z\"\n"
  "accessed: \"2026-11-28T03:32:29.067Z\"\n"
  "isDirectory: false\n"
  "isFile: true\n"
  "permissions: 644\n"
  "fileType: image\n"
  "isImage: true";
constexpr std::string_view k_agent_infra_file =
  "size: 12\n"
  "created: Sat Nov 28 2026 04:32:28 GMT+0100 (Central European Standard Time)\n"
  "modified: Tue Nov 14 2023 23:13:20 GMT+0100 (Central European Standard Time)\n"
  "accessed: Tue Nov 14 2023 23:13:20 GMT+0100 (Central European Standard Time)\n"
  "isDirectory: false\n"
  "isFile: true\n"
  "permissions: 644";
// 2023-11-14T22:13:20.987Z, as a.txt's stat gives it (utimes stores the
// double 1700000000.987 as .986999…).
constexpr std::int64_t k_a_txt_mtime_ns = 1'700'000'000'986'999'000;

} // namespace

TEST_SUITE("file_identity: other servers' formats")
{
  TEST_CASE("desktop-commander's get_file_info gives the size, the modification millisecond and the type")
  {
    const auto file = parse_server_file_report(k_desktop_commander_file, false,
                                               FileInfoFormat::iso_json);
    REQUIRE(file.outcome == ServerFileReport::Outcome::exists);
    CHECK(file.size == 12);
    CHECK(file.modified.ms == 1'700'000'000'987);
    CHECK(file.modified.precision == ShownTime::Precision::millisecond);
    CHECK_FALSE(file.is_directory);
    const auto directory = parse_server_file_report(k_desktop_commander_directory, false,
                                                    FileInfoFormat::iso_json);
    REQUIRE(directory.outcome == ServerFileReport::Outcome::exists);
    CHECK(directory.is_directory);
    const auto image = parse_server_file_report(k_desktop_commander_image, false,
                                                FileInfoFormat::iso_json);
    REQUIRE(image.outcome == ServerFileReport::Outcome::exists);
    CHECK(image.size == 7);
    // Read as server-filesystem's text, its dates are not Dates.
    CHECK(parse_server_file_report(k_desktop_commander_file, false, FileInfoFormat::date_text)
            .outcome
          == ServerFileReport::Outcome::unknown);
  }

  TEST_CASE("desktop-commander says a missing file, and one whose directory is missing, with Node's ENOENT")
  {
    for (const char* text :
         {"Error: ENOENT: no such file or directory, stat '/tmp/fi-ws-yMxIzM/missing.txt'",
          "Error: ENOENT: no such file or directory, stat '/tmp/fi-ws-yMxIzM/nodir/missing.txt'"}) {
      CHECK(parse_server_file_report(text, true, FileInfoFormat::iso_json).outcome
            == ServerFileReport::Outcome::missing);
    }
    const auto refused = parse_server_file_report(
      "Error: Path not allowed: /etc/x. Must be within one of these directories: /p", true,
      FileInfoFormat::iso_json);
    CHECK(refused.outcome == ServerFileReport::Outcome::unknown);
    CHECK(refused.reason.starts_with("Path not allowed"));
  }

  TEST_CASE("agent-infra's get_file_info reads as server-filesystem's, and its errors have no \"Error: \"")
  {
    const auto file =
      parse_server_file_report(k_agent_infra_file, false, FileInfoFormat::date_text);
    REQUIRE(file.outcome == ServerFileReport::Outcome::exists);
    CHECK(file.size == 12);
    CHECK(file.modified.ms == 1'700'000'000'000);
    CHECK(file.modified.precision == ShownTime::Precision::second);
    CHECK_FALSE(identity_difference(file, file_of(12, k_a_txt_mtime_ns)));
    for (const char* text :
         {"ENOENT: no such file or directory, stat '/tmp/fi-ws-O6m2aU/missing.txt'",
          "Parent directory does not exist: /tmp/fi-ws-O6m2aU/nodir",
          "Parent directory does not exist: /tmp/fi-ws-O6m2aU/nodir/deeper"}) {
      CHECK(parse_server_file_report(text, true, FileInfoFormat::date_text).outcome
            == ServerFileReport::Outcome::missing);
    }
  }

  TEST_CASE("where the server shows milliseconds, another millisecond of the same second is another file")
  {
    const auto file = parse_server_file_report(k_desktop_commander_file, false,
                                               FileInfoFormat::iso_json);
    // Node rounds the stat's nanoseconds to the millisecond, as here .986999 to .987.
    CHECK_FALSE(identity_difference(file, file_of(12, k_a_txt_mtime_ns)));
    const auto earlier = identity_difference(file, file_of(12, 1'700'000'000'986'400'000));
    REQUIRE(earlier);
    CHECK(*earlier == "the server has a file of 12 bytes modified at second 1700000000.987 there, "
                      "fsguard sees a file of 12 bytes modified at second 1700000000.986");
    CHECK(identity_difference(file, file_of(13, k_a_txt_mtime_ns)));
    // A directory is one whatever its times.
    const auto directory = parse_server_file_report(k_desktop_commander_directory, false,
                                                    FileInfoFormat::iso_json);
    FileStat local_directory = file_of(4096, 5);
    local_directory.mode = 0040755;
    CHECK_FALSE(identity_difference(directory, local_directory));
    CHECK(identity_difference(directory, file_of(4096, k_a_txt_mtime_ns)));
  }

  TEST_CASE("an answer in a format fsguard does not know proves nothing")
  {
    const auto report = parse_server_file_report(k_info, false, FileInfoFormat::none);
    CHECK(report.outcome == ServerFileReport::Outcome::unknown);
    CHECK(identity_difference(report, file_of(12, k_modified_s * 1'000'000'000)));
  }
}

TEST_SUITE("file_identity")
{
  TEST_CASE("list_directory's text gives each entry and whether it is a directory")
  {
    const auto entries = parse_directory_listing("[FILE] a.txt\n[DIR] notes\n[FILE] b c");
    REQUIRE(entries);
    CHECK(*entries == DirectoryEntries{{"a.txt", false}, {"notes", true}, {"b c", false}});
    CHECK(parse_directory_listing("")->empty());
    CHECK_FALSE(parse_directory_listing("Error: ENOENT"));
  }

  TEST_CASE("two listings differ by a name one side lacks or a type; not by order")
  {
    const DirectoryEntries server{{"a.txt", false}, {"notes", true}};
    CHECK_FALSE(listing_difference(server, server));
    const auto lacking = listing_difference(server, {{"notes", true}});
    REQUIRE(lacking);
    CHECK(*lacking == "the server has a.txt, fsguard's has not");
    CHECK(*listing_difference(server, {{"a.txt", false}, {"notes", false}, {"x", false}})
          == "notes is a directory on the server's side only; fsguard's has x, the server's has "
             "not");
    const auto many = listing_difference({{"1", false}, {"2", false}, {"3", false}, {"4", false},
                                          {"5", false}},
                                         {});
    CHECK(many->ends_with("; and 2 more"));
    // An empty directory on both sides proves nothing either way.
    CHECK_FALSE(listing_difference({}, {}));
  }
}
