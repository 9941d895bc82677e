"""Ports: the small protocols the engine depends on. Adapters implement them.

Each port has an AWS (or real) adapter in ``promptpipe.adapters`` and an in-memory or local one for
tests and local runs.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports builds no model module (cold start)
    from promptpipe.models.alerts import HoldAlert, SafetyAlert
    from promptpipe.models.audit import AuditRecord
    from promptpipe.models.decision import DecisionRecord
    from promptpipe.models.effects import LiveSchedule, ScheduleSpec
    from promptpipe.models.events import ScheduledPromptPayload, TimerPayload, TurnEvent
    from promptpipe.models.llm import ChatRequest, ChatResponse
    from promptpipe.models.messaging import OutboundMessage, SendResult
    from promptpipe.models.participant import ConversationParticipant
    from promptpipe.models.participant_rows import ListedParticipant
    from promptpipe.models.safety import NeedsPerson
    from promptpipe.models.state import FlowState
    from promptpipe.models.store import (
        DeliveryOutcome,
        EventRecord,
        LoadedState,
        PartialDelivery,
        Receipt,
        StateCommit,
        TranscriptEntry,
    )
    from promptpipe.models.sweeps import StudySweepRequest


class LLM(Protocol):
    def complete(self, request: ChatRequest) -> ChatResponse:
        """One Chat Completions call. Raises ``LLMError`` when it fails after retries."""
        ...


# Asked before each part of a message after the first one sent: why the rest must not go (the send
# rule read against the committed state at that moment), or ``None`` to go on.
PartCheck = Callable[[], "str | None"]


class Messenger(Protocol):
    def send(self, message: OutboundMessage, before_part: PartCheck | None = None) -> SendResult:
        """Deliver one message. Raises ``MessagingError`` on failure. A message sent in parts asks
        ``before_part`` before each part after the first it sends; a reason stops it there
        (``SendResult.stopped``)."""
        ...


class Timers(Protocol):
    """Durable timers (EventBridge Scheduler). Names are deterministic: scheduling a name that
    exists replaces it; cancelling a missing name is not an error."""

    def schedule_timer(self, *, name: str, at: datetime, payload: TimerPayload) -> str:
        """A one-shot firing of the timers function at ``at`` (deleted after it completes)."""
        ...

    def schedule_daily_prompt(
        self, *, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload
    ) -> str:
        """A recurring daily firing of the scheduled-prompt function at hour:minute in ``timezone``."""
        ...

    def schedule_prompt_at(self, *, name: str, at: datetime, payload: ScheduledPromptPayload) -> str:
        """A one-shot firing of the scheduled-prompt function (random-window delivery)."""
        ...

    def cancel(self, name: str) -> None: ...

    def schedule_sweep(self, *, name: str, at: datetime, payload: StudySweepRequest) -> str:
        """A one-shot firing of the timers function with a sweep's input (the daily study sweep's
        continuation), deleted after it completes."""
        ...

    def list_names(self, prefix: str) -> list[str]:
        """The names of the live schedules starting with ``prefix`` ("" lists the whole group)."""
        ...

    def describe(self, name: str) -> LiveSchedule | None:
        """The live schedule's specification (one GetSchedule); ``None`` when it does not exist."""
        ...

    def planned(self, spec: ScheduleSpec) -> LiveSchedule:
        """What putting ``spec`` would write now, under the current settings (no call)."""
        ...


