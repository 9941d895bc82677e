"""Durations in settings and the chat's /wait (``promptpipe.settings.parse_duration``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from promptpipe.settings import parse_duration


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("15m", timedelta(minutes=15)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("-1h", timedelta(hours=-1)),
        ("+2d", timedelta(days=2)),
        ("90s", timedelta(seconds=90)),
        ("250ms", timedelta(milliseconds=250)),
        ("0.5h", timedelta(minutes=30)),
        ("0", timedelta(0)),
        (" 3600 ", timedelta(hours=1)),
        (3600, timedelta(hours=1)),
        (1.5, timedelta(seconds=1.5)),
        (timedelta(minutes=2), timedelta(minutes=2)),
        ("2H", timedelta(hours=2)),
    ],
)
def test_parse_duration(value: object, expected: timedelta) -> None:
    assert parse_duration(value) == expected


@pytest.mark.parametrize("value", ["", "  ", "soon", "5 minutes", "1h 30m", "h", "5w"])
def test_unreadable_durations_say_which_forms_work(value: str) -> None:
    with pytest.raises(ValueError, match=r"empty duration|use forms like 15m, 3h, 1h30m, 90s"):
        parse_duration(value)
