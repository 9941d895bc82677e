"""EventBridge Scheduler rules at their bounds (docs/platform.md#scheduler-rules).

Every field's upper and lower bound (minute 59, day 31 in ``nW``, SUN and SAT in ``nL`` and ``n#k``,
a step as long as its field), an expression of exactly the maximum length, seconds in ``at()``, a
range wrapping across the new year, the errors that quote the expression, and results that stay
in UTC when the process itself runs in another zone.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest

from promptpipe.errors import InvalidScheduleExpression
from promptpipe.scheduling import (
    MAX_EXPRESSION_LENGTH,
    at_expression,
    at_fire_time,
    daily_cron_expression,
    next_cron_fire,
    next_rate_fire,
    parse_expression,
)

TORONTO = ZoneInfo("America/Toronto")


@pytest.fixture
def process_in_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process' own zone (``TZ``) set to UTC+05:30, so a conversion to "local time" shows."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# --- bounds --------------------------------------------------------------------------------------------
def test_minute_59_and_hour_23_are_a_valid_daily_time() -> None:
    assert daily_cron_expression(23, 59) == "cron(59 23 * * ? *)"
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time 23:60: hour 0-23, minute 0-59$"):
        daily_cron_expression(23, 60)


def test_an_expression_of_exactly_the_maximum_length_is_accepted() -> None:
    head, tail = "cron(", " 9 * * ? *)"
    room = MAX_EXPRESSION_LENGTH - len(head) - len(tail)
    minutes = "0," * ((room - 2) // 2)
    text = head + minutes + "0" * (room - len(minutes)) + tail  # "0,0,…,0,00": minute 0, padded
    assert len(text) == MAX_EXPRESSION_LENGTH
    parsed = parse_expression(text)
    assert parsed.cron is not None and parsed.cron.minutes == (0,)
    with pytest.raises(InvalidScheduleExpression):
        parse_expression(text[:5] + "0," + text[5:])


def test_seconds_of_an_at_expression_are_kept() -> None:
    assert at_fire_time("at(2026-03-02T12:00:30)", "UTC") == datetime(2026, 3, 2, 12, 0, 30, tzinfo=UTC)


def test_nw_accepts_day_31_and_refuses_32() -> None:
    assert next_cron_fire("cron(0 9 31W 3 ? 2026)", "UTC", datetime(2026, 3, 1, tzinfo=UTC)) == datetime(
        2026, 3, 31, 9, tzinfo=UTC
    )
    with pytest.raises(InvalidScheduleExpression, match="32 is outside 1-31"):
        parse_expression("cron(0 9 32W * ? *)")


def test_the_last_sunday_and_the_last_saturday_of_a_month() -> None:
    # March 2026: the last Sunday is the 29th, the last Saturday the 28th
    after = datetime(2026, 3, 1, tzinfo=UTC)
    assert next_cron_fire("cron(0 9 ? 3 1L 2026)", "UTC", after) == datetime(2026, 3, 29, 9, tzinfo=UTC)
    assert next_cron_fire("cron(0 9 ? 3 7L 2026)", "UTC", after) == datetime(2026, 3, 28, 9, tzinfo=UTC)
    with pytest.raises(InvalidScheduleExpression, match="8 is outside 1-7"):
        parse_expression("cron(0 9 ? 3 8L 2026)")


def test_the_nth_sunday_and_saturday_of_a_month() -> None:
    # March 2026 starts on a Sunday: the second Sunday is the 8th, the first Saturday the 7th
    after = datetime(2026, 3, 1, tzinfo=UTC)
    assert next_cron_fire("cron(0 9 ? 3 1#2 2026)", "UTC", after) == datetime(2026, 3, 8, 9, tzinfo=UTC)
    assert next_cron_fire("cron(0 9 ? 3 7#1 2026)", "UTC", after) == datetime(2026, 3, 7, 9, tzinfo=UTC)
    with pytest.raises(InvalidScheduleExpression, match="8 is outside 1-7"):
        parse_expression("cron(0 9 ? 3 8#1 2026)")


def test_a_step_may_be_as_long_as_its_field_and_no_longer() -> None:
    parsed = parse_expression("cron(0 9 1 */12 ? *)")
    assert parsed.cron is not None and parsed.cron.months == (1,)
    with pytest.raises(InvalidScheduleExpression, match="13 is outside 1-12"):
        parse_expression("cron(0 9 1 */13 ? *)")
    with pytest.raises(InvalidScheduleExpression, match="32 is outside 1-31"):
        parse_expression("cron(0 9 */32 * ? *)")


def test_a_month_range_wrapping_across_the_new_year() -> None:
    parsed = parse_expression("cron(0 9 1 NOV-FEB ? *)")
    assert parsed.cron is not None and parsed.cron.months == (1, 2, 11, 12)
    after = datetime(2026, 12, 2, tzinfo=UTC)
    assert next_cron_fire(parsed, "UTC", after) == datetime(2027, 1, 1, 9, tzinfo=UTC)


# --- errors quote the expression ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("at(2026-13-01T00:00:00)", r"^invalid 'at\(2026-13-01T00:00:00\)': month must be in 1\.\.12$"),
        ("rate(0 minutes)", r"^invalid 'rate\(0 minutes\)': expected rate\(N minute\(s\)\|hour\(s\)\|day\(s\)\)$"),
        ("cron(0 9 * * *)", r"^invalid 'cron\(0 9 \* \* \*\)': cron needs six fields$"),
    ],
)
def test_errors_quote_the_expression(expression: str, message: str) -> None:
    with pytest.raises(InvalidScheduleExpression, match=message):
        parse_expression(expression)


class NoOffset(tzinfo):
    """A tzinfo that does not know its offset: such a datetime is naive by Python's definition."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


def test_an_instant_whose_zone_has_no_offset_is_refused() -> None:
    with pytest.raises(InvalidScheduleExpression, match=r"must be timezone-aware$"):
        at_expression(datetime(2026, 3, 2, 12, 0, tzinfo=NoOffset()))


# --- the process' own zone plays no part -----------------------------------------------------------------
def test_at_expression_is_the_utc_wall_clock_whatever_the_process_zone(process_in_kolkata: None) -> None:
    assert at_expression(datetime(2026, 3, 2, 7, 0, 0, 1, tzinfo=TORONTO)) == "at(2026-03-02T12:00:01)"


def test_next_fires_are_utc_instants_whatever_the_process_zone(process_in_kolkata: None) -> None:
    after = datetime(2026, 3, 2, 7, 30, tzinfo=TORONTO)  # 12:30 UTC, 18:00 in Kolkata
    fire = next_cron_fire("cron(0 13 * * ? *)", "UTC", after)
    assert fire == datetime(2026, 3, 2, 13, 0, tzinfo=UTC) and fire is not None and fire.utcoffset() == timedelta(0)
    # a daily 08:00 in Toronto is 13:00 UTC: after 07:30 Toronto it is today's
    assert next_cron_fire("cron(0 8 * * ? *)", "America/Toronto", after) == datetime(2026, 3, 2, 13, tzinfo=UTC)

    start = datetime(2026, 3, 2, 7, 0, tzinfo=TORONTO)  # 12:00 UTC
    rate = next_rate_fire("rate(1 hour)", start, after)
    assert rate == datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    assert rate.tzinfo is UTC and rate.isoformat() == "2026-03-02T13:00:00+00:00"
    early = next_rate_fire("rate(1 hour)", start, start - timedelta(minutes=5))
    assert early.tzinfo is UTC and early.isoformat() == "2026-03-02T12:00:00+00:00"
