"""Small rules of the edge and the coordinator's tools, at the lowest layer: the list's cursor, the import's
bound on a stored state's nesting (Postgres JSONB as well as SQLite text), the console's notices."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.adapters.original_db import _bounded, _state_data, sqlite_read_only_uri
from promptpipe.console.access import notice_text
from promptpipe.models.participant_rows import ListedParticipant, listing_cursor, read_listing_cursor


def _token(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_listing_cursor_reads_back_as_its_place_and_nothing_else_does() -> None:
    at = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    listed = ListedParticipant(id="p_1", phone_number="+14155550101", enrolled_at=at, created_at=at)
    assert read_listing_cursor(listing_cursor(listed)) == (at, "p_1")
    for token in ("", "x" * 201, _token("2026-03-02T13:00:00|"), _token("2026-03-02T13:00:00|p_1"), "%%%"):
        with pytest.raises(ValueError, match="invalid cursor"):
            read_listing_cursor(token)


def test_a_postgres_state_nested_past_the_writers_recursion_is_dropped_with_a_warning() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    data, error = _state_data({"userProfile": deep, "conversationState": "FEEDBACK", "n": 3})
    assert error == "" and data["conversationState"] == "FEEDBACK" and data["n"] == "3"
    kept, warnings = _bounded(data)
    assert set(kept) == {"conversationState", "n"}
    assert warnings == ["state_data.userProfile: JSON is nested deeper than 32 levels; dropped"]
    assert _bounded(None) == (None, []) and _state_data(b'{"a": "b"}') == ({"a": "b"}, "")


def test_a_sqlite_path_becomes_a_uri_of_that_file() -> None:
    uri = sqlite_read_only_uri("/data/study#1?.db")
    assert uri == "file:///data/study%231%3F.db?mode=ro"


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("paused", "Paused: no prompts or reminders until resumed."),
        ("resumed", "Resumed: daily prompts are scheduled again."),
        ("resolved:INTAKE", "Hand-off resolved; the conversation continues in INTAKE; the note is in the transcript."),
        ("resolved:<b>evil</b>", None),
        ("paused:x", None),
        ("Your account is locked", None),
        ("", None),
        (None, None),
    ],
)
def test_the_console_shows_only_the_notices_of_its_own_codes(code: str | None, shown: str | None) -> None:
    assert notice_text(code) == shown
