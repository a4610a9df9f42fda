#include "proxy/guard/change_decision.hpp"

namespace fsguard {

WriteKind write_kind(ChangePath path)
{
  return path == ChangePath::edit || path == ChangePath::rebased_edit ? WriteKind::edit
                                                                     : WriteKind::overwrite;
}

bool replaces_content(ChangePath path)
{
  switch (path) {
  case ChangePath::write:
  case ChangePath::merged_write:
  case ChangePath::move_destination:
  case ChangePath::accepted_override:
    return true;
  case ChangePath::edit:
  case ChangePath::rebased_edit:
  case ChangePath::move_source:
    return false;
  }
  return true;
}

bool bound_to_shown_change(const SeenRecord* record, std::uint64_t sent_at)
{
  return record != nullptr && record->shown_over && sent_at < record->shown_over->until;
}

ChangeDecision decide(const ChangeFacts& facts, const std::string& file)
{
  if (facts.path == ChangePath::move_source) {
    return {}; // its bytes move with it: nothing is destroyed
  }
  const bool carried =
    facts.path == ChangePath::rebased_edit || facts.path == ChangePath::merged_write;
  const bool accepted = facts.path == ChangePath::accepted_override && facts.accepted;
  if (facts.check && !carried && !(accepted && facts.check->code == *facts.accepted)) {
    return {ChangeOutcome::veto, facts.check};
  }
  const bool accepted_undo = accepted && *facts.accepted == VetoCode::changed;
  if (replaces_content(facts.path) && facts.shown == ShownChange::not_kept && !accepted_undo) {
    // Made, perhaps, before the agent took in fsguard's text: it would
    // destroy a change the agent knows only from that text.
    Veto veto = facts.carried_over.value_or(Veto{});
    veto.code = VetoCode::changed;
    veto.path = file;
    if (facts.path == ChangePath::merged_write) {
      veto.not_merged = "it does not keep, byte for byte, the change fsguard showed you "
                        "before, and may have been written before you saw that change";
    } else {
      veto.undoes_shown_change = true;
    }
    return {ChangeOutcome::veto, std::move(veto)};
  }
  if (carried) {
    return {facts.path == ChangePath::rebased_edit ? ChangeOutcome::rebase : ChangeOutcome::merge,
            facts.carried_over};
  }
  return {};
}

} // namespace fsguard
