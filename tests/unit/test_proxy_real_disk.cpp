#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proxy/jsonrpc/content_hash.hpp"
#include "proxy/stores/real_disk.hpp"

using namespace fsguard;

namespace {

// What ::realpath() says of `path`: the resolved path, or "errno N".
std::string libc_real_path(const std::string& path)
{
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  return resolved ? std::string(resolved.get()) : "errno " + std::to_string(errno);
}

std::string disk_real_path(RealDisk& disk, const std::string& path)
{
  auto resolved = disk.real_path(path);
  return resolved ? *resolved : "errno " + std::to_string(resolved.error().error_number);
}

// A new directory (canonical) holding a/b/file.txt, a symlink to a, a
// symlink to the file, a relative symlink a/relative-b -> b, a dangling
// symlink and a fifo: the ways a path can take on its way to a file.
std::string make_symlink_tree()
{
  namespace fs = std::filesystem;
  char pattern[] = "/tmp/fsguard-real-disk-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  const std::string root = fs::canonical(pattern).string();
  fs::create_directories(root + "/a/b");
  std::ofstream(root + "/a/b/file.txt") << "x";
  fs::create_directory_symlink(root + "/a", root + "/link-to-a");
  fs::create_symlink(root + "/a/b/file.txt", root + "/a/file-link");
  fs::create_symlink(root + "/missing", root + "/a/dangling");
  fs::create_symlink("b", root + "/a/relative-b");
  REQUIRE(::mkfifo((root + "/a/fifo").c_str(), 0600) == 0);
  return root;
}

} // namespace

