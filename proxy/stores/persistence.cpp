#include "proxy/stores/persistence.hpp"

#include <filesystem>

namespace fsguard {

namespace {

std::string working_directory()
{
  std::error_code error;
  const auto cwd = std::filesystem::current_path(error);
  return error ? std::string() : cwd.string();
}

void open_shared_ledger(Session& session)
{
  session.guard.set_shared_ledger(nullptr);
  session.shared_ledger.reset();
  if (session.config.shared_ledger.empty()) {
    return;
  }
  session.shared_ledger = std::make_unique<SqliteLedger>(session.config.shared_ledger, session.log);
  session.guard.set_shared_ledger(session.shared_ledger.get());
  if (session.shared_ledger->working()) {
    session.log.info("recording writes in the shared ledger " + session.config.shared_ledger);
  }
}

} // namespace

void open_persistence(Session& session, const std::vector<std::string>& command)
{
  session.state_key = StateKey{command, working_directory()};
  open_shared_ledger(session);
  if (session.config.state_file.empty()) {
    return;
  }
  session.state.emplace(session.config.state_file, session.state_key);
  auto loaded = session.state->load();
  if (!loaded.warning.empty()) {
    session.log.warn(loaded.warning);
  }
  session.state_failing = loaded.not_saved; // said once: a failing save is not news
  const std::size_t restored = session.guard.restore(loaded.records);
  session.state_saved = session.guard.records_generation();
  if (session.log.enabled(LogLevel::info)) {
    session.log.info("restored " + std::to_string(restored) + " of "
                     + std::to_string(loaded.records.size())
                     + " saved records from the state file " + session.config.state_file
                     + " (the others' files changed or are gone)");
  }
}

void save_state(Session& session, std::chrono::milliseconds wait)
{
  if (!session.state) {
    return;
  }
  session.guard.settle_reads(); // a change just answered is recorded first
  const std::uint64_t generation = session.guard.records_generation();
  if (session.state_saved == generation) {
    return;
  }
  const auto saved =
    session.state->save(session.guard.saved_records(k_state_records_kept), wait);
  switch (saved.outcome) {
  case StateFile::Outcome::saved:
    session.state_saved = generation;
    if (session.state_failing) {
      session.state_failing = false;
      session.log.warn("the state file " + session.state->path() + " is saved again");
    }
    return;
  case StateFile::Outcome::busy:
    if (wait.count() > 0) {
      session.log.warn("did not save the state file " + session.state->path()
                       + ": another fsguard held its lock for "
                       + std::to_string(wait.count()) + " ms");
    }
    return; // the next round tries again
  case StateFile::Outcome::refused:
  case StateFile::Outcome::failed:
    // Tried again once the records change again, not every second.
    session.state_saved = generation;
    if (!session.state_failing) {
      session.state_failing = true;
      session.log.warn("cannot save the records: " + saved.problem
                       + "; the next session will not know what this one read (reported once)");
    }
    return;
  }
}

Task<void> keep_state(Session& session)
{
  while (!session.upstream.status()) {
    session.state_timer.expires_after(k_state_save_pause);
    co_await session.state_timer.async_wait(k_use);
    save_state(session, std::chrono::milliseconds(0));
  }
}

void reload_persistence(Session& session)
{
  const std::string current = session.state ? session.state->path() : std::string();
  if (session.config.state_file != current) {
    session.state.reset();
    session.state_saved.reset();
    session.state_failing = false;
    if (!session.config.state_file.empty()) {
      session.state.emplace(session.config.state_file, session.state_key);
    }
  }
  const std::string ledger = session.shared_ledger ? session.shared_ledger->path() : std::string();
  if (session.config.shared_ledger != ledger) {
    open_shared_ledger(session);
  }
}

} // namespace fsguard
