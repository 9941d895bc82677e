"""A pause of the daily prompts with an end date (docs/behaviour.md#B-SCHED-10).

Pausing takes every daily schedule out of the registry into ``schedulePause`` with the moment they
come back, and arms one one-shot, ``{participant}-resume``, for that moment; the effects after the
commit delete the crons (the registry no longer wants them) and create the one-shot. Resuming (the
one-shot firing, or the participant asking first) puts them back in the registry and the effects
re-create them. A second pause extends the first (the same one-shot, re-armed). The firing is guarded
by the end it was armed for, so a redelivered or overtaken firing changes nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from promptpipe.flow.effects import one_shot_timer
from promptpipe.flow.session import OpContext
from promptpipe.flow.timer_names import random_delivery_name, timer_name
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.state import ScheduleInfo, SchedulePause

MAX_PAUSE_DAYS = 60


def resume_timer_name(participant_id: str) -> str:
    return timer_name(TimerKind.SCHEDULE_RESUME, participant_id)


def pause_schedules(op: OpContext, until: datetime) -> list[ScheduleInfo]:
    """Take the registry's schedules out until ``until`` (joining those a pause already holds) and arm
    the one-shot that brings them back; returns every schedule now paused."""
    participant_id = op.participant.id
    current = op.data.schedule_pause()
    taken = op.data.schedules()
    paused = [*(current.schedules if current else []), *taken]
    op.data.set_schedule_pause(SchedulePause(schedules=paused, until=until))
    op.data.set_schedules([])
    for schedule in taken:
        op.touch_schedule(schedule.timer_id)  # no longer in the registry: deleted after the commit
        op.disarm(random_delivery_name(participant_id, schedule.id))  # a window's delivery armed for today
    name = resume_timer_name(participant_id)
    payload = TimerPayload(participant_id=participant_id, kind=TimerKind.SCHEDULE_RESUME, timer_id=name, due_at=until)
    op.arm(one_shot_timer(name, until, payload))
    return paused


def resume_schedules(op: OpContext) -> list[ScheduleInfo]:
    """Put the paused schedules back in the registry (a timing already there again is kept once) and
    disarm the one-shot; returns the schedules resumed (none when nothing was paused)."""
    pause = op.data.schedule_pause()
    if pause is None:
        return []
    registry = op.data.schedules()
    back = [s for s in pause.schedules if not any(r.same_timing(s) for r in registry)]
    op.data.set_schedules([*registry, *back])
    op.data.set_schedule_pause(None)
    for schedule in back:
        op.touch_schedule(schedule.timer_id)  # in the registry again: re-created after the commit
    name = resume_timer_name(op.participant.id)
    if name in op.data.pending_timers():
        op.disarm(name)
    return back


def pause_end(now: datetime, days: int) -> datetime:
    """The end of a pause of ``days`` days from ``now`` (at most ``MAX_PAUSE_DAYS``)."""
    return now + timedelta(days=max(1, min(days, MAX_PAUSE_DAYS)))
