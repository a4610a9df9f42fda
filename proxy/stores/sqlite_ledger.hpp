// The shared ledger in SQLite: one table of the writes each fsguard session
// let through, in WAL mode so that sessions read while another writes.
// SQLite because the ledger is written by several processes at once, and
// SQLite's locking is made and tested for that (see docs/design.md). The
// library is loaded only when a ledger is opened (see SqliteApi).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "proxy/app/log.hpp"
#include "proxy/guard/shared_ledger.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace fsguard {

struct SqliteApi; // SQLite's functions, loaded when a ledger is first opened

// How long a ledger statement waits for another process's lock before it
// gives up: the relay waits on it, so it must stay short.
inline constexpr std::chrono::milliseconds k_ledger_busy_timeout{50};

// Rows older than this, or beyond the newest k_ledger_rows_kept, are pruned.
inline constexpr std::chrono::hours k_ledger_max_age{24};
inline constexpr std::int64_t k_ledger_rows_kept = 10'000;

class SqliteLedger final : public SharedLedger {
public:
  // The ledger at `path`, created (with its directory) if missing, opened
  // at once. Problems go to `log` once per outage: the first failure, and
  // the first success after it.
  SqliteLedger(std::string path, const Log& log);
  ~SqliteLedger() override;
  SqliteLedger(const SqliteLedger&) = delete;
  SqliteLedger& operator=(const SqliteLedger&) = delete;

  const std::string& path() const { return m_path; }

  // Whether the last use of the ledger worked.
  bool working() const { return !m_failing; }

  void record(const std::string& path, const ContentHash& hash, std::int64_t at_ns,
              std::string_view client) override;
  std::optional<OtherWrite> who_wrote(const std::string& path, const ContentHash& hash,
                                      std::int64_t since_ns) override;

private:
  // Opens the ledger if it is not open, at most once every few seconds
  // while it fails. Returns whether it is open.
  bool ready();
  std::string open();
  // Loads libsqlite3 and its functions; "" or why not.
  std::string load_library();
  void close();
  void prune(std::int64_t now_ns);
  // Reports `problem` unless the outage was reported already; `closing`
  // closes the database, to open it afresh later.
  void fail(const std::string& problem, bool closing);
  void worked();

  std::string m_path;
  const Log& m_log;
  std::string m_session; // this process's rows: pid and start time
  void* m_library = nullptr; // dlopen() handle of libsqlite3
  std::unique_ptr<SqliteApi> m_api;
  sqlite3* m_db = nullptr;
  sqlite3_stmt* m_insert = nullptr;
  sqlite3_stmt* m_lookup = nullptr;
  bool m_failing = false;
  std::chrono::steady_clock::time_point m_next_open{};
  int m_records_since_prune = 0;
};

} // namespace fsguard
