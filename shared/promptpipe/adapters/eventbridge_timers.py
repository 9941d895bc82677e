"""``Timers`` on EventBridge Scheduler: one schedule per timer, in one schedule group.

Names are deterministic (docs/architecture.md#timers), so scheduling an existing name replaces it: create, and on
``ConflictException`` update with the full parameter set (UpdateSchedule resets omitted fields,
docs/platform.md#scheduler-rules). Names, expressions and zones are validated here because moto accepts anything.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from botocore.exceptions import BotoCoreError, ClientError

from promptpipe.adapters.aws_errors import error_code
from promptpipe.errors import ConfigurationError, TimerError
from promptpipe.models.effects import LiveSchedule, ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload
from promptpipe.rules.scheduling import (
    at_expression,
    daily_cron_expression,
    parse_expression,
    validate_schedule_name,
    validate_timezone,
)
from promptpipe.settings import SCHEDULE_TARGETS

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from promptpipe.models.sweeps import StudySweepRequest
    from promptpipe.settings import Settings

# Context attributes the scheduler substitutes into the target's Input when it fires.
SCHEDULED_TIME_PLACEHOLDER = "<aws.scheduler.scheduled-time>"
EXECUTION_ID_PLACEHOLDER = "<aws.scheduler.execution-id>"

_UTC = "UTC"


class _Schedule(NamedTuple):
    """What one CreateSchedule/UpdateSchedule call says, before the group's target settings. A named
    tuple: immutable as a frozen dataclass, without generating its methods at every cold start."""

    name: str
    expression: str
    timezone: str
    target_arn: str
    payload: TimerPayload | ScheduledPromptPayload | StudySweepRequest
    after_completion: Literal["NONE", "DELETE"]
    window_minutes: int = 0


class EventBridgeTimers:
    """The AWS adapter of the ``Timers`` port."""

    def __init__(
        self,
        client: BaseClient,
        *,
        group_name: str,
        timers_function_arn: str,
        scheduled_prompt_function_arn: str,
        role_arn: str,
        dlq_arn: str | None,
        max_retry_attempts: int = 3,
        max_event_age_seconds: int = 3600,
        daily_window_minutes: int = 0,
    ) -> None:
        if not 0 <= max_retry_attempts <= 185:
            raise ConfigurationError("max_retry_attempts must be 0-185")
        if not 60 <= max_event_age_seconds <= 86400:
            raise ConfigurationError("max_event_age_seconds must be 60-86400")
        self._client = client
        self._group_name = validate_schedule_name(group_name)
        self._timers_function_arn = timers_function_arn
        self._scheduled_prompt_function_arn = scheduled_prompt_function_arn
        # The same for every schedule of the group: who invokes the target, its retries, its DLQ.
        self._target_settings: dict[str, Any] = {
            "RoleArn": role_arn,
            "RetryPolicy": {
                "MaximumRetryAttempts": max_retry_attempts,
                "MaximumEventAgeInSeconds": max_event_age_seconds,
            },
        }
        if dlq_arn:
            self._target_settings["DeadLetterConfig"] = {"Arn": dlq_arn}
        if not 0 <= daily_window_minutes <= 1440:
            raise ConfigurationError("daily_window_minutes must be 0-1440")
        # Daily prompts only: a flexible window spreads the minute's firings (docs/scale.md); one-shots
        # (a reminder, a random-window delivery) keep their exact time.
        self._daily_window = daily_window_minutes

    @classmethod
    def from_settings(cls, settings: Settings, client: BaseClient | None = None) -> EventBridgeTimers:
        timers_arn, prompt_arn, role_arn = (getattr(settings, name) for name in SCHEDULE_TARGETS)
        if not (timers_arn and prompt_arn and role_arn):
            missing = settings.missing(SCHEDULE_TARGETS)
            raise ConfigurationError("schedules need " + ", ".join(name.upper() for name in missing))
        if client is None:
            from promptpipe.adapters.aws import aws_client  # builds a boto3 client

            client = aws_client("scheduler", settings)
        return cls(
            client,
            group_name=settings.schedule_group_name,
            timers_function_arn=timers_arn,
            scheduled_prompt_function_arn=prompt_arn,
            role_arn=role_arn,
            dlq_arn=settings.scheduler_dlq_arn,
            max_retry_attempts=settings.scheduler_max_retry_attempts,
            max_event_age_seconds=settings.scheduler_max_event_age_seconds,
            # Within the prep time, so a prompt still arrives by the participant's preferred time.
            daily_window_minutes=min(
                settings.daily_prompt_flexible_window_minutes, settings.scheduler_prep_time_minutes
            ),
        )

    @property
    def group_name(self) -> str:
        return self._group_name

    # --- the port -------------------------------------------------------------------------

    def schedule_timer(self, *, name: str, at: datetime, payload: TimerPayload) -> str:
        return self._put(self._one_shot(name, at, self._timers_function_arn, payload))

    def schedule_daily_prompt(
        self, *, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload
    ) -> str:
        return self._put(self._daily(name, hour, minute, timezone, payload))

    def schedule_prompt_at(self, *, name: str, at: datetime, payload: ScheduledPromptPayload) -> str:
        return self._put(self._one_shot(name, at, self._scheduled_prompt_function_arn, payload))

    def schedule_sweep(self, *, name: str, at: datetime, payload: StudySweepRequest) -> str:
        return self._put(self._one_shot(name, at, self._timers_function_arn, payload))

    def cancel(self, name: str) -> None:
        validate_schedule_name(name)
        try:
            self._client.delete_schedule(Name=name, GroupName=self._group_name)
        except ClientError as exc:
            if error_code(exc) == "ResourceNotFoundException":
                return
            raise _timer_error("delete_schedule", name, exc) from exc
        except BotoCoreError as exc:
            raise TimerError(f"delete_schedule {name}: {exc}") from exc

    def list_names(self, prefix: str) -> list[str]:
        """Live schedules of the group whose name starts with ``prefix`` (paginated)."""
        names: list[str] = []
        request: dict[str, Any] = {"GroupName": self._group_name, "MaxResults": 100}
        if prefix:
            request["NamePrefix"] = prefix
        try:
            while True:
                response = self._client.list_schedules(**request)
                # filtered here as well: moto before 5.1.x ignores NamePrefix (the local stack at its floor)
                names += [
                    str(item["Name"]) for item in response.get("Schedules", []) if item["Name"].startswith(prefix)
                ]
                token = response.get("NextToken")
                if not token:
                    return names
                request["NextToken"] = token
        except ClientError as exc:
            raise _timer_error("list_schedules", prefix or "*", exc) from exc
        except BotoCoreError as exc:
            raise TimerError(f"list_schedules {prefix or '*'}: {exc}") from exc

    def describe(self, name: str) -> LiveSchedule | None:
        validate_schedule_name(name)
        try:
            response = self._client.get_schedule(Name=name, GroupName=self._group_name)
        except ClientError as exc:
            if error_code(exc) == "ResourceNotFoundException":
                return None
            raise _timer_error("get_schedule", name, exc) from exc
        except BotoCoreError as exc:
            raise TimerError(f"get_schedule {name}: {exc}") from exc
        return live_schedule(response)

    def planned(self, spec: ScheduleSpec) -> LiveSchedule:
        if spec.kind == "daily_prompt" and spec.prompt is not None:
            schedule = self._daily(spec.name, spec.hour or 0, spec.minute or 0, spec.timezone or _UTC, spec.prompt)
        elif spec.at is not None and (payload := spec.prompt if spec.kind == "prompt_at" else spec.timer):
            target = self._scheduled_prompt_function_arn if spec.kind == "prompt_at" else self._timers_function_arn
            schedule = self._one_shot(spec.name, spec.at, target, payload)
        else:
            raise TimerError(f"schedule {spec.name}: incomplete description")
        return live_schedule(self._parameters(schedule))

    # --- internals ------------------------------------------------------------------------

    def _daily(self, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload) -> _Schedule:
        """A daily prompt: cron in the participant's zone, kept after each run, in the flexible window."""
        return _Schedule(
            name,
            daily_cron_expression(hour, minute),
            timezone,
            self._scheduled_prompt_function_arn,
            payload,
            after_completion="NONE",
            window_minutes=self._daily_window,
        )

    def _one_shot(
        self,
        name: str,
        at: datetime,
        target_arn: str,
        payload: TimerPayload | ScheduledPromptPayload | StudySweepRequest,
    ) -> _Schedule:
        """``at()`` in UTC, deleted by the scheduler once it has run."""
        return _Schedule(name, at_expression(at), _UTC, target_arn, payload, after_completion="DELETE")

    def _put(self, schedule: _Schedule) -> str:
        validate_schedule_name(schedule.name)
        parse_expression(schedule.expression)
        validate_timezone(schedule.timezone)
        params = self._parameters(schedule)
        try:
            self._create_or_update(schedule.name, params)
        except BotoCoreError as exc:
            raise TimerError(f"schedule {schedule.name}: {exc}") from exc
        return schedule.name

    def _create_or_update(self, name: str, params: dict[str, Any]) -> None:
        """Create; on a conflict, update with the full set."""
        steps = (
            ("create_schedule", self._client.create_schedule, "ConflictException"),
            ("update_schedule", self._client.update_schedule, "ResourceNotFoundException"),
        )
        for operation, call, try_next_on in steps:
            try:
                call(**params)
                return
            except ClientError as exc:
                if error_code(exc) != try_next_on:
                    raise _timer_error(operation, name, exc) from exc
        # Deleted between our create and update (a one-shot that just completed): create again.
        try:
            self._client.create_schedule(**params)
        except ClientError as exc:
            raise _timer_error("create_schedule", name, exc) from exc

    def _parameters(self, schedule: _Schedule) -> dict[str, Any]:
        target = {"Arn": schedule.target_arn, "Input": schedule_input(schedule.payload), **self._target_settings}
        window = schedule.window_minutes
        return {
            "Name": schedule.name,
            "GroupName": self._group_name,
            "ScheduleExpression": schedule.expression,
            "ScheduleExpressionTimezone": schedule.timezone,
            "FlexibleTimeWindow": {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": window} if window else {"Mode": "OFF"},
            "State": "ENABLED",
            "ActionAfterCompletion": schedule.after_completion,
            "Target": target,
        }


def schedule_input(payload: TimerPayload | ScheduledPromptPayload | StudySweepRequest) -> str:
    """The target's Input: the payload's JSON with the scheduler's context placeholders (a sweep's
    input takes none: it refuses keys it does not know)."""
    body = payload.model_dump(mode="json")
    if isinstance(payload, TimerPayload | ScheduledPromptPayload):  # not a sweep (models/sweeps.py)
        body["scheduled_time"] = SCHEDULED_TIME_PLACEHOLDER
        body["execution_id"] = EXECUTION_ID_PLACEHOLDER
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def live_schedule(schedule: dict[str, Any]) -> LiveSchedule:
    """A schedule's specification from CreateSchedule parameters or a GetSchedule answer (same shape)."""
    target = schedule.get("Target", {})
    window = schedule.get("FlexibleTimeWindow", {})
    retry = target.get("RetryPolicy") or {}
    try:
        payload = json.loads(target.get("Input") or "{}")
    except ValueError:  # written by hand: differs from any payload of ours
        payload = {"unreadable_input": target.get("Input")}
    return LiveSchedule(
        expression=str(schedule.get("ScheduleExpression", "")),
        timezone=str(schedule.get("ScheduleExpressionTimezone") or _UTC),
        flexible_window_minutes=int(window.get("MaximumWindowInMinutes") or 0)
        if window.get("Mode") == "FLEXIBLE"
        else 0,
        target_arn=str(target.get("Arn", "")),
        role_arn=str(target.get("RoleArn", "")),
        payload=payload if isinstance(payload, dict) else {"input": payload},
        state=str(schedule.get("State") or "ENABLED"),
        action_after_completion=str(schedule.get("ActionAfterCompletion") or "NONE"),
        dead_letter_arn=(target.get("DeadLetterConfig") or {}).get("Arn"),
        max_retry_attempts=retry.get("MaximumRetryAttempts"),
        max_event_age_seconds=retry.get("MaximumEventAgeInSeconds"),
    )


def _timer_error(operation: str, name: str, exc: ClientError) -> TimerError:
    error = exc.response.get("Error", {})
    return TimerError(f"{operation} {name}: {error.get('Code', 'Unknown')}: {error.get('Message', str(exc))}")
