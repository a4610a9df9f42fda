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
    const auto report = parse_server_file_report(k_info, false);
    REQUIRE(report.outcome == ServerFileReport::Outcome::exists);
    CHECK(report.size == 12);
    CHECK(report.modified_s == k_modified_s);
    CHECK_FALSE(report.is_directory);
    CHECK(parse_server_file_report("Error: ENOENT: no such file or directory, stat '/p/x'", true)
            .outcome
          == ServerFileReport::Outcome::missing);
    CHECK(parse_server_file_report("Error: Parent directory does not exist: /p/d", true).outcome
          == ServerFileReport::Outcome::missing);
    const auto denied =
      parse_server_file_report("Error: Access denied - path outside allowed directories", true);
    CHECK(denied.outcome == ServerFileReport::Outcome::unknown);
    CHECK(parse_server_file_report("size: twelve\nmodified: x", false).outcome
          == ServerFileReport::Outcome::unknown);
  }

  TEST_CASE("the same file on both sides agrees: size, type and the second Node shows")
  {
    const auto report = parse_server_file_report(k_info, false);
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
    const auto report = parse_server_file_report(k_info, false);
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
    const auto report = parse_server_file_report(k_info, false);
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
    const auto report = parse_server_file_report(k_info, false);
    CHECK(identity_difference(report, Result<FileStat, DiskError>(DiskError{EACCES, "denied"})));
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
