"""A one-shot timer's firing, one unit of work (the timers function's event): the participant's
session opened, the timer's guards checked and its change made (``flow/timer_events.py``), one commit;
the ``EventOutcome`` carries its effects (``usecases.sending.apply_effects``). A redelivered firing finds
its record and resumes its effects instead of running again."""

from __future__ import annotations

from promptpipe.flow.session import ConversationSession
from promptpipe.flow.timer_events import handle_timer
from promptpipe.models.events import TimerPayload
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.write_once import run_once


def run_timer(app: AppContext, payload: TimerPayload, *, event_id: str) -> EventOutcome:
    deps = app.deps

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        outcome.timer = handle_timer(deps, session, payload)

    return run_once(app, payload.participant_id, event_id, work, firing_schedules=(payload.timer_id,))
