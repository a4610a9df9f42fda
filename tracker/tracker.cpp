#include "tracker/tracker.hpp"

#include <algorithm>
#include <cerrno>

namespace fsguard {

namespace {

SeenRecord record_of(const Fingerprint& fingerprint, ReadExtent extent)
{
  SeenRecord record;
  record.trusted_stat = fingerprint.stat;
  record.hash = fingerprint.hash;
  record.taken_at_ns = fingerprint.taken_at_ns;
  record.seen_at_ns = fingerprint.taken_at_ns;
  record.whole_seen_at_ns = fingerprint.taken_at_ns;
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
std::optional<Veto> lossy_veto(const SeenRecord& record, WriteKind kind)
{
  if (record.hash_state != HashState::known || record.traits.valid_utf8
      || (kind == WriteKind::overwrite && record.view == ReadView::bytes)) {
    return std::nullopt;
  }
  Veto veto;
  veto.code = VetoCode::lossy_read; // its path set by check_write()
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

const SeenRecord* Tracker::finish_read(const std::string& path, const ReadStart& start,
                                       ReadExtent extent, ReadView view,
                                       std::string partial_reason, std::uint64_t shown_at)
{
  ++m_generation;
  if (extent == ReadExtent::whole) {
    partial_reason.clear();
  }
  const std::int64_t now = m_disk.now_ns();
  // This stat tells a change during the read (the agent may have seen it
  // torn: changed_during_read) from one after the answer (what it saw is
  // known from the answer's text: Guard::settle_reads). settle() runs
  // microseconds after the answer, within the same tick of the clock that
  // stamps file times, so no ctime could tell the two apart there.
  if (const auto stat = m_disk.stat(path); stat && stat->is_regular() && start.stat
      && *start.stat == *stat && !start.hash && !racy(Fingerprint{*stat, {}, now})) {
    // It held still, and its stat can vouch for it: hash it later.
    SeenRecord record;
    record.trusted_stat = *stat;
    record.taken_at_ns = now;
    record.seen_at_ns = now;
    record.whole_seen_at_ns = now;
    record.size = stat->size;
    record.hash_state = HashState::owed;
    record.partial_reason = std::move(partial_reason);
    record.known_since = shown_at;
    record.extent = extent; // lines may still turn out partial when the file is hashed
    record.view = view;
    record.whole_since = extent == ReadExtent::whole ? shown_at : k_never;
    // One lookup finds the record this one replaces, with a hash an earlier
    // read still owes paid for the check below, and takes its place.
    auto replaced = m_records.try_emplace(path);
    if (!replaced.second && !settle(replaced.first)) {
      replaced = m_records.try_emplace(path); // the file was gone: nothing replaced
    }
    const auto [entry, added] = replaced;
    record.earlier = added ? std::nullopt : earlier_view(entry->second);
    if (!added && record.earlier && stat_proves_unchanged(entry->second, *stat)) {
      // A file read again that still has the stat its known content had:
      // the same content, so no hash is owed (a re-read costs no decode).
      const ContentDigest same{entry->second.hash, entry->second.traits};
      entry->second = std::move(record);
      settle_with(entry->second, same);
      return &entry->second;
    }
    entry->second = std::move(record);
    owe_hash(path);
    return &entry->second;
  }
  settle(path);
  auto after = m_disk.fingerprint(path);
  if (!after || !after->stat.is_regular()) {
    // The file is gone or unreadable now: whatever the agent saw, fsguard
    // cannot vouch for it.
    m_records.erase(path);
    return nullptr;
  }
  extent = extent_shown(extent, view, after->traits);
  extent = extent_shown(extent, view, after->traits);
  SeenRecord record = record_of(*after, extent);
  record.view = view;
  record.partial_reason = partial_reason;
  record.known_since = shown_at;
  record.whole_since = extent == ReadExtent::whole ? shown_at : k_never;
  record.changed_during_read = !start.stat || *start.stat != after->stat
                               || (start.hash && *start.hash != after->hash);
  if (const auto earlier = earlier_view(path); earlier && !record.changed_during_read) {
    merge_earlier(record, *earlier);
  }
  return &(m_records[path] = record);
}

void Tracker::record_known(const std::string& path, const ContentDigest& digest,
                           std::int64_t size, ReadExtent extent, ReadView view,
                           std::string partial_reason, std::uint64_t shown_at,
                           KnownFrom from)
{
  ++m_generation;
  settle(path);
  SeenRecord record;
  record.hash = digest.hash;
  record.traits = digest.traits;
  record.size = size;
  record.taken_at_ns = m_disk.now_ns();
  record.seen_at_ns = record.taken_at_ns;
  record.whole_seen_at_ns = record.taken_at_ns;
  record.view = view;
  record.extent = extent_shown(extent, view, digest.traits);
  if (record.extent == ReadExtent::partial) {
    record.partial_reason = std::move(partial_reason);
  }
  record.known_since = shown_at;
  record.whole_since = record.extent == ReadExtent::whole ? shown_at : k_never;
  if (const auto earlier = earlier_view(path)) {
    merge_earlier(record, *earlier);
  }
  SeenRecord& entry = m_records[path];
  if (from == KnownFrom::own_change && entry.shown_over && !record.shown_over) {
    record.shown_over = entry.shown_over; // as finish_write() keeps it
  }
  entry = std::move(record);
}

std::optional<EarlierView> Tracker::earlier_view(const std::string& path) const
{
  const auto previous = m_records.find(path);
  return previous == m_records.end() ? std::nullopt : earlier_view(previous->second);
}

std::optional<EarlierView> Tracker::earlier_view(const SeenRecord& previous)
{
  if (previous.changed_during_read || previous.unknown_outcome
      || previous.hash_state != HashState::known) {
    return std::nullopt;
  }
  return EarlierView{previous.hash, previous.known_since, previous.whole_since,
                     previous.whole_seen_at_ns, previous.shown_over};
}

void Tracker::merge_earlier(SeenRecord& record, const EarlierView& earlier)
{
  if (earlier.hash != record.hash) {
    return; // other content: what was known of the old one says nothing
  }
  if (earlier.shown_over && earlier.known_since < record.known_since) {
    // Calls sent before this read may rest on what fsguard showed.
    record.shown_over = ShownOver{earlier.shown_over->hash, earlier.shown_over->shown,
                                  std::min(earlier.shown_over->until, record.known_since)};
  }
  if (record.whole_since == k_never && earlier.whole_since != k_never) {
    // A head/tail read of content seen whole shows the agent no more of
    // it: the clock of the whole view goes on.
    record.whole_seen_at_ns = earlier.whole_seen_at_ns;
  }
  record.known_since = std::min(record.known_since, earlier.known_since);
  record.whole_since = std::min(record.whole_since, earlier.whole_since);
  if (record.whole_since != k_never) {
    record.extent = ReadExtent::whole; // a head/tail read of content seen whole
    record.partial_reason.clear();
  }
}

void Tracker::owe_hash(const std::string& path)
{
  if (m_owed_count < m_owed.size()) {
    m_owed[m_owed_count].assign(path); // in the room an earlier path left
  } else {
    m_owed.push_back(path);
  }
  ++m_owed_count;
}

void Tracker::drop_owed(const std::string& path)
{
  const auto owed_end = m_owed.begin() + static_cast<std::ptrdiff_t>(m_owed_count);
  const auto owed = std::find(m_owed.begin(), owed_end, path);
  if (owed != owed_end) {
    // The rest keep their order; its room goes after them.
    std::rotate(owed, owed + 1, owed_end);
    --m_owed_count;
  }
}

void Tracker::settle_reads()
{
  for (std::size_t index = 0; index < m_owed_count; ++index) {
    settle(m_owed[index]);
  }
  m_owed_count = 0;
  if (m_owed.size() > k_owed_rooms_kept) {
    m_owed.resize(k_owed_rooms_kept); // after a burst of reads
  }
}

void Tracker::settle(const std::string& path)
{
  if (const auto found = m_records.find(path); found != m_records.end()) {
    settle(found);
  }
}

bool Tracker::settle(Records::iterator found)
{
  if (found->second.hash_state != HashState::owed) {
    return true;
  }
  ++m_generation;
  const std::string& path = found->first;
  SeenRecord& record = found->second;
  // An owed record always has its trusted stat (finish_move settles first).
  const auto now = record.trusted_stat ? m_disk.hash_if_unchanged(path, *record.trusted_stat)
                                       : Result<Rehash, DiskError>(DiskError{ESTALE});
  if (!now) {
    // Gone or unreadable now: as for a read fingerprinted at once, fsguard
    // cannot vouch for what the agent saw.
    m_records.erase(found);
    return false;
  }
  if (!now->digest) {
    // It changed after the agent's read: what the agent saw is gone, and no
    // stat may vouch for it any more.
    record.hash_state = HashState::lost;
    record.trusted_stat.reset();
    record.earlier.reset();
    return true;
  }
  settle_with(record, *now->digest);
  return true;
}

bool Tracker::settle_from_text(const std::string& path, std::uint64_t shown_at,
                               const ContentDigest& digest, std::int64_t size)
{
  const auto found = m_records.find(path);
  if (found == m_records.end()) {
    return false;
  }
  SeenRecord& record = found->second;
  if (record.hash_state != HashState::owed || record.known_since != shown_at
      || record.extent != ReadExtent::whole || record.view != ReadView::utf8_text
      || !record.trusted_stat || record.trusted_stat->size != size) {
    return false;
  }
  ++m_generation;
  settle_with(record, digest);
  drop_owed(path); // paid: settle_reads() need not look it up again
  return true;
}

void Tracker::settle_with(SeenRecord& record, const ContentDigest& digest)
{
  record.hash = digest.hash;
  record.hash_state = HashState::known;
  record.traits = digest.traits;
  record.extent = extent_shown(record.extent, record.view, record.traits);
  if (record.extent == ReadExtent::partial) {
    record.whole_since = k_never;
  }
  if (record.earlier) {
    merge_earlier(record, *record.earlier);
  }
  record.earlier.reset();
}

std::optional<Veto> Tracker::check_write(const std::string& path, WriteKind kind,
                                         PartialReadAllowsOverwrite partial_policy,
                                         std::uint64_t sent_at)
{
  auto veto = veto_for_write(path, kind, partial_policy, sent_at);
  if (veto) {
    veto->path = path;
  }
  return veto;
}

std::optional<Veto> Tracker::veto_for_write(const std::string& path, WriteKind kind,
                                            PartialReadAllowsOverwrite partial_policy,
                                            std::uint64_t sent_at)
{
  ++m_generation;
  // The record, looked up once; a hash its read still owes is settled
  // before the file is looked at (which drops a record it cannot vouch for).
  auto found = m_records.find(path);
  if (found != m_records.end() && !settle(found)) {
    found = m_records.end();
  }
  Veto veto; // its path set by check_write()
  auto current = m_disk.stat(path);
  if (!current) {
    if (current.error().missing()) {
      if (found != m_records.end()) {
        m_records.erase(found); // a new file, or one deleted since it was read
      }
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

  if (current->size > m_disk.max_hash_bytes()) {
    veto.code = VetoCode::cannot_inspect;
    veto.reason = DiskError{EFBIG}.describe();
    return veto;
  }
  if (found == m_records.end()) {
    veto.code = VetoCode::not_read;
    return veto;
  }
  SeenRecord& record = found->second;
  if (record.unknown_outcome) {
    veto.code = VetoCode::unknown_outcome;
    veto.reason = record.unknown_reason;
    return veto;
  }
  if (record.changed_during_read) {
    veto.code = VetoCode::changed_during_read;
    return veto;
  }
  if (m_read_ttl.count() > 0) {
    const std::int64_t age_ns = m_disk.now_ns() - record.seen_for(kind);
    const std::int64_t ttl_ns = std::chrono::nanoseconds(m_read_ttl).count();
    if (age_ns > ttl_ns) {
      veto.code = VetoCode::expired;
      veto.age_s = age_ns / 1'000'000'000;
      veto.ttl_s = m_read_ttl.count();
      return veto;
    }
  }
  if (record.known_since > sent_at) {
    veto.code = VetoCode::not_read;
    veto.reason = "was read only after this call was sent, so the call was not made with "
                  "its content in view";
    return veto;
  }
  if (kind == WriteKind::overwrite && record.extent == ReadExtent::whole
      && record.whole_since > sent_at && partial_policy == PartialReadAllowsOverwrite::no) {
    veto.code = VetoCode::partial_read;
    veto.reason = "it was read whole only after this call was sent";
    return veto;
  }
  if (kind == WriteKind::overwrite && record.extent == ReadExtent::partial
      && partial_policy == PartialReadAllowsOverwrite::no) {
    veto.code = VetoCode::partial_read;
    veto.reason = record.partial_reason;
    return veto;
  }
  if (stat_proves_unchanged(record, *current)) {
    return lossy_veto(record, kind);
  }
  if (record.trusted_stat && record.hash_state == HashState::known
      && record.size != current->size) {
    // Another size is other content: no need to hash it to know.
    veto.code = VetoCode::changed;
    veto.seen_size = record.size;
    veto.current_size = current->size;
    veto.seen_at_ns = record.seen_at_ns;
    veto.current_mtime_ns = current->mtime_ns;
    return veto;
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
    const auto known_since = record.known_since;
    const auto whole_since = record.whole_since;
    const auto view = record.view;
    const auto shown_over = record.shown_over;
    const auto seen_at = record.seen_at_ns;
    const auto whole_seen_at = record.whole_seen_at_ns;
    auto reason = std::move(record.partial_reason);
    record = record_of(*now, extent);
    record.partial_reason = std::move(reason);
    record.known_since = known_since;
    record.whole_since = whole_since;
    record.view = view;
    record.shown_over = shown_over;
    record.seen_at_ns = seen_at;
    record.whole_seen_at_ns = whole_seen_at;
    return lossy_veto(record, kind);
  }
  veto.code = VetoCode::changed;
  veto.seen_size = record.size;
  veto.current_size = now->stat.size;
  veto.seen_at_ns = record.seen_at_ns;
  veto.current_mtime_ns = now->stat.mtime_ns;
  return veto;
}

const SeenRecord* Tracker::finish_write(const std::string& path,
                                        const std::optional<ContentHash>& expected,
                                        ReadExtent extent, std::uint64_t sent_at,
                                        std::optional<ExpectedBytes> expected_bytes)
{
  ++m_generation;
  // Taken from the bytes written where the stat could not vouch for them
  // anyway; else read back and hashed.
  std::optional<Fingerprint> after =
    expected && expected_bytes ? expected_fingerprint(path, *expected, *expected_bytes)
                               : std::nullopt;
  const bool read_back = !after;
  if (read_back) {
    auto fingerprint = m_disk.fingerprint(path);
    if (!fingerprint || !fingerprint->stat.is_regular()) {
      m_records.erase(path);
      return nullptr;
    }
    after = *fingerprint;
  }
  // Looked up once: the record this one replaces, if any, takes it.
  const auto previous = m_records.find(path);
  std::string reason;
  if (extent == ReadExtent::partial && previous != m_records.end()) {
    reason = previous->second.partial_reason;
  }
  SeenRecord record = record_of(*after, extent);
  record.partial_reason = std::move(reason);
  record.known_since = sent_at;
  record.whole_since = extent == ReadExtent::whole ? sent_at : k_never;
  if (previous != m_records.end() && previous->second.shown_over) {
    // The agent's own change does not show it the change fsguard showed:
    // a call sent before it read the file may still rest on the version
    // before that change.
    record.shown_over = previous->second.shown_over;
  }
  if (expected && (*expected != after->hash || !read_back)) {
    // Someone else wrote too, or may have (a stat not checked against the
    // content vouches for nothing). Hold the agent to what it wrote, and
    // never let the stat fast path vouch for this record.
    record.hash = *expected;
    record.trusted_stat.reset();
    // The size and traits are the agent's content's too, as the hash is, not
    // those of what another writer left (a veto would say "size unchanged"
    // of different sizes).
    if (expected_bytes) {
      record.size = static_cast<std::int64_t>(expected_bytes->bytes.size());
      if (read_back) {
        record.traits = expected_bytes->traits ? *expected_bytes->traits
                                               : content_traits(expected_bytes->bytes);
      }
    } else {
      record.size = k_unknown_size;
    }
  }
  if (previous != m_records.end()) {
    previous->second = std::move(record);
    return &previous->second;
  }
  return &m_records.emplace(path, std::move(record)).first->second;
}

std::optional<Fingerprint> Tracker::expected_fingerprint(const std::string& path,
                                                         const ContentHash& expected,
                                                         const ExpectedBytes& expected_bytes)
{
  const std::int64_t now = m_disk.now_ns();
  const auto stat = m_disk.stat(path);
  if (!stat || !stat->is_regular() || stat->size > m_disk.max_hash_bytes()
      || !racy(Fingerprint{*stat, {}, now})) {
    return std::nullopt; // gone or odd (the fingerprint says so), or a stat that can vouch
  }
  const ContentTraits traits =
    expected_bytes.traits ? *expected_bytes.traits : content_traits(expected_bytes.bytes);
  return Fingerprint{*stat, expected, now, traits};
}

void Tracker::record_shown(const std::string& path, const Fingerprint& fingerprint,
                           std::uint64_t shown_at, const ContentHash& over)
{
  ++m_generation;
  SeenRecord record = record_of(fingerprint, ReadExtent::whole);
  record.view = ReadView::utf8_text;
  record.known_since = shown_at;
  record.whole_since = shown_at;
  record.shown_over = ShownOver{over, fingerprint.hash};
  SeenRecord& entry = m_records[path];
  if (entry.hash_state == HashState::known && entry.hash == over) {
    // The diff shows the changed lines only: the agent saw the rest when it
    // saw `over`, and read_ttl_s counts from then. A change shown before
    // this one, not read since, is kept over the version it was read.
    record.seen_at_ns = entry.seen_at_ns;
    record.whole_seen_at_ns = entry.whole_seen_at_ns;
    if (entry.shown_over && entry.shown_over->until == k_never) {
      record.shown_over->hash = entry.shown_over->hash;
    }
  }
  entry = std::move(record);
}

void Tracker::recover_seen(const std::string& path, const ContentHash& hash,
                           const ContentTraits& traits)
{
  ++m_generation;
  const auto found = m_records.find(path);
  if (found == m_records.end()) {
    return;
  }
  SeenRecord& record = found->second;
  if (record.hash_state != HashState::lost || record.unknown_outcome
      || record.changed_during_read || record.extent != ReadExtent::whole) {
    return;
  }
  record.hash = hash;
  record.hash_state = HashState::known;
  record.traits = traits;
  record.trusted_stat.reset();
}

void Tracker::make_known(const std::string& path, const ContentHash& hash, std::uint64_t now,
                         const ContentHash& over)
{
  ++m_generation;
  const auto found = m_records.find(path);
  if (found == m_records.end() || found->second.hash != hash
      || found->second.known_since != k_not_yet) {
    return;
  }
  SeenRecord& record = found->second;
  record.known_since = now;
  record.whole_since = record.extent == ReadExtent::whole ? now : k_never;
  // A change shown earlier and not read since (kept by finish_write())
  // keeps the version the agent read as the base.
  const bool earlier_shown = record.shown_over && record.shown_over->until == k_never;
  record.shown_over = ShownOver{earlier_shown ? record.shown_over->hash : over, hash};
}

ReadExtent Tracker::extent_of(const std::string& path, std::uint64_t sent_at) const
{
  const auto found = m_records.find(path);
  return found == m_records.end() || found->second.whole_since > sent_at ? ReadExtent::partial
                                                                          : ReadExtent::whole;
}

void Tracker::finish_move(const std::string& from, const std::string& to)
{
  ++m_generation;
  settle_reads(); // hashes are taken at the old names, before anything moves
  const auto below = [](const std::string& path, const std::string& directory) {
    return path.size() > directory.size() && path.starts_with(directory)
           && (directory == "/" || path[directory.size()] == '/');
  };
  // Whatever `to` held before is gone.
  for (auto entry = m_records.begin(); entry != m_records.end();) {
    entry = entry->first == to || below(entry->first, to) ? m_records.erase(entry)
                                                          : std::next(entry);
  }
  std::vector<std::pair<std::string, SeenRecord>> moved;
  for (auto entry = m_records.begin(); entry != m_records.end();) {
    if (entry->first == from || below(entry->first, from)) {
      moved.emplace_back(to + entry->first.substr(from.size()), std::move(entry->second));
      entry = m_records.erase(entry);
    } else {
      ++entry;
    }
  }
  for (auto& [path, record] : moved) {
    // A rename changes the ctime; keep the content, let the next check re-hash.
    record.trusted_stat.reset();
    m_records[path] = std::move(record);
  }
}

void Tracker::mark_unknown(const std::string& path, std::string reason)
{
  ++m_generation;
  m_records.erase(path);
  SeenRecord record;
  record.unknown_outcome = true;
  record.unknown_reason = std::move(reason);
  record.hash_state = HashState::lost;
  m_records[path] = record;
}

void Tracker::forget(const std::string& path)
{
  ++m_generation;
  m_records.erase(path);
}

const SeenRecord* Tracker::find(const std::string& path) const
{
  const auto found = m_records.find(path);
  return found == m_records.end() ? nullptr : &found->second;
}

std::vector<SavedRecord> Tracker::saved(std::size_t limit) const
{
  std::vector<SavedRecord> records;
  for (const auto& [path, record] : m_records) {
    // Only content the agent has in view: not a read whose hash is owed or
    // lost, nor content that still awaits its moment (see make_known).
    if (record.hash_state != HashState::known || record.unknown_outcome
        || record.changed_during_read || record.known_since == k_not_yet) {
      continue;
    }
    SavedRecord saved;
    saved.path = path;
    saved.hash = record.hash;
    saved.stat_trusted = record.trusted_stat.has_value();
    saved.stat = record.trusted_stat.value_or(FileStat{});
    saved.taken_at_ns = record.taken_at_ns;
    saved.seen_at_ns = record.seen_for(record.extent == ReadExtent::whole ? WriteKind::overwrite
                                                                         : WriteKind::edit);
    saved.extent = record.extent == ReadExtent::whole && record.whole_since != k_never
                     ? ReadExtent::whole
                     : ReadExtent::partial;
    saved.partial_reason = saved.extent == ReadExtent::partial ? record.partial_reason : "";
    saved.view = record.view;
    saved.traits = record.traits;
    records.push_back(std::move(saved));
  }
  const auto newer = [](const SavedRecord& a, const SavedRecord& b) {
    return a.taken_at_ns != b.taken_at_ns ? a.taken_at_ns > b.taken_at_ns : a.path < b.path;
  };
  if (records.size() > limit) {
    std::nth_element(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(limit),
                     records.end(), newer);
    records.resize(limit);
  }
  std::sort(records.begin(), records.end(), newer);
  return records;
}

bool Tracker::restore(const SavedRecord& saved)
{
  if (m_records.contains(saved.path)) {
    return false; // what this session saw wins
  }
  const auto current = m_disk.stat(saved.path);
  if (!current || !current->is_regular() || current->size > m_disk.max_hash_bytes()) {
    return false;
  }
  SeenRecord record;
  if (saved.stat_trusted && saved.stat == *current
      && !racy(Fingerprint{saved.stat, saved.hash, saved.taken_at_ns})) {
    // The same stat, and not racily clean when it was taken: the content
    // is the same, as it would be within one session.
    record = record_of(Fingerprint{saved.stat, saved.hash, saved.taken_at_ns, saved.traits},
                       saved.extent);
  } else {
    auto now = m_disk.fingerprint(saved.path);
    if (!now || now->hash != saved.hash) {
      return false; // other content now (or none readable): it licenses nothing
    }
    record = record_of(*now, saved.extent);
  }
  record.view = saved.view;
  record.seen_at_ns = saved.seen_at_ns; // a restart renews no read
  record.whole_seen_at_ns = saved.seen_at_ns;
  record.extent = extent_shown(record.extent, record.view, record.traits);
  record.partial_reason = record.extent == ReadExtent::partial ? saved.partial_reason : "";
  record.known_since = 0;
  record.whole_since = record.extent == ReadExtent::whole ? 0 : k_never;
  ++m_generation;
  m_records[saved.path] = std::move(record);
  return true;
}

} // namespace fsguard
