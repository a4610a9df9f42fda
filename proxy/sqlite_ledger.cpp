#include "proxy/sqlite_ledger.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "tracker/result.hpp"

namespace fsguard {

namespace {

// The layout of the ledger (PRAGMA user_version). A database of another
// version, or with tables of its own, is not fsguard's: it is left alone.
constexpr int k_ledger_version = 1;

// How long fsguard waits before it opens a failing ledger again.
constexpr auto k_reopen_pause = std::chrono::seconds(10);

constexpr int k_prune_every = 256; // records

std::int64_t wall_now_ns()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

// Runs `sql` (statements without results); "" or SQLite's message.
std::string execute(sqlite3* db, const char* sql)
{
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) {
    return {};
  }
  std::string problem = message != nullptr ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  return problem;
}

// The integer of the one-row, one-column query `sql`, or SQLite's message.
Result<std::int64_t, std::string> query_number(sqlite3* db, const char* sql)
{
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
    return std::string(sqlite3_errmsg(db));
  }
  const int step = sqlite3_step(statement);
  Result<std::int64_t, std::string> result =
    step == SQLITE_ROW ? Result<std::int64_t, std::string>(sqlite3_column_int64(statement, 0))
                       : Result<std::int64_t, std::string>(std::string(sqlite3_errmsg(db)));
  sqlite3_finalize(statement);
  return result;
}

bool transient(int code)
{
  const int primary = code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

} // namespace

SqliteLedger::SqliteLedger(std::string path, const Log& log)
  : m_path(std::move(path)), m_log(log),
    m_session(std::to_string(::getpid()) + ":" + std::to_string(wall_now_ns()))
{
  ready();
}

SqliteLedger::~SqliteLedger()
{
  close();
}

void SqliteLedger::close()
{
  sqlite3_finalize(m_insert);
  sqlite3_finalize(m_lookup);
  m_insert = nullptr;
  m_lookup = nullptr;
  if (m_db != nullptr) {
    sqlite3_close_v2(m_db);
    m_db = nullptr;
  }
}

bool SqliteLedger::ready()
{
  if (m_db != nullptr) {
    return true;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now < m_next_open) {
    return false;
  }
  m_next_open = now + k_reopen_pause;
  if (auto problem = open(); !problem.empty()) {
    fail(problem, true);
    return false;
  }
  prune(wall_now_ns());
  return m_db != nullptr;
}

std::string SqliteLedger::open()
{
  const std::filesystem::path parent = std::filesystem::path(m_path).parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    std::filesystem::create_directories(parent, error);
    if (error) {
      return "cannot create its directory " + parent.string() + ": " + error.message();
    }
  }
  if (sqlite3_open_v2(m_path.c_str(), &m_db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr)
      != SQLITE_OK) {
    std::string problem = m_db != nullptr ? sqlite3_errmsg(m_db) : "out of memory";
    close();
    return problem;
  }
  sqlite3_busy_timeout(m_db, static_cast<int>(k_ledger_busy_timeout.count()));
  // Looked at before anything is written: a database of someone else's
  // stays as it is.
  const auto version = query_number(m_db, "PRAGMA user_version");
  const auto others = query_number(
    m_db, "SELECT count(*) FROM sqlite_master WHERE name NOT IN ('writes', 'writes_by_path')");
  if (!version || !others) {
    std::string problem = !version ? version.error() : others.error();
    close();
    return problem;
  }
  if ((*version != 0 && *version != k_ledger_version) || *others != 0) {
    close();
    return "it is not an fsguard ledger of this version (user_version "
           + std::to_string(*version) + "), and fsguard leaves it alone";
  }
  for (const char* sql : {
         "PRAGMA journal_mode=WAL",
         // In WAL mode, NORMAL loses at most the last writes at a power
         // failure, and never corrupts: enough for an advisory record.
         "PRAGMA synchronous=NORMAL",
         "CREATE TABLE IF NOT EXISTS writes (path TEXT NOT NULL, xxh3_128 TEXT NOT NULL, "
         "at_ns INTEGER NOT NULL, client TEXT NOT NULL, pid INTEGER NOT NULL, "
         "session TEXT NOT NULL)",
         "CREATE INDEX IF NOT EXISTS writes_by_path ON writes (path, xxh3_128, at_ns)",
         "PRAGMA user_version=1",
       }) {
    if (auto problem = execute(m_db, sql); !problem.empty()) {
      close();
      return problem;
    }
  }
  if (sqlite3_prepare_v2(m_db,
                         "INSERT INTO writes (path, xxh3_128, at_ns, client, pid, session) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         -1, &m_insert, nullptr)
        != SQLITE_OK
      || sqlite3_prepare_v2(m_db,
                            "SELECT client, pid, at_ns FROM writes WHERE path = ? AND "
                            "xxh3_128 = ? AND at_ns > ? AND session <> ? "
                            "ORDER BY at_ns DESC LIMIT 1",
                            -1, &m_lookup, nullptr)
           != SQLITE_OK) {
    std::string problem = sqlite3_errmsg(m_db);
    close();
    return problem;
  }
  return {};
}

