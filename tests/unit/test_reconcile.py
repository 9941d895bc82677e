"""``reconcile``: live schedules made equal to what the committed state wants, checked on the timer
backend itself (orphans deleted, missing ones re-created, past one-shots left alone)."""

from __future__ import annotations

from datetime import timedelta

from promptpipe.flow.effects import daily_spec, put_schedule
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData
from promptpipe.usecases.schedules import reconcile, reconcile_all
from tests.support import memory_harness


def _with_state(h, pid: str, *, schedules: list[ScheduleInfo], pending: dict[str, ScheduleSpec]) -> None:
    flow = h.store.flows[pid]
    data = StateData(dict(flow.state_data))
    data.set_schedules(schedules)
    data.set_pending_timers(pending)
    h.store.flows[pid] = flow.model_copy(update={"state_data": data.raw})


def test_reconcile_deletes_orphans_recreates_missing_and_skips_past_one_shots() -> None:
    h = memory_harness()
    p = h.enroll()
    h.timers.schedules.clear()
    now = h.clock.now()
    daily = ScheduleInfo(
        id="s1", type=ScheduleType.FIXED, fixed_time="08:30", timezone="UTC", created_at=now, timer_id=f"{p.id}-d1"
    )

    def one_shot(name: str, at) -> ScheduleSpec:  # type: ignore[no-untyped-def]
        payload = TimerPayload(participant_id=p.id, kind=TimerKind.AUTO_FEEDBACK, timer_id=name)
        return ScheduleSpec(name=name, kind="timer", at=at, timer=payload)

    future, past = one_shot(f"{p.id}-fb", now + timedelta(hours=1)), one_shot(f"{p.id}-old", now - timedelta(hours=1))
    _with_state(h, p.id, schedules=[daily], pending={future.name: future, past.name: past})
    put_schedule(h.timers, daily_spec(p.id, daily.model_copy(update={"timer_id": f"{p.id}-orphan"}), 10))

    report = reconcile(h.app, p.id)

    assert report.deleted_orphans == [f"{p.id}-orphan"]
    assert report.created_missing == sorted([f"{p.id}-d1", f"{p.id}-fb"])
    assert report.skipped_past == [f"{p.id}-old"]
    assert (report.live, report.desired, report.repairs) == (1, 3, 3)
    assert sorted(h.timers.schedules) == sorted([f"{p.id}-d1", f"{p.id}-fb"])
    assert f"{p.id}-orphan" in h.timers.cancelled
    again = reconcile(h.app, p.id)
    assert again.repairs == 0


def test_reconcile_all_covers_the_enrolled_and_the_deleted_with_live_schedules() -> None:
    h = memory_harness()
    kept = h.enroll("+14155550101")
    gone = h.enroll("+14155550102")
    h.timers.schedules.clear()
    spec = daily_spec(
        gone.id,
        ScheduleInfo(
            id="s",
            type=ScheduleType.FIXED,
            fixed_time="09:00",
            timezone="UTC",
            created_at=h.clock.now(),
            timer_id=f"{gone.id}-d",
        ),
        10,
    )
    put_schedule(h.timers, spec)
    h.store.delete(gone.id, keep_transcript=False)

    reports = {r.participant_id: r for r in reconcile_all(h.app)}

    assert set(reports) == {kept.id, gone.id}
    assert reports[gone.id].deleted_orphans == [f"{gone.id}-d"]
    assert reports[gone.id].desired == 0
    assert h.timers.schedules == {}


def test_reconcile_all_pages_through_every_participant() -> None:
    # Given more participants than one page of the repository (100), one missing its schedule
    h = memory_harness()
    people = [h.enroll(f"+1415555{i:04d}") for i in range(101)]
    first_page, token = h.store.list(limit=100, next_token=None)
    [last] = [p for p in people if p.id not in {q.id for q in first_page}]  # the one on the second page
    assert token is not None
    daily = ScheduleInfo(
        id="s1",
        type=ScheduleType.FIXED,
        fixed_time="08:30",
        timezone="UTC",
        created_at=h.clock.now(),
        timer_id=f"{last.id}-d1",
    )
    _with_state(h, last.id, schedules=[daily], pending={})

    reports = reconcile_all(h.app)

    # Then every participant was reconciled once, and the one on the second page was repaired
    assert sorted(r.participant_id for r in reports) == sorted(p.id for p in people)
    assert [r.participant_id for r in reports if r.repairs] == [last.id]
    assert f"{last.id}-d1" in h.timers.schedules
