#include "tracker/tracker.hpp"

namespace fsguard {

namespace {

SeenRecord record_of(const Fingerprint& fingerprint, ReadExtent extent)
{
  SeenRecord record;
  record.trusted_stat = fingerprint.stat;
  record.hash = fingerprint.hash;
  record.taken_at_ns = fingerprint.taken_at_ns;
  record.size = fingerprint.stat.size;
  record.extent = extent;
  record.traits = fingerprint.traits;
  return record;
}

// What a read through `view` showed of content with `traits`: readline's
// lines disagree with a count of "\n" when a bare "\r" is in the file, so
// a status that says "all N lines" cannot be trusted then.
ReadExtent extent_shown(ReadExtent extent, ReadView view, const ContentTraits& traits)
{
  return view == ReadView::utf8_lines && traits.bare_cr ? ReadExtent::partial : extent;
}

// Text written over bytes that are not valid UTF-8 destroys them: a whole
// write unless the agent saw the exact bytes, and an edit always (the
// server reads the whole file as UTF-8 and writes it back).
std::optional<Veto> lossy_veto(const SeenRecord& record, WriteKind kind, const std::string& path)
{
  if (record.hash_state != HashState::known || record.traits.valid_utf8
      || (kind == WriteKind::overwrite && record.view == ReadView::bytes)) {
    return std::nullopt;
  }
  Veto veto;
  veto.code = VetoCode::lossy_read;
  veto.path = path;
  return veto;
}

// True when the stat fields alone prove the file still holds `record`'s
// content: identical, and not racily clean.
bool stat_proves_unchanged(const SeenRecord& record, const FileStat& current)
{
  if (!record.trusted_stat || *record.trusted_stat != current) {
    return false;
  }
  return !racy(Fingerprint{*record.trusted_stat, record.hash, record.taken_at_ns});
}

} // namespace

ReadStart Tracker::begin_read(const std::string& path)
{
  ReadStart start;
  const std::int64_t now = m_disk.now_ns();
  auto stat = m_disk.stat(path);
  if (!stat || !stat->is_regular()) {
    return start;
  }
  start.stat = *stat;
  if (racy(Fingerprint{*stat, {}, now})) {
    if (auto fingerprint = m_disk.fingerprint(path)) {
      start.stat = fingerprint->stat;
      start.hash = fingerprint->hash;
    } else {
      start.stat.reset();
    }
  }
  return start;
}

void Tracker::finish_read(const std::string& path, const ReadStart& start,
                          ReadExtent extent, ReadView view)
{
  const std::int64_t now = m_disk.now_ns();
  if (const auto stat = m_disk.stat(path); stat && stat->is_regular() && start.stat
      && *start.stat == *stat && !start.hash && !racy(Fingerprint{*stat, {}, now})) {
    // It held still, and its stat can vouch for it: hash it later.
    settle(path); // a hash an earlier read still owes, for the check below
    SeenRecord record;
    record.trusted_stat = *stat;
    record.taken_at_ns = now;
    record.size = stat->size;
    record.extent = extent;
    record.view = view;
    record.hash_state = HashState::owed;
    // Lines may still turn out partial when the file is hashed.
    record.whole_hash_before = whole_read_to_repeat(
      path, view == ReadView::utf8_lines ? ReadExtent::partial : extent);
    m_records[path] = record;
    m_owed.push_back(path);
    return;
  }
  settle(path);
  auto after = m_disk.fingerprint(path);
  if (!after || !after->stat.is_regular()) {
    // The file is gone or unreadable now: whatever the agent saw, fsguard
    // cannot vouch for it.
    m_records.erase(path);
    return;
  }
  extent = extent_shown(extent, view, after->traits);
  SeenRecord record = record_of(*after, extent);
  record.view = view;
  record.changed_during_read = !start.stat || *start.stat != after->stat
                               || (start.hash && *start.hash != after->hash);
  if (whole_read_to_repeat(path, extent) == after->hash) {
    record.extent = ReadExtent::whole; // a head/tail read of content seen whole
  }
  m_records[path] = record;
}

std::optional<ContentHash> Tracker::whole_read_to_repeat(const std::string& path,
                                                         ReadExtent extent) const
{
  const auto previous = m_records.find(path);
  if (extent != ReadExtent::partial || previous == m_records.end()
      || previous->second.extent != ReadExtent::whole || previous->second.changed_during_read
      || previous->second.hash_state != HashState::known) {
    return std::nullopt;
  }
  return previous->second.hash;
}

void Tracker::settle_reads()
{
  for (const auto& path : m_owed) {
    settle(path);
  }
  m_owed.clear();
}

void Tracker::settle(const std::string& path)
{
  const auto found = m_records.find(path);
  if (found == m_records.end() || found->second.hash_state != HashState::owed) {
    return;
  }
  SeenRecord& record = found->second;
  const auto now = m_disk.fingerprint(path);
  if (!now) {
    // Gone or unreadable now: as for a read fingerprinted at once, fsguard
    // cannot vouch for what the agent saw.
    m_records.erase(found);
    return;
  }
  if (!record.trusted_stat || now->stat != *record.trusted_stat) {
    // It changed after the agent's read: what the agent saw is gone, and no
    // stat may vouch for it any more.
    record.hash_state = HashState::lost;
    record.trusted_stat.reset();
    return;
  }
  record.hash = now->hash;
  record.hash_state = HashState::known;
  record.traits = now->traits;
  record.extent = extent_shown(record.extent, record.view, record.traits);
  if (record.whole_hash_before == record.hash) {
    record.extent = ReadExtent::whole; // a head/tail read of content seen whole
  }
  record.whole_hash_before.reset();
}

std::optional<Veto> Tracker::check_write(const std::string& path, WriteKind kind,
                                         PartialReadAllowsOverwrite partial_policy)
{
  settle(path); // a hash a read still owes, before the file is looked at
  Veto veto;
  veto.path = path;
  auto current = m_disk.stat(path);
  if (!current) {
    if (current.error().missing()) {
      m_records.erase(path); // a new file, or one deleted since it was read
      return std::nullopt;
    }
    veto.code = VetoCode::cannot_inspect;
    veto.reason = current.error().describe();
    return veto;
  }
  if (current->is_directory()) {
    return std::nullopt; // nothing to overwrite; the server reports the error
  }
  if (!current->is_regular()) {
    veto.code = VetoCode::cannot_inspect;
    veto.reason = "it is not a regular file";
    return veto;
  }

  const auto found = m_records.find(path);
  if (found == m_records.end()) {
    veto.code = VetoCode::not_read;
    return veto;
  }
  SeenRecord& record = found->second;
  if (record.changed_during_read) {
    veto.code = VetoCode::changed_during_read;
    return veto;
  }
  if (kind == WriteKind::overwrite && record.extent == ReadExtent::partial
      && partial_policy == PartialReadAllowsOverwrite::no) {
    veto.code = VetoCode::partial_read;
    return veto;
  }
  if (stat_proves_unchanged(record, *current)) {
    return lossy_veto(record, kind, path);
  }

  auto now = m_disk.fingerprint(path);
  if (!now) {
    veto.code = VetoCode::cannot_inspect;
    veto.reason = now.error().describe();
    return veto;
  }
  if (record.hash_state == HashState::known && now->hash == record.hash) {
    // Same bytes, new metadata (touch, chmod, an identical rewrite).
    const auto extent = record.extent;
    const auto view = record.view;
    record = record_of(*now, extent);
    record.view = view;
    return lossy_veto(record, kind, path);
  }
  veto.code = VetoCode::changed;
  veto.seen_size = record.size;
  veto.current_size = now->stat.size;
  veto.seen_at_ns = record.taken_at_ns;
  veto.current_mtime_ns = now->stat.mtime_ns;
  return veto;
}

void Tracker::finish_write(const std::string& path,
                           const std::optional<ContentHash>& expected)
{
  auto after = m_disk.fingerprint(path);
  if (!after || !after->stat.is_regular()) {
    m_records.erase(path);
    return;
  }
  SeenRecord record = record_of(*after, ReadExtent::whole);
  if (expected && *expected != after->hash) {
    // Someone else wrote too. Hold the agent to what it wrote, and never let
    // the stat fast path vouch for this record.
    record.hash = *expected;
    record.trusted_stat.reset();
  }
  m_records[path] = record;
}

void Tracker::finish_move(const std::string& from, const std::string& to)
{
  // A hash still owed cannot be taken any more (the file has moved): the
  // record is dropped, and the new name must be read again.
  settle(from);
  auto found = m_records.find(from);
  if (found == m_records.end()) {
    return;
  }
  SeenRecord record = found->second;
  m_records.erase(found);
  // A rename changes the ctime; keep the content, let the next check re-hash.
  record.trusted_stat.reset();
  m_records[to] = record;
}

void Tracker::forget(const std::string& path)
{
  m_records.erase(path);
}

const SeenRecord* Tracker::find(const std::string& path) const
{
  const auto found = m_records.find(path);
  return found == m_records.end() ? nullptr : &found->second;
}

} // namespace fsguard
