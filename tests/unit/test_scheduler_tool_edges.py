"""The ``scheduler`` tool's edges: the first-day decision off the hour and across midnight, in a zone
that is not the machine's; exact texts the model reads (they carry the times it repeats to the
participant); the schedule id's derivation; and the delete
path's id checks and the random-window delivery it cancels.

The clock starts at Monday 2026-03-02 12:00 UTC (07:00 in Toronto).
"""

from __future__ import annotations

import json
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
from promptpipe.usecases.sending import apply_schedules
from tests.support import START, MemoryHarness, memory_harness

PREP = 10


def run(h: MemoryHarness, participant: ConversationParticipant, args: dict[str, Any], prep: int = PREP) -> ToolResult:
    session = h.app.sessions.open(participant.id, f"tool-{h.store.commits}")
    result = SchedulerTool(prep).execute(ToolContext(h.app.deps, session), args)
    if session.dirty:
        apply_schedules(h.app, session.commit())
    return result


def registry(h: MemoryHarness, participant_id: str) -> list[dict[str, Any]]:
    return json.loads(h.data(participant_id).get(DataKey.SCHEDULE_REGISTRY.value, "[]"))


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


def test_zone_defaults_depend_on_the_type() -> None:
    assert (DEFAULT_FIXED_TIMEZONE, DEFAULT_RANDOM_TIMEZONE) == ("America/Toronto", "UTC")
    h = memory_harness()
    p = h.enroll()  # no zone of their own
    run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    run(h, p, {"action": "create", "type": "random", "random_start_time": "08:00", "random_end_time": "09:00"})
    assert [e["timezone"] for e in registry(h, p.id)] == ["America/Toronto", "UTC"]


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
