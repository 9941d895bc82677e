"""One reading of a stored zone: the zone, else UTC (``promptpipe.rules.timezones.zone_or_utc``).

The participant's summary (console, CLI, export), the intensity poll's "today" and the inbound
answer's day all read a stored zone that may be empty or one the zone database does not know; a
name such as "America" (a folder of the database) used to escape as an ``IsADirectoryError``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast
from zoneinfo import ZoneInfo

import pytest

from promptpipe.coordinator.summary import zone_of
from promptpipe.flow.delivery import participant_zone
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import ScheduleInfo, ScheduleType
from promptpipe.rules.timezones import DEFAULT_PARTICIPANT_ZONE, zone_or_utc

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NOT_ZONES = ["", "Mars/Olympus_Mons", "America", "../etc/passwd", "America/", "UTC "]


def _participant(zone: str) -> ConversationParticipant:
    return ConversationParticipant(
        id="p_" + "3" * 32,
        phone_number="+14155550102",
        timezone=zone,
        enrolled_at=START,
        created_at=START,
        updated_at=START,
    )


def test_a_known_zone_is_that_zone() -> None:
    assert zone_or_utc("America/Toronto") == ZoneInfo("America/Toronto")


@pytest.mark.parametrize("name", [*NOT_ZONES, None])
def test_no_zone_or_an_unknown_one_is_utc(name: str | None) -> None:
    assert zone_or_utc(name) == ZoneInfo("UTC")


def test_the_first_known_zone_wins() -> None:
    assert zone_or_utc("", "Mars/Olympus_Mons", "Asia/Kolkata", "Europe/Paris") == ZoneInfo("Asia/Kolkata")
    assert zone_or_utc() == ZoneInfo("UTC")


@pytest.mark.parametrize("name", NOT_ZONES)
def test_the_summary_reads_an_unknown_zone_as_the_default_zone(name: str) -> None:
    # Given a participant whose stored zone is empty or not a zone / Then their times show in the
    # default zone their prompts use (the one zone rule, rules/timezones.py), not UTC
    assert zone_of(_participant(name)) == ZoneInfo(DEFAULT_PARTICIPANT_ZONE)
    assert zone_of(_participant("Asia/Kolkata")) == ZoneInfo("Asia/Kolkata")


@pytest.mark.parametrize("name", NOT_ZONES)
def test_the_poll_day_falls_back_to_the_schedules_zone_then_utc(name: str) -> None:
    session = cast(Any, SimpleNamespace(participant=_participant(name)))
    schedule = ScheduleInfo(
        id="s1", type=ScheduleType.FIXED, fixed_time="09:00", timezone="Asia/Tokyo", created_at=START
    )
    assert participant_zone(session, schedule) == ZoneInfo("Asia/Tokyo")
    assert participant_zone(session, None) == ZoneInfo("UTC")
    assert participant_zone(cast(Any, SimpleNamespace(participant=_participant("Europe/Paris"))), schedule) == ZoneInfo(
        "Europe/Paris"
    )
