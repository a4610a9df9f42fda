// The session's record of what the agent has seen of each file, and the
// decision whether a write may go ahead. Pure policy: all I/O goes through
// the injected `Disk`.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tracker/disk.hpp"
#include "tracker/file_state.hpp"
#include "tracker/string_key_hash.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

enum class ReadExtent { whole, partial };

// The bytes a change should have left, and their ContentTraits when the
// caller knows them already (nothing: scanned from `bytes` if needed).
struct ExpectedBytes {
  std::string_view bytes;
  std::optional<ContentTraits> traits{};
};

// How a read showed the agent the bytes of a file.
enum class ReadView {
  bytes,      // exactly (base64: read_media_file)
  utf8_text,  // decoded as UTF-8: bytes that are not valid UTF-8 show as U+FFFD
  utf8_lines, // the same, in lines as Node's readline splits them (it also ends
              // a line at a bare "\r"), counted against "\n" (desktop-commander)
};
enum class WriteKind { overwrite, edit };
// How fsguard learned a content it records: shown by a read, or left by the
// agent's own change (which keeps a change fsguard showed and the agent has
// not read since: see ShownOver).
enum class KnownFrom { read, own_change };
enum class PartialReadAllowsOverwrite { no, yes };

// The state of a file taken just before a read was forwarded. The hash is
// taken only when the stat alone could not prove the file unchanged later.
struct ReadStart {
  std::optional<FileStat> stat;
  std::optional<ContentHash> hash;
};

// Whether a record's content hash is known. A read whose file held still
// (same stat before and after it, not racy) is recorded at once and hashed
// just after its response is forwarded, off the agent's path; if the file
// moved in that moment, what the agent saw can no longer be hashed.
enum class HashState { known, owed, lost };

// A moment that never comes: a record never known whole.
inline constexpr std::uint64_t k_never = std::numeric_limits<std::uint64_t>::max();

// A moment still to come: content the agent has been shown, but which
// licenses no call until Tracker::make_known() gives it its moment.
inline constexpr std::uint64_t k_not_yet = k_never - 1;

// A change the agent knows only from fsguard's own texts (a veto's diff, a
// note on a rebase or a merge): from `hash`, the version it last saw whole
// for itself, to `shown`, the latest version fsguard showed it. Calls sent
// before moment `until` (when a read showed it the record's version
// itself) may still rest on the version it saw, so a whole write among
// them must keep that change (the keep-the-change rule, see Guard). Its
// own edits and writes in between keep the rule, and a second change
// shown keeps `hash`: the base is always a version the agent read.
struct ShownOver {
  ContentHash hash{};
  ContentHash shown{};
  std::uint64_t until = k_never;
};

// What an earlier record knew, kept while a new read's hash is owed: if the
// new read shows the same content, the agent knew it from the earlier moment.
struct EarlierView {
  ContentHash hash{};
  std::uint64_t known_since = 0;
  std::uint64_t whole_since = k_never;
  std::int64_t whole_seen_at_ns = 0; // when it was last seen whole (read_ttl_s)
  std::optional<ShownOver> shown_over;
};

// What the agent last saw of one file.
struct SeenRecord {
  std::optional<FileStat> trusted_stat; // absent: always compare content
  ContentHash hash{};
  HashState hash_state = HashState::known;
  std::int64_t taken_at_ns = 0;
  // When the agent last read or wrote it (wall clock): what read_ttl_s
  // counts from for an edit, and the veto texts. A refresh of metadata, and
  // fsguard's own diff or note (which show only the changed lines), keep it.
  std::int64_t seen_at_ns = 0;
  // When it last saw it whole (a whole read, its own write): what read_ttl_s
  // counts from for a whole-file write. A head/tail read does not renew it.
  std::int64_t whole_seen_at_ns = 0;
  // Of the content the agent saw or wrote, as `hash` is (k_unknown_size
  // for a write of which only the hash is known).
  std::int64_t size = 0;
  ReadExtent extent = ReadExtent::whole;
  std::string partial_reason; // how a partial view was cut, if not head/tail
  bool changed_during_read = false;
  bool unknown_outcome = false; // a change through fsguard with no known result
  std::string unknown_reason;   // why, when not a cancel or a timeout
  // The moments (the caller's counter) since when the agent knows this
  // content, and knows it whole: when a read's answer reached it, or when
  // it sent its own write.
  std::uint64_t known_since = 0;
  std::uint64_t whole_since = 0;
  std::optional<EarlierView> earlier; // owed: the record this read replaced
  ReadView view = ReadView::bytes; // how the agent was shown it; its own writes: exactly
  ContentTraits traits;            // of the content hashed (once the hash is known)
  // Known from fsguard's own text over an earlier version: a call the agent
  // wrote before it took that text in may still rest on the earlier
  // version, so a whole-file write sent before `until` must keep the change
  // the text showed (see Guard).
  std::optional<ShownOver> shown_over;

