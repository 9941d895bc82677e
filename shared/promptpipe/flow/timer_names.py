"""Deterministic EventBridge schedule names, derived from the contract's dedup keys (docs/architecture.md#timers).

Re-scheduling the same key replaces the schedule instead of duplicating it. Names never contain a
phone number, and stay within 64 characters of ``[0-9a-zA-Z-_.]`` (participant ids are 34). Every
name starts with ``{participant id}-``, so one ``ListSchedules`` with that prefix finds all of a
participant's live schedules (reconcile); the stack's own one-shots start with ``sweep-``.
"""

from __future__ import annotations

from promptpipe.models.events import TimerKind

_PREFIX = {
    TimerKind.DAILY_PROMPT_REMINDER: "reminder",
    TimerKind.AUTO_FEEDBACK: "autofb",
    TimerKind.STATE_TRANSITION: "transition",
    TimerKind.FEEDBACK_TIMEOUT: "fbtimeout",
    TimerKind.FEEDBACK_FOLLOWUP: "fbfollowup",
    TimerKind.SCHEDULE_RESUME: "resume",
    TimerKind.STUDY_CHECK_IN: "checkin",
}


# The stack's own one-shots in the participants' group (the study sweep's continuation) start with
# this, never with a participant's id: reconcile leaves them alone.
SWEEP_SCHEDULE_PREFIX = "sweep-"


def participant_prefix(participant_id: str) -> str:
    return f"{participant_id}-"


def timer_name(kind: TimerKind, participant_id: str) -> str:
    return f"{participant_id}-{_PREFIX[kind]}"


def daily_schedule_name(participant_id: str, schedule_id: str) -> str:
    return f"{participant_id}-{schedule_id}"


def random_delivery_name(participant_id: str, schedule_id: str) -> str:
    return f"{participant_id}-{schedule_id}-r"
