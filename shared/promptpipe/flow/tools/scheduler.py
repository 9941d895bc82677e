"""The daily habit-prompt schedules, created, listed and deleted (``tool_table.SCHEDULER``).

A schedule is an EventBridge Scheduler cron in the schedule's own IANA zone, firing ``prep`` minutes
before the target time. The first-day decision falls out of the cron itself (it fires today when
created before today's firing time) and is reported in the schedule's zone, not the server's.
Random schedules deliver at a random instant of their window every day (see ``flow/delivery.py``).

The tool only changes the registry in the session; the schedule itself is created or deleted after
the commit (docs/architecture.md, "Effects after the commit"). Everything EventBridge would refuse is
checked here first, so what the model is told was scheduled is what will be applied.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from promptpipe.controller.tool_table import SCHEDULER, Module
from promptpipe.errors import TimerError
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import daily_spec, hhmm_minutes, schedule_timing, validate_daily
from promptpipe.flow.schedule_pause import MAX_PAUSE_DAYS, pause_end, pause_schedules, resume_schedules
from promptpipe.flow.session import OpContext
from promptpipe.flow.timer_names import daily_schedule_name, random_delivery_name
from promptpipe.flow.tools.base import ToolContext, ToolResult, definition_of
from promptpipe.lazy_model import LazyModel
from promptpipe.models.llm import ToolDefinition
from promptpipe.models.state import ScheduleInfo, ScheduleType
from promptpipe.rules.timezones import DEFAULT_PARTICIPANT_ZONE, participant_zone_name, validate_iana_zone

HHMM = re.compile(r"^([0-1]?[0-9]|2[0-3]):[0-5][0-9]$")
# A schedule of a participant without a zone takes the participant's default zone, whatever its type.
DEFAULT_FIXED_TIMEZONE = DEFAULT_PARTICIPANT_ZONE
# Random schedules made before the one zone rule took UTC: a zone change still moves them (participants.py).
DEFAULT_RANDOM_TIMEZONE = "UTC"
INVALID_PARAMETERS = "Invalid scheduler parameters"


ROW = SCHEDULER


def definition(prep_minutes: int) -> ToolDefinition:
    return definition_of(ROW, prep_minutes=prep_minutes)


class SchedulerParams(LazyModel):
    action: str
    type: ScheduleType | None = None
    fixed_time: str = ""
    random_start_time: str = ""
    random_end_time: str = ""
    timezone: str = ""
    schedule_id: str = ""
    days: int = 0


_minutes = hhmm_minutes

__all__ = ["ROW", "SchedulerTool", "build", "definition", "schedule_timing", "validate_params"]


def normalise_hhmm(value: str) -> str:
    """``9:00`` and ``09:00`` are one time: compare and name schedules by the zero-padded form."""
    hours, minutes = value.split(":")
    return f"{int(hours):02d}:{int(minutes):02d}"


def _pause_params(action: str, args: dict[str, Any]) -> SchedulerParams:
    if action == "resume":
        return SchedulerParams(action=action)
    days = args.get("days")
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_PAUSE_DAYS:
        raise ValueError(f"days is required for pause action: a whole number from 1 to {MAX_PAUSE_DAYS}")
    return SchedulerParams(action=action, days=days)


def validate_params(args: dict[str, Any]) -> SchedulerParams:
    """docs/behaviour.md#B-SCHED-1, with its error meanings. Raises ``ValueError(detail)``."""
    action = args.get("action")
    if action not in ("create", "list", "delete", "pause", "resume"):
        raise ValueError(f"invalid scheduler action: {action if action is not None else ''}")
    if action in ("pause", "resume"):
        return _pause_params(action, args)
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
        return params.model_copy(update={"fixed_time": normalise_hhmm(params.fixed_time)})
    if not params.random_start_time:
        raise ValueError("random_start_time is required for random scheduler type")
    if not params.random_end_time:
        raise ValueError("random_end_time is required for random scheduler type")
    for name in ("random_start_time", "random_end_time"):
        if not HHMM.match(getattr(params, name)):
            raise ValueError(f"invalid {name} format: time must be in HH:MM format (24-hour)")
    if _minutes(params.random_end_time) <= _minutes(params.random_start_time):
        raise ValueError("random_end_time must be after random_start_time")
    return params.model_copy(
        update={
            "random_start_time": normalise_hhmm(params.random_start_time),
            "random_end_time": normalise_hhmm(params.random_end_time),
        }
    )


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
    # the one zone rule (rules/timezones.py): the participant's stored zone, else the default zone,
    # the same for both types, the one the console, the transcript and the export show
    zone = params.timezone or participant_zone_name(participant_zone)
    try:
        return validate_iana_zone(zone)  # the one zone rule, shared with enrollment and the adapter
    except ValueError as exc:
        raise ValueError(f"invalid timezone: {zone}") from exc


