"""The conversation session: our unit of work (docs/architecture.md, "Unit of work").

One event = one session: load the participant's items once, mutate in memory, commit once with a
condition on ``version``. Every mutation is an ``Operation``: a named, deterministic function of the
state. When the conditional write loses against a concurrent commit, the session reloads and replays
its operations against the fresh state (each re-checks its own guards), then commits again — so no
concurrent update is lost and no stale decision overwrites a newer one.

Operations touch only their ``OpContext``: the state data, the participant, and the messages,
transcript entries and schedule changes they decide. Those are rebuilt on every replay, so an
operation whose guard no longer holds also stops emitting its message. Nothing leaves the process
before the commit: ``commit`` returns the ``Effects`` (messages to send, schedules to bring in line
with the committed state) for the caller to apply, and writes their record with the state.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from promptpipe.channels.context import with_channel_context
from promptpipe.errors import (
    EventAlreadyCommitted,
    ParticipantNotFound,
    StateConflict,
    StateConflictRetriesExhausted,
    StoreError,
)
from promptpipe.flow.effects import Effects, plan_effects
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.effects import MessageRef, ScheduleSpec
from promptpipe.models.history import DEFAULT_LLM_HISTORY
from promptpipe.models.messaging import OutboundKind, OutboundMessage, Question
from promptpipe.models.metrics import Metric
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.participant_rows import needs_person_of
from promptpipe.models.state import FlowState, StateData
from promptpipe.models.store import (
    EVENT_ID_RETENTION_DAYS,
    MAX_RECENT_EVENTS,
    RECENT_EVENTS_MAX_AGE_HOURS,
    DeliveryOutcome,
    Direction,
    EventClaim,
    EventRecord,
    LoadedState,
    StateCommit,
    TranscriptEntry,
)
from promptpipe.ports import StateStore
from promptpipe.rules.clock import Clock

logger = logging.getLogger(__name__)

MAX_COMMIT_ATTEMPTS = 6
DEFAULT_PREP_MINUTES = 10


@dataclass
class OpContext:
    """What an operation may read and change."""

    data: StateData
    participant: ConversationParticipant
    now: datetime
    event_id: str
    version: int  # the version this commit will write (audit records carry it)
    outbound: list[OutboundMessage] = field(default_factory=list)
    message_refs: list[MessageRef] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    touched_schedules: list[str] = field(default_factory=list)
    participant_changed: bool = False
    expires_at: datetime | None = None  # FlowState.expires_at: the retention clock of a withdrawal
    # Study decisions made by this event (docs/studies.md): committed with the state, rebuilt on replay.
    decisions: list[DecisionRecord] = field(default_factory=list)

    def message(self, body: str, kind: OutboundKind, *, question: Question | None = None) -> OutboundMessage:
        """A message of ``kind`` to this operation's participant."""
        to = self.participant.phone_number
        return OutboundMessage(participant_id=self.participant.id, to=to, body=body, kind=kind, question=question)

    def emit(self, message: OutboundMessage, *, metadata: dict[str, Any] | None = None, on_hold: bool = False) -> None:
        """Queue a message for sending after the commit; it is recorded in the transcript too. The
        participant's channel context (when they last wrote, whether emoji suit them) travels with
        it, for the messenger (docs/architecture.md, "WhatsApp's 24-hour window").

        A held participant (docs/safety.md, "The hold") gets only the messages of the event that
        placed the hold and those marked ``on_hold`` (the hold's reply, an opt-out's confirmation):
        anything else is recorded as skipped, not sent. One guard here, whatever emits."""
        hold = self.data.hold()
        if hold is not None and not on_hold and hold.event_id != self.event_id:
            self.record(
                Direction.SYSTEM,
                "skipped",
                f"{message.kind.value} not sent: on hold ({hold.reason.value})",
                metadata={"kind": message.kind.value, "hold": hold.reason.value},
            )
            return
        if not message.message_id:
            message = message.model_copy(update={"message_id": f"{self.event_id}#{len(self.outbound)}"})
        message = with_channel_context(message, self.data)
        self.outbound.append(message)
        entry = self.record(
            Direction.OUTBOUND, message.kind.value, _transcript_text(message), metadata=metadata, outbound=message
        )
        self.message_refs.append(MessageRef(id=message.message_id, seq=entry.seq))

    def decide(self, record: DecisionRecord) -> None:
        """A study decision, written in this event's commit (no decision without its record)."""
        self.decisions.append(record)

    # -- schedules: decided here, made live after the commit ---------------------------------
    def touch_schedule(self, name: str) -> None:
        """After the commit, bring schedule ``name`` in line with the committed state (the registry
        and ``pendingTimers`` say whether it should exist and how)."""
        if name and name not in self.touched_schedules:
            self.touched_schedules.append(name)

    def arm(self, spec: ScheduleSpec) -> None:
        """A one-shot schedule that should exist (replaces one of the same name)."""
        pending = self.data.pending_timers()
        pending[spec.name] = spec
        self.data.set_pending_timers(pending)
        self.touch_schedule(spec.name)

    def disarm(self, name: str) -> None:
        """A one-shot schedule that should no longer exist."""
        if not name:
            return
        pending = self.data.pending_timers()
        if pending.pop(name, None) is not None:
            self.data.set_pending_timers(pending)
        self.touch_schedule(name)

    def forget_fired(self, name: str) -> None:
        """A one-shot that fired deletes itself (``ActionAfterCompletion=DELETE``): drop it from the
        state without touching the scheduler."""
        pending = self.data.pending_timers()
        if pending.pop(name, None) is not None:
            self.data.set_pending_timers(pending)

    def record(
        self,
        direction: Direction,
        kind: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        outbound: OutboundMessage | None = None,
    ) -> TranscriptEntry:
        entry = TranscriptEntry(
            participant_id=self.participant.id,
            at=self.now,
            seq=f"{self.version:010d}#{len(self.transcript):03d}",  # commit order breaks ties
            direction=direction,
            kind=kind,
            content=content,
            event_id=self.event_id,
            metadata=dict(metadata or {}),
            outbound=outbound,
            # Committed as pending: only the send's recorded outcome says it went out.
            delivery=DeliveryOutcome() if outbound is not None else None,
        )
        self.transcript.append(entry)
        return entry


