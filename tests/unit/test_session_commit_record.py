"""What a session's commit writes and returns, value by value: each transcript entry's delivery
outcome (pending for an outbound message, none for anything else), the status its event record
keeps for the send rule, the transcript keys its effects carry for the delivery outcomes, and what
a refused event id (``answered_before``) returns and logs (docs/architecture.md, "Delivery
outcomes", "Event ids: answered at most once")."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.flow.effects import plan_effects
from promptpipe.flow.session import OpContext, SessionFactory
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import FlowState, StateData, new_state_data
from promptpipe.models.store import DeliveryOutcome, Direction
from promptpipe.rules.clock import ManualClock

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "c" * 32
PHONE = "+14155550103"


def enrolled_store() -> InMemoryStore:
    store = InMemoryStore()
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=new_state_data()))
    return store


def sessions(store: InMemoryStore, clock: ManualClock | None = None) -> SessionFactory:
    return SessionFactory(store, clock or ManualClock(START), rng=random.Random(5))


def answer(text: str):
    def apply(op: OpContext) -> None:
        op.record(Direction.INBOUND, "message", text)
        op.emit(OutboundMessage(participant_id=PID, to=PHONE, body=f"re: {text}", kind=OutboundKind.REPLY))

    return apply


def test_an_outbound_entry_is_committed_pending_and_an_inbound_one_without_outcome() -> None:
    store = enrolled_store()
    session = sessions(store).open(PID, "SM1")
    session.apply("answer", answer("hello"))
    session.commit()

    inbound, outbound = store.transcripts[PID]
    assert (inbound.direction, inbound.delivery) == (Direction.INBOUND, None)
    assert outbound.direction is Direction.OUTBOUND
    assert outbound.delivery == DeliveryOutcome(status="pending")
    assert not outbound.delivered  # pending is never shown as sent


def test_the_effects_locate_each_message_by_its_transcript_key_and_commit_time() -> None:
    store = enrolled_store()
    session = sessions(store).open(PID, "SM1")
    session.apply("answer", answer("hello"))
    effects = session.commit()

    (sent,) = effects.messages
    outbound_entry = store.transcripts[PID][1]
    assert sent.message_id == "SM1#0"
    assert effects.seqs == {"SM1#0": outbound_entry.seq} and outbound_entry.seq == "0000000001#001"
    assert effects.committed_at == START


def test_the_event_record_keeps_the_status_the_event_committed() -> None:
    store = enrolled_store()
    session = sessions(store).open(PID, "SMpause")

    def pause(op: OpContext) -> None:
        op.participant = op.participant.model_copy(update={"status": ParticipantStatus.PAUSED})
        op.participant_changed = True

    session.apply("pause", pause)
    effects = session.commit()

    (record,) = store.load(PID).recent_events
    assert record.status is ParticipantStatus.PAUSED
    assert effects.decided_status is ParticipantStatus.PAUSED


def test_a_new_session_has_not_been_answered_before() -> None:
    session = sessions(enrolled_store()).open(PID, "SM1")
    assert session.answered_before is False
    assert (session.duplicate_of, session.recovered_own_commit, session.committed_version) == (None, False, None)


def test_a_refused_event_id_returns_empty_effects_for_the_participant_and_event_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given an event committed once, then a window's worth of later events and days passing
    store, clock = enrolled_store(), ManualClock(START)
    factory = sessions(store, clock)
    first = factory.open(PID, "tmr-1")
    first.apply("answer", answer("first"))
    first.commit()
    for i in range(30):
        later = factory.open(PID, f"SM{i}")
        later.apply("answer", answer(str(i)))
        later.commit()
    clock.advance(timedelta(days=3))

    # When the same event comes back
    late = factory.open(PID, "tmr-1")
    late.apply("answer", answer("again"))
    with caplog.at_level(logging.INFO, logger="promptpipe.flow.session"):
        effects = late.commit()

    # Then it is answered before: empty effects naming the participant and the event, and one log line
    assert late.answered_before is True and late.committed_version is None
    assert (effects.participant_id, effects.event_id, effects.empty) == (PID, "tmr-1", True)
    (line,) = [r for r in caplog.records if r.name == "promptpipe.flow.session"]
    assert line.getMessage() == "event answered before (its id is claimed); nothing committed, nothing sent"
    assert (line.levelno, line.__dict__["participant_id"], line.__dict__["attempt"]) == (logging.INFO, PID, 1)


def test_plan_effects_carries_the_commit_time_and_a_copy_of_the_transcript_keys() -> None:
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    seqs = {"SM1#0": "0000000002#001"}
    effects = plan_effects(
        participant,
        StateData(new_state_data()),
        event_id="SM1",
        messages=[],
        touched=[],
        prep_minutes=10,
        now=START,
        seqs=seqs,
    )
    assert effects.committed_at == START
    assert effects.seqs == seqs and effects.seqs is not seqs
    bare = plan_effects(
        participant, StateData(new_state_data()), event_id="e", messages=[], touched=[], prep_minutes=10
    )
    assert (bare.committed_at, bare.seqs) == (None, {})
