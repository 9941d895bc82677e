"""Cron edge cases, each with the instant it must fire (docs/platform.md#scheduler-rules).

The calendar facts each case leans on are in its comment; they are what a wrong weekday, an
off-by-one at a field's upper bound or a UTC-only date computation would get wrong.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptpipe.scheduling import next_cron_fire

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
