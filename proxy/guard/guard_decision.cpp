// The guard's decision on a change: the facts of each file gathered and
// handed to decide() (proxy/guard/change_decision.hpp), a stale change
// made into what the agent can act on (the diff, a rebase, a merge), and
// the veto that refuses it.
#include "proxy/guard/guard.hpp"

#include "proxy/guard/client_limits.hpp"
#include "proxy/guard/override_prompt.hpp"
#include "proxy/guard/stale_change.hpp"
#include "proxy/guard/text_diff.hpp"
#include "tracker/path.hpp"
#include "proxy/guard/guard_internal.hpp"

namespace fsguard {

std::optional<std::string> Guard::content_seen(const std::string& file)
{
  const SeenRecord* record = m_tracker.find(file);
  if (record == nullptr || record->hash_state != HashState::known) {
    return std::nullopt;
  }
  auto bytes = m_disk.read(file);
  if (!bytes || m_disk.hash_of(*bytes) != record->hash) {
    return std::nullopt; // it moved on since the check: nothing to vouch for
  }
  return std::move(bytes).value();
}

void Guard::veto_change(const CallInFlight& call, const std::string& key, Verdict& verdict,
                        std::int64_t latency_us, Outbox& out, Clock::time_point now)
{
  Veto& veto = *verdict.veto;
  if (m_era.era() == Era::handshake && m_settings.override_mode == Override::ask
      && !m_client_elicits && veto.override_outcome.empty() && may_override(veto.code)) {
    veto.person_unreachable = true;
  }
  const SeenRecord* record = verdict.shown ? m_tracker.find(verdict.shown->file) : nullptr;
  if (verdict.shown
      && (record == nullptr || record->hash_state != HashState::known
          || veto.seen_hash != record->hash)) {
    // Refused after the person was asked, and meanwhile the agent read the
    // file again (it may be gone since): the diff is over a version that
    // is no longer the agent's record, so it shows nothing whole.
    veto.counts_as_read = false;
    verdict.shown.reset();
  }
  // The same diff over the same record, shown by an earlier veto and not
  // yet taken in: this call was sent before the agent could read it. That
  // diff stands, from when it was shown.
  veto.repeats_shown_diff =
    verdict.shown
    && m_records.shows_not_taken_in(verdict.shown->file, verdict.shown->fingerprint.hash,
                                    record->hash, record->known_since);
  refuse(call, key, veto, out);
  audit(call, "veto", veto, latency_us, out);
  if (verdict.shown && !veto.repeats_shown_diff) {
    // The agent will have seen every line of this version: what it read
    // whole, and the complete diff. Calls that come once it could take
    // the diff in may rely on it; until then the record stays.
    m_records.remember_shown(ShownKnowledge{verdict.shown->file, now, verdict.shown->fingerprint,
                                  record->hash, record->known_since, record->hash});
    m_records.keep_text(verdict.shown->fingerprint.hash, TextBytes::copy_of(verdict.shown->text));
  }
}

Verdict Guard::decide_change(CallInFlight& call, OutgoingLine& line,
                             const nlohmann::json& arguments)
{
  call.licensed_extent.assign(call.files.size(), ReadExtent::whole);
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const auto& file = call.files[index];
    if (!file) {
      Veto veto;
      veto.code = VetoCode::unresolved_path;
      veto.path = call.what.paths[index].raw.value_or("");
      veto.reason = call.problems[index].reason;
      return {veto, {}, {}};
    }
    if (auto veto = unseen_veto(*file)) {
      return {veto, {}, {}};
    }
    const ChangePath path = change_path(call, index);
    if (path == ChangePath::edit) {
      // Taken first: a veto let through (warn, off) licenses nothing whole.
      call.licensed_extent[index] = m_tracker.extent_of(*file, call.sent_at);
    }
    ChangeFacts facts{path};
    if (path != ChangePath::move_source) {
      facts.check = m_tracker.check_write(*file, write_kind(path),
                                          m_settings.partial_read_allows_write, call.sent_at);
    }
    if (facts.check && facts.check->code == VetoCode::changed && call.files.size() == 1) {
      return stale_change(call, line, arguments, *file, std::move(*facts.check));
    }
    if (!facts.check) {
      facts.shown = shown_change(call, line.text(), path, *file);
    }
    ChangeDecision decision = decide(facts, *file);
    if (decision.outcome == ChangeOutcome::veto) {
      return {std::move(decision.veto), {}, {}};
    }
    if (path == ChangePath::edit && call.what.result_is_diff) {
      call.edit_base = content_seen(*file);
    }
  }
  return {};
}

ChangePath Guard::change_path(const CallInFlight& call, std::size_t index)
{
  // A move: the source loses nothing by moving. An existing destination is
  // replaced by some servers whatever their tool says, so it must have been
  // read whole, as for a write.
  const ChangePath moved = index == 1 ? ChangePath::move_destination : ChangePath::move_source;
  return call.what.role == ToolRole::move    ? moved
         : call.what.role == ToolRole::write ? ChangePath::write
                                             : ChangePath::edit;
}

