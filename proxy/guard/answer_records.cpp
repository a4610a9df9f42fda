#include "proxy/guard/answer_records.hpp"

#include <algorithm>

#include "proxy/jsonrpc/message.hpp"

namespace fsguard {

void AnswerRecords::settle(std::string_view client_name)
{
  for (auto& change : m_answered_changes) {
    const SeenRecord* record = m_tracker.finish_write(change.file, change.expected, change.extent,
                                                      change.sent_at, change.expected_bytes());
    after_change_recorded(std::move(change), record, client_name);
  }
  m_answered_changes.clear();
  for (auto& shown : m_shown_texts) {
    if (shown.read && shown.is_file_bytes) {
      shown.paid_with = settle_from_answer(shown);
    }
  }
  m_tracker.settle_reads();
  // Decoded here, after the answer went on: the agent does not wait for it.
  for (auto& shown : m_shown_texts) {
    if (shown.paid_with && m_kept.find(*shown.paid_with)) {
      // Its record became known as this text, still kept, and nothing
      // since changes a known record: the checks below would pass it over
      // too, after one more lookup of its path.
      continue;
    }
    const SeenRecord* record = m_tracker.find(shown.file);
    if (record == nullptr || record->extent != ReadExtent::whole
        || (record->hash_state == HashState::known && m_kept.find(record->hash))) {
      continue; // nothing to keep, or kept already (a file read again)
    }
    // A write's text came decoded from the reader, with its hash, and what
    // its decoder saw of it not at hand (its traits would be scanned); a
    // read's, decoded as its answer was skimmed, with what the decoder saw.
    auto decoded = shown.decoded
                     ? std::optional<DecodedText>(DecodedText{
                         std::move(shown.owned), shown.facts.value_or(DecodedFacts{true, true})})
                     : decoded_json_text(shown.raw(), m_kept.budget().file_bytes);
    if (!decoded || decoded->text.size() > m_kept.budget().file_bytes) {
      continue;
    }
    const ContentHash hash = shown.hash ? *shown.hash : m_disk.hash_of(decoded->text.view());
    if (record->hash_state == HashState::lost && shown.read) {
      // The file changed before its hash was taken, but the text is what
      // the agent saw, byte for byte where it was valid UTF-8 (elsewhere
      // U+FFFD, which no later content matches by chance).
      m_tracker.recover_seen(shown.file, hash, content_traits(*decoded));
    }
    // Kept only if it is exactly the content the record says the agent
    // saw whole: what the answer showed or the agent wrote, and the disk held.
    if (record->hash_state == HashState::known && hash == record->hash) {
      keep_text(hash, std::move(decoded->text));
    }
  }
  m_shown_texts.clear();
}

std::optional<ContentHash> AnswerRecords::settle_from_answer(ShownText& shown)
{
  if (!shown.owed_size || static_cast<std::uint64_t>(*shown.owed_size) > shown.raw().size()) {
    // Its read left no hash owed, or a text too short to be the file: not
    // worth decoding. (settle_from_text checks that the record is still
    // this read's and still owes.)
    return std::nullopt;
  }
  // Decoded as the answer was skimmed, or now; a text decoded then goes
  // back to `shown` if it does not pay, for settle_reads() to look at.
  const bool decoded_already = shown.facts.has_value();
  std::optional<DecodedText> decoded =
    decoded_already ? std::optional(DecodedText{std::move(shown.owned), *shown.facts})
                    : decoded_json_text(shown.raw(), m_kept.budget().file_bytes);
  const auto unpaid = [&] {
    if (decoded_already) {
      shown.owned = std::move(decoded->text);
    }
    return std::nullopt;
  };
  if (!decoded || holds_replacement_character(*decoded)) {
    // The server may have put U+FFFD for bytes that are not UTF-8: hash the file.
    return decoded ? unpaid() : std::nullopt;
  }
  // The traits come from what the decoder saw (no scan) for ASCII text.
  const ContentDigest digest{m_disk.hash_of(decoded->text.view()), content_traits(*decoded)};
  if (!m_tracker.settle_from_text(shown.file, shown.shown_at, digest,
                                  static_cast<std::int64_t>(decoded->text.size()))) {
    return unpaid();
  }
  keep_text(digest.hash, std::move(decoded->text));
  return digest.hash;
}

void AnswerRecords::keep_text(const ContentHash& hash, TextBytes text)
{
  m_kept.keep(hash, std::move(text));
}

bool AnswerRecords::shows_not_taken_in(const std::string& file, const ContentHash& version,
                                       const ContentHash& record,
                                       std::uint64_t known_since) const
{
  return std::any_of(m_shown_knowledge.begin(), m_shown_knowledge.end(),
                     [&](const ShownKnowledge& earlier) {
                       return earlier.file == file && earlier.version
                              && earlier.version->hash == version && earlier.hash == record
                              && earlier.known_since == known_since;
                     });
}

void AnswerRecords::remember_shown(ShownKnowledge shown)
{
  std::erase_if(m_shown_knowledge,
                [&](const ShownKnowledge& earlier) { return earlier.file == shown.file; });
  m_shown_knowledge.push_back(std::move(shown));
  if (m_shown_knowledge.size() > k_shown_knowledge_kept) {
    m_shown_knowledge.pop_front();
  }
}

void AnswerRecords::take_in_shown(Clock::time_point now)
{
  while (!m_shown_knowledge.empty() && now - m_shown_knowledge.front().shown >= k_take_in_time) {
    const ShownKnowledge shown = std::move(m_shown_knowledge.front());
    m_shown_knowledge.pop_front();
    if (!shown.version) {
      m_tracker.make_known(shown.file, shown.hash, ++m_moment, shown.over);
      continue;
    }
    const SeenRecord* record = m_tracker.find(shown.file);
    if (record != nullptr && record->hash_state == HashState::known && record->hash == shown.hash
        && record->known_since == shown.known_since) {
      m_tracker.record_shown(shown.file, *shown.version, ++m_moment, shown.over);
    }
  }
}

std::string AnswerRecords::cause_of(const std::string& file, const SeenRecord* record,
                            const ContentHash& current) const
{
  for (auto own = m_own_writes.rbegin(); own != m_own_writes.rend(); ++own) {
    if (own->hash == current && (record == nullptr || own->sent_at > record->known_since)) {
      return "by your own " + own->tool + " of " + own->path + " through fsguard";
    }
  }
  if (m_shared_ledger != nullptr) {
    // Only a write after the agent's record: an older one with the same
    // content was undone before the agent saw the file.
    const std::int64_t since = record != nullptr ? record->taken_at_ns : 0;
    if (auto other = m_shared_ledger->who_wrote(file, current, since)) {
      return describe_other_write(*other, m_disk.now_ns());
    }
  }
  return "outside fsguard";
}

void AnswerRecords::after_change_recorded(AnsweredChange change, const SeenRecord* record,
                                          std::string_view client_name)
{
  if (change.expected) {
    m_own_writes.push_back(OwnWrite{*change.expected, change.tool, change.file, change.sent_at});
    if (m_own_writes.size() > k_own_writes_kept) {
      m_own_writes.pop_front();
    }
  }
  if (m_shared_ledger != nullptr && record != nullptr && record->hash_state == HashState::known) {
    m_shared_ledger->record(change.file, record->hash, m_disk.now_ns(), client_name);
  }
  if (record == nullptr || record->hash_state != HashState::known
      || record->extent != ReadExtent::whole) {
    return;
  }
  if (change.expected_text && change.expected == record->hash) {
    keep_text(record->hash, TextBytes::copy_of(*change.expected_text));
  } else if (change.written) {
    m_shown_texts.push_back(ShownText{.file = std::move(change.file),
                                      .owned = std::move(change.written->bytes),
                                      .decoded = !change.written->raw,
                                      .hash = change.written->hash});
  }
}

void AnswerRecords::leave_to_exit()
{
  static_cast<void>(new KeptTexts(std::move(m_kept)));
}

} // namespace fsguard
