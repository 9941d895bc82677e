"""The daily prompt's time changed by a coordinator (``PUT /conversation/participants/{id}`` with
``preferred_time``, the console's edit form through it): docs/behaviour.md#B-API-9.

One change of the participant's flow state, inside the update's session (committed by the runner,
``run_once``): the coach's profile takes the time, and the participant's fixed daily schedule moves
to it, keeping its name, so the effects after the commit replace the live EventBridge schedule in
place (a retry replaces it again with the same cron: never a second schedule). The schedule keeps
its zone (the participant's), so the cron fires at the new local time there.

- **Which schedule:** the first fixed one of the registry. Random windows are a range the
  participant chose and are kept; other fixed schedules are kept (the coach made them on request).
  A fixed schedule already at the new time takes the moved one's place (one schedule, not two).
- **The cap:** the edit never adds a schedule, so ``MAX_LIVE_DAILY_SCHEDULES`` holds. With no fixed
  schedule, only the profile changes: the coach's intake schedules the prompt from it.
- **A pause** (``schedulePause``, flow/schedule_pause.py): the paused schedule moves within the
  pause; nothing is live until it ends, and it comes back at the new time. A participant whose
  status is paused keeps their registry (nothing live): the schedule moves there and is re-created
  at the new time when they are active again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptpipe.errors import TimerError, ValidationFailed
from promptpipe.flow.effects import daily_spec, validate_daily
from promptpipe.flow.session import OpContext
from promptpipe.models.state import ScheduleInfo, SchedulePause, ScheduleType

if TYPE_CHECKING:
    from promptpipe.controller.catalog import FlowCatalog


def normalise_time(value: str) -> str:
    """``9:05`` and ``09:05`` are one time (the API's pattern has checked the form)."""
    hours, minutes = value.strip().split(":")
    return f"{int(hours):02d}:{int(minutes):02d}"


def _moved(schedules: list[ScheduleInfo], time: str) -> tuple[list[ScheduleInfo], ScheduleInfo | None]:
    """``schedules`` with the first fixed one at ``time`` (dropped when another already fires at
    that time), and the schedule moved (``None``: no fixed schedule, or it was at that time)."""
    index = next((i for i, s in enumerate(schedules) if s.type is ScheduleType.FIXED), None)
    if index is None or schedules[index].fixed_time == time:
        return schedules, None
    moved = schedules[index].model_copy(update={"fixed_time": time})
    others = schedules[:index] + schedules[index + 1 :]
    if any(s.same_timing(moved) for s in others):
        return others, schedules[index]  # the time is taken: the other one stays, this one goes
    return [*schedules[:index], moved, *schedules[index + 1 :]], moved


def check_prompt_time(participant_id: str, schedule: ScheduleInfo, prep_minutes: int) -> None:
    """What EventBridge would refuse about the moved schedule, checked before the commit."""
    try:
        validate_daily(daily_spec(participant_id, schedule, prep_minutes))
    except TimerError as exc:
        raise ValidationFailed(str(exc), field="preferred_time") from exc


def set_prompt_time(
    op: OpContext, time: str, prep_minutes: int, flows: FlowCatalog | None = None
) -> ScheduleInfo | None:
    """Apply the daily prompt's new ``time`` (HH:MM) to the state: the profile's preferred time and
    the first fixed schedule, live or paused (``flows``: the catalog the controller records the fact
    with, as an operator's profile facts are). Returns the schedule moved (``None``: none moved)."""
    from promptpipe.flow.steering import record_operator_facts  # the engine, imported when used

    time = normalise_time(time)
    record_operator_facts(op.data, {"preferred_time": time}, op.now, flows)
    registry, moved = _moved(op.data.schedules(), time)
    if moved is not None:
        check_prompt_time(op.participant.id, moved, prep_minutes)
        op.data.set_schedules(registry)
        op.touch_schedule(moved.timer_id)  # replaced (or deleted, when its time was taken) after the commit
        return moved
    pause = op.data.schedule_pause()
    if pause is None:
        return None
    paused, moved = _moved(pause.schedules, time)
    if moved is not None:
        check_prompt_time(op.participant.id, moved, prep_minutes)
        op.data.set_schedule_pause(SchedulePause(schedules=paused, until=pause.until))
    return moved  # nothing live to touch: the pause's end re-creates it
