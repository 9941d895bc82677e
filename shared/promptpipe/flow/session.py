"""The conversation session: our unit of work (docs/architecture.md#state, cosmicpython's UoW).

One event = one session: load the participant's items once, mutate in memory, commit once with a
condition on ``version``. Every mutation is an ``Operation``: a named, deterministic function of the
state. When the conditional write loses against a concurrent commit, the session reloads and replays
its operations against the fresh state (each re-checks its own guards), then commits again — so no
concurrent update is lost and no stale decision overwrites a newer one.

Operations touch only their ``OpContext``: the state data, the participant, and the messages,
transcript entries and after-commit effects they emit. Those are rebuilt on every replay, so an
operation whose guard no longer holds also stops emitting its message.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from promptpipe.clock import Clock
from promptpipe.errors import StateConflict, StateConflictRetriesExhausted
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState, StateData
from promptpipe.models.store import (
    MAX_RECENT_EVENTS,
    Direction,
    EventRecord,
    LoadedState,
    StateCommit,
    TranscriptEntry,
)
from promptpipe.ports import StateStore

logger = logging.getLogger(__name__)

MAX_COMMIT_ATTEMPTS = 6


@dataclass
class OpContext:
    """What an operation may read and change."""

    data: StateData
    participant: ConversationParticipant
    now: datetime
    event_id: str
    version: int  # the version this commit will write (audit records carry it)
    outbound: list[OutboundMessage] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    participant_changed: bool = False

    def emit(self, message: OutboundMessage, *, metadata: dict[str, Any] | None = None) -> None:
        """Queue a message for sending after the commit; it is recorded in the transcript too."""
        if not message.message_id:
            message = message.model_copy(update={"message_id": f"{self.event_id}#{len(self.outbound)}"})
        self.outbound.append(message)
        self.record(Direction.OUTBOUND, message.kind.value, _transcript_text(message), metadata=metadata)

    def record(
        self, direction: Direction, kind: str, content: str, *, metadata: dict[str, Any] | None = None
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
        )
        self.transcript.append(entry)
        return entry

    def defer(self, effect: Callable[[], None]) -> None:
        """Run ``effect`` once the commit succeeded (e.g. cancel a timer the state no longer names)."""
        self.after_commit.append(effect)


def _transcript_text(message: OutboundMessage) -> str:
    if message.question is None:
        return message.body
    options = " / ".join(o.title for o in message.question.options)
    return f"{message.body}\n[{message.question.text} {options}]".strip()


@dataclass(frozen=True)
class Operation:
    name: str
    apply: Callable[[OpContext], None]


class ConversationSession:
    """A participant's state for the duration of one event."""

    def __init__(
        self,
        store: StateStore,
        loaded: LoadedState,
        *,
        clock: Clock,
        event_id: str,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._rng = rng or random.Random()
        self._sleep = sleep or (lambda _seconds: None)
        self.event_id = event_id
        self.started_at = clock.now()
        self.operations: list[Operation] = []
        self.commit_attempts = 0
        self.committed_version: int | None = None
        self.duplicate_of: EventRecord | None = None
        self._reset(loaded)

    # -- state ------------------------------------------------------------------------------
    def _reset(self, loaded: LoadedState) -> None:
        self._loaded = loaded
        self._ctx = OpContext(
            data=StateData(dict(loaded.flow.state_data)),
            participant=loaded.participant.model_copy(deep=True),
            now=self.started_at,
            event_id=self.event_id,
            version=loaded.flow.version + 1,
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
    def outbound(self) -> list[OutboundMessage]:
        return list(self._ctx.outbound)

    @property
    def transcript(self) -> list[TranscriptEntry]:
        return list(self._ctx.transcript)

    def already_processed(self) -> EventRecord | None:
        """The committed record of this event, when a previous attempt already committed it."""
        return next((r for r in self._loaded.recent_events if r.event_id == self.event_id), None)

    # -- mutation ---------------------------------------------------------------------------
    def apply(self, name: str, fn: Callable[[OpContext], None]) -> None:
        """Record and immediately apply an operation."""
        operation = Operation(name, fn)
        operation.apply(self._ctx)
        self.operations.append(operation)

    @property
    def dirty(self) -> bool:
        return bool(self.operations)

    # -- commit -----------------------------------------------------------------------------
    def commit(self, *, record_event: bool = True) -> list[OutboundMessage]:
        """Write once, conditional on the loaded version; on conflict reload, replay, retry.

        Returns the messages to send. After-commit effects run before returning.
        """
        for attempt in range(1, MAX_COMMIT_ATTEMPTS + 1):
            self.commit_attempts = attempt
            try:
                self._store.commit(self._build_commit(record_event))
            except StateConflict:
                if attempt == MAX_COMMIT_ATTEMPTS:
                    break
                logger.info(
                    "state conflict; replaying operations",
                    extra={"participant_id": self.participant.id, "attempt": attempt},
                )
                # Bounded, jittered backoff: 10 ms, 20 ms, 40 ms … with full jitter.
                self._sleep(self._rng.uniform(0, 0.01 * 2 ** (attempt - 1)))
                fresh = self._store.load(self.participant.id)
                duplicate = next((r for r in fresh.recent_events if r.event_id == self.event_id), None)
                if record_event and duplicate is not None:
                    # A concurrent delivery of this same event committed first: it wins, we stop.
                    self.duplicate_of = duplicate
                    return list(duplicate.outbound)
                self._replay(fresh)
                continue
            self.committed_version = self._loaded.flow.version + 1
            for effect in self._ctx.after_commit:
                try:
                    effect()
                except Exception:  # an effect failing must not undo a committed turn
                    logger.exception("after-commit effect failed", extra={"participant_id": self.participant.id})
            return list(self._ctx.outbound)
        raise StateConflictRetriesExhausted(
            f"participant {self.participant.id}: state kept conflicting after {MAX_COMMIT_ATTEMPTS} attempts"
        )

    def _replay(self, fresh: LoadedState) -> None:
        self._reset(fresh)
        for operation in self.operations:
            operation.apply(self._ctx)

    def _build_commit(self, record_event: bool) -> StateCommit:
        loaded = self._loaded
        recent = list(loaded.recent_events)
        if record_event:
            recent.append(EventRecord(event_id=self.event_id, committed_at=self.now, outbound=list(self._ctx.outbound)))
        flow = FlowState(
            participant_id=loaded.flow.participant_id,
            flow_type=loaded.flow.flow_type,
            current_state=loaded.flow.current_state,
            state_data=dict(self._ctx.data.raw),
            version=loaded.flow.version + 1,
            updated_at=self.now,
        )
        participant = self._ctx.participant if self._ctx.participant_changed else None
        if participant is not None:
            participant = participant.model_copy(update={"updated_at": self.now})
        return StateCommit(
            participant_id=loaded.participant.id,
            expected_version=loaded.flow.version,
            flow=flow,
            participant=participant,
            recent_events=recent[-MAX_RECENT_EVENTS:],
            transcript=list(self._ctx.transcript),
        )


class SessionFactory:
    """Opens sessions (the composition root wires the store, clock and randomness once)."""

    def __init__(
        self,
        store: StateStore,
        clock: Clock,
        *,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self._rng = rng
        self._sleep = sleep

    def open(self, participant_id: str, event_id: str) -> ConversationSession:
        return ConversationSession(
            self.store,
            self.store.load(participant_id),
            clock=self.clock,
            event_id=event_id,
            rng=self._rng,
            sleep=self._sleep,
        )