  // When the agent last saw what a `kind` write would replace (read_ttl_s).
  std::int64_t seen_for(WriteKind kind) const
  {
    return kind == WriteKind::overwrite ? whole_seen_at_ns : seen_at_ns;
  }
};

// What a later session needs of a SeenRecord to trust it again once it has
// found the file unchanged (see Tracker::saved and Tracker::restore).
struct SavedRecord {
  std::string path;
  ContentHash hash{};
  FileStat stat;
  bool stat_trusted = false; // the stat could vouch for the content (see racy())
  std::int64_t taken_at_ns = 0;
  std::int64_t seen_at_ns = 0; // when seen whole, or in part if never whole (read_ttl_s)
  ReadExtent extent = ReadExtent::whole;
  std::string partial_reason;
  ReadView view = ReadView::bytes;
  ContentTraits traits;

  bool operator==(const SavedRecord&) const = default;
};

class Tracker {
public:
  explicit Tracker(Disk& disk) : m_disk(disk) {}

  // How long a read or the agent's own write licenses changes (read_ttl_s);
  // 0: for ever.
  void set_read_ttl(std::chrono::seconds ttl) { m_read_ttl = ttl; }

  // Takes the state of `path` before a read of it is forwarded.
  ReadStart begin_read(const std::string& path);

  // Records that a read of `path`, started as `start`, succeeded and showed
  // the agent the `extent` of the file. A file that changed in between is
  // recorded as changed_during_read. Call it before the response goes on;
  // when the stat alone shows the file held still, it costs one stat and
  // leaves the hash owed to settle_reads().
  // The read showed it through `view`; `partial_reason` says how a partial
  // view was cut when it was not head/tail; `shown_at` is the moment its
  // answer reached the agent (see check_write). Returns the record it
  // leaves (null: none), valid until the tracker next changes.
  const SeenRecord* finish_read(const std::string& path, const ReadStart& start,
                                ReadExtent extent, ReadView view,
                                std::string partial_reason = {}, std::uint64_t shown_at = 0);

  // Records that the agent was shown, at moment `shown_at`, the `extent` of
  // content `digest` (`size` bytes) that `path` held through `view`, as
  // fsguard learned it from the upstream itself (verify: upstream) rather
  // than from a disk: no stat vouches for it, so every check compares
  // content. A head/tail view of content seen whole counts as whole. `from`
  // says whether a read showed it or the agent's own change left it.
  void record_known(const std::string& path, const ContentDigest& digest, std::int64_t size,
                    ReadExtent extent, ReadView view, std::string partial_reason,
                    std::uint64_t shown_at, KnownFrom from = KnownFrom::read);
  // Hashes the files whose reads left a hash owed. Call it once their
  // responses are on their way. A file that changed since finish_read() is
  // recorded as unknown content, and a write to it is vetoed as changed.
  void settle_reads();

  // Pays the hash that the read of `path` shown at moment `shown_at` owes
  // with the text its answer showed, `digest` of `size` bytes, instead of
  // reading the file again: the file held still from before the read was
  // forwarded until its answer came (its stat, outside the racy window,
  // vouched for that in finish_read()), so the bytes the server read are
  // the bytes on disk at that stat. Only for a text the caller knows to be
  // the file's bytes exactly (a whole read through a UTF-8 view, nothing
  // replaced); `size` must be the stat's size. Returns whether it was
  // taken; if not, settle_reads() hashes the file as before.
  bool settle_from_text(const std::string& path, std::uint64_t shown_at,
                        const ContentDigest& digest, std::int64_t size);

  // Decides whether a `kind` write of `path`, sent by the agent at moment
  // `sent_at`, may go ahead: nothing if it may, the veto otherwise. Content
  // the agent came to know only after it sent the call licenses nothing.
  // Refreshes the record when only metadata changed.
  std::optional<Veto> check_write(const std::string& path, WriteKind kind,
                                  PartialReadAllowsOverwrite partial_policy,
                                  std::uint64_t sent_at = std::numeric_limits<std::uint64_t>::max());

  // Records `path` after the agent's own successful write. `expected` is the
  // content hash the write should have produced, when known (write_file); if
  // the file holds something else, another writer was at work and the
  // agent is held to `expected`, so the next write is vetoed as changed.
  // `extent` is what the agent knows of the result: whole after write_file,
  // after an edit no more than the read that licensed it.
  // `sent_at` is the moment the agent sent the write: it knows its content
  // from then on. `expected_bytes`, when at hand, are the bytes whose hash
  // is `expected` (with their traits, if known): while the file's stat is
  // racy (as it is just after a write) no stat could vouch for it anyway,
  // so the record is taken from them and the stat without reading the file
  // back; the next check compares the file's content with `expected`, and
  // finds any other writer there. Returns the record it leaves (null: none,
  // the file is gone or odd), valid until the tracker next changes.
  const SeenRecord* finish_write(const std::string& path,
                                 const std::optional<ContentHash>& expected,
                                 ReadExtent extent = ReadExtent::whole, std::uint64_t sent_at = 0,
                                 std::optional<ExpectedBytes> expected_bytes = std::nullopt);

