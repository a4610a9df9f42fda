#include <doctest/doctest.h>

#include "fake_disk.hpp"
#include "tracker/path.hpp"
#include "tracker/unicode.hpp"

using namespace fsguard;
using fsguard::testing::FakeDisk;

namespace {

// A workspace: /ws/a.txt, /ws/sub/, /ws/link.txt -> a.txt, /wslink -> /ws,
// /ws/café.txt in NFC.
FakeDisk make_workspace()
{
  FakeDisk disk;
  disk.make_directory("/ws");
  disk.make_directory("/ws/sub");
  disk.write("/ws/a.txt", "a\n");
  disk.write("/ws/sub/b.txt", "b\n");
  disk.symlink("/ws/link.txt", "a.txt");
  disk.symlink("/wslink", "/ws");
  disk.symlink("/ws/sub/up", "..");
  disk.write("/ws/caf\xC3\xA9.txt", "nfc\n");
  return disk;
}

const PathContext k_absolute_only{};

// server-filesystem with allowed directories /ws and /other, HOME=/home/me.
PathContext server_context(std::vector<DirectorySet> sets = {{"/ws", "/other"}})
{
  PathContext context;
  context.rules = PathRules::server_filesystem;
  context.home = "/home/me";
  context.cwd = "/cwd";
  context.allowed_sets = std::move(sets);
  return context;
}

struct Spelling {
  const char* raw;
  const char* canonical;
};

} // namespace

