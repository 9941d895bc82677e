"""Quiet hours: no reminder or feedback nudge arrives at night in the participant's zone.

The rule (docs/quiet-hours.md):

* The window is a wall-clock interval ``[start, end)`` in the participant's zone, default 21:00–08:00;
  a window whose start is after its end spans midnight. ``start == end`` (or ``enabled=False``)
  means no quiet hours.
* A message due outside the window is sent when due (``adjust`` returns ``at`` unchanged).
* A message due inside the window moves to the window's end: the first instant whose local wall
  time is the end time, on the day the window closes. When that wall time does not exist (a DST
  gap), it is the same wall time shifted forward by the gap (02:30 in a 02:00→03:00 gap is 03:30);
  when it exists twice (the clocks fall back), it is the first of the two. When the clocks skip the
  whole of that day's open interval (a window open for less time than the gap), it is the next day's.
* The moved message is dropped (``None``) when it is stale by then: when it would arrive more than
  ``max_delay`` after it was due, or at or after ``stale_after`` (e.g. the participant's next daily
  prompt, after which a reminder about the previous one makes no sense).

The daily prompt itself is not adjusted: it keeps the time the participant chose.
Pure: no clock, no settings, no I/O (``QuietHours.from_settings`` reads a ``Settings`` object).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

DEFAULT_START = time(21, 0)
DEFAULT_END = time(8, 0)
DEFAULT_MAX_DELAY = timedelta(hours=12)


def parse_clock(text: str) -> time:
    """``"21:00"`` -> ``time(21, 0)``; raises ``ValueError`` for anything but HH:MM."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not (hours.isdigit() and minutes.isdigit()) or len(minutes) != 2:
        raise ValueError(f"{text!r} is not a time of day (HH:MM)")
    return time(int(hours), int(minutes))


@dataclass(frozen=True)
class QuietHours:
    start: time = DEFAULT_START
    end: time = DEFAULT_END
    enabled: bool = True
    max_delay: timedelta = DEFAULT_MAX_DELAY

    @classmethod
    def from_settings(cls, settings: Any) -> QuietHours:
        return cls(
            start=parse_clock(settings.quiet_hours_start),
            end=parse_clock(settings.quiet_hours_end),
            enabled=settings.quiet_hours_enabled,
            max_delay=settings.quiet_hours_max_delay,
        )

    @property
    def active(self) -> bool:
        return self.enabled and self.start != self.end

    def _closing_day(self, wall: datetime) -> date | None:
        """The local date on which the window containing ``wall`` closes, or ``None`` if outside."""
        clock = wall.time().replace(tzinfo=None)
        if self.start < self.end:  # e.g. 13:00–15:00, within one day
            return wall.date() if self.start <= clock < self.end else None
        if clock >= self.start:  # spans midnight, evening part
            return wall.date() + timedelta(days=1)
        if clock < self.end:  # spans midnight, morning part
            return wall.date()
        return None

    def contains(self, at: datetime, zone: str) -> bool:
        """Is ``at`` (an aware instant) inside the quiet window in ``zone``?"""
        if not self.active:
            return False
        return self._closing_day(_aware(at).astimezone(ZoneInfo(zone))) is not None

    def window_end(self, at: datetime, zone: str) -> datetime | None:
        """The instant the window containing ``at`` ends (UTC), or ``None`` when ``at`` is outside."""
        if not self.active:
            return None
        tz = ZoneInfo(zone)
        closing = self._closing_day(_aware(at).astimezone(tz))
        if closing is None:
            return None
        # fold=0: the first of two equal wall times; for a wall time in a gap, zoneinfo applies the
        # offset from before the gap, which lands the gap's length later on the new offset.
        end = datetime.combine(closing, self.end, tzinfo=tz).replace(fold=0)
        # When the whole open interval of that day lies inside the gap (a window open for less time
        # than the clocks skip), the shifted end is quiet again: the window then closes a day later.
        while self._closing_day(end.astimezone(UTC).astimezone(tz)) is not None:
            closing += timedelta(days=1)
            end = datetime.combine(closing, self.end, tzinfo=tz).replace(fold=0)
        return end.astimezone(UTC)

    def adjust(self, at: datetime, zone: str, *, stale_after: datetime | None = None) -> datetime | None:
        """When to send a reminder or nudge due at ``at`` for a participant in ``zone``: ``at``
        itself outside the window, the window's end inside it, ``None`` when stale by then."""
        at = _aware(at)
        end = self.window_end(at, zone)
        if end is None:
            return at
        if end - at > self.max_delay:
            return None
        if stale_after is not None and end >= _aware(stale_after):
            return None
        return end


def adjust(
    at: datetime, zone: str, *, quiet: QuietHours | None = None, stale_after: datetime | None = None
) -> datetime | None:
    """``QuietHours.adjust`` with the default window (21:00–08:00) unless ``quiet`` is given."""
    return (quiet or QuietHours()).adjust(at, zone, stale_after=stale_after)


def _aware(instant: datetime) -> datetime:
    if instant.tzinfo is None:
        raise ValueError("quiet hours need an aware datetime (with a time zone)")
    return instant
