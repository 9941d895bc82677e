"""One zone rule everywhere: a participant enrolled without a zone gets their
prompts in the default zone, and the console, the transcript and the export show that zone, said to
be the default; a participant with a zone has it everywhere, with no such note."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from promptpipe.console.app import _templates
from promptpipe.coordinator.export import PARTICIPANT_COLUMNS, participant_row
from promptpipe.coordinator.summary import summarize, transcript_text, zone_label, zone_of
from promptpipe.models.participant import ConversationParticipant
from promptpipe.rules.timezones import (
    DEFAULT_PARTICIPANT_ZONE,
    participant_zone_label,
    participant_zone_name,
    zone_is_default,
)
from tests.support import START, memory_harness
from tests.unit.test_scheduler_tool import registry, run


def person(zone: str) -> ConversationParticipant:
    return ConversationParticipant(
        id="p_" + "4" * 32,
        phone_number="+14155550101",
        timezone=zone,
        enrolled_at=START,
        created_at=START,
        updated_at=START,
    )


@pytest.mark.parametrize(
    ("stored", "name", "default"),
    [
        ("", DEFAULT_PARTICIPANT_ZONE, True),
        ("Not/AZone", DEFAULT_PARTICIPANT_ZONE, True),
        ("Europe/Paris", "Europe/Paris", False),
        ("UTC", "UTC", False),
    ],
)
def test_the_rule_is_the_stored_zone_else_the_default_said_as_such(stored: str, name: str, default: bool) -> None:
    assert participant_zone_name(stored) == name and zone_is_default(stored) is default
    label = participant_zone_label(stored)
    assert label.startswith(name) and ("(default: enrolled without a time zone)" in label) is default


@pytest.mark.parametrize("args", [
    {"type": "fixed", "fixed_time": "09:30"},
    {"type": "random", "random_start_time": "08:00", "random_end_time": "09:00"},
])  # fmt: skip
def test_prompts_console_transcript_and_export_agree_for_a_participant_without_a_zone(args: dict[str, str]) -> None:
    # Given a participant enrolled without a zone, whose daily prompt is scheduled
    h = memory_harness()
    p = h.enroll()
    assert p.timezone == ""
    assert run(h, p, {"action": "create", **args}).ok
    prompts_zone = registry(h, p.id)[0]["timezone"]
    # Then the prompts, the console, the transcript and the export name one zone
    assert prompts_zone == zone_of(p).key == DEFAULT_PARTICIPANT_ZONE
    assert zone_label(p) == f"{DEFAULT_PARTICIPANT_ZONE} (default: enrolled without a time zone)"
    header = transcript_text(p, [], zone_of(p)).splitlines()[0]
    assert header.endswith(f"times in {DEFAULT_PARTICIPANT_ZONE} (default: enrolled without a time zone)")
    row = participant_row(summarize(p, [], {}))
    assert (row["timezone"], row["timezone_default"]) == (DEFAULT_PARTICIPANT_ZONE, "true")
    assert PARTICIPANT_COLUMNS[-1] == "timezone_default" and set(row) == set(PARTICIPANT_COLUMNS)
    page = _templates().from_string("{{ zone_label(p) }}").render(p=p)
    assert page == zone_label(p)


def test_a_participant_with_a_zone_has_it_everywhere_without_a_note() -> None:
    h = memory_harness()
    p = h.enroll(timezone="Europe/Paris")
    assert run(h, p, {"action": "create", "type": "fixed", "fixed_time": "09:30"}).ok
    assert registry(h, p.id)[0]["timezone"] == zone_of(p).key == zone_label(p) == "Europe/Paris"
    assert transcript_text(p, [], zone_of(p)).splitlines()[0].endswith("times in Europe/Paris")
    assert transcript_text(p, [], ZoneInfo("UTC")).splitlines()[0].endswith("times in UTC")  # --tz UTC
    row = participant_row(summarize(p, [], {}))
    assert (row["timezone"], row["timezone_default"]) == ("Europe/Paris", "false")
    assert person("").timezone == "" and zone_of(person("")).key == DEFAULT_PARTICIPANT_ZONE
