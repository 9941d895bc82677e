"""Effects as data (shared/promptpipe/flow/effects.py): firing times, the midnight wrap of prep time,
what each spec does to the timer backend, and failures that must not pass in silence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.errors import InvalidScheduleExpression, TimerError
from promptpipe.flow.effects import (
    Effects,
    apply_schedule_changes,
    daily_spec,
    desired_schedules,
    hhmm_minutes,
    one_shot_prompt,
    one_shot_timer,
    plan_effects,
    put_schedule,
    schedule_timing,
    validate_daily,
)
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData

PID = "p_" + "a" * 32
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def fixed(time: str, timer_id: str = "pp-daily-x", zone: str = "America/Toronto") -> ScheduleInfo:
    return ScheduleInfo(
        id="s1", type=ScheduleType.FIXED, fixed_time=time, timezone=zone, created_at=NOW, timer_id=timer_id
    )


def random_window(start: str, end: str) -> ScheduleInfo:
    return ScheduleInfo(
        id="s2",
        type=ScheduleType.RANDOM,
        random_start_time=start,
        random_end_time=end,
        timezone="UTC",
        created_at=NOW,
        timer_id="pp-random-x",
    )


def participant(status: ParticipantStatus = ParticipantStatus.ACTIVE) -> ConversationParticipant:
    return ConversationParticipant(
        id=PID, phone_number="+15551230000", status=status, enrolled_at=NOW, created_at=NOW, updated_at=NOW
    )


# --- time of day ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hhmm", "minutes"), [("00:00", 0), ("0:01", 1), ("08:30", 510), ("9:05", 545), ("23:59", 1439)]
)
def test_hhmm_minutes(hhmm: str, minutes: int) -> None:
    assert hhmm_minutes(hhmm) == minutes


@pytest.mark.parametrize(
    ("time", "prep", "fires_at"),
    [
        ("08:30", 10, (8, 20)),  # not on the hour
        ("08:00", 10, (7, 50)),  # crosses the hour
        ("00:10", 10, (0, 0)),  # exactly midnight
        ("00:05", 10, (23, 55)),  # wraps to the evening before
        ("00:00", 1, (23, 59)),
        ("23:59", 0, (23, 59)),  # the last minute, no prep
        ("12:00", 0, (12, 0)),
    ],
)
def test_daily_firing_time_and_midnight_wrap(time: str, prep: int, fires_at: tuple[int, int]) -> None:
    spec = daily_spec(PID, fixed(time), prep)
    assert (spec.hour, spec.minute) == fires_at
    assert spec.kind == "daily_prompt"
    assert spec.name == "pp-daily-x"
    assert spec.timezone == "America/Toronto"
    assert spec.prompt is not None
    assert (spec.prompt.kind, spec.prompt.window_minutes, spec.prompt.schedule_id) == ("daily_prompt", 0, "s1")
    assert spec.prompt.participant_id == PID
    assert spec.prompt.created_at == NOW  # the registry's, when no re-creation time is given


def test_random_window_fires_at_its_start_less_prep_with_its_length() -> None:
    assert schedule_timing(random_window("09:00", "17:30"), 10) == (8 * 60 + 50, 8 * 60 + 30)
    spec = daily_spec(PID, random_window("00:05", "01:05"), 10, created_at=NOW + timedelta(days=1))
    assert (spec.hour, spec.minute) == (23, 55)
    assert spec.prompt is not None
    assert (spec.prompt.kind, spec.prompt.window_minutes) == ("random_window", 60)
    assert spec.prompt.created_at == NOW + timedelta(days=1)


def test_fixed_schedule_has_no_window_even_with_window_fields_set() -> None:
    schedule = fixed("10:00").model_copy(update={"random_start_time": "09:00", "random_end_time": "11:00"})
    assert schedule_timing(schedule, 5) == (9 * 60 + 55, 0)


# --- validation -----------------------------------------------------------------------------------


def test_validate_daily_refuses_what_eventbridge_would() -> None:
    good = daily_spec(PID, fixed("08:30"), 10)
    assert validate_daily(good) is good
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        validate_daily(good.model_copy(update={"name": "bad name"}))
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time 24:20: hour 0-23, minute 0-59$"):
        validate_daily(good.model_copy(update={"hour": 24}))
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time 8:60: hour 0-23, minute 0-59$"):
        validate_daily(good.model_copy(update={"minute": 60}))
    with pytest.raises(
        InvalidScheduleExpression,
        match=r"^invalid timezone: .* is not an IANA time zone name \(e\.g\. America/Toronto\)$",
    ):
        validate_daily(good.model_copy(update={"timezone": "Mars/Olympus"}))
    with pytest.raises(
        InvalidScheduleExpression,
        match=r"^invalid timezone: .* is not an IANA time zone name \(e\.g\. America/Toronto\)$",
    ):
        validate_daily(good.model_copy(update={"timezone": None}))


def test_one_shots_validate_name_and_awareness() -> None:
    payload = TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id="pp-fb-1")
    spec = one_shot_timer("pp-fb-1", NOW, payload)
    assert (spec.kind, spec.at, spec.timer) == ("timer", NOW, payload)
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        one_shot_timer("bad name", NOW, payload)
    with pytest.raises(InvalidScheduleExpression, match="timezone-aware"):
        one_shot_timer("pp-fb-1", NOW.replace(tzinfo=None), payload)
    prompt = ScheduledPromptPayload(participant_id=PID, schedule_id="s2", kind="random_window")
    spec = one_shot_prompt("pp-rand-1", NOW, prompt)
    assert (spec.kind, spec.at, spec.prompt) == ("prompt_at", NOW, prompt)
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        one_shot_prompt("a/b", NOW, prompt)


# --- desired state and plans ------------------------------------------------------------------------


def _data(*schedules: ScheduleInfo, pending: dict[str, ScheduleSpec] | None = None) -> StateData:
    data = StateData({})
    data.set_schedules(list(schedules))
    if pending:
        data.set_pending_timers(pending)
    return data


def test_desired_schedules_are_the_registry_and_the_pending_one_shots() -> None:
    payload = TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id="pp-fb-1")
    one_shot = one_shot_timer("pp-fb-1", NOW, payload)
    unnamed = fixed("09:00", timer_id="")
    data = _data(fixed("08:30"), unnamed, pending={"pp-fb-1": one_shot})
    desired = desired_schedules(participant(), data, 10, now=NOW + timedelta(hours=1))
    assert sorted(desired) == ["pp-daily-x", "pp-fb-1"]  # a registry entry without a timer id has none
    assert desired["pp-fb-1"] == one_shot
    daily = desired["pp-daily-x"]
    assert (daily.hour, daily.minute) == (8, 20)
    assert daily.prompt is not None
    assert daily.prompt.created_at == NOW + timedelta(hours=1)


@pytest.mark.parametrize("status", [s for s in ParticipantStatus if s is not ParticipantStatus.ACTIVE])
def test_nothing_is_desired_for_a_participant_who_is_not_active(status: ParticipantStatus) -> None:
    assert desired_schedules(participant(status), _data(fixed("08:30")), 10) == {}


def test_plan_names_each_touched_schedule_once_in_order_and_deletes_what_is_not_desired() -> None:
    effects = plan_effects(
        participant(),
        _data(fixed("08:30")),
        event_id="evt-1",
        messages=[],
        touched=["pp-gone", "pp-daily-x", "pp-gone"],
        prep_minutes=10,
        now=NOW,
    )
    assert list(effects.schedules) == ["pp-gone", "pp-daily-x"]
    assert effects.schedules["pp-gone"] is None
    assert effects.schedules["pp-daily-x"] is not None
    assert (effects.participant_id, effects.event_id) == (PID, "evt-1")
    assert not effects.empty
    assert Effects(participant_id=PID, event_id="e").empty


# --- applying: what the timer backend holds afterwards ------------------------------------------------


def test_put_schedule_creates_each_kind_on_the_backend() -> None:
    timers = InMemoryTimers()
    daily = daily_spec(PID, fixed("00:05"), 10)
    timer = one_shot_timer(
        "pp-fb-1", NOW, TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id="pp-fb-1")
    )
    prompt = one_shot_prompt("pp-rand-1", NOW, ScheduledPromptPayload(participant_id=PID, schedule_id="s2"))
    for spec in (daily, timer, prompt):
        put_schedule(timers, spec)
    stored = timers.get("pp-daily-x")
    assert stored is not None
    assert (stored.kind, stored.hour, stored.minute, stored.timezone) == ("daily_prompt", 23, 55, "America/Toronto")
    assert stored.payload == daily.prompt
    stored_timer, stored_prompt = timers.get("pp-fb-1"), timers.get("pp-rand-1")
    assert stored_timer is not None
    assert (stored_timer.kind, stored_timer.at, stored_timer.payload) == ("timer", NOW, timer.timer)
    assert stored_prompt is not None
    assert (stored_prompt.kind, stored_prompt.at, stored_prompt.payload) == ("prompt_at", NOW, prompt.prompt)


@pytest.mark.parametrize(
    "spec",
    [
        ScheduleSpec(name="pp-x", kind="daily_prompt", hour=8, minute=0, timezone="UTC"),  # no payload
        ScheduleSpec(name="pp-x", kind="timer", at=NOW),  # no payload
        ScheduleSpec(
            name="pp-x",
            kind="timer",
            timer=TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id="pp-x"),
        ),  # no time
        ScheduleSpec(name="pp-x", kind="prompt_at", prompt=ScheduledPromptPayload(participant_id=PID, schedule_id="s")),
    ],
)
def test_an_incomplete_spec_is_refused_and_nothing_is_created(spec: ScheduleSpec) -> None:
    timers = InMemoryTimers()
    with pytest.raises(TimerError, match="schedule pp-x: incomplete description"):
        put_schedule(timers, spec)
    assert timers.schedules == {}


def test_apply_creates_and_deletes_and_the_backend_shows_it() -> None:
    timers = InMemoryTimers()
    put_schedule(timers, daily_spec(PID, fixed("07:00", timer_id="pp-old"), 10))
    applied = apply_schedule_changes(timers, {"pp-old": None, "pp-daily-x": daily_spec(PID, fixed("08:30"), 10)})
    assert applied == 2
    assert timers.cancelled == ["pp-old"]
    assert timers.get("pp-old") is None
    assert sorted(timers.schedules) == ["pp-daily-x"]


def test_deleting_a_schedule_that_does_not_exist_is_success() -> None:
    timers = InMemoryTimers()
    assert apply_schedule_changes(timers, {"pp-never": None}) == 1
    assert timers.cancelled == ["pp-never"]


def test_a_failed_change_does_not_stop_the_others_and_raises_afterwards() -> None:
    timers = InMemoryTimers()
    put_schedule(timers, daily_spec(PID, fixed("07:00", timer_id="pp-old"), 10))
    timers.fail_next = TimerError("throttled")
    with pytest.raises(TimerError, match=r"^1 schedule change\(s\) failed: pp-old: throttled$"):
        apply_schedule_changes(timers, {"pp-old": None, "pp-daily-x": daily_spec(PID, fixed("08:30"), 10)})
    # the cancel failed (the schedule is still live), the create after it went through
    assert timers.cancelled == []
    assert timers.get("pp-old") is not None
    assert timers.get("pp-daily-x") is not None


def test_every_failure_is_named() -> None:
    timers = InMemoryTimers()
    bad = ScheduleSpec(name="pp-b", kind="timer")
    with pytest.raises(TimerError, match=r"^2 schedule change\(s\) failed: pp-a: .+; pp-b: .+incomplete"):
        apply_schedule_changes(timers, {"pp-a": ScheduleSpec(name="pp-a", kind="timer"), "pp-b": bad})


def test_a_non_timer_error_is_not_swallowed() -> None:
    timers = InMemoryTimers()
    timers.fail_next = RuntimeError("bug")
    with pytest.raises(RuntimeError, match="bug"):
        apply_schedule_changes(timers, {"pp-old": None, "pp-new": None})
    assert timers.cancelled == []


def test_a_daily_spec_without_time_or_zone_is_midnight_utc() -> None:
    timers = InMemoryTimers()
    prompt = ScheduledPromptPayload(participant_id=PID, schedule_id="s1")
    put_schedule(timers, ScheduleSpec(name="pp-bare", kind="daily_prompt", prompt=prompt))
    stored = timers.get("pp-bare")
    assert stored is not None
    assert (stored.hour, stored.minute, stored.timezone) == (0, 0, "UTC")