TEST_SUITE("path")
{
  TEST_CASE("every spelling of an existing file resolves to its one canonical path")
  {
    const Spelling spellings[] = {
      {"/ws/a.txt", "/ws/a.txt"},
      {"/ws/./a.txt", "/ws/a.txt"},
      {"/ws//a.txt", "/ws/a.txt"},
      {"//ws/a.txt", "/ws/a.txt"},
      {"/ws/a.txt/", "/ws/a.txt"},
      {"/ws/sub/../a.txt", "/ws/a.txt"},
      {"/ws/../ws/a.txt", "/ws/a.txt"},
      {"/../ws/a.txt", "/ws/a.txt"},
      {"/ws/./sub/./../a.txt", "/ws/a.txt"},
      {"/ws/link.txt", "/ws/a.txt"},
      {"/wslink/a.txt", "/ws/a.txt"},
      {"/wslink//./link.txt", "/ws/a.txt"},
      {"/ws/sub/up/a.txt", "/ws/a.txt"},
      {"/wslink/sub/b.txt", "/ws/sub/b.txt"},
      {"/ws/cafe\xCC\x81.txt", "/ws/caf\xC3\xA9.txt"},      // NFD asks for the NFC file
      {"/wslink/cafe\xCC\x81.txt", "/ws/caf\xC3\xA9.txt"},
      {"/ws/new.txt", "/ws/new.txt"},                       // missing: the path as spelled
      {"/wslink/new.txt", "/ws/new.txt"},
      {"/ws/sub/../new.txt", "/ws/new.txt"},
      {"/ws/nodir/new.txt", "/ws/nodir/new.txt"},
    };
    for (const auto& spelling : spellings) {
      FakeDisk disk = make_workspace();
      CAPTURE(spelling.raw);
      const auto resolved = resolve_path(disk, spelling.raw, k_absolute_only);
      REQUIRE(resolved.ok());
      CHECK(*resolved == spelling.canonical);
    }
  }

  TEST_CASE("server-filesystem: ~ and relative paths resolve as the server resolves them")
  {
    const Spelling spellings[] = {
      {"a.txt", "/ws/a.txt"},                 // the first allowed directory
      {"./a.txt", "/ws/a.txt"},
      {"sub/../a.txt", "/ws/a.txt"},
      {"sub/b.txt", "/ws/sub/b.txt"},
      {"link.txt", "/ws/a.txt"},
      {"cafe\xCC\x81.txt", "/ws/caf\xC3\xA9.txt"},
      {"../other/o.txt", "/other/o.txt"},     // stays inside an allowed directory
      {"../ws/a.txt", "/ws/a.txt"},
      {"../../ws/a.txt", "/ws/a.txt"},
      {"~/h.txt", "/home/me/h.txt"},
      {"~/../me/h.txt", "/home/me/h.txt"},
      {"~", "/home/me"},
      {"~root/x", "/ws/~root/x"},             // only ~ and ~/ expand
      {"new.txt", "/ws/new.txt"},
    };
    for (const auto& spelling : spellings) {
      FakeDisk disk = make_workspace();
      disk.make_directory("/other");
      disk.write("/other/o.txt", "o\n");
      disk.make_directory("/home");
      disk.make_directory("/home/me");
      disk.write("/home/me/h.txt", "h\n");
      CAPTURE(spelling.raw);
      const auto resolved = resolve_path(disk, spelling.raw, server_context());
      REQUIRE(resolved.ok());
      CHECK(*resolved == spelling.canonical);
    }
  }

  TEST_CASE("~ with an empty or relative $HOME resolves where the server puts it; an unknown home is refused")
  {
    FakeDisk disk = make_workspace();
    PathContext empty_home = server_context();
    empty_home.home = "";
    CHECK(*resolve_path(disk, "~/ws/a.txt", empty_home) == "/ws/a.txt");
    PathContext dot_home = server_context();
    dot_home.home = ".";
    CHECK(*resolve_path(disk, "~/a.txt", dot_home) == "/ws/a.txt");
    CHECK(*resolve_path(disk, "~", dot_home) == "/ws");
    // Relative after expansion: it waits for the allowed directories too.
    dot_home.allowed_sets.clear();
    const auto waiting = resolve_path(disk, "~/a.txt", dot_home);
    REQUIRE_FALSE(waiting.ok());
    CHECK(waiting.error().directories_in_doubt);
    PathContext no_home = server_context();
    no_home.home = std::nullopt;
    const auto unknown = resolve_path(disk, "~/a.txt", no_home);
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().reason.find("home directory is unknown") != std::string::npos);
    PathContext agent_infra = server_context();
    agent_infra.rules = PathRules::working_directory;
    agent_infra.home = ".";
    agent_infra.cwd = "/ws";
    CHECK(*resolve_path(disk, "~/a.txt", agent_infra) == "/ws/a.txt");
  }

  TEST_CASE("server-filesystem: a relative path resolves only if every possible directory set agrees")
  {
    FakeDisk disk = make_workspace();
    disk.make_directory("/other");
    disk.write("/other/a.txt", "other a\n");
    // During a roots change the server may use {/ws} or {/other}.
    const auto changing = server_context({{"/ws"}, {"/other"}});
    const auto ambiguous = resolve_path(disk, "a.txt", changing);
    REQUIRE_FALSE(ambiguous.ok());
    CHECK(ambiguous.error().reason.find("changing") != std::string::npos);
    CHECK(*resolve_path(disk, "/ws/a.txt", changing) == "/ws/a.txt"); // absolute: fine
    CHECK(*resolve_path(disk, "~/x", changing) == "/home/me/x");
    const auto agreeing = server_context({{"/ws"}, {"/ws", "/other"}});
    CHECK(*resolve_path(disk, "a.txt", agreeing) == "/ws/a.txt");
    const auto unknown = server_context({});
    CHECK_FALSE(resolve_path(disk, "a.txt", unknown).ok());
    CHECK(*resolve_path(disk, "a.txt", server_context({{}})) == "/cwd/a.txt"); // no dirs: cwd
  }

  TEST_CASE("spellings that do not name one file for sure are refused with a reason")
  {
    const std::string spellings[] = {
      // relative and ~ paths, for a server whose rules fsguard does not know
      "a.txt", "./a.txt", "../ws/a.txt", "sub/b.txt", "~/a.txt", "~", "~root/a.txt",
      // padded, empty or broken spellings, for any server
      " /ws/a.txt", "/ws/a.txt ", "/ws/a.txt\t", "/ws/a.txt\n", "\"/ws/a.txt\"",
      "'/ws/a.txt'", "/ws/a.txt\"", "/ws/a.txt\xC2\xA0", "\xEF\xBB\xBF/ws/a.txt",
      "C:\\ws\\a.txt", "", std::string("/ws/a\0.txt", 10), "file:///ws/a.txt",
    };
    for (const auto& raw : spellings) {
      FakeDisk disk = make_workspace();
      CAPTURE(raw);
      const auto resolved = resolve_path(disk, raw, k_absolute_only);
      REQUIRE_FALSE(resolved.ok());
      CHECK_FALSE(resolved.error().reason.empty());
      const bool plain_relative = raw.find_first_of(" \t\n\"'\xC2\xEF") == std::string::npos
                                  && !raw.empty() && raw.find('\0') == std::string::npos;
      if (!plain_relative) {
        CHECK_FALSE(resolve_path(disk, raw, server_context()).ok());
      }
    }
  }

  TEST_CASE("a missing NFC name finds the existing NFD file, as the server does")
  {
    FakeDisk disk;
    disk.make_directory("/ws");
    disk.write("/ws/cafe\xCC\x81.txt", "nfd\n");
    const auto resolved = resolve_path(disk, "/ws/caf\xC3\xA9.txt", k_absolute_only);
    REQUIRE(resolved.ok());
    CHECK(*resolved == "/ws/cafe\xCC\x81.txt");
    // Not equivalent (an extra accent): a new file.
    const auto other = resolve_path(disk, "/ws/cafe\xCC\x81\xCC\x81.txt", k_absolute_only);
    REQUIRE(other.ok());
    CHECK(*other == "/ws/cafe\xCC\x81\xCC\x81.txt");
  }

  TEST_CASE("a name with several Unicode-equivalent existing entries fails closed")
  {
    FakeDisk disk;
    disk.make_directory("/ws");
    disk.write("/ws/\xE2\x84\xAB", "angstrom sign\n"); // U+212B
    disk.write("/ws/\xC3\x85", "A with ring\n");       // U+00C5
    const auto ambiguous = resolve_path(disk, "/ws/A\xCC\x8A", k_absolute_only); // A + combining ring
    REQUIRE_FALSE(ambiguous.ok());
    CHECK(ambiguous.error().reason.find("Unicode-equivalent") != std::string::npos);
    const auto exact = resolve_path(disk, "/ws/\xC3\x85", k_absolute_only);
    REQUIRE(exact.ok()); // an exact name always wins
    CHECK(*exact == "/ws/\xC3\x85");
  }

  TEST_CASE("invalid UTF-8 is replaced by maximal subparts, as WHATWG decoders do")
  {
    CHECK_FALSE(replace_invalid_utf8("plain ascii, caf\xC3\xA9, \xF0\x9F\x98\x80"));
    const std::string r = "\xEF\xBF\xBD";
    CHECK(*replace_invalid_utf8("a\xFF" "b") == "a" + r + "b");
    CHECK(*replace_invalid_utf8("\xC3") == r);                     // truncated at the end
    CHECK(*replace_invalid_utf8("\xE2\x82x") == r + "x");          // one subpart, one U+FFFD
    CHECK(*replace_invalid_utf8("\xED\xA0\x80") == r + r + r);     // a surrogate: three
    CHECK(*replace_invalid_utf8("\xF0\x80\x80\x80") == r + r + r + r);
    CHECK(*replace_invalid_utf8("\xC0\xAF") == r + r);              // overlong
    CHECK(*replace_invalid_utf8("\xF4\x90\x80\x80") == r + r + r + r); // above U+10FFFF
  }

  TEST_CASE("lexical normalisation matches path.resolve")
  {
    CHECK(lexically_normal("/") == "/");
    CHECK(lexically_normal("//") == "/");
    CHECK(lexically_normal("/a/b/../../..") == "/");
    CHECK(lexically_normal("/a/./b//c/") == "/a/b/c");
    CHECK(lexically_normal("/a/..b/c.") == "/a/..b/c."); // names that only start or end with dots
    CHECK(lexically_normal("/a/b/.") == "/a/b");
    CHECK(lexically_normal("/a/b/..") == "/a");
  }

  TEST_CASE("a path is lexically normal only without empty, \".\" or \"..\" components")
  {
    CHECK(is_lexically_normal("/"));
    CHECK(is_lexically_normal("/a/b.txt"));
    CHECK(is_lexically_normal("/a/..b/c."));
    CHECK_FALSE(is_lexically_normal(""));
    CHECK_FALSE(is_lexically_normal("a/b"));
    CHECK_FALSE(is_lexically_normal("//"));
    CHECK_FALSE(is_lexically_normal("/a//b"));
    CHECK_FALSE(is_lexically_normal("/a/"));
    CHECK_FALSE(is_lexically_normal("/a/./b"));
    CHECK_FALSE(is_lexically_normal("/a/../b"));
    CHECK_FALSE(is_lexically_normal("/a/."));
    for (const char* path : {"/", "/a/b.txt", "/a/..b/c.", "//", "/a//b/", "/a/./b/../c"}) {
      CHECK(is_lexically_normal(lexically_normal(path)));
    }
  }
}

TEST_SUITE("path")
{
  // U+1CC00 was assigned in Unicode 16, after the tables of utf8proc 2.8
  // (Unicode 15): Node's newer ICU may normalize it, utf8proc cannot tell.
  TEST_CASE("a name with characters newer than fsguard's Unicode tables is refused, not guessed")
  {
    REQUIRE(has_unassigned_code_point("\xF0\x9C\xB0\x80"));
    CHECK_FALSE(has_unassigned_code_point("caf\xC3\xA9"));
    FakeDisk disk = make_workspace();
    const auto missing = resolve_path(disk, "/ws/new\xF0\x9C\xB0\x80.txt", k_absolute_only);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().reason.find("newer than fsguard's Unicode tables")
          != std::string::npos);
    // An existing name with such characters next to a missing non-ASCII name.
    disk.write("/ws/old\xF0\x9C\xB0\x80.txt", "x");
    const auto beside = resolve_path(disk, "/ws/cafe\xCC\x81-new.txt", k_absolute_only);
    REQUIRE_FALSE(beside);
    // ASCII names never need the tables.
    CHECK(resolve_path(disk, "/ws/plain-new.txt", k_absolute_only));
  }
}
