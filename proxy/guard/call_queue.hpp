// The order of guarded calls, as ninja's Plan orders its edges: which call
// may run now and which must wait behind an earlier one on the same file.
// It knows files and what a call does to them, nothing of JSON-RPC: a held
// call's payload (its line, id and arguments) is the template parameter,
// which the queue keeps in arrival order without looking into it (Guard's
// is its HeldCall; the unit tests hold plain names). Pure and without JSON.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tracker/string_key_hash.hpp"

namespace fsguard {

// What a call does to its files, as far as the order goes.
enum class FileUse {
  read,   // shares its file with other reads
  change, // a write or an edit: waits for anything on its file
  move,   // anything waits for a move of its file, or of a directory above or below it
};

// Whether a read waits for a change of its file in flight. With verify:
// upstream a read's text is its record: one that the server might take
// before a change in flight, and answer after it, would replace the record
// of that change with older text.
enum class ReadsWaitForChanges { no, yes };

// The files of one call, canonical (none where a path did not resolve).
using CallFiles = std::span<const std::optional<std::string>>;

// The files busy: how many calls (and holds) are in flight on each
// canonical path, and which of them change or move it.
class BusyFiles {
public:
  explicit BusyFiles(ReadsWaitForChanges reads_wait) : m_reads_wait(reads_wait) {}

  // Whether a call that does `use` to `files` must wait for a call in flight.
  bool must_wait(FileUse use, CallFiles files) const;
  // Whether it must wait for an earlier held call that does `other_use` to
  // `other_files`.
  static bool must_wait_behind(FileUse use, CallFiles files, FileUse other_use,
                               CallFiles other_files);

  // A call that does `use` to `files` went upstream (`delta` +1) or is
  // done with them (-1).
  void mark(FileUse use, CallFiles files, int delta);
  // Holds `file` as a read would (a partial check the calls on it wait
  // for), or frees it again.
  void hold(const std::string& file);
  void free(const std::string& file);
  // Holds taken by hold() and not freed.
  int holds() const { return m_holds; }
  // Whether no call and no hold is on `file`.
  bool idle(const std::string& file) const { return !m_busy.contains(file); }
  // Forgets every hold (the session is over).
  void clear_holds() { m_holds = 0; }

private:
  // The calls in flight on one file.
  struct Busy {
    int calls = 0;
    int moves = 0;
    int changes = 0; // writes, edits and moves
  };
  using BusyMap = std::unordered_map<std::string, Busy, StringKeyHash>;

  // `delta` calls of `use` in flight on `file`.
  void mark_file(const std::string& file, int delta, FileUse use);
  // The entry of `file` in m_busy, added (all counts 0) if it is idle.
  BusyMap::iterator busy_entry(const std::string& file);

  ReadsWaitForChanges m_reads_wait;
  BusyMap m_busy; // canonical path -> calls in flight
  // The entry of the last file that fell idle, kept to take in the next
  // busy one: one node and one path's room at most.
  BusyMap::node_type m_spare_busy;
  int m_moves_in_flight = 0;
  int m_holds = 0;
};

// The calls held, in arrival order, and the files busy. `Payload` is what
// the owner needs to run a held call again; the queue only moves it.
template <class Payload>
class CallQueue {
public:
  using Clock = std::chrono::steady_clock;

  // Why a held call waits.
  enum class Wait {
    behind_calls, // an earlier call on its files, in flight or held
    directories,  // the server's allowed directories, in doubt
    session,      // fsguard to know the session (the server, its directories)
  };

  // A held call: its payload, why it waits, the files it was last
  // described with (later calls on them wait behind it; none until it is
  // described) and when it arrived.
  struct Held {
    Payload payload;
    Wait wait = Wait::behind_calls;
    std::optional<std::pair<FileUse, std::vector<std::optional<std::string>>>> files{};
    Clock::time_point arrived{};
  };

  explicit CallQueue(ReadsWaitForChanges reads_wait) : m_busy(reads_wait) {}

  // Whether a call that does `use` to `files` must wait: behind a call in
  // flight on them, or behind a call held before it (during retry(), the
  // calls held again so far, which arrived before it).
  bool must_wait(FileUse use, CallFiles files) const
  {
    if (m_busy.must_wait(use, files)) {
      return true;
    }
    for (const Held& held : m_held) {
      if (held.files
          && BusyFiles::must_wait_behind(use, files, held.files->first, held.files->second)) {
        return true;
      }
    }
    return false;
  }

  // Holds `held` behind every call held before it.
  void hold(Held held) { m_held.push_back(std::move(held)); }

  // Tries the held calls again in arrival order: `attempt(held)` returns
  // true when it ran the call (it leaves the queue), false to hold it again
  // (with `held` updated). Calls it holds again come before the next one.
  template <class Attempt>
  void retry(Attempt&& attempt)
  {
    if (m_held.empty()) {
      return; // most answers: moving an empty deque still allocates its map
    }
    std::deque<Held> waiting = std::move(m_held);
    m_held.clear();
    for (Held& held : waiting) {
      if (!attempt(held)) {
        m_held.push_back(std::move(held));
      }
    }
  }

  // The held calls, in arrival order.
  std::deque<Held>& held() { return m_held; }
  const std::deque<Held>& held() const { return m_held; }
  // Whether any call is held, or any file held for a check.
  bool holds_calls() const { return !m_held.empty() || m_busy.holds() > 0; }
  // Whether any held call waits for `wait`.
  bool any_waits(Wait wait) const
  {
    for (const Held& held : m_held) {
      if (held.wait == wait) {
        return true;
      }
    }
    return false;
  }
  // Removes the held calls for which `drop(held)` is true.
  template <class Predicate>
  void drop_if(Predicate&& drop)
  {
    std::erase_if(m_held, drop);
  }
  // Forgets every held call and hold (the session is over).
  void clear()
  {
    m_held.clear();
    m_busy.clear_holds();
  }

  // The files busy with calls in flight.
  BusyFiles& busy() { return m_busy; }
  const BusyFiles& busy() const { return m_busy; }

private:
  BusyFiles m_busy;
  std::deque<Held> m_held;
};

} // namespace fsguard
