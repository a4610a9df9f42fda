#include <doctest/doctest.h>

#include "tracker/file_info.hpp"

using namespace fsguard;

TEST_SUITE("file_info")
{
  TEST_CASE("an ISO date gives its milliseconds since the epoch")
  {
    CHECK(iso_date_milliseconds("2023-11-14T22:13:20.987Z") == 1'700'000'000'987);
    CHECK(iso_date_milliseconds("1970-01-01T00:00:00.000Z") == 0);
    CHECK(iso_date_milliseconds("1969-12-31T23:59:59.999Z") == -1);
    CHECK(iso_date_milliseconds("2024-02-29T00:00:00.000Z") == 1'709'164'800'000);
  }

  TEST_CASE("a date of another shape, or no date, is none")
  {
    for (const char* text : {"2023-11-14T22:13:20Z", "2023-11-14 22:13:20.987Z",
                             "2023-11-14T22:13:20.987+01:00", "+010000-01-01T00:00:00.000Z",
                             "2023-02-29T00:00:00.000Z", "2023-11-14T24:00:00.000Z",
                             "2023-11-14T22:60:00.000Z", "2023-11-14T22:13:2x.987Z", "null", ""}) {
      CHECK_FALSE(iso_date_milliseconds(text));
    }
  }

  TEST_CASE("each format's time is read from its own line, to the precision it shows")
  {
    const std::string_view desktop_commander = "size: 12\n"
                                               "created: \"2026-11-28T03:32:29.067Z\"\n"
                                               "modified: \"2023-11-14T22:13:20.987Z\"\n"
                                               "isDirectory: false";
    const auto modified = file_info_time(desktop_commander, "modified", FileInfoFormat::iso_json);
    REQUIRE(modified);
    CHECK(modified->ms == 1'700'000'000'987);
    CHECK(modified->precision == ShownTime::Precision::millisecond);
    CHECK(file_info_time(desktop_commander, "created", FileInfoFormat::iso_json)->ms
          == 1'795'836'749'067);
    CHECK_FALSE(file_info_time(desktop_commander, "accessed", FileInfoFormat::iso_json));
    CHECK_FALSE(file_info_time(desktop_commander, "modified", FileInfoFormat::date_text));
    CHECK_FALSE(file_info_time(desktop_commander, "modified", FileInfoFormat::none));
    // JSON.stringify of an invalid Date is null; an unquoted date is not its format.
    CHECK_FALSE(file_info_time("modified: null", "modified", FileInfoFormat::iso_json));
    CHECK_FALSE(file_info_time("modified: 2023-11-14T22:13:20.987Z", "modified",
                               FileInfoFormat::iso_json));

    const auto shown = file_info_time(
      "modified: Tue Nov 14 2023 23:13:20 GMT+0100 (Central European Standard Time)", "modified",
      FileInfoFormat::date_text);
    REQUIRE(shown);
    CHECK(shown->ms == 1'700'000'000'000);
    CHECK(shown->precision == ShownTime::Precision::second);
  }
}