class ParticipantRepo(Protocol):
    def create(self, participant: ConversationParticipant, flow: FlowState, *, enrollment: str | None = None) -> None:
        """Participant + phone claim + flow state, atomically; the claim keeps ``enrollment`` (the
        enrolment request's fingerprint). ``ParticipantAlreadyEnrolled`` if the phone is claimed,
        with the claim's participant id and fingerprint."""
        ...

    def get(self, participant_id: str) -> ConversationParticipant:
        """``ParticipantNotFound`` if missing."""
        ...

    def find_id_by_phone(self, phone_number: str) -> str | None: ...

    def list(self, *, limit: int, next_token: str | None) -> tuple[list[ConversationParticipant], str | None]: ...

    # -- the participants list (docs/console.md, "The list's reads") --
    def page(
        self, *, limit: int, next_token: str | None, status: str | None = None
    ) -> tuple[builtins.list[ListedParticipant], str | None]:
        """Newest first, like ``list``, only the fields a list row shows; only participants of
        ``status`` when given (filtered by the store)."""
        ...

    def count(self, *, status: str | None = None, through: str | None = None) -> int:
        """How many participants (of ``status``), without reading their records; with ``through``
        (a ``page`` cursor), only those listed up to that cursor's place (before the page it starts)."""
        ...

    def list_states(self, participant_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """Each participant's ``state_data``, only the keys a list row shows, in batches (not one
        read per participant); participants without a flow state are left out."""
        ...

    def needs_person_queue(self, limit: int) -> builtins.list[NeedsPerson]:
        """Every participant held for a person (up to ``limit``), the longest wait first: one read of
        the markers the commits keep, never of every participant (docs/console.md, "Nobody missed")."""
        ...

    def hold_alerted(self, participant_id: str, since: datetime) -> None:
        """The alert of the participant's hold that began at ``since`` was published: its marker says
        so (nothing when the marker is gone or holds another hold)."""
        ...

    def pending_hold_alerts(self, started_before: datetime) -> builtins.list[NeedsPerson]:
        """The markers whose hold began before ``started_before`` and whose alert is still pending,
        the longest wait first: the needs-a-person partition of the index, every page (the hold-alert
        sweep, ``usecases/hold_alerts.py``)."""
        ...

    def listed(self, participant_ids: Sequence[str]) -> builtins.list[ListedParticipant]:
        """The records of these participants, only the fields a list row shows, in batches (not one
        read per participant); those gone are left out, the order is not kept."""
        ...

    def delete(self, participant_id: str, *, keep_transcript: bool) -> None:
        """Remove participant, phone claim and flow state (and the transcript unless kept)."""
        ...

    def expire(self, participant_id: str, at: datetime | None) -> None:
        """Have the items no commit rewrites (the transcript, the phone claim) expire at ``at``, as the
        flow state does; ``None``: kept again (docs/retention.md)."""
        ...


class StateStore(Protocol):
    def load(self, participant_id: str) -> LoadedState:
        """One Query: participant and flow state. ``ParticipantNotFound`` if missing."""
        ...

    def commit(self, commit: StateCommit) -> None:
        """One conditional write. ``StateConflict`` when the version moved;
        ``ParticipantNotFound`` when the participant was deleted meanwhile."""
        ...

    def list_transcript(
        self, participant_id: str, *, limit: int, next_token: str | None
    ) -> tuple[list[TranscriptEntry], str | None]:
        """Oldest first."""
        ...

    def load_outbound(self, participant_id: str, record: EventRecord) -> list[OutboundMessage]:
        """The messages of a committed event, read back from its transcript entries (the rare
        resume path: one extra read)."""
        ...


class SentLedger(Protocol):
    """What an event whose effects failed part-way had already delivered."""

    def record_partial(self, participant_id: str, event_id: str, delivered: PartialDelivery) -> None:
        """Applying ``event_id``'s effects failed after ``delivered`` went out."""
        ...

    def partial(self, participant_id: str, event_id: str) -> set[str] | None:
        """The messages recorded for ``event_id``; ``None`` when no failure was recorded."""
        ...

    def accepted_parts(self, participant_id: str, event_id: str) -> dict[str, list[str]]:
        """The parts recorded for ``event_id``'s messages sent part-way (message id -> part ids)."""
        ...

    def unfinished(self, participant_id: str, event_id: str) -> EventRecord | None:
        """The record of ``event_id`` kept with its failed delivery; ``None`` when none was kept."""
        ...


class DeliveryLog(Protocol):
    """What became of each outbound message, kept on its transcript entry."""

    def record_outcomes(
        self, participant_id: str, committed_at: datetime, outcomes: dict[str, DeliveryOutcome]
    ) -> None:
        """The outcomes of one event's messages (transcript ``seq`` -> outcome; the entries were
        committed at ``committed_at``), in one write. An entry that no longer exists (an erased
        transcript) is left alone."""
        ...

    def find_sent(self, participant_id: str, provider_id: str, since: datetime) -> TranscriptEntry | None:
        """The outbound entry, committed after ``since``, whose outcome carries ``provider_id`` (the
        message or one of its parts): what a provider's later delivery report is about."""
        ...

    def record_receipt(self, participant_id: str, provider_id: str, receipt: Receipt, at: datetime) -> bool:
        """A provider's report that the message it accepted as ``provider_id`` was delivered or
        read, set on that message's transcript entry (found by key: the outcome's write keeps a
        pointer from the id), unless the entry already carries this or a later receipt, or its
        outcome is ``failed``. ``False`` when the id names no message of the participant's sent in
        the last ``PROVIDER_REPORT_DAYS`` (an older message, or another system's)."""
        ...


class PendingEffects(Protocol):
    """Participants whose schedule changes failed after a commit (docs/architecture.md, "Effects
    that failed"): a marker per participant, re-applied from the state by the next event or the sweep."""

    def mark(self, participant_id: str) -> str:
        """Record (or renew) the participant's marker; returns its token."""
        ...

    def clear(self, participant_id: str, token: str) -> None:
        """Remove the marker if it still carries ``token`` (a newer failure keeps its own)."""
        ...

    def pending(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` markers, oldest first: (participant id, token)."""
        ...


class TurnQueue(Protocol):
    def enqueue(self, event: TurnEvent) -> None:
        """Put a turn on the participant's ordered line (SQS FIFO; group = participant id)."""
        ...


class PhoneClaims(Protocol):
    """Which participant owns a phone number (a WhatsApp number change moves the claim)."""

    def move(self, participant_id: str, old_phone: str, new_phone: str) -> str:
        """Move the claim; ``"moved"``, ``"already"``, ``"conflict"`` or ``"stale"``."""
        ...


class InboundLog(Protocol):
    """A participant's message in the transcript from the worker's first receive, before the model,
    with where its answer stands (``TranscriptEntry.state``; docs/reliability.md, "The record
    under faults"). The turn's commit rewrites the entry as answered."""

    def accept(self, entry: TranscriptEntry) -> bool:
        """Write the entry only if it is not there yet; ``True`` when this call wrote it."""
        ...

    def mark(self, participant_id: str, at: datetime, seq: str, state: str, *, expect: str) -> bool:
        """Set the state of an entry still in state ``expect``; ``True`` when it changed."""
        ...

    def write_unsaved(self, entries: Sequence[TranscriptEntry]) -> None:
        """A turn whose commit failed for good (the degraded save): its entries, written as they are
        (an accepted message rewritten), outside the state's commit."""
        ...

    def discard(self, participant_id: str, at: datetime, seq: str) -> None:
        """Remove an accepted entry that no turn will answer (a copy of a message answered before)."""
        ...


class DeadLetters(Protocol):
    """The turns the inbound queue set aside after its receives failed (the dead-letter queue)."""

    def waiting(self) -> int:
        """About how many turns wait there."""
        ...

    def redrive(self, limit: int) -> int:
        """Put up to ``limit`` of them back on the inbound queue (each on its participant's line);
        how many were moved."""
        ...


class TeamAlerts(Protocol):
    """Tells the study team a participant needs a person now (docs/safety.md): an SNS topic deployed,
    a WARNING log line locally."""

    def safety_flag(self, alert: SafetyAlert) -> None: ...

    def hold_placed(self, alert: HoldAlert) -> None:
        """A new hold of another reason (asked for a person, repeated failure, staff): once per hold."""
        ...


class DecisionLog(Protocol):
    """The randomised decisions of studies (docs/studies.md). Records are written inside the state
    commit of the event that made them (``StateCommit``); this port reads them back and fills in what
    is learnt later (the delivery, the proximal outcome)."""

    def get(self, decision_id: str) -> DecisionRecord | None: ...

    def for_participant(self, participant_id: str) -> builtins.list[DecisionRecord]: ...

    def all(self, study_id: str) -> builtins.list[DecisionRecord]:
        """Every record of a study, in (participant, study day, decision point) order."""
        ...

    def update(self, record: DecisionRecord) -> None:
        """Fill in the delivery or the proximal outcome of an existing record (idempotent)."""
        ...

    def page(
        self, study_id: str, *, limit: int, next_token: str | None = None
    ) -> tuple[builtins.list[DecisionRecord], str | None]:
        """One page of ``all``'s records, in its order, and the token of the next (None: the last).
        A token this listing did not give is a ``ValidationFailed`` on ``next_token``."""
        ...


class AuditLog(Protocol):
    """The coordinators' audit records (``models/audit.py``): kept apart from the participant's
    items, so an erasure leaves them."""

    def append(self, record: AuditRecord) -> None: ...

    def records(self, participant_id: str | None = None) -> builtins.list[AuditRecord]:
        """A participant's records, oldest first; every record (by participant) for ``None``."""
        ...

    def redact(self, participant_id: str) -> None:
        """Blank the reasons of a participant's records (an erasure: the reasons are free text)."""
        ...
