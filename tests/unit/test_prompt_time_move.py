"""The daily prompt's time moved (usecases/prompt_time.py, docs/behaviour.md#B-API-9): which schedule
moves, one prompt where the time is taken, nothing added, and what EventBridge would refuse."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptpipe.errors import ValidationFailed
from promptpipe.models.state import ScheduleInfo, ScheduleType
from promptpipe.usecases.prompt_time import _moved, check_prompt_time, normalise_time

AT = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def fixed(schedule_id: str, time: str, zone: str = "America/New_York") -> ScheduleInfo:
    return ScheduleInfo(
        id=schedule_id,
        type=ScheduleType.FIXED,
        fixed_time=time,
        timezone=zone,
        created_at=AT,
        timer_id=f"p-{schedule_id}",
    )


WINDOW = ScheduleInfo(
    id="w",
    type=ScheduleType.RANDOM,
    random_start_time="08:00",
    random_end_time="10:00",
    timezone="America/New_York",
    created_at=AT,
    timer_id="p-w",
)


def test_the_first_fixed_schedule_moves_and_the_rest_stay() -> None:
    schedules, moved = _moved([WINDOW, fixed("a", "09:30"), fixed("b", "21:00")], "19:00")
    assert moved is not None and (moved.id, moved.fixed_time, moved.timer_id) == ("a", "19:00", "p-a")
    assert [(s.id, s.fixed_time) for s in schedules] == [("w", ""), ("a", "19:00"), ("b", "21:00")]


def test_a_time_another_schedule_has_leaves_one_prompt_not_two() -> None:
    schedules, moved = _moved([fixed("a", "09:30"), fixed("b", "21:00")], "21:00")
    assert moved is not None and moved.id == "a"  # touched: deleted after the commit
    assert [(s.id, s.fixed_time) for s in schedules] == [("b", "21:00")]


@pytest.mark.parametrize("registry", [[], [WINDOW], [fixed("a", "19:00")]], ids=["none", "window", "same-time"])
def test_nothing_moves_without_a_fixed_schedule_or_at_the_same_time(registry: list[ScheduleInfo]) -> None:
    assert _moved(registry, "19:00") == (registry, None)


def test_times_are_read_with_or_without_the_leading_zero() -> None:
    assert (normalise_time("7:05"), normalise_time(" 19:00 ")) == ("07:05", "19:00")


def test_what_eventbridge_would_refuse_is_a_400_on_the_field() -> None:
    with pytest.raises(ValidationFailed) as caught:
        check_prompt_time("p", fixed("a", "19:00", zone="Mars/Olympus_Mons"), 10)
    assert caught.value.field == "preferred_time"
    check_prompt_time("p", fixed("a", "19:00"), 10)  # a good one passes
