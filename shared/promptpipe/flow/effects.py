"""Effects as data (docs/architecture.md, "Effects after the commit").

The state is the source of truth for schedules: the registry describes the daily ones and
``pendingTimers`` the one-shots. An event only names the schedules it touched; what to do with a
touched name is read from the state that was committed — create-or-update when the state wants it,
delete when it does not. Applying the same effects twice, or an older event's effects after a newer
event's, therefore converges on the committed state instead of undoing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from promptpipe.errors import TimerError
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import ScheduleInfo, ScheduleType, StateData
from promptpipe.ports import Timers
from promptpipe.rules.scheduling import at_expression, daily_cron_expression, validate_schedule_name, validate_timezone

MINUTES_PER_DAY = 24 * 60


def hhmm_minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def schedule_timing(schedule: ScheduleInfo, prep_minutes: int) -> tuple[int, int]:
    """(daily firing time in minutes after local midnight, random window in minutes; 0 if fixed)."""
    target = schedule.fixed_time if schedule.type is ScheduleType.FIXED else schedule.random_start_time
    fire_minutes = (hhmm_minutes(target) - prep_minutes) % MINUTES_PER_DAY
    window = 0
    if schedule.type is ScheduleType.RANDOM:
        window = hhmm_minutes(schedule.random_end_time) - hhmm_minutes(schedule.random_start_time)
    return fire_minutes, window


def daily_spec(
    participant_id: str, schedule: ScheduleInfo, prep_minutes: int, created_at: datetime | None = None
) -> ScheduleSpec:
    """The EventBridge cron of one registry entry. ``created_at`` is when it is (re)created: like
    EventBridge, the local pump fires no occurrence before it."""
    fire, window = schedule_timing(schedule, prep_minutes)
    return ScheduleSpec(
        name=schedule.timer_id,
        kind="daily_prompt",
        hour=fire // 60,
        minute=fire % 60,
        timezone=schedule.timezone,
        prompt=ScheduledPromptPayload(
            participant_id=participant_id,
            schedule_id=schedule.id,
            kind="random_window" if window else "daily_prompt",
            window_minutes=window,
            created_at=created_at or schedule.created_at,
        ),
    )


def one_shot_timer(name: str, at: datetime, payload: TimerPayload) -> ScheduleSpec:
    """A one-shot of the timers function, validated as EventBridge would (``TimerError``)."""
    validate_schedule_name(name)
    at_expression(at)
    return ScheduleSpec(name=name, kind="timer", at=at, timer=payload)


def one_shot_prompt(name: str, at: datetime, payload: ScheduledPromptPayload) -> ScheduleSpec:
    """A one-shot of the scheduled-prompt function (a random window's delivery)."""
    validate_schedule_name(name)
    at_expression(at)
    return ScheduleSpec(name=name, kind="prompt_at", at=at, prompt=payload)


def validate_daily(spec: ScheduleSpec) -> ScheduleSpec:
    """Everything EventBridge would reject about a daily schedule, checked before the commit."""
    validate_schedule_name(spec.name)
    daily_cron_expression(spec.hour or 0, spec.minute or 0)
    validate_timezone(spec.timezone or "")
    return spec


def desired_schedules(
    participant: ConversationParticipant, data: StateData, prep_minutes: int, now: datetime | None = None
) -> dict[str, ScheduleSpec]:
    """Every schedule that should be live for this participant, by name. Nothing unless active."""
    if not participant.is_active:
        return {}
    specs = {
        s.timer_id: daily_spec(participant.id, s, prep_minutes, created_at=now) for s in data.schedules() if s.timer_id
    }
    specs.update(data.pending_timers())
    return specs


@dataclass(frozen=True)
class Effects:
    """What a committed event must do outside its state item, in order: send ``messages``, then
    bring each schedule of ``schedules`` to its desired shape (``None``: delete it).

    For the send rule (``flow/send_rule.py``): ``decided_status``, the participant's status as the
    event committed it, and ``recipient``, the participant as committed now (``None``: deleted).
    For the delivery outcomes: ``committed_at`` and ``seqs`` (message id -> transcript ``seq``)
    locate each message's transcript entry."""

    participant_id: str
    event_id: str
    messages: list[OutboundMessage] = field(default_factory=list)
    schedules: dict[str, ScheduleSpec | None] = field(default_factory=dict)
    decided_status: ParticipantStatus | None = None
    recipient: ConversationParticipant | None = None
    committed_at: datetime | None = None
    seqs: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.messages and not self.schedules


def plan_effects(
    participant: ConversationParticipant,
    data: StateData,
    *,
    event_id: str,
    messages: list[OutboundMessage],
    touched: list[str],
    prep_minutes: int,
    now: datetime | None = None,
    seqs: dict[str, str] | None = None,
) -> Effects:
    desired = desired_schedules(participant, data, prep_minutes, now)
    return Effects(
        participant_id=participant.id,
        event_id=event_id,
        messages=list(messages),
        schedules={name: desired.get(name) for name in dict.fromkeys(touched)},
        decided_status=participant.status,
        recipient=participant,
        committed_at=now,
        seqs=dict(seqs or {}),
    )


def put_schedule(timers: Timers, spec: ScheduleSpec) -> None:
    """Create-or-update one schedule by name."""
    if spec.kind == "daily_prompt" and spec.prompt is not None:
        timers.schedule_daily_prompt(
            name=spec.name,
            hour=spec.hour or 0,
            minute=spec.minute or 0,
            timezone=spec.timezone or "UTC",
            payload=spec.prompt,
        )
    elif spec.kind == "prompt_at" and spec.prompt is not None and spec.at is not None:
        timers.schedule_prompt_at(name=spec.name, at=spec.at, payload=spec.prompt)
    elif spec.kind == "timer" and spec.timer is not None and spec.at is not None:
        timers.schedule_timer(name=spec.name, at=spec.at, payload=spec.timer)
    else:
        raise TimerError(f"schedule {spec.name}: incomplete description")


def apply_schedule_changes(timers: Timers, changes: dict[str, ScheduleSpec | None]) -> int:
    """Create-or-update (a spec) or delete (``None``; not-found is success) each named schedule.
    Every change is tried; if any failed, ``TimerError`` is raised afterwards, naming them (the
    event is redelivered and applies them again: each change is idempotent)."""
    failures: list[str] = []
    for name, spec in changes.items():
        try:
            if spec is None:
                timers.cancel(name)
            else:
                put_schedule(timers, spec)
        except TimerError as exc:
            failures.append(f"{name}: {exc}")
    if failures:
        raise TimerError(f"{len(failures)} schedule change(s) failed: " + "; ".join(failures))
    return len(changes)
