"""A pause of the daily prompts with an end date (docs/behaviour.md#B-SCHED-10): the
scheduler's ``pause`` takes the daily crons away and arms one one-shot that brings them back; the
firing is idempotent (a redelivery or an overtaken firing changes nothing); ``resume`` brings them back
early and disarms it.

Timers are fired the way EventBridge would: at their time, once, and deleted after completion
(``fire_due``); a duplicated firing is replayed by hand with the stored payload."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.flow.tools.scheduler import SchedulerTool, validate_params
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey
from tests.support import MemoryHarness, fire, fire_due, memory_harness
from tests.support.schedules import apply_schedules


def run(h: MemoryHarness, participant: ConversationParticipant, args: dict[str, Any]) -> ToolResult:
    session = h.app.sessions.open(participant.id, f"tool-{h.store.commits}-{h.clock.now().isoformat()}")
    result = SchedulerTool(10).execute(ToolContext(h.app.deps, session), args)
    if session.dirty:
        apply_schedules(h.app, session.commit())
    return result


def daily(h: MemoryHarness) -> list[str]:
    return sorted(f"{s.hour:02d}:{s.minute:02d}" for s in h.timers.schedules.values() if s.kind == "daily_prompt")


def registry(h: MemoryHarness, participant_id: str) -> list[str]:
    return [s["fixed_time"] for s in json.loads(h.data(participant_id).get(DataKey.SCHEDULE_REGISTRY.value, "[]"))]


def given_a_daily_prompt(h: MemoryHarness) -> ConversationParticipant:
    p = h.enroll(timezone="America/Toronto")
    assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": "18:30"}).ok
    assert daily(h) == ["18:20"]
    return p


def test_a_pause_takes_the_daily_prompts_away_and_they_come_back_by_themselves() -> None:
    h = memory_harness()
    p = given_a_daily_prompt(h)
    start = h.clock.now()
    result = run(h, p, {"action": "pause", "days": 3})
    assert result.ok and result.data["days"] == 3 and "resume by themselves" in result.text
    assert daily(h) == [] and registry(h, p.id) == []  # no prompt is sent while paused
    resume = h.timers.get(f"{p.id}-resume")
    assert resume is not None and resume.at == start + timedelta(days=3)
    listed = run(h, p, {"action": "list"})
    assert listed.text.startswith("The daily prompts are paused until ") and "18:30" in listed.text
    # Nothing happens before the end; then the schedule is back, and the one-shot is gone
    assert fire_due(h, start + timedelta(days=3) - timedelta(seconds=1)) == []
    [(name, outcome)] = fire_due(h, start + timedelta(days=3))
    assert name == f"{p.id}-resume" and outcome.timer is not None and outcome.timer.applied
    assert daily(h) == ["18:20"] and registry(h, p.id) == ["18:30"]
    assert h.data(p.id).get(DataKey.SCHEDULE_PAUSE.value, "") == ""
    assert h.timers.get(f"{p.id}-resume") is None
    # A redelivery of the same firing changes nothing
    again = fire(h, resume.payload, f"{resume.name}:again")
    assert again.timer is not None and not again.timer.applied and "stale" in again.timer.detail
    assert daily(h) == ["18:20"] and registry(h, p.id) == ["18:30"]


def test_resume_brings_them_back_early_and_the_old_firing_is_stale() -> None:
    h = memory_harness()
    p = given_a_daily_prompt(h)
    assert run(h, p, {"action": "pause", "days": 7}).ok
    armed = h.timers.get(f"{p.id}-resume")
    assert armed is not None
    result = run(h, p, {"action": "resume"})
    assert result.ok and result.data["resumed"] is True and "18:30" in result.text
    assert daily(h) == ["18:20"] and h.timers.get(f"{p.id}-resume") is None
    late = fire(h, armed.payload, "late")
    assert late.timer is not None and not late.timer.applied
    assert registry(h, p.id) == ["18:30"]
    nothing = run(h, p, {"action": "resume"})
    assert nothing.ok and nothing.data == {"resumed": False}


def test_a_second_pause_extends_the_first() -> None:
    h = memory_harness()
    p = given_a_daily_prompt(h)
    start = h.clock.now()
    assert run(h, p, {"action": "pause", "days": 2}).ok
    first = h.timers.get(f"{p.id}-resume")
    assert first is not None
    assert run(h, p, {"action": "pause", "days": 5}).ok
    assert h.timers.get(f"{p.id}-resume").at == start + timedelta(days=5)  # type: ignore[union-attr]
    stale = fire(h, first.payload, "first")  # the first end, delivered late: no longer the end
    assert stale.timer is not None and not stale.timer.applied and daily(h) == []
    fire_due(h, start + timedelta(days=5))
    assert registry(h, p.id) == ["18:30"]


def test_nothing_to_pause_and_bad_days_are_errors() -> None:
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    result = run(h, p, {"action": "pause", "days": 3})
    assert not result.ok and "no daily schedule" in result.text
    for days in (0, 61, "3", True, None):
        with pytest.raises(ValueError, match="days is required for pause action"):
            validate_params({"action": "pause", "days": days})
    assert validate_params({"action": "resume"}).action == "resume"


def test_a_resume_firing_for_a_participant_who_opted_out_changes_nothing() -> None:
    from promptpipe.models.participant import ParticipantStatus

    h = memory_harness()
    p = given_a_daily_prompt(h)
    assert run(h, p, {"action": "pause", "days": 1}).ok
    h.store.participants[p.id].status = ParticipantStatus.PAUSED
    payload = TimerPayload(participant_id=p.id, kind=TimerKind.SCHEDULE_RESUME, timer_id=f"{p.id}-resume")
    outcome = fire(h, payload, "opted-out")
    assert outcome.timer is not None and not outcome.timer.applied and registry(h, p.id) == []
