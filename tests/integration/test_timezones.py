"""One time-zone rule (IANA names only) for enrollment, update, the scheduler tool and the
EventBridge adapter: a zone accepted at enrollment can always be scheduled, and the rest are
refused everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from pydantic import ValidationError

from promptpipe.adapters.eventbridge_timers import EventBridgeTimers
from promptpipe.errors import InvalidScheduleExpression, ValidationFailed
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.models.api import EnrollmentRequest, ParticipantUpdate
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.rules.timezones import iana_zone_names, validate_iana_zone
from promptpipe.usecases.participants import validate_timezone
from tests.support import memory_harness

ACCEPTED = [
    "America/Toronto",
    "Europe/Paris",
    "UTC",
    "Asia/Kolkata",
    "America/Argentina/Buenos_Aires",
    "Etc/GMT+5",
    "US/Eastern",  # a backward-compatible IANA link
]
REFUSED = [
    "localtime",
    "posixrules",
    "posix/Europe/Paris",
    "right/UTC",
    "Factory",
    "europe/paris",  # IANA names are case-sensitive
    "Europe/Paris/",
    "../etc/passwd",
    "Mars/Olympus_Mons",
    "Europe",
    "+05:00",
    "x" * 60,
]


@pytest.fixture
def eventbridge(aws: None) -> Iterator[EventBridgeTimers]:
    client = boto3.client("scheduler", region_name="us-east-1")
    client.create_schedule_group(Name="tz-test")
    yield EventBridgeTimers(
        client,
        group_name="tz-test",
        timers_function_arn="arn:aws:lambda:us-east-1:123456789012:function:timers",
        scheduled_prompt_function_arn="arn:aws:lambda:us-east-1:123456789012:function:prompt",
        role_arn="arn:aws:iam::123456789012:role/scheduler",
        dlq_arn=None,
    )


def _enrollment(zone: str) -> bool:
    try:
        EnrollmentRequest(phone_number="+14155550100", timezone=zone)
    except ValidationError as exc:
        assert "timezone" in str(exc)
        return False
    return True


def _update(zone: str) -> bool:
    try:
        ParticipantUpdate(timezone=zone)
    except ValidationError:
        model = False
    else:
        model = True
    try:
        validate_timezone(zone)
    except ValidationFailed as exc:
        assert exc.field == "timezone"
        service = False
    else:
        service = True
    assert model == service, zone
    return model


def _scheduler_tool(zone: str) -> bool:
    h = memory_harness()
    p = h.enroll()
    session = h.app.sessions.open(p.id, f"tz-{zone}")
    args = {"action": "create", "type": "fixed", "fixed_time": "09:30", "timezone": zone}
    result = SchedulerTool(10).execute(ToolContext(h.app.deps, session), args)
    assert result.ok or "timezone" in (result.text + str(result.data)).lower(), result.text
    return result.ok


def _eventbridge(timers: EventBridgeTimers, zone: str) -> bool:
    payload = ScheduledPromptPayload(
        participant_id="p_1", schedule_id="tz", created_at=datetime(2027, 1, 1, tzinfo=UTC)
    )
    try:
        timers.schedule_daily_prompt(name="tz-daily", hour=9, minute=20, timezone=zone, payload=payload)
    except InvalidScheduleExpression:
        return False
    return True


def _all(eventbridge: EventBridgeTimers, zone: str) -> dict[str, Any]:
    return {
        "rule": _rule(zone),
        "enrollment": _enrollment(zone),
        "update": _update(zone),
        "scheduler tool": _scheduler_tool(zone),
        "eventbridge": _eventbridge(eventbridge, zone),
    }


def _rule(zone: str) -> bool:
    try:
        return validate_iana_zone(zone) == zone
    except ValueError:
        return False


@pytest.mark.parametrize("zone", ACCEPTED)
def test_iana_names_are_accepted_everywhere(eventbridge: EventBridgeTimers, zone: str) -> None:
    assert _all(eventbridge, zone) == dict.fromkeys(_all(eventbridge, zone), True)


@pytest.mark.parametrize("zone", REFUSED)
def test_other_names_are_refused_everywhere(eventbridge: EventBridgeTimers, zone: str) -> None:
    assert _all(eventbridge, zone) == dict.fromkeys(_all(eventbridge, zone), False)


def test_every_known_zone_is_accepted_by_every_validator(eventbridge: EventBridgeTimers) -> None:
    names = sorted(iana_zone_names())
    assert len(names) > 400
    assert not {"localtime", "posixrules", "Factory"} & set(names)
    assert not [n for n in names if n.startswith(("posix/", "right/"))]
    for zone in names[::7]:  # every 7th keeps the run short; all of them share one code path
        assert _enrollment(zone) and _update(zone) and _scheduler_tool(zone) and _eventbridge(eventbridge, zone), zone


def test_empty_timezone_means_none_at_enrollment_and_update() -> None:
    assert EnrollmentRequest(phone_number="+14155550100").timezone == ""
    assert validate_timezone("") == ""
