"""Moving a phone claim (WhatsApp "changed number"): the in-memory claims' decisions, and the DynamoDB
claims' handling of what only AWS answers (a cancelled transaction, a number moving meanwhile)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.phone_claims import MAX_ATTEMPTS, DynamoPhoneClaims, MemoryPhoneClaims, PhoneMove
from promptpipe.errors import ParticipantNotFound, StateConflict, StoreError
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
A, B = "p_" + "a" * 32, "p_" + "b" * 32
OLD, NEW, OTHER = "+15551230001", "+15551230002", "+15551230003"


def store() -> InMemoryStore:
    s = InMemoryStore()
    for pid, phone in ((A, OLD), (B, OTHER)):
        s.create(
            ConversationParticipant(id=pid, phone_number=phone, enrolled_at=T0, created_at=T0, updated_at=T0),
            FlowState(participant_id=pid, version=3),
        )
    return s


def test_memory_move_takes_the_new_claim_releases_the_old_and_bumps_the_version() -> None:
    s = store()
    assert MemoryPhoneClaims(s).move(A, OLD, NEW) is PhoneMove.MOVED
    assert s.phones == {NEW: A, OTHER: B}
    assert s.participants[A].phone_number == NEW
    assert s.flows[A].version == 4  # a turn that loaded the old number conflicts and replays
    assert MemoryPhoneClaims(s).move(A, OLD, NEW) is PhoneMove.ALREADY
    assert s.flows[A].version == 4


def test_memory_move_refuses_a_taken_number_and_a_stale_notice() -> None:
    s = store()
    claims = MemoryPhoneClaims(s)
    assert claims.move(A, OLD, OTHER) is PhoneMove.CONFLICT
    assert claims.move(A, "+15551239999", NEW) is PhoneMove.STALE
    assert s.phones == {OLD: A, OTHER: B}
    assert s.flows[A].version == 3
    with pytest.raises(ParticipantNotFound):
        claims.move("p_" + "c" * 32, OLD, NEW)


class Client:
    """get_item answers from ``meta``/``version``; transact_write_items raises the queued errors."""

    def __init__(self, phone: str | None, version: int | None, *errors: ClientError) -> None:
        self.phone, self.version = phone, version
        self.errors = list(errors)
        self.transactions: list[list[dict[str, Any]]] = []

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        if kwargs["Key"]["sk"]["S"] == "META":
            return {"Item": {"phone_number": {"S": self.phone}}} if self.phone else {}
        return {"Item": {"version": {"N": str(self.version)}}} if self.version is not None else {}

    def transact_write_items(self, **kwargs: Any) -> dict[str, Any]:
        self.transactions.append(kwargs["TransactItems"])
        if self.errors:
            raise self.errors.pop(0)
        return {}


def cancelled(*codes: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": c} for c in codes],
        },
        "TransactWriteItems",
    )


def test_dynamo_move_is_one_transaction_conditional_on_the_version_read() -> None:
    client = Client(OLD, 7)
    assert DynamoPhoneClaims("t", client).move(A, OLD, NEW) is PhoneMove.MOVED
    (actions,) = client.transactions
    assert [next(iter(a)) for a in actions] == ["Delete", "Put", "Update", "Update"]
    assert actions[3]["Update"]["ExpressionAttributeValues"] == {":next": {"N": "8"}, ":expected": {"N": "7"}}


def test_dynamo_move_without_a_flow_item_expects_version_zero() -> None:
    client = Client(OLD, None)
    assert DynamoPhoneClaims("t", client).move(A, OLD, NEW) is PhoneMove.MOVED
    assert client.transactions[0][3]["Update"]["ExpressionAttributeValues"][":expected"] == {"N": "0"}


def test_dynamo_move_decisions_before_any_write() -> None:
    assert DynamoPhoneClaims("t", Client(NEW, 1)).move(A, OLD, NEW) is PhoneMove.ALREADY
    assert DynamoPhoneClaims("t", Client(OTHER, 1)).move(A, OLD, NEW) is PhoneMove.STALE
    with pytest.raises(ParticipantNotFound):
        DynamoPhoneClaims("t", Client(None, None)).move(A, OLD, NEW)


def test_dynamo_move_to_a_number_someone_holds_is_a_conflict() -> None:
    client = Client(OLD, 1, cancelled("None", "ConditionalCheckFailed", "None", "None"))
    assert DynamoPhoneClaims("t", client).move(A, OLD, NEW) is PhoneMove.CONFLICT
    assert len(client.transactions) == 1


def test_dynamo_move_retries_when_the_version_moved_then_gives_up() -> None:
    moved = cancelled("None", "None", "None", "ConditionalCheckFailed")
    client = Client(OLD, 1, moved)
    assert DynamoPhoneClaims("t", client).move(A, OLD, NEW) is PhoneMove.MOVED
    assert len(client.transactions) == 2
    always = Client(OLD, 1, *[moved] * MAX_ATTEMPTS)
    with pytest.raises(StateConflict, match=f"could not move the phone claim of {A}"):
        DynamoPhoneClaims("t", always).move(A, OLD, NEW)
    assert len(always.transactions) == MAX_ATTEMPTS


def test_dynamo_move_translates_other_errors_into_a_store_error() -> None:
    failure = ClientError({"Error": {"Code": "InternalServerError", "Message": "x"}}, "TransactWriteItems")
    with pytest.raises(StoreError, match=r"DynamoPhoneClaims\.move: TransactWriteItems InternalServerError: x") as e:
        DynamoPhoneClaims("t", Client(OLD, 1, failure)).move(A, OLD, NEW)
    assert (e.value.code, e.value.__cause__) == ("InternalServerError", failure)
