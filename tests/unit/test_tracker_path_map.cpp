#include <doctest/doctest.h>

#include "fake_disk.hpp"
#include "tracker/path.hpp"
#include "tracker/path_map.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

TEST_SUITE("path map")
{
  TEST_CASE("the longest server directory that holds a path maps it")
  {
    const PathMap map({{"/projects", "/srv/all"}, {"/projects/app", "/home/me/app"}});
    CHECK(map.to_local("/projects/app/src/a.c") == "/home/me/app/src/a.c");
    CHECK(map.to_local("/projects/app") == "/home/me/app");
    CHECK(map.to_local("/projects/other/b") == "/srv/all/other/b");
    CHECK(map.to_local("/projects/application") == "/srv/all/application"); // not /projects/app
    CHECK(map.to_local("/etc/passwd") == std::nullopt);
    CHECK(map.to_server("/home/me/app/src/a.c") == "/projects/app/src/a.c");
    CHECK(map.to_server("/srv/all/x") == "/projects/x");
    CHECK(map.to_server("/tmp/x") == "/tmp/x");
  }

  TEST_CASE("the root maps and is mapped to")
  {
    CHECK(PathMap({PathMapping{"/", "/chroot"}}).to_local("/a/b") == "/chroot/a/b");
    CHECK(PathMap({PathMapping{"/", "/chroot"}}).to_server("/chroot/a/b") == "/a/b");
    CHECK(PathMap({PathMapping{"/data", "/"}}).to_local("/data/a") == "/a");
    CHECK(PathMap({PathMapping{"/data", "/"}}).to_local("/data") == "/");
  }

  TEST_CASE("an empty map leaves paths alone")
  {
    const PathMap map;
    CHECK(map.to_local("/a/b") == "/a/b");
    CHECK(map.to_server("/a/b") == "/a/b");
  }

  TEST_CASE("paths resolve on the server's side first, then map")
  {
    FakeDisk disk;
    disk.make_directory("/home/me/app");
    disk.write("/home/me/app/a.txt", "x");
    PathContext context;
    context.rules = PathRules::server_filesystem;
    context.home = std::string("/root");
    context.cwd = "/";
    context.allowed_sets = {{"/projects/app"}};
    context.map = PathMap({PathMapping{"/projects/app", "/home/me/app"}});
    CHECK(resolve_path(disk, "/projects/app/a.txt", context).value() == "/home/me/app/a.txt");
    CHECK(resolve_path(disk, "a.txt", context).value() == "/home/me/app/a.txt");
    CHECK(resolve_path(disk, "/projects/app/../app/a.txt", context).value() == "/home/me/app/a.txt");
    const auto outside = resolve_path(disk, "/home/me/app/a.txt", context); // fsguard's name
    REQUIRE_FALSE(outside);
    CHECK(outside.error().reason.find("path_map") != std::string::npos);
  }
}