  // Records that fsguard itself showed the agent the whole content of `path`
  // as `fingerprint` holds it, as text, at moment `shown_at`: a veto whose
  // complete diff turns an earlier whole read (of `over`) into a read of
  // this version. Only calls sent after `shown_at` are licensed by it.
  void record_shown(const std::string& path, const Fingerprint& fingerprint,
                    std::uint64_t shown_at, const ContentHash& over);

  // Gives the whole read of `path` whose hash was lost (the file changed
  // before settle_reads() could hash it) the content the read showed the
  // agent exactly, `hash` with `traits`: what the agent saw is known after
  // all. No stat vouches for it; the next check compares content.
  void recover_seen(const std::string& path, const ContentHash& hash, const ContentTraits& traits);

  // Gives the record of `path`, if it still holds `hash` and awaits its
  // moment (known since k_not_yet), the moment `now`: the agent knows it
  // from then on, whole if the record is whole, from a note over `over`
  // (the version it had seen before).
  void make_known(const std::string& path, const ContentHash& hash, std::uint64_t now,
                  const ContentHash& over);

  // The extent of the agent's view of `path` as of moment `sent_at`:
  // partial when there is no record, or it was not known whole by then.
  ReadExtent extent_of(const std::string& path, std::uint64_t sent_at) const;

  // Moves the records of `from` and, for a directory, of everything below
  // it to `to` after a successful rename. The record of a replaced `to` is
  // dropped.
  void finish_move(const std::string& from, const std::string& to);

  // Marks `path` as changed through fsguard with an outcome nobody knows (a
  // cancelled or unanswered write): the next write is vetoed until a read.
  // `reason` says why, when it is neither a cancel nor a timeout.
  void mark_unknown(const std::string& path, std::string reason = {});

  // Drops what is known of `path`, e.g. when a write's outcome is unknown.
  void forget(const std::string& path);

  // The record of `path`, if any (for tests and diagnostics).
  const SeenRecord* find(const std::string& path) const;

  // The records a later session may trust again, the `limit` most recently
  // taken: content the agent knows, whole or in part, with a known hash.
  std::vector<SavedRecord> saved(std::size_t limit) const;

  // Takes `saved`, a record of an earlier session, if its file still holds
  // that content (its stat proves it where racy() allows, else its hash):
  // the agent then knows it from moment 0. Returns whether it was taken.
  bool restore(const SavedRecord& saved);

  // Goes up whenever the records may have changed (to save them only then).
  std::uint64_t generation() const { return m_generation; }

private:
  // check_write() but for the veto's path, which it sets: a write let
  // through copies no path.
  std::optional<Veto> veto_for_write(const std::string& path, WriteKind kind,
                                     PartialReadAllowsOverwrite partial_policy,
                                     std::uint64_t sent_at);
  using Records = std::unordered_map<std::string, SeenRecord, StringKeyHash>;

  // The fingerprint of `path` just after a write that should have left
  // `expected_bytes` (hashing to `expected`), from its stat and those bytes
  // (their traits as given, else scanned), when the stat is racy (it could
  // not vouch for any content); nothing when it could, or the file is gone
  // or odd: then read it back.
  std::optional<Fingerprint> expected_fingerprint(const std::string& path,
                                                  const ContentHash& expected,
                                                  const ExpectedBytes& expected_bytes);
  // Adds `path` to the paths whose records may owe a hash.
  void owe_hash(const std::string& path);
  // Takes `path` (once) off the paths whose records may owe a hash.
  void drop_owed(const std::string& path);
  // Pays the hash the record of `path`, or `found`, owes, if it owes one.
  // The iterator form returns false if it dropped the record (its file is
  // gone or unreadable).
  void settle(const std::string& path);
  bool settle(Records::iterator found);
  // Gives the owed `record` the content `digest`.
  static void settle_with(SeenRecord& record, const ContentDigest& digest);
  // What the clean record of `path` knew, if any.
  std::optional<EarlierView> earlier_view(const std::string& path) const;
  // What `previous`, a record this one replaces, knew if it was clean.
  static std::optional<EarlierView> earlier_view(const SeenRecord& previous);
  // Keeps the earlier moments in `record` if it shows the same content as
  // `earlier`: a head/tail read of content seen whole counts as whole.
  static void merge_earlier(SeenRecord& record, const EarlierView& earlier);

  Disk& m_disk;
  // The paths whose records may owe a hash are the first m_owed_count;
  // the strings after them keep their room for the next reads' paths, so
  // that a read allocates none (at most k_owed_rooms_kept of them).
  std::vector<std::string> m_owed;
  std::size_t m_owed_count = 0;
  static constexpr std::size_t k_owed_rooms_kept = 16;
  Records m_records;
  std::uint64_t m_generation = 0;
  std::chrono::seconds m_read_ttl{0};
};

} // namespace fsguard