ChangeDecision Guard::decide_accepted(const CallInFlight& call, std::string_view line,
                                      VetoCode accepted)
{
  m_records.settle(m_client_name);
  // The person lifts one refusal, not the confinement: confine_to may have
  // been narrowed (a reload) while they decided.
  if (auto veto = confinement_veto(call)) {
    return ChangeDecision{ChangeOutcome::veto, std::move(veto)};
  }
  for (std::size_t index = 0; index < call.files.size(); ++index) {
    const auto& file = call.files[index];
    const ChangePath path = change_path(call, index);
    if (!file || path == ChangePath::move_source) {
      continue; // described as when it was asked about: its paths resolved then
    }
    ChangeFacts facts{ChangePath::accepted_override};
    facts.check = m_tracker.check_write(*file, write_kind(path),
                                        m_settings.partial_read_allows_write, call.sent_at);
    facts.shown = shown_change(call, line, path, *file);
    facts.accepted = accepted;
    ChangeDecision decision = decide(facts, *file);
    if (decision.outcome == ChangeOutcome::veto) {
      return decision;
    }
  }
  return {};
}

std::optional<std::string> Guard::written_text(const CallInFlight& call, std::string_view line,
                                               std::size_t max_bytes)
{
  if (call.written && !call.written->raw) {
    return call.written->bytes.size() <= max_bytes
             ? std::optional<std::string>(call.written->bytes.view())
             : std::nullopt;
  }
  const auto raw = skim_content_argument(line);
  return raw ? decoded_json_string(*raw, max_bytes) : std::nullopt;
}

bool Guard::keeps_shown_change(const SeenRecord& record, const std::optional<std::string>& written)
{
  const auto seen = m_records.kept().find(record.shown_over->hash);
  const auto shown = m_records.kept().find(record.shown_over->shown);
  return seen && shown && written && keeps_change(*seen, *shown, *written);
}

std::optional<std::string> Guard::checked_written_text(const CallInFlight& call,
                                                       std::string_view line)
{
  auto written = written_text(call, line, m_records.kept().budget().file_bytes);
  if (!written || !call.expected || m_disk.hash_of(*written) != *call.expected) {
    return std::nullopt;
  }
  return written;
}

ShownChange Guard::shown_change(const CallInFlight& call, std::string_view line, ChangePath path,
                                const std::string& file)
{
  const SeenRecord* record = m_tracker.find(file);
  if (!replaces_content(path) || !bound_to_shown_change(record, call.sent_at)) {
    return ShownChange::not_bound;
  }
  std::optional<std::string> leaves;
  if (path == ChangePath::move_destination) {
    // A move that replaces the file leaves the source's bytes in it.
    if (call.files.front()) {
      if (auto bytes = m_disk.read(*call.files.front());
          bytes && bytes->size() <= m_records.kept().budget().file_bytes) {
        leaves = std::move(bytes).value();
      }
    }
  } else {
    leaves = checked_written_text(call, line);
  }
  return keeps_shown_change(*record, leaves) ? ShownChange::kept : ShownChange::not_kept;
}

