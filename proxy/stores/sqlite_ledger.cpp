#include "proxy/stores/sqlite_ledger.hpp"

#include <dlfcn.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "tracker/result.hpp"

namespace fsguard {

// The SQLite functions the ledger calls, loaded with dlopen() when a ledger
// is first opened. Linked at build time, libsqlite3 cost every fsguard
// start 1.69 million instructions in the dynamic loader (measured with
// callgrind on `fsguard --version`: 12.39 million against 10.70 million),
// 26,000 per message in bench.callgrind_per_message, whether
// shared_ledger was set or not.
struct SqliteApi {
  decltype(&::sqlite3_bind_int64) bind_int64 = nullptr;
  decltype(&::sqlite3_bind_text) bind_text = nullptr;
  decltype(&::sqlite3_busy_timeout) busy_timeout = nullptr;
  decltype(&::sqlite3_clear_bindings) clear_bindings = nullptr;
  decltype(&::sqlite3_close_v2) close_v2 = nullptr;
  decltype(&::sqlite3_column_int64) column_int64 = nullptr;
  decltype(&::sqlite3_column_text) column_text = nullptr;
  decltype(&::sqlite3_errmsg) errmsg = nullptr;
  decltype(&::sqlite3_errstr) errstr = nullptr;
  decltype(&::sqlite3_exec) exec = nullptr;
  decltype(&::sqlite3_extended_errcode) extended_errcode = nullptr;
  decltype(&::sqlite3_finalize) finalize = nullptr;
  decltype(&::sqlite3_free) free = nullptr;
  decltype(&::sqlite3_open_v2) open_v2 = nullptr;
  decltype(&::sqlite3_prepare_v2) prepare_v2 = nullptr;
  decltype(&::sqlite3_reset) reset = nullptr;
  decltype(&::sqlite3_step) step = nullptr;
};

namespace {

// The library's soname, as every Linux distribution installs it.
constexpr const char* k_sqlite_library = "libsqlite3.so.0";

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

// Runs `sql` (statements without results) with `api`; "" or SQLite's message.
std::string execute(const SqliteApi& api, sqlite3* db, const char* sql)
{
  char* message = nullptr;
  if (api.exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) {
    return {};
  }
  std::string problem = message != nullptr ? message : api.errmsg(db);
  api.free(message);
  return problem;
}

// The integer of the one-row, one-column query `sql`, or SQLite's message.
Result<std::int64_t, std::string> query_number(const SqliteApi& api, sqlite3* db, const char* sql)
{
  sqlite3_stmt* statement = nullptr;
  if (api.prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
    return std::string(api.errmsg(db));
  }
  const int step = api.step(statement);
  Result<std::int64_t, std::string> result =
    step == SQLITE_ROW ? Result<std::int64_t, std::string>(api.column_int64(statement, 0))
                       : Result<std::int64_t, std::string>(std::string(api.errmsg(db)));
  api.finalize(statement);
  return result;
}

template <class Function>
bool load(void* library, Function& function, const char* name)
{
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// SQLite's functions from `library`; false if one is missing.
bool load_api(void* library, SqliteApi& api)
{
  return load(library, api.bind_int64, "sqlite3_bind_int64")
         && load(library, api.bind_text, "sqlite3_bind_text")
         && load(library, api.busy_timeout, "sqlite3_busy_timeout")
         && load(library, api.clear_bindings, "sqlite3_clear_bindings")
         && load(library, api.close_v2, "sqlite3_close_v2")
         && load(library, api.column_int64, "sqlite3_column_int64")
         && load(library, api.column_text, "sqlite3_column_text")
         && load(library, api.errmsg, "sqlite3_errmsg")
         && load(library, api.errstr, "sqlite3_errstr")
         && load(library, api.exec, "sqlite3_exec")
         && load(library, api.extended_errcode, "sqlite3_extended_errcode")
         && load(library, api.finalize, "sqlite3_finalize")
         && load(library, api.free, "sqlite3_free")
         && load(library, api.open_v2, "sqlite3_open_v2")
         && load(library, api.prepare_v2, "sqlite3_prepare_v2")
         && load(library, api.reset, "sqlite3_reset")
         && load(library, api.step, "sqlite3_step");
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
  if (m_library != nullptr) {
    ::dlclose(m_library);
  }
}

void SqliteLedger::close()
{
  if (!m_api) {
    return; // nothing was ever opened
  }
  m_api->finalize(m_insert);
  m_api->finalize(m_lookup);
  m_insert = nullptr;
  m_lookup = nullptr;
  if (m_db != nullptr) {
    m_api->close_v2(m_db);
    m_db = nullptr;
  }
}

std::string SqliteLedger::load_library()
{
  if (m_api) {
    return {};
  }
  if (m_library == nullptr) {
    m_library = ::dlopen(k_sqlite_library, RTLD_NOW | RTLD_LOCAL);
    if (m_library == nullptr) {
      const char* why = ::dlerror();
      return std::string("cannot load ") + k_sqlite_library + " ("
             + (why != nullptr ? why : "unknown error") + "); install SQLite 3";
    }
  }
  auto api = std::make_unique<SqliteApi>();
  if (!load_api(m_library, *api)) {
    return std::string(k_sqlite_library) + " lacks a function fsguard needs (SQLite older than "
                                           "3.7.15?)";
  }
  m_api = std::move(api);
  return {};
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
  if (auto problem = load_library(); !problem.empty()) {
    return problem;
  }
  const std::filesystem::path parent = std::filesystem::path(m_path).parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    std::filesystem::create_directories(parent, error);
    if (error) {
      return "cannot create its directory " + parent.string() + ": " + error.message();
    }
  }
  if (m_api->open_v2(m_path.c_str(), &m_db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr)
      != SQLITE_OK) {
    std::string problem = m_db != nullptr ? m_api->errmsg(m_db) : "out of memory";
    close();
    return problem;
  }
  m_api->busy_timeout(m_db, static_cast<int>(k_ledger_busy_timeout.count()));
  // Looked at before anything is written: a database of someone else's
  // stays as it is.
  const auto version = query_number(*m_api, m_db, "PRAGMA user_version");
  const auto others = query_number(
    *m_api, m_db, "SELECT count(*) FROM sqlite_master WHERE name NOT IN ('writes', 'writes_by_path')");
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
    if (auto problem = execute(*m_api, m_db, sql); !problem.empty()) {
      close();
      return problem;
    }
  }
  if (m_api->prepare_v2(m_db,
                         "INSERT INTO writes (path, xxh3_128, at_ns, client, pid, session) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         -1, &m_insert, nullptr)
        != SQLITE_OK
      || m_api->prepare_v2(m_db,
                            "SELECT client, pid, at_ns FROM writes WHERE path = ? AND "
                            "xxh3_128 = ? AND at_ns > ? AND session <> ? "
                            "ORDER BY at_ns DESC LIMIT 1",
                            -1, &m_lookup, nullptr)
           != SQLITE_OK) {
    std::string problem = m_api->errmsg(m_db);
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
  if (auto problem = execute(*m_api, m_db, sql.c_str()); !problem.empty()) {
    fail("pruning old rows: " + problem, !transient(m_api->extended_errcode(m_db)));
  }
}

void SqliteLedger::record(const std::string& path, const ContentHash& hash, std::int64_t at_ns,
                          std::string_view client)
{
  if (!ready()) {
    return;
  }
  const std::string hex = to_hex(hash);
  m_api->bind_text(m_insert, 1, path.data(), static_cast<int>(path.size()), SQLITE_TRANSIENT);
  m_api->bind_text(m_insert, 2, hex.data(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
  m_api->bind_int64(m_insert, 3, at_ns);
  m_api->bind_text(m_insert, 4, client.data(), static_cast<int>(client.size()), SQLITE_TRANSIENT);
  m_api->bind_int64(m_insert, 5, static_cast<sqlite3_int64>(::getpid()));
  m_api->bind_text(m_insert, 6, m_session.data(), static_cast<int>(m_session.size()),
                    SQLITE_TRANSIENT);
  const int step = m_api->step(m_insert);
  const int code = m_api->extended_errcode(m_db);
  m_api->reset(m_insert);
  m_api->clear_bindings(m_insert);
  if (step != SQLITE_DONE) {
    fail("recording a write: " + std::string(m_api->errstr(code)), !transient(code));
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
  m_api->bind_text(m_lookup, 1, path.data(), static_cast<int>(path.size()), SQLITE_TRANSIENT);
  m_api->bind_text(m_lookup, 2, hex.data(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
  m_api->bind_int64(m_lookup, 3, since_ns);
  m_api->bind_text(m_lookup, 4, m_session.data(), static_cast<int>(m_session.size()),
                    SQLITE_TRANSIENT);
  std::optional<OtherWrite> found;
  const int step = m_api->step(m_lookup);
  if (step == SQLITE_ROW) {
    const auto* client = m_api->column_text(m_lookup, 0);
    found = OtherWrite{client != nullptr ? reinterpret_cast<const char*>(client) : "",
                       m_api->column_int64(m_lookup, 1), m_api->column_int64(m_lookup, 2)};
  }
  const int code = m_api->extended_errcode(m_db);
  m_api->reset(m_lookup);
  m_api->clear_bindings(m_lookup);
  if (step != SQLITE_ROW && step != SQLITE_DONE) {
    fail("looking up a write: " + std::string(m_api->errstr(code)), !transient(code));
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
