"""A participant's model budget (docs/safety.md#budgets): the limits, and the usage counted on the
flow-state item (``DataKey.MODEL_BUDGET``), so counting adds no write to a turn: the turn's one
commit carries it.

Each window starts at the first model call counted in it and lasts an hour (calls) or a day (calls
and input characters); a window that has passed starts again at the next call. Pure: the caller gives
the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import Field

from promptpipe.lazy_model import LazyModel

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


@dataclass(frozen=True)
class BudgetLimits:
    """Per participant; 0 turns a limit off."""

    model_calls_per_hour: int = 20
    model_calls_per_day: int = 100
    input_chars_per_day: int = 20_000


class BudgetUsage(LazyModel):
    """What a participant used in the current windows, and the messages held while over budget."""

    hour_start: datetime | None = None
    hour_calls: int = 0
    day_start: datetime | None = None
    day_calls: int = 0
    day_chars: int = 0
    # The texts that arrived while over budget (recorded in the transcript too), answered together
    # with the next message after the window passes.
    held: list[str] = Field(default_factory=list)
    # The end of the window whose one fixed reply was sent: one per window, not one per message.
    notified_until: datetime | None = None

    def rolled(self, now: datetime) -> BudgetUsage:
        """The usage with every window that has passed by ``now`` emptied."""
        update: dict[str, object] = {}
        if self.hour_start is not None and now >= self.hour_start + HOUR:
            update |= {"hour_start": None, "hour_calls": 0}
        if self.day_start is not None and now >= self.day_start + DAY:
            update |= {"day_start": None, "day_calls": 0, "day_chars": 0}
        return self.model_copy(update=update) if update else self

    def over_until(self, limits: BudgetLimits, now: datetime, chars: int) -> datetime | None:
        """When the budget a turn of ``chars`` input characters would exceed reopens; ``None``: within it."""
        usage = self.rolled(now)
        ends: list[datetime] = []
        if limits.model_calls_per_hour and usage.hour_calls >= limits.model_calls_per_hour:
            ends.append((usage.hour_start or now) + HOUR)
        day_end = (usage.day_start or now) + DAY
        if limits.model_calls_per_day and usage.day_calls >= limits.model_calls_per_day:
            ends.append(day_end)
        if limits.input_chars_per_day and usage.day_chars + chars > limits.input_chars_per_day:
            ends.append(day_end)
        return max(ends) if ends else None

    def charged(self, now: datetime, *, calls: int, chars: int) -> BudgetUsage:
        """The usage after a turn of ``calls`` model calls that read ``chars`` input characters."""
        usage = self.rolled(now)
        return usage.model_copy(
            update={
                "hour_start": usage.hour_start or now,
                "hour_calls": usage.hour_calls + calls,
                "day_start": usage.day_start or now,
                "day_calls": usage.day_calls + calls,
                "day_chars": usage.day_chars + chars,
            }
        )
