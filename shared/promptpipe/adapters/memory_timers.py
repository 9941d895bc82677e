"""``Timers`` in memory, for unit tests: same validation and replace/cancel semantics as the
EventBridge adapter, plus a way to inject one failure and to list the one-shots that are due."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import ConfigDict

from promptpipe.errors import TimerError
from promptpipe.lazy_model import LazyModel
from promptpipe.models.effects import LiveSchedule, ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload
from promptpipe.models.sweeps import StudySweepRequest
from promptpipe.rules.scheduling import (
    at_expression,
    daily_cron_expression,
    validate_schedule_name,
    validate_timezone,
)

ScheduleKind = Literal["timer", "daily_prompt", "prompt_at"]


class ScheduledTimer(LazyModel):
    """One stored schedule: a one-shot (``at``) or a daily prompt (hour, minute, timezone)."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ScheduleKind
    at: datetime | None = None
    hour: int | None = None
    minute: int | None = None
    timezone: str | None = None
    payload: TimerPayload | ScheduledPromptPayload

    @property
    def one_shot(self) -> bool:
        return self.kind != "daily_prompt"


class InMemoryTimers:
    """The in-memory adapter of the ``Timers`` port."""

    def __init__(
        self,
        *,
        timers_arn: str = "memory:timers",
        scheduled_prompt_arn: str = "memory:scheduled-prompt",
        role_arn: str = "memory:scheduler-role",
        daily_window_minutes: int = 0,
    ) -> None:
        self.schedules: dict[str, ScheduledTimer] = {}
        # The settings a put writes into a schedule's specification; a test changes them to make the
        # schedules already put drift (``specs`` keeps each one as it was put).
        self.timers_arn = timers_arn
        self.scheduled_prompt_arn = scheduled_prompt_arn
        self.role_arn = role_arn
        self.daily_window_minutes = daily_window_minutes
        self.specs: dict[str, LiveSchedule] = {}
        self.described: list[str] = []  # every describe call, in order
        self.cancelled: list[str] = []  # every cancel call, existing or not, in order
        self.fail_next: Exception | None = None  # raised (once) by the next port call
        # The sweeps' one-shots (the study sweep's continuation): name -> (when, input); kept apart
        # from ``schedules``, whose one-shots ``due`` hands to the timers' use case.
        self.sweeps: dict[str, tuple[datetime, StudySweepRequest]] = {}

    def schedule_timer(self, *, name: str, at: datetime, payload: TimerPayload) -> str:
        self._maybe_fail()
        return self._store(ScheduledTimer(name=name, kind="timer", at=self._at(at), payload=payload))

    def schedule_daily_prompt(
        self, *, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload
    ) -> str:
        self._maybe_fail()
        daily_cron_expression(hour, minute)  # validates the time of day
        validate_timezone(timezone)
        return self._store(
            ScheduledTimer(name=name, kind="daily_prompt", hour=hour, minute=minute, timezone=timezone, payload=payload)
        )

    def schedule_prompt_at(self, *, name: str, at: datetime, payload: ScheduledPromptPayload) -> str:
        self._maybe_fail()
        return self._store(ScheduledTimer(name=name, kind="prompt_at", at=self._at(at), payload=payload))

    def schedule_sweep(self, *, name: str, at: datetime, payload: StudySweepRequest) -> str:
        self._maybe_fail()
        validate_schedule_name(name)
        self.sweeps[name] = (self._at(at), payload)  # same name replaces, as in the AWS adapter
        return name

    def cancel(self, name: str) -> None:
        self._maybe_fail()
        validate_schedule_name(name)
        self.cancelled.append(name)
        self.schedules.pop(name, None)
        self.sweeps.pop(name, None)
        self.specs.pop(name, None)  # as the schedule it described: gone (a long run would keep them all)

    def list_names(self, prefix: str) -> list[str]:
        self._maybe_fail()
        return sorted(name for name in [*self.schedules, *self.sweeps] if name.startswith(prefix))

    def describe(self, name: str) -> LiveSchedule | None:
        self._maybe_fail()
        validate_schedule_name(name)
        self.described.append(name)
        return self.specs.get(name) if name in self.schedules else None

    def planned(self, spec: ScheduleSpec) -> LiveSchedule:
        if spec.kind == "daily_prompt" and spec.prompt is not None:
            return self._render(
                ScheduledTimer(
                    name=spec.name,
                    kind="daily_prompt",
                    hour=spec.hour or 0,
                    minute=spec.minute or 0,
                    timezone=spec.timezone or "UTC",
                    payload=spec.prompt,
                )
            )
        payload = spec.prompt if spec.kind == "prompt_at" else spec.timer
        if spec.at is None or payload is None:
            raise TimerError(f"schedule {spec.name}: incomplete description")
        return self._render(ScheduledTimer(name=spec.name, kind=spec.kind, at=self._at(spec.at), payload=payload))

    # --- test helpers ---------------------------------------------------------------------

    def due(self, until: datetime) -> list[ScheduledTimer]:
        """One-shots whose time is at or before ``until``, earliest first (ties by name)."""
        due = [s for s in self.schedules.values() if s.at is not None and s.at <= until]
        return sorted(due, key=lambda s: (s.at, s.name))

    def get(self, name: str) -> ScheduledTimer | None:
        return self.schedules.get(name)

    # --- internals ------------------------------------------------------------------------

    def _store(self, schedule: ScheduledTimer) -> str:
        validate_schedule_name(schedule.name)
        self.schedules[schedule.name] = schedule  # same name replaces, as in the AWS adapter
        self.specs[schedule.name] = self._render(schedule)
        return schedule.name

    def _render(self, schedule: ScheduledTimer) -> LiveSchedule:
        """The specification the EventBridge adapter would write for ``schedule`` (its fields)."""
        daily = schedule.kind == "daily_prompt"
        expression = (
            daily_cron_expression(schedule.hour or 0, schedule.minute or 0)
            if daily
            else at_expression(schedule.at or datetime.min.replace(tzinfo=UTC))
        )
        return LiveSchedule(
            expression=expression,
            timezone=(schedule.timezone or "UTC") if daily else "UTC",
            flexible_window_minutes=self.daily_window_minutes if daily else 0,
            target_arn=self.timers_arn if schedule.kind == "timer" else self.scheduled_prompt_arn,
            role_arn=self.role_arn,
            payload=schedule.payload.model_dump(mode="json"),
            action_after_completion="NONE" if daily else "DELETE",
        )

    def _at(self, at: datetime) -> datetime:
        at_expression(at)  # same checks as the AWS adapter (aware datetime)
        return at.astimezone(UTC)

    def _maybe_fail(self) -> None:
        if self.fail_next is not None:
            failure, self.fail_next = self.fail_next, None
            raise failure
