"""One event, one unit of work: a conversation turn (or the greeting), a daily prompt, a timer firing.

Each opens the participant's session, works, commits once and returns an ``EventOutcome`` whose
effects the handler applies with ``PromptPipe.finish``. A redelivered event finds its record and
resumes its effects instead of running again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from promptpipe.errors import ParticipantNotFound, StateConflictRetriesExhausted, StoreError, ValidationFailed
from promptpipe.flow.delivery import deliver_daily_prompt
from promptpipe.flow.effects import desired_schedules
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.timer_events import handle_timer
from promptpipe.flow.timer_names import daily_schedule_name, random_delivery_name
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.state import StateData
from promptpipe.usecases.outcomes import EventOutcome

if TYPE_CHECKING:
    from promptpipe.flow.conversation import ConversationFlow
    from promptpipe.services import PromptPipe

logger = logging.getLogger(__name__)

Work = Callable[[ConversationSession, EventOutcome], None]


class Events:
    def __init__(self, app: PromptPipe) -> None:
        self.app = app

    @cached_property
    def flow(self) -> ConversationFlow:
        """The conversation engine, imported by the first turn: the scheduled-prompt and timers
        functions never load it."""
        from promptpipe.flow.conversation import ConversationFlow

        return ConversationFlow(self.app.deps)

    def run(
        self, participant_id: str, event_id: str, work: Work, *, firing_schedules: tuple[str, ...] = ()
    ) -> EventOutcome:
        """Open, work, commit; the caller applies the effects with ``finish``. ``firing_schedules``:
        the schedule(s) that may have fired this event, removed when their participant no longer
        exists (an orphan fires once, then is gone)."""
        app = self.app
        outcome = EventOutcome(participant_id=participant_id, event_id=event_id)
        try:
            session = app.sessions.open(participant_id, event_id)
        except ParticipantNotFound:
            logger.info("event for a participant that no longer exists", extra={"participant_id": participant_id})
            if firing_schedules:
                app.sending.apply_schedule_specs(dict.fromkeys(firing_schedules))
            return outcome
        outcome.pending_effects = session.loaded.pending_effects
        record = session.already_processed()
        if record is not None:
            outcome.replayed = True
            outcome.take(app.resume(session, record))
            return outcome
        work(session, outcome)
        if not session.dirty:
            return outcome
        try:
            effects = session.commit()
            outcome.committed_version = session.committed_version
            if session.duplicate_of is not None or session.answered_before:
                # A concurrent delivery of this event committed first (it applies the effects), or
                # one long ago (its id is claimed): nothing to send.
                outcome.replayed = True
        except ParticipantNotFound:
            logger.info("participant deleted during the event", extra={"participant_id": participant_id})
            return outcome
        except StateConflictRetriesExhausted:
            raise
        except StoreError:  # a bug (a TypeError while building the items) propagates instead
            landed = session.landed_after_all()  # a lost answer, not a failed write?
            if landed is None:
                # A failed save is logged; the reply still goes out (docs/behaviour.md, save failures).
                # Nothing else does: no schedule is created for a state that did not land.
                logger.exception(
                    "state commit failed; delivering the reply anyway", extra={"participant_id": participant_id}
                )
                outcome.outbound, outcome.degraded = session.uncommitted_messages(), True
                outcome.decided_status, outcome.recipient = session.participant.status, session.participant
                return outcome
            logger.info("the commit landed although its answer failed", extra={"participant_id": participant_id})
            effects, outcome.committed_version = landed, session.committed_version
        outcome.take(effects)
        return outcome

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

        return self.run(event.participant_id, event.event_id, work)

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
        outcome = self.run(payload.participant_id, event_id, work, firing_schedules=names)
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

        return self.run(payload.participant_id, event_id, work, firing_schedules=(payload.timer_id,))
