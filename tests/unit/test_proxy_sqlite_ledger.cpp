#include <doctest/doctest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "proxy/stores/sqlite_ledger.hpp"

using namespace fsguard;

namespace {

struct TempDirectory {
  std::string path;
  TempDirectory()
  {
    char pattern[] = "/tmp/fsguard-ledger-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDirectory() { std::filesystem::remove_all(path); }
};

// The lines a Log writes.
struct CapturedLog final : StderrSink {
  std::string text;
  Log log;
  CapturedLog() { log.set_sink(this); }
  void write(std::string_view bytes) override { text += bytes; }
  int lines_with(std::string_view part) const
  {
    int count = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
      ++count;
    }
    return count;
  }
};

const ContentHash k_hash{1, 2};
constexpr std::int64_t k_second = 1'000'000'000;

std::int64_t now_ns()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

// Runs `sql` on the database at `path` with SQLite directly.
void run_sql(const std::string& path, const std::string& sql)
{
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

} // namespace

TEST_SUITE("sqlite_ledger")
{
  TEST_CASE("a write one session records is found by another, with its client, pid and time, but not by itself")
  {
    TempDirectory directory;
    CapturedLog captured;
    const std::string path = directory.path + "/ledger.sqlite";
    SqliteLedger writer(path, captured.log);
    SqliteLedger reader(path, captured.log);
    const std::int64_t at = now_ns();
    writer.record("/p/a.txt", k_hash, at, "claude-code");
    const auto found = reader.who_wrote("/p/a.txt", k_hash, at - k_second);
    REQUIRE(found.has_value());
    CHECK(found->client == "claude-code");
    CHECK(found->pid == ::getpid());
    CHECK(found->at_ns == at);
    CHECK_FALSE(writer.who_wrote("/p/a.txt", k_hash, at - k_second));
    CHECK(captured.text.empty());
  }

  TEST_CASE("only a write of the same content, recorded after the given time, is found")
  {
    TempDirectory directory;
    CapturedLog captured;
    const std::string path = directory.path + "/ledger.sqlite";
    SqliteLedger writer(path, captured.log);
    SqliteLedger reader(path, captured.log);
    const std::int64_t at = now_ns();
    writer.record("/p/a.txt", k_hash, at, "one");
    writer.record("/p/a.txt", k_hash, at + k_second, "two");
    CHECK_FALSE(reader.who_wrote("/p/a.txt", ContentHash{3, 4}, 0));
    CHECK_FALSE(reader.who_wrote("/p/b.txt", k_hash, 0));
    CHECK_FALSE(reader.who_wrote("/p/a.txt", k_hash, at + k_second));
    REQUIRE(reader.who_wrote("/p/a.txt", k_hash, 0));
    CHECK(reader.who_wrote("/p/a.txt", k_hash, 0)->client == "two");
  }

  TEST_CASE("the ledger is in WAL mode, and rows older than a day are pruned when it opens")
  {
    TempDirectory directory;
    CapturedLog captured;
    const std::string path = directory.path + "/ledger.sqlite";
    {
      SqliteLedger writer(path, captured.log);
      writer.record("/p/old.txt", k_hash, now_ns() - 25 * 3600 * k_second, "old");
      writer.record("/p/new.txt", k_hash, now_ns() - 3600 * k_second, "new");
    }
    SqliteLedger reader(path, captured.log);
    CHECK_FALSE(reader.who_wrote("/p/old.txt", k_hash, 0));
    CHECK(reader.who_wrote("/p/new.txt", k_hash, 0));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &statement, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))) == "wal");
    sqlite3_finalize(statement);
    sqlite3_close(db);
  }

  TEST_CASE("a ledger that cannot be created is reported once, and answers nothing")
  {
    TempDirectory directory;
    CapturedLog captured;
    std::ofstream(directory.path + "/file") << "a regular file";
    SqliteLedger ledger(directory.path + "/file/ledger.sqlite", captured.log);
    CHECK_FALSE(ledger.working());
    for (int round = 0; round < 5; ++round) {
      ledger.record("/p/a.txt", k_hash, now_ns(), "me");
      CHECK_FALSE(ledger.who_wrote("/p/a.txt", k_hash, 0));
    }
    CHECK(captured.lines_with("shared ledger") == 1);
    CHECK(captured.lines_with("reported once") == 1);
  }

  TEST_CASE("a database of someone else's, or a file that is not one, is left as it is")
  {
    TempDirectory directory;
    CapturedLog captured;
    const std::string theirs = directory.path + "/theirs.sqlite";
    run_sql(theirs, "CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('x')");
    const auto size = std::filesystem::file_size(theirs);
    SqliteLedger ledger(theirs, captured.log);
    CHECK_FALSE(ledger.working());
    ledger.record("/p/a.txt", k_hash, now_ns(), "me");
    CHECK(std::filesystem::file_size(theirs) == size);
    CHECK(captured.lines_with("not an fsguard ledger") == 1);

    const std::string text = directory.path + "/notes.txt";
    std::ofstream(text) << "my notes, which are not a database at all, but long enough to look"
                           " like a header and then some more text after it\n";
    SqliteLedger other(text, captured.log);
    CHECK_FALSE(other.working());
    other.record("/p/a.txt", k_hash, now_ns(), "me");
    std::ifstream read_back(text);
    std::ostringstream content;
    content << read_back.rdbuf();
    CHECK(content.str().starts_with("my notes"));
  }

  TEST_CASE("a locked ledger gives up within its busy timeout and reports it once")
  {
    TempDirectory directory;
    CapturedLog captured;
    const std::string path = directory.path + "/ledger.sqlite";
    SqliteLedger ledger(path, captured.log);
    REQUIRE(ledger.working());
    sqlite3* holder = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &holder) == SQLITE_OK);
    REQUIRE(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
    const auto began = std::chrono::steady_clock::now();
    ledger.record("/p/a.txt", k_hash, now_ns(), "me");
    ledger.record("/p/b.txt", k_hash, now_ns(), "me");
    CHECK(std::chrono::steady_clock::now() - began < std::chrono::milliseconds(1000));
    CHECK_FALSE(ledger.working());
    CHECK(captured.lines_with("reported once") == 1);
    REQUIRE(sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(holder);
    ledger.record("/p/c.txt", k_hash, now_ns(), "me");
    CHECK(ledger.working());
    CHECK(captured.lines_with("is working again") == 1);
  }
}
