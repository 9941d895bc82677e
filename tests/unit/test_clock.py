"""Clocks and RFC3339 timestamps (shared/promptpipe/rules/clock.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from promptpipe.rules.clock import ManualClock, SystemClock, parse_rfc3339, to_rfc3339

TORONTO_WINTER = timezone(timedelta(hours=-5))


def test_system_clock_is_aware_utc_and_current() -> None:
    before = datetime.now(UTC)
    now = SystemClock().now()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)


def test_manual_clock_keeps_utc_and_refuses_naive_times() -> None:
    with pytest.raises(ValueError, match="timezone-aware start"):
        ManualClock(datetime(2026, 3, 2, 12, 0))
    clock = ManualClock(datetime(2026, 3, 2, 7, 0, tzinfo=TORONTO_WINTER))
    assert clock.now() == datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert clock.now().tzinfo is UTC
    with pytest.raises(ValueError, match="timezone-aware instant"):
        clock.set(datetime(2026, 3, 3))
    clock.set(datetime(2026, 3, 3, 0, 30, tzinfo=TORONTO_WINTER))
    assert clock.now() == datetime(2026, 3, 3, 5, 30, tzinfo=UTC)
    assert clock.now().tzinfo is UTC
    assert clock.advance(timedelta(minutes=5)) == datetime(2026, 3, 3, 5, 35, tzinfo=UTC)


def test_rfc3339_round_trips_with_and_without_fractions() -> None:
    exact = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert to_rfc3339(exact) == "2026-03-02T12:00:00Z"
    assert to_rfc3339(exact.astimezone(TORONTO_WINTER)) == "2026-03-02T12:00:00Z"
    fine = exact + timedelta(microseconds=5)
    assert to_rfc3339(fine) == "2026-03-02T12:00:00.000005Z"
    assert parse_rfc3339(to_rfc3339(fine)) == fine
    assert parse_rfc3339("2026-03-02T07:00:00-05:00") == exact
    assert parse_rfc3339("2026-03-02T12:00:00") == exact  # no offset: taken as UTC
    assert parse_rfc3339("2026-03-02T12:00:00Z").tzinfo is UTC
