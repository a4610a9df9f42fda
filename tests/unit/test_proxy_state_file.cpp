#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "proxy/stores/state_file.hpp"

using namespace fsguard;
using namespace std::chrono_literals;

namespace {

const StateKey k_key{{"node", "server.js", "."}, "/home/me/project"};

// A temporary directory, removed with what it holds.
struct TempDirectory {
  std::string path;
  TempDirectory()
  {
    char pattern[] = "/tmp/fsguard-state-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDirectory() { std::filesystem::remove_all(path); }
};

SavedRecord record(const std::string& path, std::int64_t taken_at_ns)
{
  SavedRecord saved;
  saved.path = path;
  saved.hash = {static_cast<std::uint64_t>(taken_at_ns), 2};
  saved.taken_at_ns = taken_at_ns;
  return saved;
}

std::string contents(const std::string& path)
{
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void put(const std::string& path, const std::string& text)
{
  std::ofstream(path, std::ios::binary) << text;
}

} // namespace

TEST_SUITE("state_file")
{
  TEST_CASE("records saved to a state file are loaded by the next session, and no temporary file is left")
  {
    TempDirectory directory;
    const std::string path = directory.path + "/state.json";
    StateFile first(path, k_key);
    CHECK(first.load().records.empty());
    CHECK(first.load().warning.empty()); // a missing file is no problem
    REQUIRE(first.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
    StateFile next(path, k_key);
    const auto loaded = next.load();
    CHECK(loaded.warning.empty());
    REQUIRE(loaded.records.size() == 1);
    CHECK(loaded.records.front().path == "/p/a");
    for (const auto& entry : std::filesystem::directory_iterator(directory.path)) {
      const std::string name = entry.path().filename().string();
      CHECK((name == "state.json" || name == "state.json.lock"));
    }
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read)
          == std::filesystem::perms::none);
  }

  TEST_CASE("two sessions saving to one state file keep each other's records")
  {
    TempDirectory directory;
    const std::string path = directory.path + "/state.json";
    StateFile one(path, k_key);
    StateFile two(path, k_key);
    REQUIRE(one.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
    REQUIRE(two.save({record("/p/b", 20)}, 0ms).outcome == StateFile::Outcome::saved);
    REQUIRE(one.save({record("/p/a", 10), record("/p/c", 30)}, 0ms).outcome
            == StateFile::Outcome::saved);
    const auto loaded = StateFile(path, k_key).load();
    CHECK(loaded.records.size() == 3);
  }

  TEST_CASE("a file that is not a state file is ignored with a warning and never overwritten")
  {
    TempDirectory directory;
    const std::string path = directory.path + "/notes.txt";
    put(path, "my notes, not fsguard's\n");
    StateFile state(path, k_key);
    const auto loaded = state.load();
    CHECK(loaded.records.empty());
    CHECK(loaded.warning.find("not an fsguard state file") != std::string::npos);
    CHECK(loaded.not_saved);
    CHECK(state.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::refused);
    CHECK(contents(path) == "my notes, not fsguard's\n");
  }

  TEST_CASE("a damaged state file is ignored with a warning and replaced by the next save")
  {
    TempDirectory directory;
    const std::string path = directory.path + "/state.json";
    put(path, "{\"format\":\"fsguard-state\",\"version\":1,\"upstreams\":[{\"comm");
    StateFile state(path, k_key);
    const auto loaded = state.load();
    CHECK(loaded.records.empty());
    CHECK_FALSE(loaded.warning.empty());
    CHECK_FALSE(loaded.not_saved); // it is replaced
    CHECK(state.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
    CHECK(StateFile(path, k_key).load().records.size() == 1);
  }

  TEST_CASE("a save waits for another process's lock, and says busy when it is held too long")
  {
    TempDirectory directory;
    const std::string path = directory.path + "/state.json";
    const int other = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(other >= 0);
    REQUIRE(::flock(other, LOCK_EX) == 0); // a separate open file description: another holder
    StateFile state(path, k_key);
    CHECK(state.save({record("/p/a", 10)}, 20ms).outcome == StateFile::Outcome::busy);
    CHECK_FALSE(std::filesystem::exists(path));
    ::close(other);
    CHECK(state.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
  }

  TEST_CASE("a state file given as a symlink stays one, and the file it leads to gets the records")
  {
    // As a dotfiles manager links it: state.json -> dotfiles/link.json ->
    // /abs/dotfiles/state.json (relative, then absolute).
    TempDirectory directory;
    std::filesystem::create_directory(directory.path + "/dotfiles");
    const std::string target = directory.path + "/dotfiles/state.json";
    const std::string path = directory.path + "/state.json";
    std::filesystem::create_symlink(target, directory.path + "/dotfiles/link.json");
    std::filesystem::create_symlink("dotfiles/link.json", path);
    StateFile state(path, k_key);
    CHECK(state.load().warning.empty()); // a link to nothing yet: no records, no problem
    REQUIRE(state.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
    REQUIRE(state.save({record("/p/b", 20)}, 0ms).outcome == StateFile::Outcome::saved);
    CHECK(std::filesystem::is_symlink(path));
    CHECK(std::filesystem::read_symlink(path) == "dotfiles/link.json");
    CHECK(std::filesystem::is_symlink(directory.path + "/dotfiles/link.json"));
    CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(target)));
    CHECK(StateFile(target, k_key).load().records.size() == 2);
    CHECK(StateFile(path, k_key).load().records.size() == 2);
    for (const auto& entry : std::filesystem::directory_iterator(directory.path + "/dotfiles")) {
      const std::string name = entry.path().filename().string();
      CHECK((name == "state.json" || name == "state.json.lock" || name == "link.json"));
    }
    std::filesystem::create_symlink("loop", directory.path + "/loop");
    const auto looped = StateFile(directory.path + "/loop", k_key).save({record("/p/a", 10)}, 0ms);
    CHECK(looped.outcome == StateFile::Outcome::failed);
    CHECK(looped.problem.find("symbolic links") != std::string::npos);
  }

  TEST_CASE("a save creates missing directories, and fails with a reason where it cannot")
  {
    TempDirectory directory;
    StateFile nested(directory.path + "/a/b/state.json", k_key);
    CHECK(nested.save({record("/p/a", 10)}, 0ms).outcome == StateFile::Outcome::saved);
    put(directory.path + "/file", "");
    StateFile below_a_file(directory.path + "/file/state.json", k_key);
    const auto saved = below_a_file.save({record("/p/a", 10)}, 0ms);
    CHECK(saved.outcome == StateFile::Outcome::failed);
    CHECK(saved.problem.find(directory.path + "/file") != std::string::npos);
    CHECK(below_a_file.load().records.empty());
  }
}
