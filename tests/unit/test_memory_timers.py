"""The in-memory Timers fake: same validation and replace/cancel semantics as the AWS adapter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.errors import InvalidScheduleExpression, TimerError
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload
from promptpipe.ports import Timers

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def _timer(name: str = "pp-reminder-p_1") -> TimerPayload:
    return TimerPayload(participant_id="p_1", kind=TimerKind.DAILY_PROMPT_REMINDER, timer_id=name)


def _prompt(name: str = "pp-daily-p_1") -> ScheduledPromptPayload:
    return ScheduledPromptPayload(participant_id="p_1", schedule_id=name, created_at=NOW)


def test_it_satisfies_the_port() -> None:
    timers: Timers = InMemoryTimers()
    assert timers.schedule_timer(name="t1", at=NOW, payload=_timer("t1")) == "t1"


def test_schedule_each_kind() -> None:
    timers = InMemoryTimers()
    timers.schedule_timer(name="t1", at=NOW + timedelta(hours=5), payload=_timer("t1"))
    timers.schedule_daily_prompt(name="d1", hour=7, minute=50, timezone="America/Toronto", payload=_prompt("d1"))
    timers.schedule_prompt_at(name="r1", at=NOW + timedelta(minutes=30), payload=_prompt("r1"))

    assert {n: s.kind for n, s in timers.schedules.items()} == {
        "t1": "timer",
        "d1": "daily_prompt",
        "r1": "prompt_at",
    }
    daily = timers.schedules["d1"]
    assert (daily.hour, daily.minute, daily.timezone, daily.at) == (7, 50, "America/Toronto", None)
    assert not daily.one_shot
    assert timers.schedules["t1"].one_shot


def test_at_is_stored_in_utc() -> None:
    timers = InMemoryTimers()
    local = datetime(2027, 3, 1, 8, 0, tzinfo=ZoneInfo("America/Toronto"))
    timers.schedule_timer(name="t1", at=local, payload=_timer("t1"))
    stored = timers.schedules["t1"].at
    assert stored == local
    assert stored is not None and stored.tzinfo is UTC


def test_same_name_replaces() -> None:
    # Given a timer / When the same name is scheduled again / Then only the second remains
    timers = InMemoryTimers()
    timers.schedule_timer(name="t1", at=NOW + timedelta(hours=1), payload=_timer("t1"))
    timers.schedule_timer(name="t1", at=NOW + timedelta(hours=2), payload=_timer("t1"))
    assert list(timers.schedules) == ["t1"]
    assert timers.schedules["t1"].at == NOW + timedelta(hours=2)


def test_cancel_removes_and_missing_is_fine() -> None:
    timers = InMemoryTimers()
    timers.schedule_timer(name="t1", at=NOW, payload=_timer("t1"))
    timers.cancel("t1")
    timers.cancel("t1")
    timers.cancel("never-existed")
    assert timers.schedules == {}
    assert timers.cancelled == ["t1", "t1", "never-existed"]


@pytest.mark.parametrize("name", ["", "bad name", "x" * 65, "+15551234567"])
def test_invalid_names_are_rejected(name: str) -> None:
    timers = InMemoryTimers()
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        timers.schedule_timer(name=name, at=NOW, payload=_timer())
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        timers.cancel(name)
    assert timers.schedules == {}


def test_invalid_zone_time_and_naive_at_are_rejected() -> None:
    timers = InMemoryTimers()
    with pytest.raises(
        InvalidScheduleExpression,
        match=r"^invalid timezone: .* is not an IANA time zone name \(e\.g\. America/Toronto\)$",
    ):
        timers.schedule_daily_prompt(name="d1", hour=7, minute=0, timezone="Mars/Olympus", payload=_prompt())
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time -?\d+:-?\d+: hour 0-23, minute 0-59$"):
        timers.schedule_daily_prompt(name="d1", hour=24, minute=0, timezone="UTC", payload=_prompt())
    with pytest.raises(InvalidScheduleExpression, match=r"must be timezone-aware$"):
        timers.schedule_prompt_at(name="r1", at=datetime(2027, 3, 1, 8), payload=_prompt())
    assert timers.schedules == {}


def test_fail_next_fails_exactly_one_call() -> None:
    # Given an injected failure
    timers = InMemoryTimers()
    timers.fail_next = TimerError("throttled")
    # When two calls are made / Then the first fails and stores nothing, the second works
    with pytest.raises(TimerError, match="throttled"):
        timers.schedule_timer(name="t1", at=NOW, payload=_timer("t1"))
    assert timers.schedules == {}
    timers.schedule_timer(name="t1", at=NOW, payload=_timer("t1"))
    assert "t1" in timers.schedules
    assert timers.fail_next is None


def test_fail_next_applies_to_cancel() -> None:
    timers = InMemoryTimers()
    timers.schedule_timer(name="t1", at=NOW, payload=_timer("t1"))
    timers.fail_next = TimerError("boom")
    with pytest.raises(TimerError, match=r"^boom$"):
        timers.cancel("t1")
    assert "t1" in timers.schedules


def test_due_lists_one_shots_in_time_order() -> None:
    timers = InMemoryTimers()
    timers.schedule_timer(name="late", at=NOW + timedelta(hours=5), payload=_timer("late"))
    timers.schedule_timer(name="b", at=NOW + timedelta(minutes=5), payload=_timer("b"))
    timers.schedule_prompt_at(name="a", at=NOW + timedelta(minutes=5), payload=_prompt("a"))
    timers.schedule_daily_prompt(name="d1", hour=0, minute=0, timezone="UTC", payload=_prompt("d1"))

    assert [s.name for s in timers.due(NOW)] == []
    assert [s.name for s in timers.due(NOW + timedelta(minutes=5))] == ["a", "b"]
    assert [s.name for s in timers.due(NOW + timedelta(days=1))] == ["a", "b", "late"]