TEST_SUITE("real_disk")
{
  TEST_CASE("real_path agrees with realpath() with and without symlinks on the way")
  {
    namespace fs = std::filesystem;
    const std::string root = make_symlink_tree();

    RealDisk disk;
    for (const std::string& path : {
           root, root + "/a", root + "/a/b/file.txt", root + "/link-to-a/b/file.txt",
           root + "/a/file-link", root + "/a/dangling", root + "/a/relative-b/file.txt",
           root + "/a/relative-b", root + "/a/fifo", root + "/a/missing.txt",
           root + "/a/b/file.txt/below", root + "/a/b/../b/file.txt", root + "/a//b/file.txt",
           root + "/a/./b", root + "/a/b/", root + "/link-to-a/../a", std::string("/")}) {
      CAPTURE(path);
      CHECK(disk_real_path(disk, path) == libc_real_path(path));
    }
    fs::remove_all(root);
  }

  TEST_CASE("real_path names no pipe and no deleted file from their /proc/self/fd links")
  {
    // Their links read "pipe:[N]" and "/x (deleted)": no file of that name.
    char pattern[] = "/tmp/fsguard-real-disk-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const std::string root = pattern;
    int ends[2] = {-1, -1};
    REQUIRE(::pipe(ends) == 0);
    const std::string deleted = root + "/deleted.txt";
    std::ofstream(deleted) << "x";
    const int deleted_fd = ::open(deleted.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(deleted_fd >= 0);
    REQUIRE(::unlink(deleted.c_str()) == 0);

    RealDisk disk;
    for (const int fd : {ends[0], deleted_fd}) {
      const std::string path = "/proc/self/fd/" + std::to_string(fd);
      CAPTURE(path);
      CHECK(disk_real_path(disk, path) == libc_real_path(path));
      CHECK(disk_real_path(disk, path).starts_with("errno "));
      std::string made = path;
      CHECK(disk.make_real_path(made));
    }
    ::close(ends[0]);
    ::close(ends[1]);
    ::close(deleted_fd);
    std::filesystem::remove_all(root);
  }

  TEST_CASE("make_real_path makes a normal path what realpath() makes of it, or leaves it")
  {
    namespace fs = std::filesystem;
    const std::string root = make_symlink_tree();

    RealDisk disk;
    for (const std::string& path :
         {root, root + "/a/b/file.txt", root + "/link-to-a/b/file.txt", root + "/a/file-link",
          root + "/a/relative-b/file.txt", root + "/a/missing.txt", std::string("/")}) {
      CAPTURE(path);
      std::string made = path;
      const auto problem = disk.make_real_path(made);
      const std::string expected = libc_real_path(path);
      if (expected.starts_with("errno ")) {
        REQUIRE(problem);
        CHECK(problem->missing());
        CHECK(made == path); // left as it was
      } else {
        CHECK_FALSE(problem);
        CHECK(made == expected);
      }
    }
    fs::remove_all(root);
  }

  TEST_CASE("fingerprint pairs the file's stat with the hash of its bytes, as stat/hash/stat does")
  {
    namespace fs = std::filesystem;
    char pattern[] = "/tmp/fsguard-real-disk-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const std::string root = pattern;
    const std::string big(300 * 1024 + 7, 'b'); // more than one read of the hash buffer
    std::ofstream(root + "/small.txt") << "hello\n";
    std::ofstream(root + "/big.txt") << big;
    std::ofstream(root + "/empty.txt");
    REQUIRE(::mkfifo((root + "/fifo").c_str(), 0600) == 0);

    RealDisk disk;
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
           {"small.txt", "hello\n"}, {"big.txt", big}, {"empty.txt", ""}}) {
      CAPTURE(name);
      const std::string path = root + "/" + name;
      const auto fingerprint = disk.fingerprint(path);
      REQUIRE(fingerprint.ok());
      CHECK(fingerprint->hash == hash_bytes(content));
      CHECK(fingerprint->stat == disk.stat(path).value());
      const auto generic = take_fingerprint(disk, path);
      REQUIRE(generic.ok());
      CHECK(generic->hash == fingerprint->hash);
      CHECK(generic->stat == fingerprint->stat);
      CHECK(fingerprint->traits == ContentTraits{true, false});
    }
    // Not valid UTF-8, and a bare "\r", each found in the pass that hashes:
    // also where a sequence or a CRLF straddles two reads of the buffer.
    for (const std::size_t at : {std::size_t(5), std::size_t(256 * 1024 - 1)}) {
      CAPTURE(at);
      std::string latin1(300 * 1024, 'a');
      latin1[at] = '\xC3';
      latin1[at + 1] = '(';
      std::ofstream(root + "/latin1.txt") << latin1;
      CHECK(disk.fingerprint(root + "/latin1.txt")->traits == ContentTraits{false, false});
      std::string valid = latin1;
      valid[at + 1] = '\xA9';
      std::ofstream(root + "/valid.txt") << valid;
      CHECK(disk.fingerprint(root + "/valid.txt")->traits == ContentTraits{true, false});
      std::string crlf(300 * 1024, 'a');
      crlf[at] = '\r';
      crlf[at + 1] = '\n';
      std::ofstream(root + "/crlf.txt") << crlf;
      CHECK(disk.fingerprint(root + "/crlf.txt")->traits == ContentTraits{true, false});
      crlf[at + 1] = 'x';
      std::ofstream(root + "/cr.txt") << crlf;
      CHECK(disk.fingerprint(root + "/cr.txt")->traits == ContentTraits{true, true});
      CHECK(take_fingerprint(disk, root + "/cr.txt")->traits == ContentTraits{true, true});
    }
    CHECK(disk.fingerprint(root + "/missing.txt").error().error_number == ENOENT);
    CHECK(disk.fingerprint(root + "/fifo").error().error_number == EINVAL);
    CHECK(disk.fingerprint(root).error().error_number == EINVAL);
    fs::remove_all(root);
  }
  TEST_CASE("hash_if_unchanged hashes a file only while it keeps the stat expected")
  {
    namespace fs = std::filesystem;
    char pattern[] = "/tmp/fsguard-real-disk-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const std::string root = pattern;
    const std::string path = root + "/a.txt";
    const std::string big(300 * 1024 + 7, 'b'); // more than one read of the hash buffer
    RealDisk disk;
    for (const std::string& content : {std::string("hello\n"), big, std::string()}) {
      CAPTURE(content.size());
      std::ofstream(path) << content;
      const FileStat expected = disk.stat(path).value();
      const auto same = disk.hash_if_unchanged(path, expected);
      REQUIRE(same.ok());
      CHECK(same->stat == expected);
      REQUIRE(same->digest.has_value());
      CHECK(same->digest->hash == hash_bytes(content));
      CHECK(same->digest->hash == disk.fingerprint(path)->hash);
    }

    std::ofstream(path) << "hello\n";
    const FileStat expected = disk.stat(path).value();
    std::ofstream(path, std::ios::app) << "more\n"; // grown past the size expected
    auto found = disk.hash_if_unchanged(path, expected);
    REQUIRE(found.ok());
    CHECK_FALSE(found->digest.has_value());
    CHECK(found->stat == disk.stat(path).value());

    std::ofstream(root + "/new.txt") << "hello\n"; // the same bytes, renamed over it
    fs::rename(root + "/new.txt", path);
    found = disk.hash_if_unchanged(path, expected);
    REQUIRE(found.ok());
    CHECK_FALSE(found->digest.has_value());

    fs::remove(path); // a FIFO in its place: not read into a digest, and no wait
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    found = disk.hash_if_unchanged(path, expected);
    REQUIRE(found.ok());
    CHECK_FALSE(found->digest.has_value());
    CHECK_FALSE(found->stat.is_regular());

    fs::remove(path);
    CHECK(disk.hash_if_unchanged(path, expected).error().error_number == ENOENT);
    disk.set_max_hash_bytes(2);
    CHECK(disk.hash_if_unchanged(path, expected).error().error_number == EFBIG);
    fs::remove_all(root);
  }

  TEST_CASE("hash_if_unchanged reads a file that claims size 0 to its end, as /proc files do")
  {
    RealDisk disk;
    const std::string path = "/proc/self/status";
    const FileStat expected = disk.stat(path).value();
    REQUIRE(expected.size == 0);
    const auto found = disk.hash_if_unchanged(path, expected);
    REQUIRE(found.ok());
    REQUIRE(found->digest.has_value());
    CHECK(found->digest->hash != hash_bytes("")); // its lines, not the 0 bytes it claims
  }
}
