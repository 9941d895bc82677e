"""Schedule names, time zones, expressions and next-fire times (docs/platform.md#scheduler-rules)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest

from promptpipe.errors import InvalidScheduleExpression, TimerError
from promptpipe.rules.scheduling import (
    MAX_EXPRESSION_LENGTH,
    at_expression,
    at_fire_time,
    aws_day_of_week,
    daily_cron_expression,
    next_cron_fire,
    next_rate_fire,
    parse_expression,
    validate_schedule_name,
    validate_timezone,
)

TORONTO = ZoneInfo("America/Toronto")


def _fires(expression: str, zone: str, after: datetime, count: int) -> list[datetime]:
    out: list[datetime] = []
    for _ in range(count):
        nxt = next_cron_fire(expression, zone, after)
        assert nxt is not None
        out.append(nxt)
        after = nxt
    return out


# --- names and zones -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "x" * 64, "pp-reminder-p_abc.1", "A_b-C.9"])
def test_valid_schedule_names(name: str) -> None:
    assert validate_schedule_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "a/b", "+15551234567", "a:b", "é", "ok\n"])
def test_invalid_schedule_names(name: str) -> None:
    with pytest.raises(
        InvalidScheduleExpression, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"
    ):
        validate_schedule_name(name)


def test_invalid_schedule_expression_is_a_timer_error() -> None:
    # Given a bad name / When validated / Then callers catching TimerError see it too
    with pytest.raises(TimerError, match=r"^invalid schedule name .*: use 1-64 characters of \[0-9a-zA-Z-_.\]$"):
        validate_schedule_name("bad name")


@pytest.mark.parametrize("zone", ["UTC", "America/Toronto", "Europe/Berlin", "America/Argentina/Buenos_Aires"])
def test_valid_timezones(zone: str) -> None:
    assert validate_timezone(zone) == ZoneInfo(zone)


@pytest.mark.parametrize(
    "zone",
    [
        "Mars/Olympus",
        "",
        "../etc/passwd",
        "/usr/share/zoneinfo/UTC",
        "America/" + "x" * 50,
        "EST 5",
        "localtime",
        "posix/UTC",
        "America",
    ],
)
def test_invalid_timezones(zone: str) -> None:
    with pytest.raises(
        InvalidScheduleExpression,
        match=r"^invalid timezone: .* is not an IANA time zone name \(e\.g\. America/Toronto\)$",
    ):
        validate_timezone(zone)


# --- builders --------------------------------------------------------------------------


def test_at_expression_is_the_utc_wall_clock() -> None:
    instant = datetime(2027, 3, 14, 7, 50, tzinfo=TORONTO)  # EDT, UTC-4
    assert at_expression(instant) == "at(2027-03-14T11:50:00)"


def test_at_expression_rounds_sub_seconds_up() -> None:
    assert at_expression(datetime(2027, 1, 1, 0, 0, 59, 1, tzinfo=UTC)) == "at(2027-01-01T00:01:00)"


def test_at_expression_needs_an_aware_datetime() -> None:
    with pytest.raises(InvalidScheduleExpression, match=r"must be timezone-aware$"):
        at_expression(datetime(2027, 1, 1))


def test_daily_cron_expression() -> None:
    assert daily_cron_expression(7, 50) == "cron(50 7 * * ? *)"
    assert daily_cron_expression(0, 0) == "cron(0 0 * * ? *)"


@pytest.mark.parametrize(("hour", "minute"), [(24, 0), (-1, 0), (7, 60), (7, -5)])
def test_daily_cron_expression_rejects_bad_times(hour: int, minute: int) -> None:
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time -?\d+:-?\d+: hour 0-23, minute 0-59$"):
        daily_cron_expression(hour, minute)


def test_aws_day_of_week_numbers_sunday_as_one() -> None:
    sunday = datetime(2027, 3, 14).date()
    assert aws_day_of_week(sunday) == 1
    assert aws_day_of_week(sunday + timedelta(days=6)) == 7  # Saturday


# --- parsing ---------------------------------------------------------------------------


def test_parse_at() -> None:
    parsed = parse_expression("at(2027-03-14T07:50:00)")
    assert parsed.kind == "at"
    assert parsed.at == datetime(2027, 3, 14, 7, 50)
    assert at_fire_time(parsed, "America/Toronto") == datetime(2027, 3, 14, 11, 50, tzinfo=UTC)


def test_parse_rate() -> None:
    assert parse_expression("rate(5 minutes)").rate == timedelta(minutes=5)
    assert parse_expression("rate(1 hour)").rate == timedelta(hours=1)
    assert parse_expression("rate(2 days)").rate == timedelta(days=2)


def test_parse_cron_fields() -> None:
    spec = parse_expression("cron(0/15 8-10,20 ? JAN-MAR,DEC MON-FRI 2027-2028)").cron
    assert spec is not None
    assert spec.minutes == (0, 15, 30, 45)
    assert spec.hours == (8, 9, 10, 20)
    assert spec.months == (1, 2, 3, 12)
    assert spec.years == (2027, 2028)
    assert spec.day_of_month is None
    assert spec.day_of_week is not None
    assert spec.day_of_week.days == frozenset({2, 3, 4, 5, 6})


def test_parse_cron_steps_and_wrapping_ranges() -> None:
    spec = parse_expression("cron(*/20 */6 */10 * ? *)").cron
    assert spec is not None
    assert spec.minutes == (0, 20, 40)
    assert spec.hours == (0, 6, 12, 18)
    assert spec.day_of_month is not None
    assert spec.day_of_month.days == frozenset({1, 11, 21, 31})
    wrapped = parse_expression("cron(0 22-2 * * ? *)").cron
    assert wrapped is not None
    assert wrapped.hours == (0, 1, 2, 22, 23)


@pytest.mark.parametrize(
    "expression",
    [
        "garbage",
        "",
        "cron(0 8 * * * *)",  # no '?'
        "cron(0 8 ? * ? *)",  # '?' in both
        "cron(0 8 * * ?)",  # five fields
        "cron(0  8 * * ? *)",  # empty field
        "cron(60 8 * * ? *)",
        "cron(0 24 * * ? *)",
        "cron(0 8 32 * ? *)",
        "cron(0 8 * 13 ? *)",
        "cron(0 8 ? * 8 *)",
        "cron(0 8 ? * FUNDAY *)",
        "cron(0 8 * * ? 1969)",
        "cron(0 8 * * ? 2200)",
        "cron(*/0 8 * * ? *)",
        "cron(a 8 * * ? *)",
        "cron(0 8 * * ? *",
        "at(2027-02-30T10:00:00)",
        "at(2027-3-4T10:00:00)",
        "at(2027-03-04 10:00:00)",
        "rate(0 minutes)",
        "rate(5 weeks)",
        "rate(-1 hours)",
        "cron(" + "0," * 130 + "0 8 * * ? *)",  # over 256 characters
    ],
)
def test_parse_rejects_garbage(expression: str) -> None:
    with pytest.raises(InvalidScheduleExpression):
        parse_expression(expression)


# --- next cron fire --------------------------------------------------------------------


def test_daily_toronto_across_spring_forward_fires_at_0750_local_every_day() -> None:
    # Given a daily 07:50 Toronto schedule / When it runs across 2027-03-14 (spring forward)
    fires = _fires("cron(50 7 * * ? *)", "America/Toronto", datetime(2027, 3, 12, tzinfo=UTC), 4)
    # Then it fires once a day at 07:50 local; the UTC instant moves from 12:50 to 11:50
    assert [f.astimezone(TORONTO).strftime("%m-%d %H:%M") for f in fires] == [
        "03-12 07:50",
        "03-13 07:50",
        "03-14 07:50",
        "03-15 07:50",
    ]
    assert [f.hour for f in fires] == [12, 12, 11, 11]
    assert all(f.tzinfo is UTC for f in fires)


def test_daily_toronto_across_fall_back_fires_at_0750_local_every_day() -> None:
    fires = _fires("cron(50 7 * * ? *)", "America/Toronto", datetime(2027, 11, 5, tzinfo=UTC), 4)
    assert [f.astimezone(TORONTO).strftime("%m-%d %H:%M") for f in fires] == [
        "11-05 07:50",
        "11-06 07:50",
        "11-07 07:50",
        "11-08 07:50",
    ]
    assert [f.hour for f in fires] == [11, 11, 12, 12]


def test_time_missing_on_spring_forward_day_is_skipped() -> None:
    # Given 02:30 daily in Toronto: 02:30 does not exist on 2027-03-14
    fires = _fires("cron(30 2 * * ? *)", "America/Toronto", datetime(2027, 3, 13, tzinfo=UTC), 3)
    # Then the 14th is skipped
    assert [f.astimezone(TORONTO).strftime("%m-%d %H:%M") for f in fires] == [
        "03-13 02:30",
        "03-15 02:30",
        "03-16 02:30",
    ]


def test_ambiguous_time_on_fall_back_day_fires_once() -> None:
    # Given 01:30 daily in Toronto: 01:30 happens twice on 2027-11-07
    fires = _fires("cron(30 1 * * ? *)", "America/Toronto", datetime(2027, 11, 6, 12, tzinfo=UTC), 2)
    # Then it fires once, at the first (EDT) occurrence, and next on the 8th
    assert fires == [datetime(2027, 11, 7, 5, 30, tzinfo=UTC), datetime(2027, 11, 8, 6, 30, tzinfo=UTC)]


def test_after_the_first_ambiguous_occurrence_it_does_not_fire_at_the_second() -> None:
    after = datetime(2027, 11, 7, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert next_cron_fire("cron(30 1 * * ? *)", "America/Toronto", after) == datetime(2027, 11, 8, 6, 30, tzinfo=UTC)


def test_next_fire_is_strictly_after() -> None:
    at = datetime(2027, 1, 1, 8, 0, tzinfo=UTC)
    assert next_cron_fire("cron(0 8 * * ? *)", "UTC", at) == at + timedelta(days=1)
    assert next_cron_fire("cron(0 8 * * ? *)", "UTC", at - timedelta(seconds=1)) == at


def test_every_fifteen_minutes() -> None:
    fires = _fires("cron(*/15 * * * ? *)", "UTC", datetime(2027, 1, 1, 23, 31, tzinfo=UTC), 3)
    assert fires == [
        datetime(2027, 1, 1, 23, 45, tzinfo=UTC),
        datetime(2027, 1, 2, 0, 0, tzinfo=UTC),
        datetime(2027, 1, 2, 0, 15, tzinfo=UTC),
    ]


def test_day_of_week_numbers_and_names_agree() -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)  # a Friday
    by_number = _fires("cron(0 9 ? * 2,4 *)", "UTC", after, 4)
    by_name = _fires("cron(0 9 ? * MON,WED *)", "UTC", after, 4)
    assert by_number == by_name
    assert [f.strftime("%a %d") for f in by_number] == ["Mon 04", "Wed 06", "Mon 11", "Wed 13"]


def test_weekday_range_and_sunday_is_one() -> None:
    after = datetime(2027, 1, 1, 10, tzinfo=UTC)  # Friday, after 09:00
    assert [f.strftime("%a") for f in _fires("cron(0 9 ? * MON-FRI *)", "UTC", after, 3)] == [
        "Mon",
        "Tue",
        "Wed",
    ]
    assert next_cron_fire("cron(0 9 ? * 1 *)", "UTC", after) == datetime(2027, 1, 3, 9, tzinfo=UTC)


def test_month_day_and_year_fields() -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)
    assert _fires("cron(0 12 1,15 */6 ? 2027-2028)", "UTC", after, 5) == [
        datetime(2027, 1, 1, 12, tzinfo=UTC),
        datetime(2027, 1, 15, 12, tzinfo=UTC),
        datetime(2027, 7, 1, 12, tzinfo=UTC),
        datetime(2027, 7, 15, 12, tzinfo=UTC),
        datetime(2028, 1, 1, 12, tzinfo=UTC),
    ]


def test_last_day_nth_weekday_and_nearest_weekday() -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)
    assert next_cron_fire("cron(0 0 L 2 ? *)", "UTC", after) == datetime(2027, 2, 28, tzinfo=UTC)
    assert next_cron_fire("cron(0 0 L 2 ? 2028)", "UTC", after) == datetime(2028, 2, 29, tzinfo=UTC)
    # third Friday of January 2027
    assert next_cron_fire("cron(0 9 ? * 6#3 *)", "UTC", after) == datetime(2027, 1, 15, 9, tzinfo=UTC)
    # last Friday of January 2027
    assert next_cron_fire("cron(0 9 ? * FRIL *)", "UTC", after) == datetime(2027, 1, 29, 9, tzinfo=UTC)
    # 2027-05-15 is a Saturday: nearest weekday is Friday the 14th
    assert next_cron_fire("cron(0 9 15W 5 ? *)", "UTC", after) == datetime(2027, 5, 14, 9, tzinfo=UTC)
    # January 2027 ends on a Sunday: last weekday is Friday the 29th
    assert next_cron_fire("cron(0 9 LW 1 ? *)", "UTC", after) == datetime(2027, 1, 29, 9, tzinfo=UTC)


def test_no_occurrence_returns_none() -> None:
    assert next_cron_fire("cron(0 0 30 2 ? *)", "UTC", datetime(2027, 1, 1, tzinfo=UTC)) is None
    assert next_cron_fire("cron(0 0 1 1 ? 2027)", "UTC", datetime(2027, 6, 1, tzinfo=UTC)) is None


def test_next_cron_fire_validates_its_inputs() -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)
    with pytest.raises(InvalidScheduleExpression, match=r"^'rate\(1 hour\)' is not a cron\(\) expression$"):
        next_cron_fire("rate(1 hour)", "UTC", after)
    with pytest.raises(
        InvalidScheduleExpression,
        match=r"^invalid timezone: .* is not an IANA time zone name \(e\.g\. America/Toronto\)$",
    ):
        next_cron_fire("cron(0 8 * * ? *)", "Mars/Olympus", after)
    with pytest.raises(InvalidScheduleExpression, match=r"must be timezone-aware$"):
        next_cron_fire("cron(0 8 * * ? *)", "UTC", datetime(2027, 1, 1))


def test_next_rate_fire() -> None:
    start = datetime(2027, 1, 1, 10, tzinfo=UTC)
    assert next_rate_fire("rate(2 hours)", start, start) == start + timedelta(hours=2)
    assert next_rate_fire("rate(2 hours)", start, start + timedelta(hours=3)) == start + timedelta(hours=4)
    assert next_rate_fire("rate(2 hours)", start, start - timedelta(hours=1)) == start


# --- error messages: what the caller (and the model, through the scheduler tool) is told ---------------


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("garbage", r"expected at\(\.\.\.\), cron\(\.\.\.\) or rate\(\.\.\.\)$"),
        ("cron(0 8 * * * *)", r"use '\?' in exactly one of day-of-month and day-of-week$"),
        ("cron(0 8 * * ?)", r"cron needs six fields$"),
        ("cron(60 8 * * ? *)", r": 60 is outside 0-59$"),
        ("cron(0 24 * * ? *)", r": 24 is outside 0-23$"),
        ("cron(0 8 32 * ? *)", r": 32 is outside 1-31$"),
        ("cron(0 8 * 13 ? *)", r": 13 is outside 1-12$"),
        ("cron(0 8 ? * 8 *)", r": 8 is outside 1-7$"),
        ("cron(0 8 ? * 2#6 *)", r": 6 is outside 1-5$"),
        ("cron(0 8 * * ? 2200)", r": 2200 is outside 1970-2199$"),
        ("cron(0 8 ? * FUNDAY *)", r": 'FUNDAY' is not a number in 1-7$"),
        ("cron(*/0 8 * * ? *)", r": 0 is outside 1-60$"),
        ("at(2027-3-4T10:00:00)", r"expected at\(yyyy-mm-ddThh:mm:ss\)$"),
        ("at(2027-02-30T10:00:00)", r"day is out of range for month$"),
        ("rate(5 weeks)", r"expected rate\(N minute\(s\)\|hour\(s\)\|day\(s\)\)$"),
        ("cron(" + "0," * 130 + "0 8 * * ? *)", r"^invalid schedule expression "),
    ],
)
def test_parse_error_says_what_is_wrong(expression: str, message: str) -> None:
    with pytest.raises(InvalidScheduleExpression, match=message):
        parse_expression(expression)


def test_validation_errors_name_the_rule() -> None:
    with pytest.raises(InvalidScheduleExpression, match=r"use 1-64 characters of \[0-9a-zA-Z-_\.\]$"):
        validate_schedule_name("bad name")
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid timezone: '\.\./x' is not an IANA time zone name"):
        validate_timezone("../x")
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid timezone: 'Mars/Olympus' is not an IANA"):
        validate_timezone("Mars/Olympus")
    with pytest.raises(InvalidScheduleExpression, match=r"^invalid daily time 24:0: hour 0-23, minute 0-59$"):
        daily_cron_expression(24, 0)
    with pytest.raises(InvalidScheduleExpression, match=r"is not a cron\(\) expression$"):
        next_cron_fire("rate(1 hour)", "UTC", datetime(2027, 1, 1, tzinfo=UTC))
    with pytest.raises(InvalidScheduleExpression, match=r"is not a rate\(\) expression$"):
        next_rate_fire("cron(0 8 * * ? *)", datetime(2027, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    with pytest.raises(InvalidScheduleExpression, match=r"is not an at\(\) expression$"):
        at_fire_time("rate(1 hour)", "UTC")
    with pytest.raises(InvalidScheduleExpression, match=r"must be timezone-aware$"):
        next_rate_fire("rate(1 hour)", datetime(2027, 1, 1), datetime(2027, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("zone", "fires"),
    [
        ("Asia/Kolkata", datetime(2027, 1, 15, 3, 30, tzinfo=UTC)),  # +05:30
        ("Pacific/Chatham", datetime(2027, 1, 14, 19, 15, tzinfo=UTC)),  # +13:45 in its summer
    ],
)
def test_at_fire_time_reads_the_wall_clock_in_its_zone(zone: str, fires: datetime) -> None:
    fired = at_fire_time("at(2027-01-15T09:00:00)", zone)
    assert fired == fires
    assert fired.tzinfo is UTC


# --- ------------------------------------------------------------------------------------------
# Cron edge cases, each with the instant it must fire (docs/platform.md#scheduler-rules).
#
# The calendar facts each case leans on are in its comment; they are what a wrong weekday, an
# off-by-one at a field's upper bound or a UTC-only date computation would get wrong.


CASES = [
    # --- nW: the weekday nearest to day n, never leaving the month
    # 2026-03-15 is a Sunday: Monday the 16th, not Friday the 13th
    ("cron(0 9 15W * ? 2026)", "UTC", datetime(2026, 3, 1), datetime(2026, 3, 16, 9)),
    # 2026-08-01 is a Saturday: Monday the 3rd (not Friday 31 July, another month)
    ("cron(0 9 1W * ? 2026)", "UTC", datetime(2026, 7, 31, 10), datetime(2026, 8, 3, 9)),
    # 2026-05-31 is a Sunday and the last day: Friday the 29th (not Monday 1 June)
    ("cron(0 9 31W * ? 2026)", "UTC", datetime(2026, 5, 1), datetime(2026, 5, 29, 9)),
    # 2026-10-31 is a Saturday: Friday the 30th
    ("cron(0 9 31W 10 ? 2026)", "UTC", datetime(2026, 10, 1), datetime(2026, 10, 30, 9)),
    # 2026-03-16 is a Monday: the day itself
    ("cron(0 9 16W 3 ? 2026)", "UTC", datetime(2026, 3, 1), datetime(2026, 3, 16, 9)),
    # a 31W month without a 31st does not fire: April 2026 is skipped, May fires (Fri 29)
    ("cron(0 9 31W 4,5 ? 2026)", "UTC", datetime(2026, 4, 1), datetime(2026, 5, 29, 9)),
    # LW: October 2026 ends on a Saturday, May 2026 on a Sunday: Friday before each
    ("cron(0 9 LW 10 ? 2026)", "UTC", datetime(2026, 10, 1), datetime(2026, 10, 30, 9)),
    ("cron(0 9 LW 5 ? 2026)", "UTC", datetime(2026, 5, 1), datetime(2026, 5, 29, 9)),
    # LW when the last day is a weekday (March 2026 ends on a Tuesday)
    ("cron(0 9 LW 3 ? 2026)", "UTC", datetime(2026, 3, 1), datetime(2026, 3, 31, 9)),
    # --- nL: the last n-day of the month
    # July 2026 ends on a Friday: the 31st itself
    ("cron(0 9 ? 7 6L 2026)", "UTC", datetime(2026, 7, 1), datetime(2026, 7, 31, 9)),
    # December 2026 ends on a Thursday: the last Friday is the 25th
    ("cron(0 9 ? 12 FRIL 2026)", "UTC", datetime(2026, 12, 1), datetime(2026, 12, 25, 9)),
    # a bare L in day-of-week is Saturday (December 2026: the 5th)
    ("cron(0 9 ? 12 L 2026)", "UTC", datetime(2026, 12, 1), datetime(2026, 12, 5, 9)),
    # --- n#k: the k-th n-day
    # April 2026 starts on a Wednesday: the first Monday is the 6th, the second the 13th
    ("cron(0 9 ? 4 2#1 2026)", "UTC", datetime(2026, 4, 1), datetime(2026, 4, 6, 9)),
    ("cron(0 9 ? 4 MON#2 2026)", "UTC", datetime(2026, 4, 1), datetime(2026, 4, 13, 9)),
    # the 7th is still in the first week: Sep 2026 starts on a Tuesday, first Monday the 7th
    ("cron(0 9 ? 9 2#1 2026)", "UTC", datetime(2026, 9, 1), datetime(2026, 9, 7, 9)),
    # a fifth Thursday (December 2026: 3, 10, 17, 24, 31)
    ("cron(0 9 ? 12 5#5 2026)", "UTC", datetime(2026, 12, 1), datetime(2026, 12, 31, 9)),
    # no fifth Monday in April 2026 (6, 13, 20, 27): the next is in June (1, 8, 15, 22, 29)
    ("cron(0 9 ? 4,6 2#5 2026)", "UTC", datetime(2026, 4, 1), datetime(2026, 6, 29, 9)),
    # --- every field at its upper bound
    ("cron(59 23 31 DEC ? 2026)", "UTC", datetime(2026, 1, 1), datetime(2026, 12, 31, 23, 59)),
    # 2026-12-01 is a Tuesday: the first Saturday is the 5th
    ("cron(59 23 ? DEC SAT 2026)", "UTC", datetime(2026, 12, 1), datetime(2026, 12, 5, 23, 59)),
    ("cron(59 23 ? 12 7 2026)", "UTC", datetime(2026, 12, 1), datetime(2026, 12, 5, 23, 59)),
    ("cron(0 0 1 1 ? 2199)", "UTC", datetime(2198, 12, 31), datetime(2199, 1, 1)),
    # 23:59 on the last minute of a year rolls to the next year
    ("cron(59 23 * * ? *)", "UTC", datetime(2026, 12, 31, 23, 59), datetime(2027, 1, 1, 23, 59)),
    # a step that lands exactly on the upper bound
    ("cron(59/30 * * * ? *)", "UTC", datetime(2026, 3, 2, 10, 0), datetime(2026, 3, 2, 10, 59)),
    # --- DST and local dates
    # Berlin springs forward on 2026-03-29 (02:00 -> 03:00): 02:30 is skipped that day
    ("cron(30 2 * * ? *)", "Europe/Berlin", datetime(2026, 3, 28, 12), datetime(2026, 3, 30, 0, 30)),
    # Berlin falls back on 2026-10-25: 02:30 fires once, at its first (CEST) occurrence
    ("cron(30 2 * * ? *)", "Europe/Berlin", datetime(2026, 10, 24, 12), datetime(2026, 10, 25, 0, 30)),
    # local midnight in Toronto while UTC is already the next day
    ("cron(0 0 * * ? *)", "America/Toronto", datetime(2026, 3, 2, 4), datetime(2026, 3, 2, 5)),
    # Monday 18:00 in Los Angeles is Tuesday 02:00 UTC: Monday's 20:00 local is still to come
    ("cron(0 20 ? * MON *)", "America/Los_Angeles", datetime(2026, 3, 3, 2), datetime(2026, 3, 3, 4)),
    # Auckland is ahead of UTC: Sunday 2026-03-01 20:00 UTC is already Monday 09:00 there
    ("cron(30 9 ? * MON *)", "Pacific/Auckland", datetime(2026, 3, 1, 20), datetime(2026, 3, 1, 20, 30)),
]


@pytest.mark.parametrize(("expression", "zone", "after", "fires"), CASES)
def test_cron_edge_case_fires_on_its_date(expression: str, zone: str, after: datetime, fires: datetime) -> None:
    assert next_cron_fire(expression, zone, after.replace(tzinfo=UTC)) == fires.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "after"),
    [
        ("cron(0 9 30W 2 ? 2026-2027)", datetime(2026, 1, 1)),  # February has no 30th
        ("cron(0 9 ? 4 2#5 2026)", datetime(2026, 1, 1)),  # April 2026 has four Mondays
        ("cron(0 0 1 1 ? 2199)", datetime(2199, 1, 1)),  # the last year has passed
    ],
)
def test_cron_without_an_occurrence_returns_none(expression: str, after: datetime) -> None:
    assert next_cron_fire(expression, "UTC", after.replace(tzinfo=UTC)) is None


# --- ------------------------------------------------------------------------------------------
# EventBridge Scheduler rules at their bounds (docs/platform.md#scheduler-rules).
#
# Every field's upper and lower bound (minute 59, day 31 in ``nW``, SUN and SAT in ``nL`` and ``n#k``,
# a step as long as its field), an expression of exactly the maximum length, seconds in ``at()``, a
# range wrapping across the new year, the errors that quote the expression, and results that stay
# in UTC when the process itself runs in another zone.


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