void SqliteLedger::prune(std::int64_t now_ns)
{
  m_records_since_prune = 0;
  const std::int64_t oldest =
    now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(k_ledger_max_age).count();
  const std::string sql =
    "DELETE FROM writes WHERE at_ns < " + std::to_string(oldest)
    + " OR rowid <= (SELECT rowid FROM writes ORDER BY rowid DESC LIMIT 1 OFFSET "
    + std::to_string(k_ledger_rows_kept) + ")";
  if (auto problem = execute(m_db, sql.c_str()); !problem.empty()) {
    fail("pruning old rows: " + problem, !transient(sqlite3_extended_errcode(m_db)));
  }
}

void SqliteLedger::record(const std::string& path, const ContentHash& hash, std::int64_t at_ns,
                          std::string_view client)
{
  if (!ready()) {
    return;
  }
  const std::string hex = to_hex(hash);
  sqlite3_bind_text(m_insert, 1, path.data(), static_cast<int>(path.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(m_insert, 2, hex.data(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(m_insert, 3, at_ns);
  sqlite3_bind_text(m_insert, 4, client.data(), static_cast<int>(client.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(m_insert, 5, static_cast<sqlite3_int64>(::getpid()));
  sqlite3_bind_text(m_insert, 6, m_session.data(), static_cast<int>(m_session.size()),
                    SQLITE_TRANSIENT);
  const int step = sqlite3_step(m_insert);
  const int code = sqlite3_extended_errcode(m_db);
  sqlite3_reset(m_insert);
  sqlite3_clear_bindings(m_insert);
  if (step != SQLITE_DONE) {
    fail("recording a write: " + std::string(sqlite3_errstr(code)), !transient(code));
    return;
  }
  worked();
  if (++m_records_since_prune >= k_prune_every) {
    prune(at_ns);
  }
}

std::optional<OtherWrite> SqliteLedger::who_wrote(const std::string& path,
                                                  const ContentHash& hash, std::int64_t since_ns)
{
  if (!ready()) {
    return std::nullopt;
  }
  const std::string hex = to_hex(hash);
  sqlite3_bind_text(m_lookup, 1, path.data(), static_cast<int>(path.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(m_lookup, 2, hex.data(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(m_lookup, 3, since_ns);
  sqlite3_bind_text(m_lookup, 4, m_session.data(), static_cast<int>(m_session.size()),
                    SQLITE_TRANSIENT);
  std::optional<OtherWrite> found;
  const int step = sqlite3_step(m_lookup);
  if (step == SQLITE_ROW) {
    const auto* client = sqlite3_column_text(m_lookup, 0);
    found = OtherWrite{client != nullptr ? reinterpret_cast<const char*>(client) : "",
                       sqlite3_column_int64(m_lookup, 1), sqlite3_column_int64(m_lookup, 2)};
  }
  const int code = sqlite3_extended_errcode(m_db);
  sqlite3_reset(m_lookup);
  sqlite3_clear_bindings(m_lookup);
  if (step != SQLITE_ROW && step != SQLITE_DONE) {
    fail("looking up a write: " + std::string(sqlite3_errstr(code)), !transient(code));
    return std::nullopt;
  }
  worked();
  return found;
}

void SqliteLedger::fail(const std::string& problem, bool closing)
{
  if (closing) {
    close();
  }
  if (m_failing) {
    return;
  }
  m_failing = true;
  m_log.warn("the shared ledger " + m_path + " does not work (" + problem
             + "); writes are guarded as before, but a changed veto cannot name another "
               "session's write until it works again (reported once)");
}

void SqliteLedger::worked()
{
  if (!m_failing) {
    return;
  }
  m_failing = false;
  m_log.warn("the shared ledger " + m_path + " is working again");
}

} // namespace fsguard
