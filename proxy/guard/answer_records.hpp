// What answers showed the agent and the records they leave: the texts a
// read showed whole (until their hashes settle), the agent's changes
// answered (until settle() records them), its own writes (to name the
// cause of a later change), what fsguard showed in its own texts (a veto's
// diff, a note, until the agent could take it in), the texts kept of what
// it saw whole, and the moments that order what the client sent against
// what it was shown. The tracker keeps the records; this class feeds it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/guard/call_in_flight.hpp"
#include "proxy/guard/shared_ledger.hpp"
#include "proxy/jsonrpc/json_string.hpp"
#include "tracker/kept_texts.hpp"
#include "tracker/tracker.hpp"

namespace fsguard {

// How long an agent takes at least to act on what fsguard showed it in its
// own texts (a veto's diff, a note on a rebase or a merge): a call that
// reaches fsguard sooner was written before the agent could take it in
// (the calls of one model turn, sent together or one after another), so
// that text does not license it.
inline constexpr std::chrono::milliseconds k_take_in_time{250};

// A text a whole read showed (`read`) or the agent wrote, as its raw
// JSON string, kept once the file's hash confirms it. A read's text is
// not copied: `in_answer` points into the answer's line, which stays valid
// until settle_reads() (see on_upstream_response); a written one is owned.
struct ShownText {
  std::string file{};
  TextBytes owned{}; // raw JSON, or the text itself if `decoded`
  std::string_view in_answer{};
  bool read = false;
  std::uint64_t shown_at = 0; // a read's: the moment its answer was shown
  bool is_file_bytes = false; // its tool's text is the file's bytes (ToolSpec)
  bool decoded = false;       // `owned` is the text, not its JSON string
  std::optional<ContentHash> hash{}; // the text's, when known (a decoded write's)
  // A read's: the hash its text paid for its record (settle_from_answer).
  std::optional<ContentHash> paid_with{};
  // A read's: the file size its record owed a hash for when the answer
  // came (Tracker::finish_read); none if it owed none.
  std::optional<std::int64_t> owed_size{};
  // A read's text decoded as its answer was skimmed: what the decoder saw
  // of it (`owned` is the text, and `decoded` set).
  std::optional<DecodedFacts> facts{};
  std::string_view raw() const { return owned.empty() ? in_answer : owned.view(); }
};
// A change of the agent's, answered: recorded once the answer has gone to
// the agent (settle_reads()).
struct AnsweredChange {
  std::string file; // canonical
  std::string tool;
  std::uint64_t sent_at = 0;                // the agent knows the result from then on
  std::optional<ContentHash> expected;      // what the change should have left
  std::optional<std::string> expected_text; // with the hash `expected`, when known
  ReadExtent extent = ReadExtent::partial;  // what the agent knows of the result
  std::optional<WrittenContent> written;    // a write's content, to keep

  // The bytes whose hash is `expected`, when at hand, with their traits
  // when the reader's decoder told them.
  std::optional<ExpectedBytes> expected_bytes() const
  {
    if (expected_text) {
      return ExpectedBytes{*expected_text};
    }
    if (written && !written->raw && written->hash == expected) {
      return ExpectedBytes{written->bytes.view(), written->traits};
    }
    return std::nullopt;
  }
};
// A write of the agent's through fsguard that left a known content.
struct OwnWrite {
  ContentHash hash{};
  std::string tool;
  std::string path;
  std::uint64_t sent_at = 0;
};
// What fsguard showed the agent of `file` in its own text at `shown`,
// which licenses calls that arrive k_take_in_time later: a veto's diff
// shows `version` (applied if the record is still the one it was shown
// against, `hash` known since `known_since`); a note shows the record
// `hash`, which awaits its moment (k_not_yet). Either is over `over`, the
// version the agent had seen whole before.
struct ShownKnowledge {
  std::string file;
  std::chrono::steady_clock::time_point shown{};
  std::optional<Fingerprint> version;
  ContentHash hash{};
  std::uint64_t known_since = 0;
  ContentHash over{};
};

class AnswerRecords {
public:
  using Clock = std::chrono::steady_clock;

