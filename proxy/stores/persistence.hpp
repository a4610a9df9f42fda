// What outlives one session, both opt-in: the records of what the agent saw
// ("state_file"), saved for the next fsguard on the same upstream, and the
// shared ledger of writes ("shared_ledger") that names another session as
// the cause of a change. Neither ever decides a write on its own.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "proxy/process/session.hpp"

namespace fsguard {

// How often at most the records are saved while they change.
inline constexpr std::chrono::seconds k_state_save_pause{1};

// How long the save at exit waits for another fsguard's lock on the file.
inline constexpr std::chrono::milliseconds k_state_exit_wait{1000};

// Opens the state file and the shared ledger `session.config` names, for
// the upstream `command`, and restores to the guard the saved records the
// disk still bears out. Call it before the first message is relayed.
void open_persistence(Session& session, const std::vector<std::string>& command);

// Saves the records when they have changed, at most every
// k_state_save_pause, until the upstream is gone.
Task<void> keep_state(Session& session);

// Saves the records if they changed since the last save, waiting up to
// `wait` for another process's lock on the file.
void save_state(Session& session, std::chrono::milliseconds wait);

// Applies `session.config`'s state_file and shared_ledger after a reload:
// records go to the new state file from now on (what it holds is not
// read: records are restored only at start), and the new ledger is opened.
void reload_persistence(Session& session);

} // namespace fsguard