def first_delivery_is_today(now: datetime, zone: str, fire_minutes: int) -> bool:
    """Whether today's firing (in the schedule's zone) is still ahead (docs/behaviour.md#B-SCHED-4)."""
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
        if params.action == "pause":
            return self._pause(ctx, params.days)
        if params.action == "resume":
            return self._resume(ctx)
        return self._create(ctx, params)

    # -- pause and resume -------------------------------------------------------------------
    def _pause(self, ctx: ToolContext, days: int) -> ToolResult:
        session = ctx.session
        current = session.data.schedule_pause()
        if not session.data.schedules() and current is None:
            return ToolResult.error("Nothing to pause", "the participant has no daily schedule")
        until = pause_end(session.now, days)
        session.apply("pause_schedules", lambda op: pause_schedules(op, until))
        zone = ZoneInfo(participant_zone_name(session.participant.timezone))
        back = until.astimezone(zone)
        return ToolResult(
            ok=True,
            text=(
                f"Daily prompts paused for {days} day(s): none is sent until {back:%A %d %B} "
                f"({back:%Y-%m-%d %H:%M} {zone.key}), when they resume by themselves at their usual time."
            ),
            data={"paused": True, "days": days, "until": back.isoformat()},
        )

    def _resume(self, ctx: ToolContext) -> ToolResult:
        session = ctx.session
        if session.data.schedule_pause() is None:
            return ToolResult(
                ok=True,
                text="Nothing is paused: the daily schedules are as listed.",
                data={"resumed": False},
            )
        resumed: list[ScheduleInfo] = []

        def resume(op: OpContext) -> None:
            resumed[:] = resume_schedules(op)  # a replay decides afresh

        session.apply("resume_schedules", resume)
        described = "; ".join(describe(s, self.prep_minutes) for s in resumed) or "as before"
        return ToolResult(
            ok=True,
            text=f"Daily prompts resumed: {described}.",
            data={"resumed": True, "schedule_ids": [s.id for s in resumed]},
        )

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
        cap = ctx.deps.config.max_live_daily_schedules
        if len(session.data.schedules()) >= cap:  # MAX_LIVE_DAILY_SCHEDULES (docs/safety.md#budgets)
            return ToolResult.error(
                "Too many daily schedules",
                f"the participant already has {cap} daily schedules, the most allowed; nothing was created. "
                "Offer to change or delete one first (action=list, then delete)",
            )
        fire_minutes, _window = schedule_timing(candidate, self.prep_minutes)
        schedule_id = deterministic_schedule_id(participant.id, session.event_id, candidate)
        name = daily_schedule_name(participant.id, schedule_id)
        schedule = candidate.model_copy(update={"id": schedule_id, "timer_id": name})
        try:
            validate_daily(daily_spec(participant.id, schedule, self.prep_minutes))
        except TimerError as exc:
            return ToolResult.error("Failed to schedule prompt", str(exc))

        def register(op: OpContext) -> None:
            registry = op.data.schedules()
            if any(s.same_timing(schedule) for s in registry):
                return  # a concurrent turn registered the same schedule first: nothing to create
            if len(registry) >= cap:
                return  # a concurrent turn reached the cap first: the cap holds
            op.data.set_schedules([*registry, schedule])
            op.touch_schedule(name)

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
        pause = ctx.session.data.schedule_pause()
        if not schedules and pause is not None:
            back = pause.until.astimezone(ZoneInfo(participant_zone_name(ctx.session.participant.timezone)))
            paused = "; ".join(describe(s, self.prep_minutes) for s in pause.schedules)
            return ToolResult(
                ok=True,
                text=f"The daily prompts are paused until {back:%Y-%m-%d %H:%M} (then: {paused}).",
                data={"paused_until": back.isoformat(), "schedule_ids": []},
            )
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
                    f"that looks like a time, not a schedule id; call {ROW.name} with action=list to get the id",
                    "Invalid schedule ID format - time used instead of schedule ID",
                )
            return ToolResult.error(f"no schedule with id '{schedule_id}'", "Schedule not found")
        names = [schedule.timer_id, random_delivery_name(ctx.session.participant.id, schedule_id)]

        def unregister(op: OpContext) -> None:
            op.data.set_schedules([s for s in op.data.schedules() if s.id != schedule_id])
            op.touch_schedule(names[0])
            op.disarm(names[1])  # a random window's delivery armed for today goes too

        ctx.session.apply("delete_schedule", unregister)
        return ToolResult(
            ok=True,
            text=f"Deleted the daily habit prompt schedule {schedule_id}; no more prompts will come from it.",
            data={"schedule_id": schedule_id, "deleted": True},
        )


def build(deps: FlowDeps, module: Module) -> SchedulerTool:
    return SchedulerTool(deps.config.scheduler_prep_time_minutes)
