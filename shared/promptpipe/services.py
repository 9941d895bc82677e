"""The application facade: one object per process, its ports wired once by the composition root
(``promptpipe.wiring``), each use case delegated to its module in ``promptpipe.usecases``.

Every use case takes typed input, opens at most one session (unit of work), commits once and
returns typed output. Effects happen only after the commit (docs/architecture.md#effects): the
handler calls ``finish``, which sends the messages, then brings the touched schedules in line with
the committed state. A redelivered event finds its record and applies what is left of its effects
instead of running again (``EventRecord``).

The use-case modules are imported on first use, so the webhook and the enrollment API never load
the conversation engine (docs/benchmarks.md, cold start).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from promptpipe.clock import Clock
from promptpipe.ports import (
    DeliveryLog,
    Messenger,
    ParticipantRepo,
    PendingEffects,
    PhoneClaims,
    SentLedger,
    StateStore,
    Timers,
    TurnQueue,
)
from promptpipe.usecases.outcomes import (
    EventOutcome,
    InboundDecision,
    ReconcileReport,
    UpdateOutcome,
    event_id_for_schedule,
    outcome_log_fields,
    outcome_of_effects,
)

if TYPE_CHECKING:
    from promptpipe.flow.conversation import ConversationFlow
    from promptpipe.flow.deps import FlowDeps
    from promptpipe.flow.effects import Effects
    from promptpipe.flow.session import ConversationSession, SessionFactory
    from promptpipe.models.api import EnrollmentRequest, ParticipantUpdate, StateOverride, StateView
    from promptpipe.models.events import ScheduledPromptPayload, TimerPayload, TurnEvent
    from promptpipe.models.messaging import InboundMessage
    from promptpipe.models.participant import ConversationParticipant
    from promptpipe.models.store import EventRecord, TranscriptEntry
    from promptpipe.usecases.events import Events
    from promptpipe.usecases.participants import Enrollment, Participants
    from promptpipe.usecases.receive_text import Inbound
    from promptpipe.usecases.sending import Sending

__all__ = [
    "EventOutcome",
    "InboundDecision",
    "PromptPipe",
    "ReconcileReport",
    "UpdateOutcome",
    "event_id_for_schedule",
    "outcome_log_fields",
    "outcome_of_effects",
]


@dataclass(eq=False)
class PromptPipe:
    """The application. Ports may be replaced after construction (tests swap the messenger); the
    use cases read them from here at each call."""

    deps: FlowDeps
    repo: ParticipantRepo
    store: StateStore
    messenger: Messenger
    queue: TurnQueue | None
    sessions: SessionFactory
    ledger: SentLedger | None = None
    phone_claims: PhoneClaims | None = None
    pending_effects: PendingEffects | None = None
    deliveries: DeliveryLog | None = None

    @property
    def clock(self) -> Clock:
        return self.deps.clock

    @property
    def timers(self) -> Timers:
        return self.deps.timers

    @property
    def prep_minutes(self) -> int:
        return self.deps.config.scheduler_prep_time_minutes

    # -- the use cases, each built (and its module imported) on first use ---------------------
    @cached_property
    def participants(self) -> Participants:
        from promptpipe.usecases.participants import Participants

        return Participants(self)

    @cached_property
    def inbound(self) -> Inbound:
        from promptpipe.usecases.receive_text import Inbound

        return Inbound(self)

    @cached_property
    def events(self) -> Events:
        from promptpipe.usecases.events import Events

        return Events(self)

    @cached_property
    def sending(self) -> Sending:
        from promptpipe.usecases.sending import Sending

        return Sending(self)

    @property
    def flow(self) -> ConversationFlow:
        return self.events.flow

    # -- participants API -------------------------------------------------------------------
    def enroll(self, request: EnrollmentRequest, *, idempotency_key: str | None = None) -> ConversationParticipant:
        return self.participants.enroll(request, idempotency_key=idempotency_key).participant

    def enrollment(self, request: EnrollmentRequest, *, idempotency_key: str | None = None) -> Enrollment:
        """``enroll``, saying whether this request created the participant or retried the one that did."""
        return self.participants.enroll(request, idempotency_key=idempotency_key)

    def get_participant(self, participant_id: str) -> ConversationParticipant:
        return self.repo.get(participant_id)

    def list_participants(
        self, *, limit: int, next_token: str | None
    ) -> tuple[list[ConversationParticipant], str | None]:
        return self.repo.list(limit=limit, next_token=next_token)

    def update_participant(self, participant_id: str, update: ParticipantUpdate) -> ConversationParticipant:
        return self.participants.update(participant_id, update).participant

    def apply_participant_update(self, participant_id: str, update: ParticipantUpdate) -> UpdateOutcome:
        """``update_participant``, and whether its schedule changes are still pending."""
        return self.participants.update(participant_id, update)

    def delete_participant(self, participant_id: str, *, keep_transcript: bool = True) -> None:
        self.participants.delete(participant_id, keep_transcript=keep_transcript)

    def history(
        self, participant_id: str, *, limit: int, next_token: str | None, include_audit: bool
    ) -> tuple[list[TranscriptEntry], str | None]:
        return self.participants.history(
            participant_id, limit=limit, next_token=next_token, include_audit=include_audit
        )

    def state_view(self, participant_id: str) -> StateView:
        return self.participants.state_view(participant_id)

    def override_state(self, participant_id: str, override: StateOverride) -> StateView:
        return self.participants.override_state(participant_id, override)

    # -- inbound (the webhook) --------------------------------------------------------------
    def receive_inbound(self, message: InboundMessage) -> InboundDecision:
        return self.inbound.receive(message)

    # -- events (worker, scheduled prompt, timers) ------------------------------------------
    def process_turn(self, event: TurnEvent) -> EventOutcome:
        return self.events.process_turn(event)

    def run_scheduled_prompt(self, payload: ScheduledPromptPayload, *, event_id: str) -> EventOutcome:
        return self.events.run_scheduled_prompt(payload, event_id=event_id)

    def run_timer(self, payload: TimerPayload, *, event_id: str) -> EventOutcome:
        return self.events.run_timer(payload, event_id=event_id)

    # -- effects after the commit -----------------------------------------------------------
    def finish(self, outcome: EventOutcome) -> int:
        return self.sending.finish(outcome)

    def apply_schedules(self, effects: Effects) -> int:
        return self.sending.apply_schedule_specs(effects.schedules)

    def resume(self, session: ConversationSession, record: EventRecord) -> Effects:
        return self.sending.resume(session, record)

    def reconcile(self, participant_id: str) -> ReconcileReport:
        return self.sending.reconcile(participant_id)

    def reconcile_all(self) -> list[ReconcileReport]:
        return self.sending.reconcile_all()

    def sweep_pending_effects(self, limit: int = 100) -> list[str]:
        """The periodic sweep (docs/architecture.md, "Effects that failed"): the participants repaired."""
        return self.sending.sweep_pending(limit)
