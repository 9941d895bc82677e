"""Event ids answered at most once (docs/architecture.md, "Event ids: answered at most once").

A commit claims its event id (an ``EVENT#`` item written only if new, in the same transaction); a
later commit of the same id, once the state item's window of records no longer has it, is refused
whole. The in-memory store behaves as DynamoDB's; the DynamoDB adapter maps the cancellation by the
index of the claim's action, a lost version first.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from promptpipe.adapters.dynamodb import DynamoStateStore
from promptpipe.adapters.dynamodb_commit import CLAIM_INDEX, commit_actions
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import EventAlreadyCommitted, StateConflict
from promptpipe.flow.session import OpContext, SessionFactory
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState, new_state_data
from promptpipe.models.store import (
    EVENT_ID_RETENTION_DAYS,
    MAX_RECENT_EVENTS,
    Direction,
    EventClaim,
    StateCommit,
)
from promptpipe.rules.clock import ManualClock

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "b" * 32
PHONE = "+14155550102"
TIMER_EVENT = f"{PID}-reminder:0b6c7e5e-execution"


def enrolled_store() -> InMemoryStore:
    store = InMemoryStore()
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=new_state_data()))
    return store


def reply(text: str):
    def apply(op: OpContext) -> None:
        op.record(Direction.INBOUND, "message", text)
        op.emit(OutboundMessage(participant_id=PID, to=PHONE, body=f"re: {text}", kind=OutboundKind.REPLY))

    return apply


def run(sessions: SessionFactory, event_id: str, **commit: Any) -> Any:
    session = sessions.open(PID, event_id)
    session.apply("reply", reply(event_id))
    return session, session.commit(**commit)


def test_an_event_id_that_left_the_window_is_refused_whole_days_later() -> None:
    # Given a timer firing committed, then more events than the window keeps, and days passing
    store, clock = enrolled_store(), ManualClock(START)
    sessions = SessionFactory(store, clock, rng=random.Random(1))
    _, first = run(sessions, TIMER_EVENT)
    assert len(first.messages) == 1
    for i in range(MAX_RECENT_EVENTS + 1):
        run(sessions, f"SMnewer{i}")
    clock.advance(timedelta(days=5))
    assert TIMER_EVENT not in {r.event_id for r in store.load(PID).recent_events}
    version, transcript = store.flows[PID].version, len(store.transcripts[PID])

    # When the same firing comes back
    late, effects = run(sessions, TIMER_EVENT)

    # Then nothing is committed and nothing is to be sent
    assert late.answered_before and late.duplicate_of is None
    assert effects.messages == [] and effects.schedules == {}
    assert (store.flows[PID].version, len(store.transcripts[PID])) == (version, transcript)
    claim = store.claims[(PID, TIMER_EVENT)]
    assert claim.expires_at - claim.committed_at == timedelta(days=EVENT_ID_RETENTION_DAYS)


def test_api_changes_claim_no_id_and_may_share_one() -> None:
    # Given two operator changes made at the same instant (their ids are made from the clock)
    store = enrolled_store()
    sessions = SessionFactory(store, ManualClock(START), rng=random.Random(1))

    # When both commit without claiming their id
    run(sessions, "update-2026-03-02T12:00:00+00:00", claim_event=False)
    second, _ = run(sessions, "update-2026-03-02T12:00:00+00:00", claim_event=False)

    # Then both landed, and no id was claimed
    assert not second.answered_before and store.flows[PID].version == 2
    assert store.claims == {}


def a_commit(version: int, event_id: str) -> StateCommit:
    return StateCommit(
        participant_id=PID,
        expected_version=version,
        flow=FlowState(participant_id=PID, version=version + 1),
        claim=EventClaim(event_id=event_id, committed_at=START, expires_at=START + timedelta(days=15)),
    )


def test_the_memory_store_reports_a_lost_version_before_a_claimed_id() -> None:
    # Given a committed event (version 1, its id claimed)
    store = enrolled_store()
    store.commit(a_commit(0, "SM1"))

    # When the same id commits again on the old version, then on the current one
    # Then a lost version wins (the session reloads and finds its own landed attempt, or another
    # delivery's record); with the version held, the claimed id refuses the commit
    with pytest.raises(StateConflict):
        store.commit(a_commit(0, "SM1"))
    with pytest.raises(EventAlreadyCommitted):
        store.commit(a_commit(1, "SM1"))
    assert store.flows[PID].version == 1


def test_the_claim_is_its_own_item_after_flow_and_meta_expiring_by_ttl() -> None:
    # Given a commit that claims its event id
    actions = commit_actions("table", a_commit(3, "wamid.HBgL"))

    # Then the claim is the third action: a Put only if new, outside the state Query's range, with a TTL
    put = actions[CLAIM_INDEX]["Put"]
    assert put["Item"]["pk"]["S"] == f"PARTICIPANT#{PID}"
    assert put["Item"]["sk"]["S"] == "EVENT#wamid.HBgL" and not "FLOW#" <= put["Item"]["sk"]["S"] <= "META"
    assert put["ConditionExpression"] == "attribute_not_exists(sk)"
    assert put["Item"]["expires_at"]["N"] == str(int((START + timedelta(days=15)).timestamp()))


def cancelled(*codes: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
            "CancellationReasons": [{"Code": code} for code in codes],
        },
        "TransactWriteItems",
    )


class CancellingClient:
    def __init__(self, failure: ClientError) -> None:
        self.failure = failure

    def transact_write_items(self, **_: Any) -> None:
        raise self.failure


@pytest.mark.parametrize(
    ("codes", "raised"),
    [
        (("None", "None", "ConditionalCheckFailed"), EventAlreadyCommitted),
        (("ConditionalCheckFailed", "None", "ConditionalCheckFailed"), StateConflict),  # our own landed attempt
        (("None", "None", "None", "ConditionalCheckFailed"), StateConflict),  # a transcript entry
    ],
)
def test_the_dynamodb_commit_maps_a_claimed_id_after_a_lost_version(codes: tuple[str, ...], raised: type) -> None:
    store = DynamoStateStore("table", CancellingClient(cancelled(*codes)))
    with pytest.raises(raised):
        store.commit(a_commit(0, "SM1"))


@pytest.mark.parametrize(("keep", "left"), [(True, 1), (False, 0)])
def test_erasing_a_participant_erases_their_claimed_ids_and_keeping_keeps_them(keep: bool, left: int) -> None:
    # Given a participant with a claimed event id
    store = enrolled_store()
    store.commit(a_commit(0, "SM1"))

    # When they are deleted, keeping or erasing their transcript
    store.delete(PID, keep_transcript=keep)

    # Then the claim goes with an erased partition (as DynamoDB's erase deletes the EVENT# items)
    assert len(store.claims) == left