Verdict Guard::stale_change(CallInFlight& call, OutgoingLine& line,
                            const nlohmann::json& arguments, const std::string& file,
                                   Veto veto)
{
  Verdict verdict;
  const SeenRecord* record = m_tracker.find(file);
  if (record != nullptr && record->hash_state == HashState::known) {
    veto.seen_hash = record->hash;
  }
  auto now = m_disk.fingerprint(file);
  veto.cause = "outside fsguard";
  if (now) {
    veto.current_hash = now->hash;
    veto.current_size = now->stat.size; // of the version the diff shows
    veto.current_mtime_ns = now->stat.mtime_ns;
    veto.cause = m_records.cause_of(file, record, now->hash);
  }
  if (m_settings.mode != Mode::enforce) {
    verdict.veto = std::move(veto); // let through: the agent is shown nothing
    return verdict;
  }
  // What the agent saw, if it saw it whole and its text is kept; and the
  // bytes on disk now, if the file held still while they were taken.
  const auto seen =
    record != nullptr && veto.seen_hash && record->extent == ReadExtent::whole
        && record->whole_since != k_never
      ? m_records.kept().find(record->hash)
      : std::nullopt;
  const std::size_t limit = m_records.kept().budget().file_bytes;
  std::optional<std::string> current;
  if (seen && now && now->stat.size <= static_cast<std::int64_t>(limit)) {
    auto bytes = m_disk.read(file);
    if (bytes && m_disk.hash_of(*bytes) == now->hash) {
      current = std::move(bytes).value();
    }
  }
  if (current == std::nullopt) {
    verdict.veto = std::move(veto);
    return verdict;
  }
  const std::string_view seen_text = *seen; // no text is kept before this returns
  const std::string spelled = server_spelling(file);
  const bool text = now->traits.valid_utf8; // else a text view of it is lossy
  const auto describe = [&](const DiffBounds& bounds) {
    const TextDiff diff = diff_texts(seen_text, *current, spelled + "\t(as you last saw it)",
                                     spelled + "\t(on disk now)", bounds);
    veto.diff = diff.text;
    veto.diff_complete = diff.complete && text;
    veto.counts_as_read = veto.diff_complete;
    return diff;
  };
  const TextDiff diff = describe(m_settings.diff_bounds);
  const auto carry_over = [&](CarriedOver carried) {
    call.carried = std::move(carried);
    verdict.carried_over = std::move(veto);
    return verdict;
  };
  if (text && call.what.role == ToolRole::edit
      && m_settings.stale_edit == StaleEdit::rebase) {
    const auto edits = text_edits(arguments);
    if (!edits) {
      veto.not_rebased = "its edits are not all {oldText, newText} strings";
    } else if (auto rebased = rebase_edits(seen_text, *current, *edits,
                                           call.what.edit_semantics)) {
      call.edit_base = *current; // the upstream's diff applies to the current content
      if (!call.what.result_is_diff) {
        call.expected = m_disk.hash_of(rebased.value());
      }
      if (decide({.path = ChangePath::rebased_edit, .carried_over = veto}, file).outcome
          == ChangeOutcome::rebase) {
        return carry_over(CarriedOver{CarriedOver::How::rebase, *veto.seen_hash, now->hash,
                                      rebase_note(spelled, veto.cause, diff), veto.diff_complete,
                                      std::move(rebased).value()});
      }
    } else {
      veto.not_rebased = rebased.error().reason;
    }
  }
  if (text && call.what.role == ToolRole::write
      && m_settings.stale_write == StaleWrite::merge && call.expected) {
    const auto written = written_text(call, line.text(), limit);
    const bool own = written && m_disk.hash_of(*written) == *call.expected;
    // A write that does not keep a change fsguard showed before may have
    // been made from the version before it: merged, it would undo it.
    ChangeFacts facts{.path = ChangePath::merged_write, .carried_over = veto};
    if (own && bound_to_shown_change(record, call.sent_at)) {
      facts.shown = keeps_shown_change(*record, written) ? ShownChange::kept
                                                         : ShownChange::not_kept;
    }
    ChangeDecision decision = decide(facts, file);
    if (decision.outcome == ChangeOutcome::veto) {
      veto = std::move(*decision.veto); // the diff kept, and why it was not merged
    }
    const auto merged = own && decision.outcome == ChangeOutcome::merge
                          ? merge_write(seen_text, *written, *current)
                          : std::nullopt;
    if (merged && merged->clean) {
      if (auto rewritten = with_content(line.text(), merged->text)) {
        line = std::move(*rewritten);
        call.expected = m_disk.hash_of(merged->text);
        const TextDiff shown = diff_texts(*written, merged->text, "your content",
                                          "what was written", m_settings.diff_bounds);
        return carry_over(CarriedOver{CarriedOver::How::merge, *veto.seen_hash, now->hash,
                                      merge_note(spelled, veto.cause, shown), shown.complete,
                                      merged->text});
      }
    } else if (merged) {
      // The change and the conflicts share the room of one veto, which
      // clients must show whole.
      const DiffBounds half{m_settings.diff_bounds.max_lines / 2,
                            m_settings.diff_bounds.max_bytes / 2};
      describe(half);
      veto.conflict = conflict_hunks(merged->text, half);
    }
  }
  if (veto.counts_as_read
      && !client_shows_whole(
        veto_response(call.id, call.what.tool, veto, tool_names(tools()), m_era.era()))) {
    veto.counts_as_read = false; // the client cuts the veto: its diff is not seen whole
  }
  if (veto.counts_as_read) {
    verdict.shown = ShownVersion{file, *now, std::move(*current)};
  }
  verdict.veto = std::move(veto);
  return verdict;
}

bool Guard::client_shows_whole(std::string_view answer) const
{
  const auto limit = result_limit_for(m_client_name, m_settings.client_result_limits);
  return !limit || answer.size() <= *limit;
}

std::optional<Veto> Guard::unseen_veto(const std::string& file) const
{
  for (const auto& unseen : m_paths.unseen()) {
    if (!unseen.local.empty() && is_within(file, unseen.local)) {
      Veto veto;
      veto.code = VetoCode::not_visible;
      veto.path = file;
      veto.reason = unseen.server;
      veto.cause = unseen.other ? "the directory fsguard sees under that name is another one "
                                  "(the two were created at different times)"
                                : "it does not exist on fsguard's side, or path_map does not say "
                                  "where it is";
      return veto;
    }
  }
  return std::nullopt;
}

} // namespace fsguard
