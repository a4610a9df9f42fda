#include <doctest/doctest.h>

#include "proxy/guard/change_decision.hpp"

using namespace fsguard;

namespace {

Veto veto_of(VetoCode code)
{
  Veto veto;
  veto.code = code;
  veto.path = "/ws/a.txt";
  return veto;
}

} // namespace

TEST_SUITE("change decision")
{
  TEST_CASE("every path but a move's source asks the tracker's check, and a failed check refuses")
  {
    for (const auto path : {ChangePath::write, ChangePath::edit, ChangePath::move_destination,
                            ChangePath::accepted_override}) {
      CAPTURE(static_cast<int>(path));
      const auto decision =
        decide({.path = path, .check = veto_of(VetoCode::not_read)}, "/ws/a.txt");
      CHECK(decision.outcome == ChangeOutcome::veto);
      CHECK(decision.veto->code == VetoCode::not_read);
      CHECK(decide({.path = path}, "/ws/a.txt").outcome == ChangeOutcome::allow);
    }
    CHECK(decide({.path = ChangePath::move_source, .check = veto_of(VetoCode::not_read)},
                 "/ws/a.txt")
            .outcome
          == ChangeOutcome::allow);
  }

  TEST_CASE("every path that leaves a whole content keeps a change shown; an edit matches text")
  {
    CHECK(write_kind(ChangePath::edit) == WriteKind::edit);
    CHECK(write_kind(ChangePath::rebased_edit) == WriteKind::edit);
    for (const auto path : {ChangePath::write, ChangePath::move_destination,
                            ChangePath::merged_write, ChangePath::accepted_override}) {
      CAPTURE(static_cast<int>(path));
      CHECK(write_kind(path) == WriteKind::overwrite);
      CHECK(replaces_content(path));
      const auto decision =
        decide({.path = path,
                .shown = ShownChange::not_kept,
                .carried_over = veto_of(VetoCode::changed)},
               "/ws/a.txt");
      CHECK(decision.outcome == ChangeOutcome::veto);
      CHECK(decision.veto->code == VetoCode::changed);
      CHECK(decision.veto->path == "/ws/a.txt");
      // A merge keeps the veto's diff, and says why it did not merge.
      CHECK(decision.veto->undoes_shown_change == (path != ChangePath::merged_write));
      CHECK(decision.veto->not_merged.empty() == (path != ChangePath::merged_write));
    }
    for (const auto path : {ChangePath::edit, ChangePath::rebased_edit, ChangePath::move_source}) {
      CHECK_FALSE(replaces_content(path));
    }
    CHECK(decide({.path = ChangePath::write, .shown = ShownChange::kept}, "/ws/a.txt").outcome
          == ChangeOutcome::allow);
  }

  TEST_CASE("a carried-over change is a rebase or a merge, with the veto it carried over")
  {
    const auto rebase = decide({.path = ChangePath::rebased_edit,
                                .carried_over = veto_of(VetoCode::changed)},
                               "/ws/a.txt");
    CHECK(rebase.outcome == ChangeOutcome::rebase);
    CHECK(rebase.veto->code == VetoCode::changed);
    const auto merge = decide({.path = ChangePath::merged_write, .shown = ShownChange::kept,
                               .carried_over = veto_of(VetoCode::changed)},
                              "/ws/a.txt");
    CHECK(merge.outcome == ChangeOutcome::merge);
  }

  TEST_CASE("an accepted override passes the veto the person allowed, and no other")
  {
    const auto allowed = decide({.path = ChangePath::accepted_override,
                                 .check = veto_of(VetoCode::not_read),
                                 .accepted = VetoCode::not_read},
                                "/ws/a.txt");
    CHECK(allowed.outcome == ChangeOutcome::allow);
    const auto other = decide({.path = ChangePath::accepted_override,
                               .check = veto_of(VetoCode::unknown_outcome),
                               .accepted = VetoCode::not_read},
                              "/ws/a.txt");
    CHECK(other.outcome == ChangeOutcome::veto);
    // The person allowed a not_read write: a change shown since still binds it.
    CHECK(decide({.path = ChangePath::accepted_override, .shown = ShownChange::not_kept,
                  .accepted = VetoCode::not_read},
                 "/ws/a.txt")
            .outcome
          == ChangeOutcome::veto);
    CHECK(decide({.path = ChangePath::accepted_override, .shown = ShownChange::not_kept,
                  .accepted = VetoCode::changed},
                 "/ws/a.txt")
            .outcome
          == ChangeOutcome::allow);
  }

  TEST_CASE("the keep-the-change rule binds a call sent before the agent read the file again")
  {
    SeenRecord record;
    CHECK_FALSE(bound_to_shown_change(nullptr, 5));
    CHECK_FALSE(bound_to_shown_change(&record, 5));
    record.shown_over = ShownOver{};
    CHECK(bound_to_shown_change(&record, 5));
    record.shown_over->until = 5;
    CHECK(bound_to_shown_change(&record, 4));
    CHECK_FALSE(bound_to_shown_change(&record, 5));
  }
}
