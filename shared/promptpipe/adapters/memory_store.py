"""In-memory ``ParticipantRepo`` + ``StateStore``: the same contract as DynamoDB, for unit tests."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Sequence
from datetime import datetime

from promptpipe.adapters.after_commit import InMemoryPendingEffects
from promptpipe.errors import (
    EventAlreadyCommitted,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StateConflict,
    ValidationFailed,
)
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.participant_rows import (
    ROW_STATE_KEYS,
    ListedParticipant,
    listing_cursor,
    listing_key,
    read_listing_cursor,
)
from promptpipe.models.safety import NeedsPerson
from promptpipe.models.state import FlowState
from promptpipe.models.store import (
    RECEIPT_ORDER,
    DeliveryOutcome,
    EventClaim,
    EventRecord,
    LoadedState,
    Receipt,
    StateCommit,
    TranscriptEntry,
)


class DecisionTable(dict[str, DecisionRecord]):
    """The decisions by id, also indexed by participant: a participant's records without reading
    every record of the study (a rehearsal reads them at every check-in and sweep)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_participant: dict[str, dict[str, DecisionRecord]] = {}

    def __setitem__(self, decision_id: str, record: DecisionRecord) -> None:
        super().__setitem__(decision_id, record)
        self._by_participant.setdefault(record.participant_id, {})[decision_id] = record

    def __delitem__(self, decision_id: str) -> None:
        record = self[decision_id]
        super().__delitem__(decision_id)
        self._by_participant.get(record.participant_id, {}).pop(decision_id, None)

    def of_participant(self, participant_id: str) -> builtins.list[DecisionRecord]:
        return builtins.list(self._by_participant.get(participant_id, {}).values())


class InMemoryStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.participants: dict[str, ConversationParticipant] = {}
        self.phones: dict[str, str] = {}
        self.enrollments: dict[str, str] = {}  # phone -> fingerprint of the request that enrolled it
        self.flows: dict[str, FlowState] = {}
        self.expiries: dict[str, datetime] = {}  # what ``expire`` was asked for, by participant
        self.events: dict[str, list[EventRecord]] = {}
        self.transcripts: dict[str, list[TranscriptEntry]] = {}
        # Claimed event ids, as the table's EVENT# items: kept past a deletion that keeps the
        # transcript (the table's expire by TTL, some time after expires_at; these never do).
        self.claims: dict[tuple[str, str], EventClaim] = {}
        # Study decisions (docs/studies.md), written by commits only; read by ``InMemoryDecisionLog``.
        self.decisions = DecisionTable()
        self.loads = 0
        self.commits = 0
        self.pending_effects = InMemoryPendingEffects()  # read by ``load``, like the state Query
        # The needs-a-person markers (docs/console.md, "Nobody missed"), written by commits only.
        self.needs_person: dict[str, NeedsPerson] = {}

    # -- ParticipantRepo --------------------------------------------------------------------
    def create(self, participant: ConversationParticipant, flow: FlowState, *, enrollment: str | None = None) -> None:
        with self._lock:
            phone = participant.phone_number
            if phone in self.phones:
                raise ParticipantAlreadyEnrolled(
                    phone, participant_id=self.phones[phone], enrollment=self.enrollments.get(phone)
                )
            self.participants[participant.id] = participant.model_copy(deep=True)
            self.phones[phone] = participant.id
            if enrollment:
                self.enrollments[phone] = enrollment
            self.flows[participant.id] = flow.model_copy(deep=True)

    def get(self, participant_id: str) -> ConversationParticipant:
        with self._lock:
            if participant_id not in self.participants:
                raise ParticipantNotFound(participant_id)
            return self.participants[participant_id].model_copy(deep=True)

    def find_id_by_phone(self, phone_number: str) -> str | None:
        with self._lock:
            return self.phones.get(phone_number)

    def list(self, *, limit: int, next_token: str | None) -> tuple[list[ConversationParticipant], str | None]:
        with self._lock:
            ordered = sorted(self.participants.values(), key=lambda p: (p.created_at, p.id), reverse=True)
        start = 0
        if next_token:
            if not next_token.isdigit():
                raise ValidationFailed("invalid next_token", field="next_token")
            start = int(next_token)
        page = ordered[start : start + limit]
        more = start + limit < len(ordered)
        return [p.model_copy(deep=True) for p in page], (str(start + limit) if more else None)

    def page(
        self, *, limit: int, next_token: str | None, status: str | None = None
    ) -> tuple[builtins.list[ListedParticipant], str | None]:
        with self._lock:
            ordered = sorted(self.participants.values(), key=lambda p: (p.created_at, p.id), reverse=True)
        kept = [ListedParticipant.model_validate(p.model_dump()) for p in ordered if status in (None, p.status.value)]
        start = self._through(kept, next_token)
        shown = kept[start : start + limit]
        more = start + limit < len(kept)
        return shown, (listing_cursor(shown[-1]) if more else None)

    @staticmethod
    def _through(kept: builtins.list[ListedParticipant], token: str | None) -> int:
        """How many of ``kept`` (newest first) are at or before the cursor's place: a place in the
        list, as DynamoDB's key, so that enrolments since do not shift the page."""
        if token is None:
            return 0
        try:
            place = read_listing_cursor(token)
        except ValueError:
            raise ValidationFailed("invalid next_token", field="next_token") from None
        return sum(1 for p in kept if listing_key(p) >= place)

    def count(self, *, status: str | None = None, through: str | None = None) -> int:
        with self._lock:
            ordered = [p for p in self.participants.values() if status is None or p.status.value == status]
        if through is None:
            return len(ordered)
        return self._through([ListedParticipant.model_validate(p.model_dump()) for p in ordered], through)

    def list_states(self, participant_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        keys = {key.value for key in ROW_STATE_KEYS}
        with self._lock:
            return {
                pid: {k: v for k, v in self.flows[pid].state_data.items() if k in keys}
                for pid in participant_ids
                if pid in self.flows
            }

    def needs_person_queue(self, limit: int) -> builtins.list[NeedsPerson]:
        """The markers, the longest wait first (an unknown start last), as the index orders them."""
        with self._lock:
            held = sorted(
                self.needs_person.values(),
                key=lambda e: (e.since is None, e.since.timestamp() if e.since else 0.0, e.participant_id),
            )
        return [e.model_copy() for e in held[:limit]]

    def listed(self, participant_ids: Sequence[str]) -> builtins.list[ListedParticipant]:
        with self._lock:
            found = [self.participants[pid] for pid in dict.fromkeys(participant_ids) if pid in self.participants]
        return [ListedParticipant.model_validate(p.model_dump()) for p in found]

    def pending_hold_alerts(self, started_before: datetime) -> builtins.list[NeedsPerson]:
        return [
            e
            for e in self.needs_person_queue(limit=len(self.needs_person))
            if e.alert_pending and e.since is not None and e.since < started_before
        ]

    def hold_alerted(self, participant_id: str, since: datetime) -> None:
        with self._lock:
            entry = self.needs_person.get(participant_id)
            if entry is not None and entry.since == since:
                self.needs_person[participant_id] = entry.model_copy(update={"alert_pending": False})

    def update(self, participant: ConversationParticipant) -> None:
        with self._lock:
            if participant.id not in self.participants:
                raise ParticipantNotFound(participant.id)
            self.participants[participant.id] = participant.model_copy(deep=True)

    def delete(self, participant_id: str, *, keep_transcript: bool) -> None:
        with self._lock:
            participant = self.participants.pop(participant_id, None)
            if participant is None:
                raise ParticipantNotFound(participant_id)
            self.phones.pop(participant.phone_number, None)
            self.enrollments.pop(participant.phone_number, None)
            self.flows.pop(participant_id, None)
            self.needs_person.pop(participant_id, None)
            self.events.pop(participant_id, None)
            if not keep_transcript:  # erased with the rest of the partition, as DynamoDB's
                self.transcripts.pop(participant_id, None)
                self.claims = {k: v for k, v in self.claims.items() if k[0] != participant_id}

    def expire(self, participant_id: str, at: datetime | None) -> None:
        """Nothing expires in memory: the expiry asked for is recorded (``expiries``)."""
        with self._lock:
            if participant_id not in self.participants:
                raise ParticipantNotFound(participant_id)
            if at is None:
                self.expiries.pop(participant_id, None)
            else:
                self.expiries[participant_id] = at

    # -- StateStore -------------------------------------------------------------------------
    def load(self, participant_id: str) -> LoadedState:
        with self._lock:
            self.loads += 1
            if participant_id not in self.participants:
                raise ParticipantNotFound(participant_id)
            flow = self.flows.get(participant_id) or FlowState(participant_id=participant_id)
            return LoadedState(
                participant=self.participants[participant_id].model_copy(deep=True),
                flow=flow.model_copy(deep=True),
                recent_events=[e.model_copy(deep=True) for e in self.events.get(participant_id, [])],
                pending_effects=self.pending_effects.markers.get(participant_id),
                needs_person=self.needs_person.get(participant_id),
            )

    def commit(self, commit: StateCommit) -> None:
        with self._lock:
            self.commits += 1
            pid = commit.participant_id
            if pid not in self.participants:
                raise ParticipantNotFound(pid)
            current = self.flows.get(pid)
            current_version = current.version if current else 0
            if current_version != commit.expected_version:
                raise StateConflict(f"{pid}: expected version {commit.expected_version}, found {current_version}")
            claim = commit.claim
            if claim is not None and (pid, claim.event_id) in self.claims:  # after the version, as DynamoDB's
                raise EventAlreadyCommitted(f"{pid}: event {claim.event_id} was committed before")
            if any(d.decision_id in self.decisions for d in commit.decisions):  # each only if new, as DynamoDB's
                raise StateConflict(f"{pid}: a decision of this commit is already recorded")
            if claim is not None:
                self.claims[(pid, claim.event_id)] = claim.model_copy()
            self.flows[pid] = commit.flow.model_copy(deep=True)
            self.events[pid] = [e.model_copy(deep=True) for e in commit.recent_events]
            if commit.participant is not None:
                self.participants[pid] = commit.participant.model_copy(deep=True)
            self._put_entries(pid, commit.transcript)
            for decision in commit.decisions:
                self.decisions[decision.decision_id] = decision.model_copy(deep=True)
            if commit.accepted is not None:
                key = (commit.accepted.at, commit.accepted.seq)
                self.transcripts[pid] = [e for e in self.transcripts[pid] if (e.at, e.seq) != key]
            if commit.needs_person_changed:
                if commit.needs_person is None:
                    self.needs_person.pop(pid, None)
                else:
                    self.needs_person[pid] = commit.needs_person.model_copy()

    def _put_entries(self, pid: str, entries: Sequence[TranscriptEntry]) -> None:
        """Append, or replace an entry accepted before its turn ran (it carries a ``state``)."""
        transcript = self.transcripts.setdefault(pid, [])
        for entry in entries:
            # from the end: an entry accepted before its turn is among the latest
            found = next(
                (
                    i
                    for i in range(len(transcript) - 1, -1, -1)
                    if (transcript[i].at, transcript[i].seq) == (entry.at, entry.seq)
                ),
                None,
            )
            if found is not None and transcript[found].state:
                transcript[found] = entry.model_copy(deep=True)
            elif found is None:
                transcript.append(entry.model_copy(deep=True))

    def find_sent(self, participant_id: str, provider_id: str, since: datetime) -> TranscriptEntry | None:
        with self._lock:
            for entry in sorted(self.transcripts.get(participant_id, []), key=lambda e: (e.at, e.seq)):
                outcome = entry.delivery
                if entry.at >= since and outcome is not None and provider_id in (outcome.provider_id, *outcome.parts):
                    return entry.model_copy(deep=True)
            return None

    # -- InboundLog -------------------------------------------------------------------------
    def accept(self, entry: TranscriptEntry) -> bool:
        with self._lock:
            transcript = self.transcripts.setdefault(entry.participant_id, [])
            if any((e.at, e.seq) == (entry.at, entry.seq) for e in transcript):
                return False
            transcript.append(entry.model_copy(deep=True))
            return True

    def mark(self, participant_id: str, at: datetime, seq: str, state: str, *, expect: str) -> bool:
        with self._lock:
            for entry in self.transcripts.get(participant_id, []):
                if (entry.at, entry.seq) == (at, seq) and entry.state == expect:
                    entry.state = state
                    return True
            return False

    def write_unsaved(self, entries: Sequence[TranscriptEntry]) -> None:
        with self._lock:
            for entry in entries:
                self._put_entries(entry.participant_id, [entry])

    def discard(self, participant_id: str, at: datetime, seq: str) -> None:
        with self._lock:
            transcript = self.transcripts.get(participant_id, [])
            transcript[:] = [e for e in transcript if (e.at, e.seq) != (at, seq) or not e.state]

    def list_transcript(
        self, participant_id: str, *, limit: int, next_token: str | None
    ) -> tuple[builtins.list[TranscriptEntry], str | None]:
        with self._lock:
            entries = sorted(self.transcripts.get(participant_id, []), key=lambda e: (e.at, e.seq))
        start = int(next_token) if next_token and next_token.isdigit() else 0
        page = entries[start : start + limit]
        return page, (str(start + limit) if start + limit < len(entries) else None)

    def load_outbound(self, participant_id: str, record: EventRecord) -> builtins.list[OutboundMessage]:
        with self._lock:
            by_key = {(e.at, e.seq): e for e in self.transcripts.get(participant_id, [])}
        found = [by_key.get((record.committed_at, ref.seq)) for ref in record.messages]
        return [e.outbound.model_copy(deep=True) for e in found if e is not None and e.outbound is not None]

    # -- DeliveryLog ------------------------------------------------------------------------
    def record_receipt(self, participant_id: str, provider_id: str, receipt: Receipt, at: datetime) -> bool:
        with self._lock:
            found = [
                entry
                for entry in self.transcripts.get(participant_id, [])
                if entry.delivery is not None and entry.delivery.provider_id == provider_id
            ]
            if not found:
                return False
            outcome = found[0].delivery
            assert outcome is not None
            earlier = RECEIPT_ORDER.get(outcome.receipt or "", 0)
            if outcome.status != "failed" and earlier < RECEIPT_ORDER[receipt]:
                found[0].delivery = outcome.model_copy(update={"receipt": receipt, "receipt_at": at})
            return True

    def record_outcomes(
        self, participant_id: str, committed_at: datetime, outcomes: dict[str, DeliveryOutcome]
    ) -> None:
        with self._lock:
            for entry in self.transcripts.get(participant_id, []):
                if entry.at == committed_at and entry.seq in outcomes:
                    # a receipt is kept apart from the outcome (as on DynamoDB): a later write keeps it
                    earlier = entry.delivery
                    receipt = {"receipt": earlier.receipt, "receipt_at": earlier.receipt_at} if earlier else {}
                    entry.delivery = outcomes[entry.seq].model_copy(update=receipt)
