"""One event, one unit of work: a conversation turn (or the greeting), a daily prompt, a timer firing.

Each opens the participant's session, works, commits once and returns an ``EventOutcome`` whose
effects the handler applies with ``PromptPipe.finish``. A redelivered event finds its record and
resumes its effects instead of running again.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from promptpipe.errors import ParticipantNotFound, ValidationFailed
from promptpipe.flow.delivery import deliver_daily_prompt
from promptpipe.flow.effects import desired_schedules
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.timer_events import handle_timer
from promptpipe.flow.timer_names import daily_schedule_name, random_delivery_name
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.state import StateData
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.write_once import run_once

if TYPE_CHECKING:
    from promptpipe.flow.conversation import ConversationFlow
    from promptpipe.services import PromptPipe


class Events:
    def __init__(self, app: PromptPipe) -> None:
        self.app = app

    @cached_property
    def flow(self) -> ConversationFlow:
        """The conversation engine, imported by the first turn: the scheduled-prompt and timers
        functions never load it."""
        from promptpipe.flow.conversation import ConversationFlow

        return ConversationFlow(self.app.deps)

    def process_turn(self, event: TurnEvent) -> EventOutcome:
        """Worker side: one conversation turn (or the greeting). ``LLMError`` propagates (retry)."""
        if event.kind is TurnKind.SCHEDULES:
            return self.deferred_schedules(event)

        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            if event.kind is TurnKind.GREETING:
                outcome.turn = self.flow.handle_greeting(session)
            else:
                if event.message is None:
                    raise ValidationFailed("message turn without a message", field="message")
                outcome.turn = self.flow.handle_message(session, event.message)

        return run_once(self.app, event.participant_id, event.event_id, work)

    def deferred_schedules(self, event: TurnEvent) -> EventOutcome:
        """The schedules a STOP / START touched, as the committed state wants them now (``finish``
        applies them; a failure raises and SQS redelivers). Derived, not replayed: a redelivery, or
        a START processed after its STOP's event, brings them in line all the same."""
        outcome = EventOutcome(participant_id=event.participant_id, event_id=event.event_id)
        try:
            loaded = self.app.store.load(event.participant_id)
        except ParticipantNotFound:
            desired: dict[str, ScheduleSpec] = {}  # deleted since: nothing of theirs stays live
        else:
            data = StateData(dict(loaded.flow.state_data))
            desired = desired_schedules(loaded.participant, data, self.app.prep_minutes, self.app.clock.now())
            # A marker left by an earlier failed delivery of these changes: cleared once they apply.
            outcome.pending_effects = loaded.pending_effects
        outcome.schedules = {name: desired.get(name) for name in event.schedules}
        return outcome

    def run_scheduled_prompt(self, payload: ScheduledPromptPayload, *, event_id: str) -> EventOutcome:
        deps = self.app.deps

        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            outcome.delivery = deliver_daily_prompt(
                deps, session, payload.model_copy(update={"execution_id": payload.execution_id or event_id})
            )

        names = (
            daily_schedule_name(payload.participant_id, payload.schedule_id),
            random_delivery_name(payload.participant_id, payload.schedule_id),
        )
        outcome = run_once(self.app, payload.participant_id, event_id, work, firing_schedules=names)
        delivery = outcome.delivery
        if delivery is not None and not delivery.delivered and delivery.random_delivery_at is None:
            # Not wanted by the state (its registry entry is gone, or the participant is not
            # active): an orphan. Remove the schedules it may fire through.
            self.app.sending.apply_schedule_specs(dict.fromkeys(names))
        return outcome

    def run_timer(self, payload: TimerPayload, *, event_id: str) -> EventOutcome:
        deps = self.app.deps

        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            outcome.timer = handle_timer(deps, session, payload)

        return run_once(self.app, payload.participant_id, event_id, work, firing_schedules=(payload.timer_id,))
