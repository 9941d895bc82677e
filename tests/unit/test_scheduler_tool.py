"""The ``scheduler`` tool with in-memory fakes (docs/behaviour.md#scheduler, B-SCHED-3, B-SCHED-4,
cases S1–S3 and S7–S11).

The clock starts at ``tests.support.START`` = Monday 2026-03-02 12:00 UTC, which is 07:00 in
Toronto, 21:00 in Tokyo and 04:00 in Los Angeles.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.errors import TimerError
from promptpipe.flow.session import OpContext
from promptpipe.flow.timer_names import random_delivery_name
from promptpipe.flow.tools import scheduler
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.flow.tools.scheduler import (
    DEFAULT_FIXED_TIMEZONE,
    DEFAULT_RANDOM_TIMEZONE,
    SchedulerTool,
    definition,
    describe,
    deterministic_schedule_id,
    first_delivery_is_today,
    normalise_hhmm,
    validate_params,
)
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey, ScheduleInfo, ScheduleType
from promptpipe.settings import Settings
from promptpipe.usecases.participants import update_participant
from tests.support import START, MemoryHarness, memory_harness
from tests.support.schedules import apply_schedules

PREP = 10


def run(h: MemoryHarness, participant: ConversationParticipant, args: dict[str, Any], prep: int = PREP) -> ToolResult:
    """One tool call inside its own session, committed like a turn would be."""
    session = h.app.sessions.open(participant.id, f"tool-{h.store.commits}")
    result = SchedulerTool(prep).execute(ToolContext(h.app.deps, session), args)
    if session.dirty:
        apply_schedules(h.app, session.commit())
    return result


def registry(h: MemoryHarness, participant_id: str) -> list[dict[str, Any]]:
    return json.loads(h.data(participant_id).get(DataKey.SCHEDULE_REGISTRY.value, "[]"))


def daily(h: MemoryHarness) -> list[Any]:
    return [s for s in h.timers.schedules.values() if s.kind == "daily_prompt"]


# --- S1, S8, S9: definition and validation ------------------------------------------------------


def test_s1_definition_is_named_scheduler_and_only_action_is_required() -> None:
    # Given the tool definition with a 10-minute prep time
    tool = definition(PREP)
    # Then it is "scheduler", only "action" is required, and the prep time is described
    assert tool.name == "scheduler"
    assert tool.parameters["required"] == ["action"]
    assert tool.parameters["properties"]["action"]["enum"] == ["create", "list", "delete", "pause", "resume"]
    assert "10 minutes" in tool.description


@pytest.mark.parametrize(
    "args",
    [
        {"action": "create", "type": "fixed", "fixed_time": "09:30"},
        {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"},
        {"action": "list"},
        {"action": "delete", "schedule_id": "sched_0123456789abcdef"},
    ],
)
def test_s8_valid_parameters_pass(args: dict[str, Any]) -> None:
    # Given well-formed arguments / When validated / Then no error
    assert validate_params(args).action == args["action"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "invalid scheduler action: "),
        ({"action": "invalid"}, "invalid scheduler action: invalid"),
        ({"action": "create"}, "invalid scheduler type: "),
        ({"action": "create", "type": "weekly"}, "invalid scheduler type: weekly"),
        ({"action": "create", "type": "fixed"}, "fixed_time is required for fixed scheduler type"),
        (
            {"action": "create", "type": "fixed", "fixed_time": "9am"},
            "invalid fixed_time format: time must be in HH:MM format (24-hour)",
        ),
        (
            {"action": "create", "type": "random", "random_end_time": "10:00"},
            "random_start_time is required for random scheduler type",
        ),
        (
            {"action": "create", "type": "random", "random_start_time": "08:00"},
            "random_end_time is required for random scheduler type",
        ),
        (
            {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "08:00"},
            "random_end_time must be after random_start_time",
        ),
        (
            {"action": "create", "type": "random", "random_start_time": "22:00", "random_end_time": "01:00"},
            "random_end_time must be after random_start_time",
        ),
        ({"action": "delete"}, "schedule_id is required for delete action"),
        # S9 adapted: the module parses the JSON arguments; a non-string value reaches the tool
        # as a missing field and gets that field's message.
        ({"action": "create", "type": "fixed", "fixed_time": 930}, "fixed_time is required for fixed scheduler type"),
    ],
)
def test_s8_s9_invalid_parameters_fail_with_the_original_meanings(args: dict[str, Any], error: str) -> None:
    # Given malformed arguments / When validated / Then the docs/behaviour.md#B-SCHED-1 error string
    with pytest.raises(ValueError) as exc:
        validate_params(args)
    assert str(exc.value) == error


@pytest.mark.parametrize("value", ["9:00", "09:00", "0:00", "23:59"])
def test_accepted_time_formats(value: str) -> None:
    hours, minutes = value.split(":")
    normalised = f"{int(hours):02d}:{minutes}"
    assert validate_params({"action": "create", "type": "fixed", "fixed_time": value}).fixed_time == normalised


def test_nine_and_zero_nine_are_one_schedule() -> None:
    # Given a daily schedule created for "9:00"
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    first = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "9:00"})
    # When the model asks again for "09:00"
    second = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:00"})
    # Then it is the same schedule: one registry entry, one live schedule, stored as 09:00
    assert first.ok and second.ok and second.data["already_exists"] is True
    assert [e["fixed_time"] for e in registry(h, p.id)] == ["09:00"] and len(daily(h)) == 1


@pytest.mark.parametrize("value", ["9am", "24:00", "9:5", "09:60", "12:00:00"])
def test_rejected_time_formats(value: str) -> None:
    with pytest.raises(ValueError, match="invalid fixed_time format"):
        validate_params({"action": "create", "type": "fixed", "fixed_time": value})


def test_s7_fixed_without_time_fails_with_error_set_and_creates_nothing() -> None:
    # Given an enrolled participant
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    # When the model asks for a fixed schedule without a time
    result = run(h, p, {"action": "create", "type": "fixed"})
    # Then success is false with the detail, and nothing was scheduled
    assert not result.ok
    assert result.data == {
        "success": False,
        "message": "Invalid scheduler parameters",
        "error": "fixed_time is required for fixed scheduler type",
    }
    assert "fixed_time is required" in result.for_model()
    assert registry(h, p.id) == [] and h.timers.schedules == {}


# --- S2, S3: create ---------------------------------------------------------------------------


def test_s2_fixed_0930_toronto_one_daily_schedule_at_0920_and_no_one_off() -> None:
    # Given a participant with a phone number; it is 07:00 in Toronto
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    # When a fixed 09:30 Toronto schedule is created with a 10-minute prep time
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": "America/Toronto"})
    # Then it succeeds with one recurring schedule at 09:20 Toronto time.
    # Adaptation: the original adds a one-off for today; our daily cron itself fires today at
    # 09:20 (the first occurrence after creation), so there is no one-off (at most 1 holds).
    assert result.ok
    assert result.data["prep_time_minutes"] == PREP
    assert result.data["starts_today"] is True and "arrives today" in result.text
    [schedule] = daily(h)
    assert (schedule.hour, schedule.minute, schedule.timezone) == (9, 20, "America/Toronto")
    assert [s for s in h.timers.schedules.values() if s.one_shot] == []
    assert schedule.payload.kind == "daily_prompt" and schedule.payload.participant_id == p.id
    assert schedule.payload.created_at == h.clock.now()


def test_s3_random_0800_1000_triggers_daily_at_0750_with_a_120_minute_window() -> None:
    # Given a participant without a time zone
    h = memory_harness()
    p = h.enroll()
    # When a random 08:00-10:00 schedule is created
    result = run(h, p, {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"})
    # Then the daily trigger is at 07:50 (start - prep) in the participant's default zone (the one
    # zone rule, docs/behaviour.md#B-SCHED-3), and it carries the window so that each day's delivery
    # is drawn inside it (docs/behaviour.md#B-SCHED-4)
    assert result.ok and result.data["type"] == "random"
    [schedule] = daily(h)
    assert (schedule.hour, schedule.minute, schedule.timezone) == (7, 50, "America/Toronto")
    assert schedule.payload.kind == "random_window" and schedule.payload.window_minutes == 120
    assert "between 07:50 and 09:50" in result.data["description"]


def test_registry_entry_has_the_contract_shape_and_a_safe_schedule_name() -> None:
    # Given a created schedule
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    # Then scheduleRegistry holds one ScheduleInfo with the original's fields
    [entry] = registry(h, p.id)
    assert set(entry) == {
        "id",
        "type",
        "fixed_time",
        "random_start_time",
        "random_end_time",
        "timezone",
        "created_at",
        "timer_id",
    }
    assert re.fullmatch(r"sched_[0-9a-f]{16}", entry["id"]) and entry["id"] == result.data["schedule_id"]
    assert entry["type"] == "fixed" and entry["fixed_time"] == "09:30"
    # The EventBridge name: 1-64 of [0-9a-zA-Z-_.], never the phone number
    assert re.fullmatch(r"[0-9a-zA-Z\-_.]{1,64}", entry["timer_id"])
    assert p.phone_number.lstrip("+") not in entry["timer_id"]
    assert entry["timer_id"] in h.timers.schedules
    # The id is for the model only, and marked as such
    assert "not for the participant" in result.text


@pytest.mark.parametrize(
    ("participant_zone", "args", "expected"),
    [
        # docs/behaviour.md#B-SCHED-3: the participant's zone first
        ("Europe/Paris", {"type": "fixed", "fixed_time": "09:30"}, "Europe/Paris"),
        ("Europe/Paris", {"type": "random", "random_start_time": "08:00", "random_end_time": "09:00"}, "Europe/Paris"),
        # then the participant's default zone, whatever the type (the one zone rule)
        ("", {"type": "fixed", "fixed_time": "09:30"}, "America/Toronto"),
        ("", {"type": "random", "random_start_time": "08:00", "random_end_time": "09:00"}, "America/Toronto"),
        # an explicit zone always wins
        ("Europe/Paris", {"type": "fixed", "fixed_time": "09:30", "timezone": "Asia/Tokyo"}, "Asia/Tokyo"),
    ],
)
def test_zone_defaults(participant_zone: str, args: dict[str, Any], expected: str) -> None:
    # Given a participant with or without a zone
    h = memory_harness()
    p = h.enroll(timezone=participant_zone) if participant_zone else h.enroll()
    # When a schedule is created
    result = run(h, p, {"action": "create", **args})
    # Then the schedule and its EventBridge cron use the expected zone
    assert result.ok
    assert registry(h, p.id)[0]["timezone"] == expected
    assert daily(h)[0].timezone == expected


def test_invalid_timezone_fails_before_anything_is_scheduled() -> None:
    # Given a participant (the original set today's one-off before failing on the zone)
    h = memory_harness()
    p = h.enroll()
    # When the zone does not exist
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": "Mars/Olympus"})
    # Then the model sees why and nothing exists
    assert not result.ok
    assert result.data["error"] == "invalid timezone: Mars/Olympus"
    assert h.timers.schedules == {} and registry(h, p.id) == []


@pytest.mark.parametrize(
    ("fixed_time", "zone", "starts_today", "cron"),
    [
        # 07:00 in Toronto: 10:50 is still ahead (a server on UTC, at 12:00, would say tomorrow)
        ("11:00", "America/Toronto", True, (10, 50)),
        # 21:00 in Tokyo: 13:50 is past (a server on UTC, at 12:00, would say today)
        ("14:00", "Asia/Tokyo", False, (13, 50)),
        # 04:00 in Los Angeles: 05:50 is ahead
        ("06:00", "America/Los_Angeles", True, (5, 50)),
        # 07:00 in Toronto: exactly now is not ahead (the cron fires strictly after creation)
        ("07:10", "America/Toronto", False, (7, 0)),
    ],
)
def test_first_day_decision_uses_the_schedules_own_zone(
    fixed_time: str, zone: str, starts_today: bool, cron: tuple[int, int]
) -> None:
    # Given the clock at 2026-03-02 12:00 UTC
    h = memory_harness()
    p = h.enroll()
    # When a fixed schedule is created in another zone
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": fixed_time, "timezone": zone})
    # Then "today or tomorrow" is decided in that zone (docs/behaviour.md#B-SCHED-4), and the cron is local to it
    assert result.data["starts_today"] is starts_today
    assert ("arrives today" if starts_today else "arrives tomorrow") in result.text
    [schedule] = daily(h)
    assert (schedule.hour, schedule.minute, schedule.timezone) == (*cron, zone)


@pytest.mark.parametrize(
    ("prep", "fixed_time", "cron"),
    [(0, "09:30", (9, 30)), (15, "09:30", (9, 15)), (10, "00:05", (23, 55)), (30, "08:10", (7, 40))],
)
def test_prep_time_moves_the_daily_firing_earlier(prep: int, fixed_time: str, cron: tuple[int, int]) -> None:
    # Given a prep time (SCHEDULER_PREP_TIME_MINUTES)
    h = memory_harness(settings=Settings(scheduler_prep_time_minutes=prep))
    p = h.enroll(timezone="America/Toronto")
    # When a fixed schedule is created
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": fixed_time}, prep=prep)
    # Then it fires prep minutes before the target (wrapping past midnight)
    assert result.ok and result.data["prep_time_minutes"] == prep
    assert (daily(h)[0].hour, daily(h)[0].minute) == cron


def test_identical_schedule_is_not_created_twice() -> None:
    # Given a fixed 09:30 schedule (the original doubled the daily prompt here)
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    first = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    # When the same schedule is asked for again, with the zone spelled out this time
    again = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": "America/Toronto"})
    # Then nothing new is created and the existing id is returned
    assert again.ok and again.data == {"schedule_id": first.data["schedule_id"], "already_exists": True}
    assert len(registry(h, p.id)) == 1 and len(daily(h)) == 1
    # But a different time is a different schedule
    other = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "18:00"})
    assert other.ok and other.data["schedule_id"] != first.data["schedule_id"]
    assert len(registry(h, p.id)) == 2 and len(daily(h)) == 2


def test_a_scheduler_failure_after_the_commit_raises_and_a_second_application_creates_it() -> None:
    # Given EventBridge refusing the next call
    h = memory_harness()
    p = h.enroll()
    h.timers.fail_next = TimerError("ThrottlingException: slow down")
    session = h.app.sessions.open(p.id, "evt-1")
    result = SchedulerTool(PREP).execute(
        ToolContext(h.app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    )
    # When the turn commits and its effects are applied
    effects = session.commit()
    with pytest.raises(TimerError, match="ThrottlingException"):
        apply_schedules(h.app, effects)
    # Then the decision stands (the model was told, the registry lists it) and nothing is live yet
    assert result.ok and len(registry(h, p.id)) == 1 and daily(h) == []
    # And applying the same effects again (the redelivered event) creates exactly that schedule
    apply_schedules(h.app, effects)
    assert [s.name for s in daily(h)] == [registry(h, p.id)[0]["timer_id"]]


def test_a_time_eventbridge_would_refuse_is_an_error_before_anything_is_decided() -> None:
    # Given a zone EventBridge refuses (a path the zone database knows, but not an IANA name)
    h = memory_harness()
    p = h.enroll()
    # When a schedule is created in it
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": "posix/Europe/Paris"})
    # Then the model hears the error and nothing is registered or scheduled
    assert not result.ok and registry(h, p.id) == [] and daily(h) == []


# --- S10: list --------------------------------------------------------------------------------


def test_s10_list_empty_then_after_a_create() -> None:
    # Adaptation: result wording is our own (docs/behaviour.md: never copy the original's texts); the data
    # fields are the original's.
    # Given a participant without schedules
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    # When listing / Then "no schedules" and data []
    empty = run(h, p, {"action": "list"})
    assert empty.ok and empty.data == [] and "no active daily schedules" in empty.text
    # When a schedule exists / Then it is listed with its id, time, zone and the prep time
    created = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    listed = run(h, p, {"action": "list"})
    sid = created.data["schedule_id"]
    assert listed.ok and "Active daily schedules" in listed.text
    assert "1. every day at 09:20 (America/Toronto)" in listed.text and sid in listed.text
    assert listed.data["schedule_ids"] == [sid] and listed.data["prep_time_minutes"] == PREP
    assert listed.data["schedules"][0]["fixed_time"] == "09:30"


# --- S11: delete ------------------------------------------------------------------------------


def test_s11_delete_unknown_and_time_like_ids() -> None:
    # Adaptation: our own wording; the error values are the original's.
    # Given a participant without schedules
    h = memory_harness()
    p = h.enroll()
    # When deleting an unknown id / Then "not found"
    unknown = run(h, p, {"action": "delete", "schedule_id": "sched_ffffffffffffffff"})
    assert not unknown.ok and unknown.data["error"] == "Schedule not found"
    assert "sched_ffffffffffffffff" in unknown.text
    # When the model passes a time instead of an id / Then it is told so
    time_like = run(h, p, {"action": "delete", "schedule_id": "9:30"})
    assert not time_like.ok
    assert time_like.data["error"] == "Invalid schedule ID format - time used instead of schedule ID"


def test_s11_delete_existing_removes_registry_entry_and_eventbridge_schedule() -> None:
    # Given two schedules
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    keep = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "18:00"})
    gone = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    gone_name = next(e["timer_id"] for e in registry(h, p.id) if e["id"] == gone.data["schedule_id"])
    # When one is deleted
    result = run(h, p, {"action": "delete", "schedule_id": gone.data["schedule_id"]})
    # Then it leaves the registry and its EventBridge schedule is deleted; the other stays
    assert result.ok and result.data == {"schedule_id": gone.data["schedule_id"], "deleted": True}
    assert [e["id"] for e in registry(h, p.id)] == [keep.data["schedule_id"]]
    assert gone_name in h.timers.cancelled and gone_name not in h.timers.schedules
    assert len(daily(h)) == 1
    # And deleting it again is "not found"
    assert run(h, p, {"action": "delete", "schedule_id": gone.data["schedule_id"]}).data["error"] == (
        "Schedule not found"
    )


def test_changing_the_participants_zone_moves_the_schedules_that_follow_it() -> None:
    # Given a participant in Toronto with a schedule in their zone and one they set in Tokyo
    from promptpipe.models.api import ParticipantUpdate

    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"}).ok
    assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": "20:00", "timezone": "Asia/Tokyo"}).ok
    names = {e["fixed_time"]: e["timer_id"] for e in registry(h, p.id)}
    # When their time zone is changed through the API
    update_participant(h.app, p.id, ParticipantUpdate(timezone="Europe/Paris"))
    # Then the schedule that followed their zone moved with them, in place (same name), and the live
    # cron fires at 09:20 Paris time; the explicitly zoned one stays in Tokyo
    zones = {e["fixed_time"]: e["timezone"] for e in registry(h, p.id)}
    assert zones == {"09:30": "Europe/Paris", "20:00": "Asia/Tokyo"}
    live = {s.name: (s.hour, s.minute, s.timezone) for s in daily(h)}
    assert live == {names["09:30"]: (9, 20, "Europe/Paris"), names["20:00"]: (19, 50, "Asia/Tokyo")}


@pytest.mark.parametrize("same_event", [False, True])
def test_two_concurrent_identical_creations_register_and_schedule_one(same_event: bool) -> None:
    # Given two turns (two messages, or one message delivered twice) that both load the state before
    # either commits, and both ask for the same daily 09:30 schedule
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    args = {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    first = h.app.sessions.open(p.id, "evt-a")
    second = h.app.sessions.open(p.id, "evt-a" if same_event else "evt-b")
    results = [SchedulerTool(PREP).execute(ToolContext(h.app.deps, s), args) for s in (first, second)]
    assert all(r.ok and "scheduled" in r.text for r in results)
    # When the first commits and the second commits after it (a version conflict: it replays its
    # operations on the state the first wrote)
    commits = h.store.commits
    apply_schedules(h.app, first.commit())
    apply_schedules(h.app, second.commit())
    assert h.store.commits - commits == (2 if same_event else 3)  # the second conflicted once
    # Then one schedule is registered and one is live, the first turn's, with no error
    [entry] = registry(h, p.id)
    assert entry["id"] == results[0].data["schedule_id"]
    assert [(s.name, s.hour, s.minute, s.timezone) for s in daily(h)] == [(entry["timer_id"], 9, 20, "America/Toronto")]


# --- ------------------------------------------------------------------------------------------
# The ``scheduler`` tool's edges: the first-day decision off the hour and across midnight, in a zone
# that is not the machine's; exact texts the model reads (they carry the times it repeats to the
# participant); the schedule id's derivation; and the delete
# path's id checks and the random-window delivery it cancels.
#
# The clock starts at Monday 2026-03-02 12:00 UTC (07:00 in Toronto).


# --- the first day ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("utc", "fire", "today"),
    [
        ((13, 29), 8 * 60 + 30, True),  # 08:29 in Toronto (UTC-5), fires 08:30: ahead
        ((13, 30), 8 * 60 + 30, False),  # 08:30: the firing instant itself is not ahead
        ((13, 31), 8 * 60 + 30, False),
        ((14, 30), 9 * 60 + 31, True),  # 09:30 local against 09:31: the minutes count, not only the hour
        ((14, 30), 9 * 60 + 29, False),
        ((4, 54), -5, True),  # 23:54 the day before in Toronto; a firing of "-5" is 23:55 (midnight wrap)
        ((4, 55), -5, False),
        ((4, 54), 24 * 60 + 23 * 60 + 55, True),  # a day and more wraps too
        ((4, 59), 0, False),  # 23:59 local: midnight is tomorrow's
    ],
)
def test_first_delivery_is_today_in_the_schedules_zone(utc: tuple[int, int], fire: int, today: bool) -> None:
    now = datetime(2026, 3, 2, *utc, tzinfo=UTC)
    assert first_delivery_is_today(now, "America/Toronto", fire) is today


def test_first_delivery_is_read_in_the_zone_whatever_the_instants_own_offset() -> None:
    # 12:00 UTC is 21:00 in Tokyo: a 13:50 firing is past there, though still ahead in UTC
    assert first_delivery_is_today(datetime(2026, 3, 2, 12, 0, tzinfo=UTC), "Asia/Tokyo", 13 * 60 + 50) is False
    assert first_delivery_is_today(datetime(2026, 3, 2, 12, 0, tzinfo=UTC), "UTC", 13 * 60 + 50) is True


def test_an_0830_schedule_created_at_0825_local_arrives_tomorrow() -> None:
    # 08:25 in Toronto; 08:30 with 10 minutes of prep fires at 08:20, already past
    h = memory_harness()
    h.clock.set(datetime(2026, 3, 2, 13, 25, tzinfo=UTC))
    p = h.enroll(timezone="America/Toronto")
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "08:30"})
    assert result.data["starts_today"] is False and "The first one arrives tomorrow." in result.text
    # and at 08:15 it is still today
    h.clock.set(datetime(2026, 3, 2, 13, 15, tzinfo=UTC))
    again = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "08:35"})
    assert again.data["starts_today"] is True and "The first one arrives today." in again.text


# --- texts the model reads --------------------------------------------------------------------------------
def _info(**fields: Any) -> ScheduleInfo:
    return ScheduleInfo(id="sched_x", created_at=START, **fields)


def test_describe_fixed_and_random_with_the_midnight_wrap() -> None:
    fixed = _info(type=ScheduleType.FIXED, fixed_time="00:05", timezone="Europe/Paris")
    assert describe(fixed, 10) == "every day at 23:55 (Europe/Paris), 10 min before 00:05"
    evening = _info(type=ScheduleType.FIXED, fixed_time="18:10", timezone="Europe/Paris")
    assert describe(evening, 10) == "every day at 18:00 (Europe/Paris), 10 min before 18:10"
    window = _info(type=ScheduleType.RANDOM, random_start_time="00:00", random_end_time="01:30", timezone="UTC")
    assert describe(window, 15) == (
        "every day at a random time between 23:45 and 01:15 (UTC), for the 00:00-01:30 window"
    )


def test_create_reports_the_schedule_in_full() -> None:
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    result = run(h, p, {"action": "create", "type": "random", "random_start_time": "8:00", "random_end_time": "10:00"})
    sid = result.data["schedule_id"]
    description = "every day at a random time between 07:50 and 09:50 (America/Toronto), for the 08:00-10:00 window"
    assert result.ok
    assert result.text == (
        f"Daily habit prompt scheduled: {description}. The first one arrives today. "
        f"Internal schedule id, not for the participant: {sid}"
    )
    assert result.data == {
        "schedule_id": sid,
        "type": "random",
        "description": description,
        "prep_time_minutes": PREP,
        "starts_today": True,
    }


def test_an_existing_schedule_is_reported_with_its_description_and_id() -> None:
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    first = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    again = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "9:30"})
    sid = first.data["schedule_id"]
    assert again.ok and again.text == (
        "This daily schedule already exists (every day at 09:20 (America/Toronto), 10 min before 09:30); "
        f"nothing new was created. Internal schedule id, not for the participant: {sid}"
    )


def test_list_numbers_every_schedule_from_one() -> None:
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    a = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"}).data["schedule_id"]
    b = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "18:00"}).data["schedule_id"]
    listed = run(h, p, {"action": "list"})
    assert listed.text == (
        "Active daily schedules:\n"
        f"1. every day at 09:20 (America/Toronto), 10 min before 09:30 (internal id: {a})\n"
        f"2. every day at 17:50 (America/Toronto), 10 min before 18:00 (internal id: {b})"
    )
    assert listed.data["schedule_ids"] == [a, b]
    assert [s["id"] for s in listed.data["schedules"]] == [a, b]
    other = memory_harness()
    empty = run(other, other.enroll(), {"action": "list"})
    assert empty.text == "The participant has no active daily schedules yet." and empty.data == []


def test_an_invalid_zone_is_named_in_the_error() -> None:
    h = memory_harness()
    p = h.enroll()
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": "Mars/Olympus"})
    assert not result.ok
    assert result.data == {
        "success": False,
        "message": "Invalid scheduler parameters",
        "error": "invalid timezone: Mars/Olympus",
    }
    assert registry(h, p.id) == []


def test_a_participant_without_a_zone_gets_the_one_default_zone_for_every_type() -> None:
    # the one zone rule: the default the console, the transcript and the export show
    assert DEFAULT_FIXED_TIMEZONE == "America/Toronto" and DEFAULT_RANDOM_TIMEZONE == "UTC"  # UTC: legacy only
    h = memory_harness()
    p = h.enroll()  # no zone of their own
    run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    run(h, p, {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "09:00"})
    assert [e["timezone"] for e in registry(h, p.id)] == ["America/Toronto", "America/Toronto"]


# --- parameters ------------------------------------------------------------------------------------------------
def test_values_are_trimmed_and_times_zero_padded() -> None:
    params = validate_params(
        {"action": "create", "type": "fixed", "fixed_time": " 9:05 ", "timezone": " Asia/Tokyo ", "schedule_id": 3}
    )
    assert (params.fixed_time, params.timezone) == ("09:05", "Asia/Tokyo")
    window = validate_params(
        {"action": "create", "type": "random", "random_start_time": "7:00 ", "random_end_time": " 7:01"}
    )
    assert (window.random_start_time, window.random_end_time, window.type) == ("07:00", "07:01", ScheduleType.RANDOM)
    assert validate_params({"action": "delete", "schedule_id": "  sched_1 "}).schedule_id == "sched_1"
    listed = validate_params({"action": "list", "schedule_id": "x", "type": "fixed"})
    assert (listed.schedule_id, listed.type) == ("", None)
    assert normalise_hhmm("0:7") == "00:07"


@pytest.mark.parametrize("name", ["random_start_time", "random_end_time"])
@pytest.mark.parametrize("value", ["24:00", "8", "08:60"])
def test_each_window_bound_is_checked(name: str, value: str) -> None:
    args = {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "09:00"}
    args[name] = value
    with pytest.raises(ValueError, match=f"^invalid {name} format: time must be in HH:MM format \\(24-hour\\)$"):
        validate_params(args)


def test_hours_from_ten_to_twenty_three_are_accepted() -> None:
    for hour in (10, 19, 20, 23):
        assert validate_params({"action": "create", "type": "fixed", "fixed_time": f"{hour}:00"}).fixed_time == (
            f"{hour}:00"
        )


def test_the_schedule_id_is_derived_from_the_event_and_the_timing() -> None:
    info = _info(type=ScheduleType.FIXED, fixed_time="09:30", timezone="America/Toronto")
    sid = deterministic_schedule_id("p_1", "evt-1", info)
    # a retried turn (same event) gets the same id, also after a deploy: the derivation is fixed
    # (sha256 of "p_1|evt-1|fixed|09:30|||America/Toronto", first 16 hex digits)
    assert sid == "sched_cf87f3448cf879ee"
    assert deterministic_schedule_id("p_1", "evt-1", info) == sid
    variants = [
        deterministic_schedule_id("p_2", "evt-1", info),
        deterministic_schedule_id("p_1", "evt-2", info),
        deterministic_schedule_id("p_1", "evt-1", info.model_copy(update={"fixed_time": "09:31"})),
        deterministic_schedule_id("p_1", "evt-1", info.model_copy(update={"timezone": "UTC"})),
        deterministic_schedule_id("p_1", "evt-1", info.model_copy(update={"type": ScheduleType.RANDOM})),
        deterministic_schedule_id("p_1", "evt-1", info.model_copy(update={"random_start_time": "08:00"})),
        deterministic_schedule_id("p_1", "evt-1", info.model_copy(update={"random_end_time": "10:00"})),
    ]
    assert len({sid, *variants}) == 8


# --- delete ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schedule_id", "error"),
    [
        ("09:30", "Invalid schedule ID format - time used instead of schedule ID"),
        ("9:30", "Invalid schedule ID format - time used instead of schedule ID"),
        ("109:30", "Schedule not found"),  # six characters: not a time
        ("12345", "Schedule not found"),  # no colon: not a time
    ],
)
def test_delete_tells_a_time_from_an_unknown_id(schedule_id: str, error: str) -> None:
    h = memory_harness()
    p = h.enroll()
    result = run(h, p, {"action": "delete", "schedule_id": schedule_id})
    assert not result.ok and result.data["error"] == error
    if error == "Schedule not found":
        assert result.data["message"] == f"no schedule with id '{schedule_id}'"
    else:
        assert result.data["message"] == (
            "that looks like a time, not a schedule id; call scheduler with action=list to get the id"
        )


def test_deleting_a_random_window_also_cancels_the_delivery_armed_for_today() -> None:
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    created = run(
        h, p, {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "10:00"}
    )
    sid = created.data["schedule_id"]
    delivery = random_delivery_name(p.id, sid)
    payload = TimerPayload(participant_id=p.id, kind=TimerKind.AUTO_FEEDBACK, timer_id=delivery)
    spec = ScheduleSpec(name=delivery, kind="timer", at=datetime(2026, 3, 2, 14, 0, tzinfo=UTC), timer=payload)
    session = h.app.sessions.open(p.id, "arm")
    session.apply("arm", lambda op: OpContext.arm(op, spec))
    apply_schedules(h.app, session.commit())
    assert delivery in h.timers.schedules

    session = h.app.sessions.open(p.id, "delete")
    result = SchedulerTool(PREP).execute(ToolContext(h.app.deps, session), {"action": "delete", "schedule_id": sid})
    effects = session.commit()
    assert result.ok and result.text == (
        f"Deleted the daily habit prompt schedule {sid}; no more prompts will come from it."
    )
    assert effects.schedules == {f"{p.id}-{sid}": None, delivery: None}
    apply_schedules(h.app, effects)
    assert delivery not in h.timers.schedules and f"{p.id}-{sid}" not in h.timers.schedules
    assert DataKey.PENDING_TIMERS.value not in h.data(p.id)


def test_a_rule_eventbridge_would_refuse_reaches_the_model_with_its_detail(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every input is validated before this check, so only a rule of EventBridge's that the tool's own
    # validation does not know can fail it: simulated here
    def refuse(spec: ScheduleSpec) -> ScheduleSpec:
        raise TimerError(f"schedule {spec.name}: refused")

    monkeypatch.setattr(scheduler, "validate_daily", refuse)
    h = memory_harness()
    p = h.enroll(timezone="America/Toronto")
    result = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    assert not result.ok
    assert result.data["message"] == "Failed to schedule prompt"
    assert result.data["error"].startswith(f"schedule {p.id}-sched_") and result.data["error"].endswith(": refused")
    assert result.text == f"ERROR: Failed to schedule prompt ({result.data['error']})"
    assert registry(h, p.id) == []


def test_the_tools_definition_states_its_own_prep_minutes() -> None:
    assert "prompts arrive up to 25 minutes before" in SchedulerTool(25).definition.description
    assert SchedulerTool(25).definition.parameters["required"] == ["action"]


def test_a_fourth_daily_schedule_is_refused_at_max_live_daily_schedules() -> None:
    # MAX_LIVE_DAILY_SCHEDULES (default 3): the coach cannot make a participant more live daily prompts
    h = memory_harness()
    p = h.enroll(timezone="Europe/Paris")
    for time in ("08:00", "12:00", "18:00"):
        assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": time}).ok
    fourth = run(h, p, {"action": "create", "type": "fixed", "fixed_time": "21:00"})
    assert not fourth.ok and "Too many daily schedules" in fourth.text and "delete one first" in fourth.text
    assert [e["fixed_time"] for e in registry(h, p.id)] == ["08:00", "12:00", "18:00"]
    assert len(daily(h)) == 3
    # the same timing again is still "already exists", not refused
    assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": "12:00"}).data["already_exists"] is True
