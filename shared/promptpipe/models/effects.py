"""External effects as data: what an event decided to change outside its own state item.

A session records effects while it runs and they are applied only once its commit has landed
(docs/architecture.md, "Effects after the commit"). Schedules are described by ``ScheduleSpec``:
the full desired shape of one EventBridge schedule, so that applying it is create-or-update by name
and a later repair (reconcile) can re-create it from the state alone.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict

from promptpipe.lazy_model import LazyModel
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload

ScheduleKind = Literal["timer", "daily_prompt", "prompt_at"]


class ScheduleSpec(LazyModel):
    """One desired schedule: a one-shot of the timers function (``timer``), a one-shot of the
    scheduled-prompt function (``prompt_at``, random windows) or a daily cron (``daily_prompt``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ScheduleKind
    at: datetime | None = None  # one-shots
    hour: int | None = None  # daily
    minute: int | None = None
    timezone: str | None = None
    timer: TimerPayload | None = None  # kind == "timer"
    prompt: ScheduledPromptPayload | None = None  # kind in ("daily_prompt", "prompt_at")


class MessageRef(LazyModel):
    """An outbound message of a committed event: its id (what the sent-ledger records) and the
    ``seq`` of its transcript entry (where its body lives)."""

    id: str
    seq: str


class LiveSchedule(LazyModel):
    """The specification of one schedule as the scheduler holds it (GetSchedule), or as putting a
    ``ScheduleSpec`` would write it now (``Timers.planned``): what ``reconcile`` compares to find a
    schedule written under older settings (prep time, flexible window, target ARNs, payload)."""

    model_config = ConfigDict(frozen=True)

    expression: str
    timezone: str
    flexible_window_minutes: int = 0  # 0: the window is OFF
    target_arn: str
    role_arn: str
    payload: dict[str, Any]  # the target's Input, parsed (key order and spacing do not count)
    state: str = "ENABLED"
    action_after_completion: str = "NONE"
    dead_letter_arn: str | None = None
    max_retry_attempts: int | None = None
    max_event_age_seconds: int | None = None

    def differences(self, live: "LiveSchedule") -> list[str]:
        """The fields in which ``live`` differs from this (wanted) specification, in field order."""
        return [name for name in type(self).model_fields if getattr(self, name) != getattr(live, name)]
