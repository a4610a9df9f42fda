#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fake_disk.hpp"
#include "tracker/allowed_directories.hpp"
#include "tracker/server_filesystem.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;
using nlohmann::json;

TEST_SUITE("server_filesystem")
{
  TEST_CASE("a relative path that escapes the first directory lands where the server puts it")
  {
    CHECK(*server_absolute_path("x", "/h", "/c", {"/a", "/b"}) == "/a/x");
    CHECK(*server_absolute_path("../b/x", "/h", "/c", {"/a", "/b"}) == "/b/x");
    CHECK(*server_absolute_path("../../etc/x", "/h", "/c", {"/a", "/b"}) == "/etc/x");
    CHECK(*server_absolute_path("x", "/h", "/c", {}) == "/c/x");
    CHECK(*server_absolute_path("~/x", "/h", "/c", {"/a"}) == "/h/x");
    CHECK_FALSE(server_absolute_path("C:\\x.txt", "/h", "/c", {"/a"}));
    CHECK_FALSE(server_absolute_path("~/x", std::nullopt, "/c", {"/a"})); // os.homedir() throws
  }

  TEST_CASE("~ expands exactly as Node's path.join(os.homedir(), rest), relative $HOME included")
  {
    CHECK(*expand_home("~/x", "/h") == "/h/x");
    CHECK(*expand_home("~", "/h/") == "/h");
    CHECK(*expand_home("~/../x", "/h/me") == "/h/x");
    CHECK(*expand_home("~/x", "") == "/x");            // HOME set but empty
    CHECK(*expand_home("~", "") == ".");
    CHECK(*expand_home("~/notes.txt", ".") == "notes.txt"); // HOME=.
    CHECK(*expand_home("~/x", "rel/dir") == "rel/dir/x");
    CHECK(*expand_home("~/../../x", "rel") == "../x");
    CHECK(*expand_home("~/x", "~") == "~/x");           // expanded once only
    CHECK(*expand_home("~root/x", "/h") == "~root/x");  // only ~ and ~/ expand
    CHECK(*expand_home("x", std::nullopt) == "x");
    CHECK_FALSE(expand_home("~/x", std::nullopt));
    // A relative expansion resolves like any relative path.
    CHECK(*server_absolute_path("~/x", "", "/c", {"/a"}) == "/x");
    CHECK(*server_absolute_path("~/notes.txt", ".", "/c", {"/a", "/b"}) == "/a/notes.txt");
    CHECK(*server_absolute_path("~/../b/x", ".", "/c", {"/a", "/b"}) == "/b/x");
    CHECK(*server_absolute_path("~/x", "rel", "/c", {}) == "/c/rel/x"); // agent-infra: the cwd
  }

  TEST_CASE("the listing text gives the directories in order")
  {
    CHECK(*parse_allowed_directories("Allowed directories:\n/a\n/b") == DirectorySet{"/a", "/b"});
    CHECK(parse_allowed_directories("Allowed directories:\n")->empty());
    CHECK(parse_allowed_directories("Allowed directories:")->empty());
    CHECK_FALSE(parse_allowed_directories("Error: nope"));
  }

  TEST_CASE("roots replace the directories with the file:// roots that are directories")
  {
    FakeDisk disk;
    disk.make_directory("/ws");
    disk.make_directory("/ws/sub");
    disk.make_directory("/space dir");
    disk.write("/ws/file.txt", "x");
    disk.symlink("/wslink", "/ws");
    const DirectorySet current{"/old"};
    auto predict = [&](const char* text) {
      return predict_root_directories(json::parse(text), current, disk, "/h", "/c");
    };
    CHECK(predict(R"({"roots":[{"uri":"file:///ws/sub"}]})") == DirectorySet{"/ws/sub"});
    CHECK(predict(R"({"roots":[{"uri":"file:///wslink"},{"uri":"file:///missing"}]})") == DirectorySet{"/ws"});
    CHECK(predict(R"({"roots":[{"uri":"file:///space%20dir"}]})") == DirectorySet{"/space dir"});
    CHECK(predict(R"({"roots":[{"uri":"file://localhost/ws"}]})") == DirectorySet{"/ws"});
    CHECK(predict(R"({"roots":[{"uri":"file:///ws/file.txt"}]})") == current);  // not a directory
    CHECK(predict(R"({"roots":[]})") == current);
    CHECK(predict(R"({"roots":[{"uri":"/ws"}]})") == current);                   // SDK rejects the reply
    CHECK(predict(R"({"roots":[{"uri":"file:///ws"},{"uri":"http://x/"}]})") == current);
    // A URI fsguard may read otherwise than Node: the prediction is unknown,
    // so relative paths wait for a listing that shows a new set.
    CHECK_FALSE(predict(R"({"roots":[{"uri":"file://host/ws"}]})"));
    CHECK_FALSE(predict(R"({"roots":[{"uri":"file:///a%2Fb"}]})"));
    CHECK_FALSE(predict(R"({"roots":[{"uri":"file:///tmp\\attack\\ws"}]})"));
    CHECK_FALSE(predict(R"({"roots":[{"uri":"file:///missing"},{"uri":"file://host/ws"}]})"));
    CHECK(predict(R"({"roots":[{"uri":"file://LOCALHOST/ws"}]})") == DirectorySet{"/ws"});
  }

  TEST_CASE("allowed directories stay in doubt from a roots reply until a listing confirms a state")
  {
    AllowedDirectories allowed;
    CHECK(allowed.possible().empty());
    const auto first = allowed.next_sequence();
    allowed.confirm({"/cli"}, first);
    CHECK(allowed.settled());
    allowed.expect(DirectorySet{"/root"});
    CHECK_FALSE(allowed.settled());
    CHECK(allowed.possible() == std::vector<DirectorySet>{{"/cli"}, {"/root"}});
    allowed.confirm({"/cli"}, allowed.next_sequence()); // stale: the server has not switched yet
    CHECK(allowed.possible().size() == 2);
    allowed.confirm({"/root"}, allowed.next_sequence());
    CHECK(allowed.settled());
    CHECK(allowed.possible() == std::vector<DirectorySet>{{"/root"}});
  }

  TEST_CASE("an unpredictable roots change makes relative paths unresolvable until confirmed")
  {
    AllowedDirectories allowed;
    allowed.confirm({"/cli"}, allowed.next_sequence());
    allowed.expect(std::nullopt);
    CHECK(allowed.possible().empty());
    allowed.confirm({"/surprise"}, allowed.next_sequence());
    CHECK(allowed.settled());
    CHECK(*allowed.latest() == DirectorySet{"/surprise"});
  }

  TEST_CASE("a listing sent before a roots reply does not retire the state that reply brings")
  {
    AllowedDirectories allowed;
    allowed.confirm({"/cli"}, allowed.next_sequence());
    const auto asked = allowed.next_sequence();
    allowed.expect(DirectorySet{"/predicted"});
    allowed.confirm({"/unexpected"}, asked);
    CHECK(allowed.possible() == std::vector<DirectorySet>{{"/unexpected"}, {"/predicted"}});
  }
}

TEST_SUITE("server_filesystem: birth times")
{
  TEST_CASE("a birth time compares in the second Node shows, rounded to the millisecond first")
  {
    CHECK(node_shown_second(1'700'000'000, 0) == 1'700'000'000);
    CHECK(node_shown_second(1'700'000'000, 999'499'800) == 1'700'000'000);
    CHECK(node_shown_second(1'700'000'000, 999'500'000) == 1'700'000'001); // 999.5 ms rounds up
    CHECK(node_shown_second(1'700'000'000, 999'999'999) == 1'700'000'001);
    CHECK(node_shown_second(-1, 999'000'000) == -1); // 1969 still counts down
  }

  TEST_CASE("a file time shows as the millisecond Node's double arithmetic rounds it to")
  {
    // Measured with Node 20 (touch -d @1700000000.<ns>; fs.statSync().mtime.getTime()):
    // a double near 1.7e12 ms has steps of 2^-12 ms, so a time a little
    // below the half millisecond is already .5 there, and rounds up.
    CHECK(node_shown_millisecond(1'700'000'000, 123'456'789) == 1'700'000'000'123);
    CHECK(node_shown_millisecond(1'700'000'000, 499'877) == 1'700'000'000'000);
    CHECK(node_shown_millisecond(1'700'000'000, 499'878) == 1'700'000'000'001);
    CHECK(node_shown_millisecond(1'700'000'000, 999'499'877) == 1'700'000'000'999);
    CHECK(node_shown_millisecond(1'700'000'000, 999'499'878) == 1'700'000'001'000);
    CHECK(node_shown_second(1'700'000'000, 999'499'999) == 1'700'000'001);
  }
}
