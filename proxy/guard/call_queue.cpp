#include "proxy/guard/call_queue.hpp"

#include "tracker/path.hpp"

namespace fsguard {

namespace {

// Whether a call of `use` on `mine` must wait for a call of `other_use` on
// `other`: a change waits for anything on its file, and anything waits for
// a move of the file or of a directory above or below it.
bool must_wait_for(const std::string& mine, FileUse use, const std::string& other,
                   FileUse other_use)
{
  const bool move = use == FileUse::move || other_use == FileUse::move;
  if (mine == other) {
    return use != FileUse::read || move;
  }
  return move && (is_within(mine, other) || is_within(other, mine));
}

} // namespace

bool BusyFiles::must_wait(FileUse use, CallFiles files) const
{
  for (const auto& file : files) {
    if (!file) {
      continue;
    }
    if (use != FileUse::move && m_moves_in_flight == 0) {
      const auto busy = m_busy.find(*file);
      if (busy != m_busy.end() && use == FileUse::change) {
        return true;
      }
      if (busy != m_busy.end() && m_reads_wait == ReadsWaitForChanges::yes
          && busy->second.changes > 0) {
        return true;
      }
    } else {
      for (const auto& [path, busy] : m_busy) {
        const FileUse other = busy.moves > 0 ? FileUse::move : FileUse::change;
        if (must_wait_for(*file, use, path, other)) {
          return true;
        }
      }
    }
  }
  return false;
}

bool BusyFiles::must_wait_behind(FileUse use, CallFiles files, FileUse other_use,
                                 CallFiles other_files)
{
  for (const auto& file : files) {
    if (!file) {
      continue;
    }
    for (const auto& other : other_files) {
      if (other && must_wait_for(*file, use, *other, other_use)) {
        return true;
      }
    }
  }
  return false;
}

void BusyFiles::mark(FileUse use, CallFiles files, int delta)
{
  for (const auto& file : files) {
    if (file) {
      mark_file(*file, delta, use);
    }
  }
  m_moves_in_flight += use == FileUse::move ? delta : 0;
}

void BusyFiles::hold(const std::string& file)
{
  mark_file(file, +1, FileUse::read);
  ++m_holds;
}

void BusyFiles::free(const std::string& file)
{
  mark_file(file, -1, FileUse::read);
  --m_holds;
}

void BusyFiles::mark_file(const std::string& file, int delta, FileUse use)
{
  // A call done with its file finds its entry (among the few busy files,
  // without hashing its path); an idle file has none to take it off.
  const auto entry = delta > 0 ? busy_entry(file) : m_busy.find(file);
  if (entry == m_busy.end()) {
    return;
  }
  Busy& busy = entry->second;
  busy.calls += delta;
  busy.moves += use == FileUse::move ? delta : 0;
  busy.changes += use != FileUse::read ? delta : 0;
  if (busy.calls <= 0) {
    if (m_spare_busy.empty()) {
      m_spare_busy = m_busy.extract(entry); // for the next file to become busy
    } else {
      m_busy.erase(entry);
    }
  }
}

BusyFiles::BusyMap::iterator BusyFiles::busy_entry(const std::string& file)
{
  if (m_spare_busy.empty()) {
    return m_busy.try_emplace(file).first; // one lookup for both, not two
  }
  // Most calls find their file idle: the node the last idle file left, and
  // its path's room, take it in without an allocation.
  m_spare_busy.key() = file;
  m_spare_busy.mapped() = Busy{};
  auto inserted = m_busy.insert(std::move(m_spare_busy));
  if (!inserted.inserted) {
    m_spare_busy = std::move(inserted.node); // busy already: the node stays spare
  }
  return inserted.position;
}

} // namespace fsguard
