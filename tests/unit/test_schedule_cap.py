"""The cap on a participant's live daily schedules (docs/safety.md#budgets): the scheduler tool
refuses past it with a clear tool error, and a concurrent turn cannot push the registry past it."""

from __future__ import annotations

from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.settings import Settings
from tests.support import memory_harness
from tests.support.schedules import apply_schedules


def create(h, pid: str, event_id: str, at: str):
    session = h.app.sessions.open(pid, event_id)
    result = SchedulerTool(10).execute(
        ToolContext(h.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": at}
    )
    apply_schedules(h.app, session.commit())
    return result


def live_daily(h) -> list[str]:
    return [name for name, s in h.timers.schedules.items() if s.kind == "daily_prompt"]


def test_ten_requests_for_a_schedule_leave_three_live_and_the_rest_are_refused_clearly() -> None:
    # Given a participant under the default cap
    h = memory_harness()
    p = h.enroll()

    # When the model asks ten times for another daily schedule, each at a different time
    results = [create(h, p.id, f"turn-{n}", f"{8 + n:02d}:00") for n in range(10)]

    # Then three are live, and every later request is a tool error that says why
    assert len(live_daily(h)) == 3
    assert [r.ok for r in results] == [True] * 3 + [False] * 7
    assert all("already has 3 daily schedules" in r.text and "delete" in r.text for r in results[3:])


def test_the_cap_is_a_setting_and_deleting_one_makes_room() -> None:
    h = memory_harness(settings=Settings(max_live_daily_schedules=1))
    p = h.enroll()
    first = create(h, p.id, "turn-a", "09:00")
    assert first.ok and not create(h, p.id, "turn-b", "10:00").ok
    session = h.app.sessions.open(p.id, "turn-delete")
    deleted = SchedulerTool(10).execute(
        ToolContext(h.app.deps, session), {"action": "delete", "schedule_id": first.data["schedule_id"]}
    )
    apply_schedules(h.app, session.commit())
    assert deleted.ok and live_daily(h) == []
    assert create(h, p.id, "turn-c", "10:00").ok and len(live_daily(h)) == 1


def test_a_concurrent_turn_that_reached_the_cap_first_wins() -> None:
    # Given two turns opened on the same state, one schedule short of the cap
    h = memory_harness(settings=Settings(max_live_daily_schedules=1))
    p = h.enroll()
    slow = h.app.sessions.open(p.id, "turn-slow")
    assert (
        SchedulerTool(10)
        .execute(ToolContext(h.app.deps, slow), {"action": "create", "type": "fixed", "fixed_time": "07:00"})
        .ok
    )

    # When the other commits a schedule first, and then the slow one commits (replaying its operations)
    assert create(h, p.id, "turn-fast", "08:00").ok
    apply_schedules(h.app, slow.commit())

    # Then the registry still holds one schedule, and one is live
    assert len(live_daily(h)) == 1
