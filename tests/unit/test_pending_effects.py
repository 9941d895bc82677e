"""Schedule changes that fail after a commit: the pending-effects marker, its repair from the state
(a failed update too, not only a missing schedule), and the sweep (docs/architecture.md, "Effects
that failed")."""

from __future__ import annotations

from promptpipe.errors import TimerError
from promptpipe.flow.effects import daily_spec, put_schedule
from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData
from promptpipe.usecases.participants import apply_participant_update, state_view
from promptpipe.usecases.schedules import repair_pending, sweep_pending_effects
from tests.support import memory_harness


def test_a_failed_update_of_a_live_schedule_is_marked_then_re_put_by_the_sweep() -> None:
    # Given a participant with a live daily schedule in UTC
    h = memory_harness()
    p = h.enroll(timezone="UTC")
    now = h.clock.now()
    daily = ScheduleInfo(
        id="s1", type=ScheduleType.FIXED, fixed_time="08:30", timezone="UTC", created_at=now, timer_id=f"{p.id}-d1"
    )
    flow = h.store.flows[p.id]
    data = StateData(dict(flow.state_data))
    data.set_schedules([daily])
    h.store.flows[p.id] = flow.model_copy(update={"state_data": data.raw})
    put_schedule(h.timers, daily_spec(p.id, daily, 10))

    # When they move to another zone while the scheduler fails the update
    h.timers.fail_next = TimerError("ThrottlingException")
    outcome = apply_participant_update(h.app, p.id, ParticipantUpdate(timezone="Europe/Paris"))

    # Then the change is stored, the caller is told it is pending, and the live schedule is stale
    assert outcome.effects_pending and outcome.participant.timezone == "Europe/Paris"
    assert state_view(h.app, p.id).effects_pending
    assert h.timers.schedules[f"{p.id}-d1"].timezone == "UTC"
    # (reconcile would rewrite it too, its zone differs from the state's: tests/unit/test_schedule_drift.py)

    # And the sweep puts it again from the state and clears the marker
    assert sweep_pending_effects(h.app) == [p.id]
    assert h.timers.schedules[f"{p.id}-d1"].timezone == "Europe/Paris"
    assert not state_view(h.app, p.id).effects_pending
    assert sweep_pending_effects(h.app) == []


def test_the_sweep_keeps_the_marker_while_the_scheduler_still_fails() -> None:
    h = memory_harness()
    p = h.enroll()
    token = h.store.pending_effects.mark(p.id)
    h.timers.fail_next = TimerError("still down")

    assert sweep_pending_effects(h.app) == []
    assert h.store.pending_effects.markers == {p.id: token}
    assert sweep_pending_effects(h.app) == [p.id]  # the next run, the scheduler back


def test_a_marker_renewed_during_a_repair_is_not_cleared() -> None:
    h = memory_harness()
    p = h.enroll()
    old = h.store.pending_effects.mark(p.id)
    new = h.store.pending_effects.mark(p.id)  # a newer failure

    assert repair_pending(h.app, p.id, old)
    assert h.store.pending_effects.markers == {p.id: new}