  // Records go to `tracker`; texts are hashed by `disk`; `kept` is the
  // budget of the texts kept.
  AnswerRecords(Tracker& tracker, Disk& disk, KeptTextBudget kept)
    : m_tracker(tracker), m_disk(disk), m_kept(kept)
  {
  }

  // The next moment: a call sent, or an answer shown, orders after every
  // earlier one.
  std::uint64_t next_moment() { return ++m_moment; }
  // The last moment given out.
  std::uint64_t moment() const { return m_moment; }

  // Records the changes whose answers have just been forwarded (the file's
  // fingerprint after each), hashes the files of reads whose responses have
  // (see Tracker::settle_reads), and keeps the texts those reads showed
  // whole where they match the files' hashes. `client_name` goes to the
  // shared ledger with each change.
  void settle(std::string_view client_name);

  // The text `shown` that a read's answer showed, to settle once the
  // answer has gone on; returned for the caller to complete.
  ShownText& shown_read(ShownText shown) { return m_shown_texts.emplace_back(std::move(shown)); }
  // The agent's change `change`, answered: recorded by settle().
  void answered(AnsweredChange change) { m_answered_changes.push_back(std::move(change)); }

  // Records what follows from the agent's change `change` once its file's
  // record is taken (`record`, the tracker's record of the file as it left
  // it, null if none): the own write that names the cause of a later
  // change, the shared ledger's entry (by `client_name`), and the text it
  // left, to keep.
  void after_change_recorded(AnsweredChange change, const SeenRecord* record,
                             std::string_view client_name);

  // Who made the change of `file` from the agent's `record` to `current`.
  std::string cause_of(const std::string& file, const SeenRecord* record,
                       const ContentHash& current) const;

  // Records what fsguard showed the agent in its own texts, once
  // k_take_in_time has passed at `now`.
  void take_in_shown(Clock::time_point now);
  // fsguard showed the agent `shown` in its own text (at most one a file).
  void remember_shown(ShownKnowledge shown);
  // Whether fsguard already showed the version of hash `version` of `file`
  // over the record of hash `record` (known since `known_since`), and the
  // agent has not yet taken it in: a veto showing it again repeats it.
  bool shows_not_taken_in(const std::string& file, const ContentHash& version,
                          const ContentHash& record, std::uint64_t known_since) const;

  // Keeps `text`, whose hash is `hash`, as a text the agent saw whole.
  void keep_text(const ContentHash& hash, TextBytes text);
  // The texts kept of what the agent saw whole.
  // (A lookup marks a text as used: find() is not const.)
  const KeptTexts& kept() const { return m_kept; }
  KeptTexts& kept() { return m_kept; }
  void set_kept_budget(KeptTextBudget budget) { m_kept.set_budget(budget); }

  // The ledger the writes of every session sharing it go to, and a changed
  // veto asks who wrote the content on disk (nullptr: none). Not owned.
  void set_shared_ledger(SharedLedger* ledger) { m_shared_ledger = ledger; }

  // Leaves the kept texts to the process's exit (Guard::leave_files_to_exit()).
  void leave_to_exit();

private:
  // Pays the hash the read that showed `shown` owes with the text itself,
  // when it is the file's bytes exactly (Tracker::settle_from_text), and
  // keeps that text: the file is not read again. Returns the text's hash,
  // if it paid.
  std::optional<ContentHash> settle_from_answer(ShownText& shown);

  Tracker& m_tracker;
  Disk& m_disk;
  KeptTexts m_kept;
  SharedLedger* m_shared_ledger = nullptr;
  // Orders what the client sent and what it was shown: a read shown after
  // a call was sent cannot have informed that call.
  std::uint64_t m_moment = 0;
  std::vector<ShownText> m_shown_texts;          // reads' texts, until their hashes settle
  std::vector<AnsweredChange> m_answered_changes; // until settle() records them
  std::deque<OwnWrite> m_own_writes;             // the latest, to name the cause of a change
  std::deque<ShownKnowledge> m_shown_knowledge;  // at most one a file
  static constexpr std::size_t k_shown_knowledge_kept = 256;
  static constexpr std::size_t k_own_writes_kept = 64;
};

} // namespace fsguard
