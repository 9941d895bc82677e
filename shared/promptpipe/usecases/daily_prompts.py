"""A daily prompt's firing, one unit of work (the scheduled-prompt function's event): the participant's
session opened, the prompt generated and delivered (``flow/delivery.py``), one commit; the
``EventOutcome`` carries its effects (``usecases.sending.apply_effects``). A redelivered firing finds its
record and resumes its effects instead of running again."""

from __future__ import annotations

from promptpipe.flow.delivery import deliver_daily_prompt
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.timer_names import daily_schedule_name, random_delivery_name
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.schedules import apply_schedule_specs
from promptpipe.usecases.write_once import run_once


def run_scheduled_prompt(app: AppContext, payload: ScheduledPromptPayload, *, event_id: str) -> EventOutcome:
    deps = app.deps

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        outcome.delivery = deliver_daily_prompt(
            deps, session, payload.model_copy(update={"execution_id": payload.execution_id or event_id})
        )

    names = (
        daily_schedule_name(payload.participant_id, payload.schedule_id),
        random_delivery_name(payload.participant_id, payload.schedule_id),
    )
    outcome = run_once(app, payload.participant_id, event_id, work, firing_schedules=names)
    delivery = outcome.delivery
    kept = delivery is not None and (delivery.held or delivery.study_arm is not None)
    if delivery is not None and not delivery.delivered and delivery.random_delivery_at is None and not kept:
        # Not wanted by the state (its registry entry is gone, or the participant is not
        # active): an orphan. Remove the schedules it may fire through.
        apply_schedule_specs(app, dict.fromkeys(names))
    return outcome
