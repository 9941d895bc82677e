"""Schedule drift: ``LiveSchedule.differences`` and ``reconcile`` rewriting the live schedules whose
specification differs from what the state asks for under the current settings (in-memory timers; the
same against moto: tests/integration/test_reconcile_drift.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from promptpipe.errors import TimerError
from promptpipe.flow.effects import daily_spec, put_schedule
from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.effects import LiveSchedule, ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData
from promptpipe.usecases.participants import apply_participant_update
from promptpipe.usecases.schedules import reconcile
from tests.support import memory_harness

WANTED = LiveSchedule(
    expression="cron(20 9 * * ? *)",
    timezone="America/Toronto",
    target_arn="arn:prompt",
    role_arn="arn:role",
    payload={"participant_id": "p_1", "schedule_id": "s"},
)


def test_equal_specifications_have_no_differences() -> None:
    assert WANTED.differences(WANTED.model_copy()) == []


def test_differences_name_each_field_that_differs_in_field_order() -> None:
    live = WANTED.model_copy(
        update={
            "expression": "cron(30 9 * * ? *)",
            "flexible_window_minutes": 5,
            "role_arn": "arn:old-role",
            "payload": {"participant_id": "p_1", "schedule_id": "other"},
            "state": "DISABLED",
        }
    )
    assert WANTED.differences(live) == ["expression", "flexible_window_minutes", "role_arn", "payload", "state"]


def test_payload_key_order_does_not_count() -> None:
    live = WANTED.model_copy(update={"payload": {"schedule_id": "s", "participant_id": "p_1"}})
    assert WANTED.differences(live) == []


def _with_schedules(h, pid: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A daily prompt and a one-shot timer in the state, both put under the harness's settings."""
    now = h.clock.now()
    daily = ScheduleInfo(
        id="s1", type=ScheduleType.FIXED, fixed_time="08:30", timezone="UTC", created_at=now, timer_id=f"{pid}-d1"
    )
    name = f"{pid}-fb"
    one_shot = ScheduleSpec(
        name=name,
        kind="timer",
        at=now + timedelta(hours=1),
        timer=TimerPayload(participant_id=pid, kind=TimerKind.AUTO_FEEDBACK, timer_id=name),
    )
    flow = h.store.flows[pid]
    data = StateData(dict(flow.state_data))
    data.set_schedules([daily])
    data.set_pending_timers({name: one_shot})
    h.store.flows[pid] = flow.model_copy(update={"state_data": data.raw})
    h.timers.schedules.clear()
    put_schedule(h.timers, daily_spec(pid, daily, h.app.prep_minutes))
    put_schedule(h.timers, one_shot)
    return f"{pid}-d1", name


def test_reconcile_rewrites_drifted_schedules_and_then_finds_none() -> None:
    # Given a daily prompt and a one-shot put under the old settings
    h = memory_harness()
    p = h.enroll()
    daily, one_shot = _with_schedules(h, p.id)
    assert reconcile(h.app, p.id).repairs == 0
    # When the flexible window and the timers function's ARN change
    h.timers.daily_window_minutes = 10
    h.timers.timers_arn = "memory:timers-v2"
    report = reconcile(h.app, p.id)
    # Then each schedule is rewritten for the field that differs for it, and reported
    assert [(d.name, d.fields) for d in report.updated_drifted] == [
        (daily, ["flexible_window_minutes"]),
        (one_shot, ["target_arn"]),
    ]
    assert (report.created_missing, report.deleted_orphans, report.repairs) == ([], [], 2)
    assert h.timers.specs[daily].flexible_window_minutes == 10
    assert h.timers.specs[one_shot].target_arn == "memory:timers-v2"
    # And a second reconcile rewrites nothing
    assert reconcile(h.app, p.id).repairs == 0


def test_a_change_of_prep_time_moves_the_daily_expression() -> None:
    h = memory_harness()
    p = h.enroll()
    daily, _ = _with_schedules(h, p.id)
    assert h.timers.specs[daily].expression == f"cron({30 - h.app.prep_minutes} 8 * * ? *)"
    # a redeployment with another SCHEDULER_PREP_TIME_MINUTES
    new_prep = h.app.prep_minutes + 5
    h.app.deps.config = replace(h.app.deps.config, scheduler_prep_time_minutes=new_prep)
    report = reconcile(h.app, p.id)
    assert [(d.name, d.fields) for d in report.updated_drifted] == [(daily, ["expression"])]
    assert h.timers.specs[daily].expression == f"cron({30 - new_prep} 8 * * ? *)"


def test_the_refresh_of_a_marked_participant_reputs_without_reading() -> None:
    # The sweep's refresh re-puts every wanted schedule anyway: no GetSchedule for it.
    h = memory_harness()
    p = h.enroll()
    _, one_shot = _with_schedules(h, p.id)
    h.timers.timers_arn = "memory:timers-v2"
    report = reconcile(h.app, p.id, refresh=True)
    assert h.timers.described == [] and report.updated_drifted == []
    assert h.timers.specs[one_shot].target_arn == "memory:timers-v2"


def test_a_past_one_shot_is_neither_read_nor_rewritten() -> None:
    h = memory_harness()
    p = h.enroll()
    daily, one_shot = _with_schedules(h, p.id)
    h.timers.timers_arn = "memory:timers-v2"
    h.clock.advance(timedelta(hours=2))
    report = reconcile(h.app, p.id)
    assert h.timers.described == [daily]
    assert (report.updated_drifted, report.skipped_past) == ([], [])
    assert h.timers.specs[one_shot].target_arn == "memory:timers"


def test_a_zone_change_whose_update_failed_is_found_by_reconcile() -> None:
    # Given a daily schedule left in the old zone (the update failed after the commit)
    h = memory_harness()
    p = h.enroll(timezone="UTC")
    daily, _ = _with_schedules(h, p.id)
    h.timers.fail_next = TimerError("ThrottlingException")
    assert apply_participant_update(h.app, p.id, ParticipantUpdate(timezone="Europe/Paris")).effects_pending
    assert h.timers.schedules[daily].timezone == "UTC"
    # When reconcile runs / Then it rewrites it in the state's zone
    report = reconcile(h.app, p.id)
    assert [(d.name, d.fields) for d in report.updated_drifted] == [(daily, ["timezone"])]
    assert h.timers.schedules[daily].timezone == "Europe/Paris"
