"""Participant lifecycle: status changes and removal stop or restore every timer (docs/behaviour.md#B-LIFE-1)."""

from __future__ import annotations

import contextlib

from promptpipe.errors import TimerError
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.state_ops import cancel_pending_transition, clear_timer_key
from promptpipe.flow.timer_names import random_delivery_name, timer_name
from promptpipe.flow.tools.scheduler import schedule_timing
from promptpipe.models.events import ScheduledPromptPayload, TimerKind
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import DataKey, StateData
from promptpipe.models.store import Direction

_TIMER_KEYS = (
    DataKey.DAILY_PROMPT_REMINDER_TIMER_ID,
    DataKey.AUTO_FEEDBACK_TIMER_ID,
    DataKey.FEEDBACK_TIMER_ID,
    DataKey.FEEDBACK_FOLLOWUP_TIMER_ID,
)


def all_timer_names(participant_id: str, data: StateData) -> list[str]:
    """Every schedule that may exist for a participant: registry, random deliveries, one-shots."""
    names = [s.timer_id for s in data.schedules() if s.timer_id]
    names += [random_delivery_name(participant_id, s.id) for s in data.schedules()]
    names += [timer_name(kind, participant_id) for kind in TimerKind]
    return list(dict.fromkeys(names))


def cancel_all_timers(deps: FlowDeps, participant_id: str, data: StateData) -> None:
    for name in all_timer_names(participant_id, data):
        with contextlib.suppress(TimerError):  # cancelling is best effort; guards cover stragglers
            deps.timers.cancel(name)


def _clear_timer_state(op: OpContext, deps: FlowDeps) -> None:
    for key in _TIMER_KEYS:
        clear_timer_key(op, deps.timers, key)
    cancel_pending_transition(op, deps.timers)
    op.data.set_daily_prompt_pending(None)


def restore_schedules(deps: FlowDeps, session: ConversationSession) -> int:
    """Re-create the registry's daily schedules (same names: creating replaces)."""
    restored = 0
    prep = deps.settings.scheduler_prep_time_minutes
    for schedule in session.data.schedules():
        fire, window = schedule_timing(schedule, prep)
        deps.timers.schedule_daily_prompt(
            name=schedule.timer_id,
            hour=fire // 60,
            minute=fire % 60,
            timezone=schedule.timezone,
            payload=ScheduledPromptPayload(
                participant_id=session.participant.id,
                schedule_id=schedule.id,
                kind="random_window" if window else "daily_prompt",
                window_minutes=window,
                created_at=session.now,
            ),
        )
        restored += 1
    return restored


def change_status(deps: FlowDeps, session: ConversationSession, status: ParticipantStatus, *, reason: str) -> bool:
    """Set the status; leaving ``active`` cancels everything, returning to it restores schedules.

    Returns whether the status changed. The caller commits the session.
    """
    old = session.participant.status
    if old is status:
        return False
    if status is ParticipantStatus.ACTIVE:
        restore_schedules(deps, session)
    elif old is ParticipantStatus.ACTIVE:
        cancel_all_timers(deps, session.participant.id, session.data)

    def apply(op: OpContext) -> None:
        op.participant.status = status
        op.participant_changed = True
        if status is not ParticipantStatus.ACTIVE:
            _clear_timer_state(op, deps)
        op.record(Direction.SYSTEM, "status_change", f"status {old.value} -> {status.value}: {reason}")

    session.apply(f"status_{status.value}", apply)
    return True