def _transcript_text(message: OutboundMessage) -> str:
    text = message.body
    for asked in (message.question, message.follow_up):
        if asked is not None:
            options = " / ".join(o.title for o in asked.options)
            text = f"{text}\n[{asked.text} {options}]"
    return text.strip()


@dataclass(frozen=True)
class Operation:
    name: str
    apply: Callable[[OpContext], object]  # what it returns (e.g. the recorded entry) is ignored


class ConversationSession:
    """A participant's state for the duration of one event."""

    def __init__(self, factory: SessionFactory, loaded: LoadedState, *, event_id: str) -> None:
        """``factory``: what the composition root wired once (store, clock, randomness, bounds)."""
        self._factory = factory
        self._store = factory.store
        self._rng = factory.rng or random.Random()
        self._sleep = factory.sleep or (lambda _seconds: None)
        self.event_id = event_id
        self.started_at = factory.clock.now()
        self.operations: list[Operation] = []
        self.commit_attempts = 0
        self.committed_version: int | None = None
        self.duplicate_of: EventRecord | None = None
        # The event's id was claimed by an earlier commit whose record has left the window: a late
        # redelivery. Nothing was committed and nothing is to be sent.
        self.answered_before = False
        self.recovered_own_commit = False
        # What the flow observed during the event (the controller's decisions...), for the use case
        # that runs it to publish with the event's other metrics (``usecases/outcome_metrics.py``).
        self.metrics: list[Metric] = []
        # Unique to this session (not seeded: two deliveries of one event must never share it).
        self.token = secrets.token_hex(8)
        # The participant's message as accepted at the worker's first receive: the commit removes
        # that entry, its own inbound entry taking its place.
        self.accepted: TranscriptEntry | None = None
        self._reset(loaded)

    # -- state ------------------------------------------------------------------------------
    def _reset(self, loaded: LoadedState) -> None:
        self._loaded = loaded
        self._ctx = OpContext(
            data=StateData(dict(loaded.flow.state_data), history_messages=self._factory.history_messages),
            participant=loaded.participant.model_copy(deep=True),
            now=self.started_at,
            event_id=self.event_id,
            version=loaded.flow.version + 1,
            expires_at=loaded.flow.expires_at,
        )

    @property
    def participant(self) -> ConversationParticipant:
        return self._ctx.participant

    @property
    def data(self) -> StateData:
        """Read access for the logic deciding what to do. Change it only through ``apply``."""
        return self._ctx.data

    @property
    def now(self) -> datetime:
        return self._ctx.now

    @property
    def version(self) -> int:
        return self._loaded.flow.version

    @property
    def transcript(self) -> list[TranscriptEntry]:
        return list(self._ctx.transcript)

    @property
    def decisions(self) -> list[DecisionRecord]:
        """The study decisions this event made so far (written with the commit)."""
        return list(self._ctx.decisions)

    @property
    def expires_at(self) -> datetime | None:
        """When the participant's items expire (a withdrawal's retention clock), as decided so far."""
        return self._ctx.expires_at

    @property
    def loaded(self) -> LoadedState:
        return self._loaded

    def already_processed(self) -> EventRecord | None:
        """The committed record of this event, when a previous attempt already committed it."""
        return next((r for r in self._loaded.recent_events if r.event_id == self.event_id), None)

    # -- mutation ---------------------------------------------------------------------------
    def apply(self, name: str, fn: Callable[[OpContext], object]) -> None:
        """Record and immediately apply an operation."""
        operation = Operation(name, fn)
        operation.apply(self._ctx)
        self.operations.append(operation)

    @property
    def dirty(self) -> bool:
        return bool(self.operations)

    # -- commit -----------------------------------------------------------------------------
    def commit(self, *, record_event: bool = True, claim_event: bool = True) -> Effects:
        """Write once, conditional on the loaded version; on conflict reload, replay, retry.

        Returns the effects to apply now that the state landed: none when a concurrent delivery of
        the same event committed first (it applies them), and none when an earlier delivery claimed
        the event's id (``answered_before``: a redelivery later than the record window). A conflict
        whose reload shows this session's own record (the write landed but its answer was lost)
        counts as committed. ``claim_event=False``: an API change whose id nobody redelivers.
        """
        claim = record_event and claim_event
        for attempt in range(1, MAX_COMMIT_ATTEMPTS + 1):
            self.commit_attempts = attempt
            try:
                self._store.commit(self._build_commit(record_event, self._attempt_token(attempt), claim=claim))
            except EventAlreadyCommitted:
                # The version held, so no attempt of this session landed: another delivery of this
                # event committed, before the window this state item keeps (docs/architecture.md).
                logger.info(
                    "event answered before (its id is claimed); nothing committed, nothing sent",
                    extra={"participant_id": self.participant.id, "attempt": attempt},
                )
                self.answered_before = True
                return Effects(participant_id=self.participant.id, event_id=self.event_id)
            except StateConflict:
                fresh = self._store.load(self.participant.id)
                mine = next((r for r in fresh.recent_events if r.event_id == self.event_id), None)
                if record_event and mine is not None:
                    if mine.token.startswith(self.token):
                        # Our own earlier attempt landed; its answer was lost (timeout, reset).
                        logger.info(
                            "commit landed although its answer was lost",
                            extra={"participant_id": self.participant.id, "attempt": attempt},
                        )
                        self.recovered_own_commit = True
                        self.committed_version = mine.version
                        return self._effects()
                    # A concurrent delivery of this same event committed first: it wins, we stop.
                    self.duplicate_of = mine
                    return Effects(participant_id=self.participant.id, event_id=self.event_id)
                if attempt == MAX_COMMIT_ATTEMPTS:
                    break
                logger.info(
                    "state conflict; replaying operations",
                    extra={"participant_id": self.participant.id, "attempt": attempt},
                )
                # Bounded, jittered backoff: 10 ms, 20 ms, 40 ms … with full jitter.
                self._sleep(self._rng.uniform(0, 0.01 * 2 ** (attempt - 1)))
                self._replay(fresh)
                continue
            self.committed_version = self._loaded.flow.version + 1
            return self._effects()
        raise StateConflictRetriesExhausted(
            f"participant {self.participant.id}: state kept conflicting after {MAX_COMMIT_ATTEMPTS} attempts"
        )

    def landed_after_all(self) -> Effects | None:
        """After a commit failed with something other than a conflict (a timeout, a reset): did the
        write land anyway? One read; when this session's record is there, the commit counts and its
        effects are returned (a state that landed must not be treated as unsaved)."""
        try:
            fresh = self._store.load(self.participant.id)
        except (StoreError, ParticipantNotFound):  # still failing, or deleted: the save counts as failed
            logger.warning(
                "could not check whether a failed commit landed", extra={"participant_id": self.participant.id}
            )
            return None
        mine = next((r for r in fresh.recent_events if r.event_id == self.event_id), None)
        if mine is None or not mine.token.startswith(self.token):
            return None
        self.recovered_own_commit = True
        self.committed_version = mine.version
        return self._effects()

    @property
    def message_seqs(self) -> dict[str, str]:
        """Each decided message's transcript ``seq`` (message id -> seq)."""
        return {ref.id: ref.seq for ref in self._ctx.message_refs}

    def uncommitted_messages(self) -> list[OutboundMessage]:
        """The messages decided so far (a degraded save still delivers its reply)."""
        return list(self._ctx.outbound)

    def _effects(self) -> Effects:
        return plan_effects(
            self._ctx.participant,
            self._ctx.data,
            event_id=self.event_id,
            messages=self._ctx.outbound,
            touched=self._ctx.touched_schedules,
            prep_minutes=self._factory.prep_minutes,
            now=self.now,
            seqs={ref.id: ref.seq for ref in self._ctx.message_refs},
        )

    def _attempt_token(self, attempt: int) -> str:
        return f"{self.token}-{attempt}"

    def _replay(self, fresh: LoadedState) -> None:
        self._reset(fresh)
        for operation in self.operations:
            operation.apply(self._ctx)

    def _build_commit(self, record_event: bool, token: str, *, claim: bool) -> StateCommit:
        loaded = self._loaded
        oldest = self.now - timedelta(hours=RECENT_EVENTS_MAX_AGE_HOURS)
        recent = [r for r in loaded.recent_events if r.committed_at >= oldest]
        if record_event:
            recent.append(
                EventRecord(
                    event_id=self.event_id,
                    committed_at=self.now,
                    version=loaded.flow.version + 1,
                    token=token,
                    messages=list(self._ctx.message_refs),
                    schedules=list(self._ctx.touched_schedules),
                    status=self._ctx.participant.status,
                )
            )
        # Every commit writes the history bounded to what the model can be shown: a state written
        # with a wider bound (the 50 messages of earlier versions) shrinks on its next commit.
        data = StateData(dict(self._ctx.data.raw), history_messages=self._factory.history_messages)
        data.bound_history()
        flow = FlowState(
            participant_id=loaded.flow.participant_id,
            flow_type=loaded.flow.flow_type,
            current_state=loaded.flow.current_state,
            state_data=data.raw,
            version=loaded.flow.version + 1,
            updated_at=self.now,
            expires_at=self._ctx.expires_at,
        )
        participant = self._ctx.participant if self._ctx.participant_changed else None
        if participant is not None:
            participant = participant.model_copy(update={"updated_at": self.now})
        # The queue's marker follows the committed hold, status and name (docs/console.md, "Nobody missed").
        needs_person = needs_person_of(self._ctx.participant, data, stored=loaded.needs_person, event_id=self.event_id)
        return StateCommit(
            participant_id=loaded.participant.id,
            expected_version=loaded.flow.version,
            flow=flow,
            participant=participant,
            recent_events=recent[-MAX_RECENT_EVENTS:],
            transcript=list(self._ctx.transcript),
            claim=EventClaim(
                event_id=self.event_id,
                committed_at=self.now,
                expires_at=self.now + timedelta(days=EVENT_ID_RETENTION_DAYS),
            )
            if claim
            else None,
            request_token=token,
            accepted=self.accepted,
            decisions=list(self._ctx.decisions),
            needs_person=needs_person,
            needs_person_changed=needs_person != loaded.needs_person,
        )


@dataclass
class SessionFactory:
    """Opens sessions (the composition root wires the store, clock and randomness once)."""

    store: StateStore
    clock: Clock
    _: KW_ONLY
    rng: random.Random | None = None
    sleep: Callable[[float], None] | None = None
    prep_minutes: int = DEFAULT_PREP_MINUTES
    # Messages a state's history keeps: ``stored_history_messages`` of CHAT_HISTORY_LIMIT.
    history_messages: int = DEFAULT_LLM_HISTORY

    def open(self, participant_id: str, event_id: str) -> ConversationSession:
        return ConversationSession(self, self.store.load(participant_id), event_id=event_id)
