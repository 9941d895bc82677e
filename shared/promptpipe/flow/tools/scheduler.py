"""``scheduler``: create, list and delete daily habit-prompt schedules (FACTS §4, decisions 2–3).

A schedule is an EventBridge Scheduler cron in the schedule's own IANA zone, firing ``prep`` minutes
before the target time. The first-day decision falls out of the cron itself (it fires today when
created before today's firing time) and is reported in the schedule's zone, not the server's.
Random schedules deliver at a random instant of their window every day (see ``flow/delivery.py``).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from promptpipe.errors import TimerError
from promptpipe.flow.session import OpContext
from promptpipe.flow.state_ops import cancel_later
from promptpipe.flow.timer_names import daily_schedule_name
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.models.llm import ToolDefinition
from promptpipe.models.state import ScheduleInfo, ScheduleType
from promptpipe.timezones import validate_iana_zone

HHMM = re.compile(r"^([0-1]?[0-9]|2[0-3]):[0-5][0-9]$")
DEFAULT_FIXED_TIMEZONE = "America/Toronto"
DEFAULT_RANDOM_TIMEZONE = "UTC"
INVALID_PARAMETERS = "Invalid scheduler parameters"


def definition(prep_minutes: int) -> ToolDefinition:
    return ToolDefinition(
        name="scheduler",
        description=(
            "Manage the participant's daily habit-prompt schedule. action=create with type 'fixed' "
            "(fixed_time HH:MM, 24-hour) or 'random' (random_start_time and random_end_time HH:MM: a "
            "random time inside the window each day); action=list; action=delete with schedule_id. "
            f"Prompts arrive {prep_minutes} minutes before the chosen time. The timezone defaults to "
            "the participant's own (else America/Toronto for fixed, UTC for random). Schedule ids are "
            "internal: never show them to the participant."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["create", "list", "delete"]},
                "type": {"type": "string", "enum": ["fixed", "random"]},
                "fixed_time": {"type": "string", "pattern": HHMM.pattern},
                "random_start_time": {"type": "string", "pattern": HHMM.pattern},
                "random_end_time": {"type": "string", "pattern": HHMM.pattern},
                "timezone": {"type": "string", "description": "IANA time zone, e.g. America/Toronto."},
                "schedule_id": {"type": "string", "description": "For delete: the id from create/list."},
            },
            "required": ["action"],
        },
    )


class SchedulerParams(BaseModel):
    action: str
    type: ScheduleType | None = None
    fixed_time: str = ""
    random_start_time: str = ""
    random_end_time: str = ""
    timezone: str = ""
    schedule_id: str = ""


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def validate_params(args: dict[str, Any]) -> SchedulerParams:
    """FACTS §4 "Validation", with its error meanings. Raises ``ValueError(detail)``."""
    action = args.get("action")
    if action not in ("create", "list", "delete"):
        raise ValueError(f"invalid scheduler action: {action if action is not None else ''}")
    text = {k: (v.strip() if isinstance(v, str) else "") for k, v in args.items()}
    if action == "delete":
        if not text.get("schedule_id"):
            raise ValueError("schedule_id is required for delete action")
        return SchedulerParams(action=action, schedule_id=text["schedule_id"])
    if action == "list":
        return SchedulerParams(action=action)
    kind = args.get("type")
    if kind not in ("fixed", "random"):
        raise ValueError(f"invalid scheduler type: {kind if kind is not None else ''}")
    params = SchedulerParams(
        action=action,
        type=ScheduleType(kind),
        fixed_time=text.get("fixed_time", ""),
        random_start_time=text.get("random_start_time", ""),
        random_end_time=text.get("random_end_time", ""),
        timezone=text.get("timezone", ""),
    )
    if params.type is ScheduleType.FIXED:
        if not params.fixed_time:
            raise ValueError("fixed_time is required for fixed scheduler type")
        if not HHMM.match(params.fixed_time):
            raise ValueError("invalid fixed_time format: time must be in HH:MM format (24-hour)")
        return params
    if not params.random_start_time:
        raise ValueError("random_start_time is required for random scheduler type")
    if not params.random_end_time:
        raise ValueError("random_end_time is required for random scheduler type")
    for name in ("random_start_time", "random_end_time"):
        if not HHMM.match(getattr(params, name)):
            raise ValueError(f"invalid {name} format: time must be in HH:MM format (24-hour)")
    if _minutes(params.random_end_time) <= _minutes(params.random_start_time):
        raise ValueError("random_end_time must be after random_start_time")
    return params


def schedule_timing(schedule: ScheduleInfo, prep_minutes: int) -> tuple[int, int]:
    """(daily firing time in minutes after local midnight, random window in minutes; 0 if fixed)."""
    target = schedule.fixed_time if schedule.type is ScheduleType.FIXED else schedule.random_start_time
    fire_minutes = (_minutes(target) - prep_minutes) % (24 * 60)
    window = 0
    if schedule.type is ScheduleType.RANDOM:
        window = _minutes(schedule.random_end_time) - _minutes(schedule.random_start_time)
    return fire_minutes, window


def deterministic_schedule_id(participant_id: str, event_id: str, schedule: ScheduleInfo) -> str:
    """``sched_`` + 16 hex derived from the event and the timing: a retried turn (the model failed
    after the tool ran) re-creates the same EventBridge schedule instead of leaving an orphan."""
    key = "|".join(
        (
            participant_id,
            event_id,
            schedule.type.value,
            schedule.fixed_time,
            schedule.random_start_time,
            schedule.random_end_time,
            schedule.timezone,
        )
    )
    return "sched_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _hhmm(total_minutes: int) -> str:
    total_minutes %= 24 * 60
    return f"{total_minutes // 60:02d}:{total_minutes % 60:02d}"


def _resolve_zone(params: SchedulerParams, participant_zone: str) -> str:
    zone = params.timezone or participant_zone
    if not zone:
        zone = DEFAULT_FIXED_TIMEZONE if params.type is ScheduleType.FIXED else DEFAULT_RANDOM_TIMEZONE
    try:
        return validate_iana_zone(zone)  # the one zone rule, shared with enrollment and the adapter
    except ValueError as exc:
        raise ValueError(f"invalid timezone: {zone}") from exc


def first_delivery_is_today(now: datetime, zone: str, fire_minutes: int) -> bool:
    """Whether today's firing (in the schedule's zone) is still ahead (decision 3)."""
    local = now.astimezone(ZoneInfo(zone))
    return local.hour * 60 + local.minute < fire_minutes % (24 * 60)


def describe(schedule: ScheduleInfo, prep_minutes: int) -> str:
    if schedule.type is ScheduleType.FIXED:
        fire = _hhmm(_minutes(schedule.fixed_time) - prep_minutes)
        return f"every day at {fire} ({schedule.timezone}), {prep_minutes} min before {schedule.fixed_time}"
    start = _hhmm(_minutes(schedule.random_start_time) - prep_minutes)
    end = _hhmm(_minutes(schedule.random_end_time) - prep_minutes)
    return (
        f"every day at a random time between {start} and {end} ({schedule.timezone}), "
        f"for the {schedule.random_start_time}-{schedule.random_end_time} window"
    )


class SchedulerTool:
    def __init__(self, prep_minutes: int) -> None:
        self.prep_minutes = prep_minutes
        self.definition = definition(prep_minutes)

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        try:
            params = validate_params(args)
        except ValueError as exc:
            return ToolResult.error(INVALID_PARAMETERS, str(exc))
        if params.action == "list":
            return self._list(ctx)
        if params.action == "delete":
            return self._delete(ctx, params.schedule_id)
        return self._create(ctx, params)

    # -- create -----------------------------------------------------------------------------
    def _create(self, ctx: ToolContext, params: SchedulerParams) -> ToolResult:
        session = ctx.session
        participant = session.participant
        if not participant.phone_number:
            return ToolResult.error("Participant phone number is required for scheduling")
        try:
            zone = _resolve_zone(params, participant.timezone)
        except ValueError as exc:
            return ToolResult.error(INVALID_PARAMETERS, str(exc))
        candidate = ScheduleInfo(
            id="pending",
            type=params.type or ScheduleType.FIXED,
            fixed_time=params.fixed_time,
            random_start_time=params.random_start_time,
            random_end_time=params.random_end_time,
            timezone=zone,
            created_at=session.now,
        )
        existing = next((s for s in session.data.schedules() if s.same_timing(candidate)), None)
        if existing is not None:
            return ToolResult(
                ok=True,
                text=(
                    f"This daily schedule already exists ({describe(existing, self.prep_minutes)}); "
                    f"nothing new was created. Internal schedule id, not for the participant: {existing.id}"
                ),
                data={"schedule_id": existing.id, "already_exists": True},
            )

        fire_minutes, window = schedule_timing(candidate, self.prep_minutes)
        schedule_id = deterministic_schedule_id(participant.id, session.event_id, candidate)
        name = daily_schedule_name(participant.id, schedule_id)
        payload = ScheduledPromptPayload(
            participant_id=participant.id,
            schedule_id=schedule_id,
            kind="random_window" if window else "daily_prompt",
            window_minutes=window,
            created_at=session.now,
        )
        try:
            ctx.deps.timers.schedule_daily_prompt(
                name=name, hour=fire_minutes // 60, minute=fire_minutes % 60, timezone=zone, payload=payload
            )
        except TimerError as exc:
            return ToolResult.error("Failed to schedule prompt", str(exc))
        schedule = candidate.model_copy(update={"id": schedule_id, "timer_id": name})
        timers = ctx.deps.timers

        def register(op: OpContext) -> None:
            registry = op.data.schedules()
            if any(s.same_timing(schedule) for s in registry):
                cancel_later(op, timers, name)  # a concurrent turn registered the same schedule first
                return
            op.data.set_schedules([*registry, schedule])

        session.apply("register_schedule", register)
        starts_today = first_delivery_is_today(session.now, zone, fire_minutes)
        description = describe(schedule, self.prep_minutes)
        when = "today" if starts_today else "tomorrow"
        return ToolResult(
            ok=True,
            text=(
                f"Daily habit prompt scheduled: {description}. The first one arrives {when}. "
                f"Internal schedule id, not for the participant: {schedule_id}"
            ),
            data={
                "schedule_id": schedule_id,
                "type": schedule.type.value,
                "description": description,
                "prep_time_minutes": self.prep_minutes,
                "starts_today": starts_today,
            },
        )

    # -- list -------------------------------------------------------------------------------
    def _list(self, ctx: ToolContext) -> ToolResult:
        schedules = ctx.session.data.schedules()
        if not schedules:
            return ToolResult(ok=True, text="The participant has no active daily schedules yet.", data=[])
        lines = ["Active daily schedules:"]
        lines += [f"{i}. {describe(s, self.prep_minutes)} (internal id: {s.id})" for i, s in enumerate(schedules, 1)]
        return ToolResult(
            ok=True,
            text="\n".join(lines),
            data={
                "schedules": [s.to_json_dict() for s in schedules],
                "schedule_ids": [s.id for s in schedules],
                "prep_time_minutes": self.prep_minutes,
            },
        )

    # -- delete -----------------------------------------------------------------------------
    def _delete(self, ctx: ToolContext, schedule_id: str) -> ToolResult:
        schedule = next((s for s in ctx.session.data.schedules() if s.id == schedule_id), None)
        if schedule is None:
            if ":" in schedule_id and len(schedule_id) <= 5:
                return ToolResult.error(
                    "that looks like a time, not a schedule id; call scheduler with action=list to get the id",
                    "Invalid schedule ID format - time used instead of schedule ID",
                )
            return ToolResult.error(f"no schedule with id '{schedule_id}'", "Schedule not found")
        try:
            ctx.deps.timers.cancel(schedule.timer_id)
        except TimerError as exc:
            return ToolResult.error("could not delete the schedule", str(exc))

        def unregister(op: OpContext) -> None:
            op.data.set_schedules([s for s in op.data.schedules() if s.id != schedule_id])

        ctx.session.apply("delete_schedule", unregister)
        return ToolResult(
            ok=True,
            text=f"Deleted the daily habit prompt schedule {schedule_id}; no more prompts will come from it.",
            data={"schedule_id": schedule_id, "deleted": True},
        )
