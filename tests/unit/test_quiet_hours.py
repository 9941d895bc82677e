"""Quiet hours: the window, moving to its end, dropping stale nudges, midnight and DST."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.rules.quiet_hours import QuietHours, adjust, parse_clock
from promptpipe.settings import Settings

TORONTO = "America/Toronto"
NY = ZoneInfo("America/New_York")


def local(zone: str, *args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=ZoneInfo(zone), fold=fold)


def test_outside_the_window_nothing_moves() -> None:
    at = local(TORONTO, 2026, 3, 4, 12, 20)
    assert adjust(at, TORONTO) == at


def test_a_reminder_at_00_50_moves_to_08_00_the_same_morning() -> None:
    # The habit time 20:00 -> prompt 19:50 -> a five-hour reminder at 00:50: moved to 08:00.
    moved = adjust(local(TORONTO, 2026, 3, 5, 0, 50), TORONTO)
    assert moved == local(TORONTO, 2026, 3, 5, 8, 0)
    assert moved is not None and moved.tzinfo == UTC


def test_evening_part_of_a_window_spanning_midnight_moves_to_the_next_morning() -> None:
    assert adjust(local(TORONTO, 2026, 3, 4, 21, 0), TORONTO) == local(TORONTO, 2026, 3, 5, 8, 0)
    assert adjust(local(TORONTO, 2026, 3, 4, 23, 59), TORONTO) == local(TORONTO, 2026, 3, 5, 8, 0)


@pytest.mark.parametrize(
    ("hour", "minute", "inside"),
    [(20, 59, False), (21, 0, True), (0, 0, True), (7, 59, True), (8, 0, False), (12, 0, False)],
)
def test_window_boundaries_start_inclusive_end_exclusive(hour: int, minute: int, inside: bool) -> None:
    at = local(TORONTO, 2026, 3, 4, hour, minute)
    assert QuietHours().contains(at, TORONTO) is inside
    assert (adjust(at, TORONTO) != at) is inside


def test_a_window_within_one_day() -> None:
    siesta = QuietHours(start=time(13, 0), end=time(15, 30))
    assert siesta.adjust(local(TORONTO, 2026, 3, 4, 14, 0), TORONTO) == local(TORONTO, 2026, 3, 4, 15, 30)
    assert siesta.adjust(local(TORONTO, 2026, 3, 4, 12, 59), TORONTO) == local(TORONTO, 2026, 3, 4, 12, 59)
    assert siesta.adjust(local(TORONTO, 2026, 3, 4, 23, 0), TORONTO) == local(TORONTO, 2026, 3, 4, 23, 0)


def test_off_or_empty_window_never_moves() -> None:
    at = local(TORONTO, 2026, 3, 5, 0, 50)
    assert QuietHours(enabled=False).adjust(at, TORONTO) == at
    assert QuietHours(start=time(22, 0), end=time(22, 0)).adjust(at, TORONTO) == at


def test_stale_after_the_next_daily_prompt_is_dropped() -> None:
    at = local(TORONTO, 2026, 3, 5, 0, 50)
    next_prompt_early = local(TORONTO, 2026, 3, 5, 7, 20)
    next_prompt_late = local(TORONTO, 2026, 3, 5, 19, 50)
    assert adjust(at, TORONTO, stale_after=next_prompt_early) is None
    assert adjust(at, TORONTO, stale_after=next_prompt_late) == local(TORONTO, 2026, 3, 5, 8, 0)
    # exactly at the next prompt is stale too
    assert adjust(at, TORONTO, stale_after=local(TORONTO, 2026, 3, 5, 8, 0)) is None


def test_more_than_max_delay_is_dropped() -> None:
    quiet = QuietHours(max_delay=timedelta(hours=6))
    assert quiet.adjust(local(TORONTO, 2026, 3, 4, 21, 30), TORONTO) is None  # 10.5 h late
    assert quiet.adjust(local(TORONTO, 2026, 3, 5, 2, 0), TORONTO) == local(TORONTO, 2026, 3, 5, 8, 0)  # 6 h
    assert quiet.adjust(local(TORONTO, 2026, 3, 5, 1, 59), TORONTO) is None  # 6 h 1 min


def test_the_zone_is_the_participants_not_utc() -> None:
    at = datetime(2026, 3, 5, 3, 0, tzinfo=UTC)  # 22:00 in Toronto, 12:00 in Tokyo
    assert adjust(at, TORONTO) == local(TORONTO, 2026, 3, 5, 8, 0)
    assert adjust(at, "Asia/Tokyo") == at


def test_spring_forward_night_is_one_hour_shorter() -> None:
    # New York, 2026-03-08: 02:00 EST -> 03:00 EDT. 22:00 EST to 08:00 EDT is 9 real hours.
    at = local("America/New_York", 2026, 3, 7, 22, 0)
    moved = adjust(at, "America/New_York")
    assert moved == local("America/New_York", 2026, 3, 8, 8, 0)
    assert moved is not None and moved - at == timedelta(hours=9)


def test_fall_back_night_is_one_hour_longer() -> None:
    # New York, 2026-11-01: 02:00 EDT -> 01:00 EST. 22:00 EDT to 08:00 EST is 11 real hours.
    at = local("America/New_York", 2026, 10, 31, 22, 0)
    moved = adjust(at, "America/New_York")
    assert moved is not None and moved - at == timedelta(hours=11)
    # both 01:30s of the repeated hour are inside the window and move to the same 08:00
    first, second = local("America/New_York", 2026, 11, 1, 1, 30), local("America/New_York", 2026, 11, 1, 1, 30, fold=1)
    assert first.astimezone(UTC) != second.astimezone(UTC)
    assert adjust(first, "America/New_York") == adjust(second, "America/New_York") == moved


def test_an_end_time_inside_a_dst_gap_is_shifted_by_the_gap() -> None:
    quiet = QuietHours(start=time(23, 0), end=time(2, 30))
    moved = quiet.adjust(local("America/New_York", 2026, 3, 8, 1, 0), "America/New_York")
    assert moved is not None
    assert moved.astimezone(NY).strftime("%H:%M %Z") == "03:30 EDT"


def test_an_ambiguous_end_time_is_the_first_of_the_two() -> None:
    quiet = QuietHours(start=time(23, 0), end=time(1, 30))
    moved = quiet.adjust(local("America/New_York", 2026, 11, 1, 0, 30), "America/New_York")
    assert moved is not None
    assert moved.astimezone(NY).strftime("%H:%M %Z") == "01:30 EDT"


def test_southern_hemisphere_dst() -> None:
    # Sydney, 2026-04-05: 03:00 AEDT -> 02:00 AEST (fall back) inside the night window.
    at = local("Australia/Sydney", 2026, 4, 4, 23, 0)
    moved = adjust(at, "Australia/Sydney")
    assert moved == local("Australia/Sydney", 2026, 4, 5, 8, 0)
    assert moved is not None and moved - at == timedelta(hours=10)


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        adjust(datetime(2026, 3, 5, 0, 50), TORONTO)


def test_settings_give_the_window_and_can_turn_it_off() -> None:
    default = QuietHours.from_settings(Settings())
    assert (default.start, default.end, default.enabled) == (time(21, 0), time(8, 0), True)
    custom = QuietHours.from_settings(
        Settings(quiet_hours_start="22:30", quiet_hours_end="06:45", quiet_hours_enabled=False)
    )
    assert (custom.start, custom.end, custom.enabled) == (time(22, 30), time(6, 45), False)
    with pytest.raises(ValueError, match="quiet_hours_start\n  String should match pattern"):
        Settings(quiet_hours_start="25:00")
    with pytest.raises(ValueError, match=r"^'9pm' is not a time of day \(HH:MM\)$"):
        parse_clock("9pm")


ZONES = st.sampled_from(
    ["America/Toronto", "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Kolkata", "Pacific/Chatham"]
)
CLOCKS = st.builds(time, st.integers(0, 23), st.sampled_from([0, 15, 30, 45]))
INSTANTS = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31)).map(
    lambda d: d.replace(tzinfo=UTC)
)


@settings(max_examples=400, deadline=None)
@given(at=INSTANTS, zone=ZONES, start=CLOCKS, end=CLOCKS)
def test_properties_of_adjust(at: datetime, zone: str, start: time, end: time) -> None:
    quiet = QuietHours(start=start, end=end, max_delay=timedelta(days=2))
    moved = quiet.adjust(at, zone)
    assert moved is not None  # with a long max_delay nothing is dropped
    if not quiet.contains(at, zone):
        assert moved == at
        return
    # moved forward, out of the window, to the end's wall time on the day the window closes
    tz = ZoneInfo(zone)
    assert moved > at
    assert not quiet.contains(moved, zone)
    assert moved == datetime.combine(moved.astimezone(tz).date(), end, tzinfo=tz).astimezone(UTC)
    # a day and the longest gap, or two when a gap swallowed the day's whole open interval
    assert moved - at <= timedelta(hours=25) or (moved - at <= timedelta(hours=49) and _open_minutes(start, end) <= 60)
    # and it is the first such instant: a minute earlier is still quiet (unless the end is in a gap)
    earlier = moved - timedelta(minutes=1)
    if earlier > at and moved.astimezone(tz).time().replace(tzinfo=None) == end:
        assert quiet.contains(earlier, zone)


def _open_minutes(start: time, end: time) -> int:
    """How long the window is open each day, in minutes (from its end to its start)."""
    return (start.hour * 60 + start.minute - end.hour * 60 - end.minute) % (24 * 60)


def test_a_gap_that_swallows_the_open_interval_moves_to_the_next_days_end() -> None:
    # Chatham skips 02:45 -> 03:45 on 2026-09-27; a window 03:15-03:00 is open 03:00-03:15 only, which
    # does not exist that day: the shifted end (03:45) is quiet again, so the message waits a day.
    quiet = QuietHours(start=time(3, 15), end=time(3, 0), max_delay=timedelta(days=3))
    at = datetime(2026, 9, 26, 13, 0, tzinfo=UTC)  # 2026-09-27 01:45 local, inside the window
    moved = quiet.adjust(at, "Pacific/Chatham")
    assert moved is not None and not quiet.contains(moved, "Pacific/Chatham")
    assert moved.astimezone(ZoneInfo("Pacific/Chatham")).replace(tzinfo=None) == datetime(2026, 9, 28, 3, 0)
