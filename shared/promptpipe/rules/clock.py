"""Time as a port: logic never calls ``datetime.now()``; it asks a ``Clock``."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class SystemClock:
    """Wall-clock time, used in AWS."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that only moves when told to: local runs, the pump and tests."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, instant: datetime) -> None:
        if instant.tzinfo is None:
            raise ValueError("ManualClock.set needs a timezone-aware instant")
        with self._lock:
            self._now = instant.astimezone(UTC)

    def advance(self, delta: timedelta) -> datetime:
        with self._lock:
            self._now = self._now + delta
            return self._now


def to_rfc3339(instant: datetime) -> str:
    """RFC3339 in UTC with a ``Z`` suffix, as Go's ``time.Time`` JSON of the original."""
    instant = instant.astimezone(UTC)
    if instant.microsecond:
        return instant.isoformat(timespec="microseconds").replace("+00:00", "Z")
    return instant.isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC3339 timestamp (``Z`` or offset) into an aware UTC datetime."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
