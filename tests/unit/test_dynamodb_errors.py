"""The DynamoDB adapter's error paths, with a client that answers what moto never does: transactions
cancelled for a given reason, throttled batches, unknown error codes (the happy paths run against
moto in tests/integration/test_dynamodb_store.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from promptpipe.adapters.dynamodb import (
    DynamoParticipantRepo,
    DynamoStateStore,
    cancellation_codes,
    from_attribute,
    sortable_timestamp,
    to_attribute,
)
from promptpipe.errors import (
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    PromptPipeError,
    StateConflict,
    ValidationFailed,
)
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import StateCommit

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "b" * 32
PHONE = "+15551230001"


def cancelled(*codes: str, in_message: bool = False) -> ClientError:
    response: dict[str, Any] = {
        "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
    }
    if in_message:
        response["Error"]["Message"] = f"Transaction cancelled, please refer cancellation reasons [{', '.join(codes)}]"
    else:
        response["CancellationReasons"] = [{"Code": code} if code != "None" else {} for code in codes]
    return ClientError(response, "TransactWriteItems")


def error(code: str, **extra: Any) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}, **extra}, "Op")


class FakeClient:
    """Raises the queued errors (one per call) and records the calls."""

    def __init__(self, *errors: ClientError | None, unprocessed: int = 0) -> None:
        self.errors = list(errors)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.unprocessed = unprocessed

    def _call(self, name: str, kwargs: dict[str, Any]) -> None:
        self.calls.append((name, kwargs))
        if self.errors:
            failure = self.errors.pop(0)
            if failure is not None:
                raise failure

    def transact_write_items(self, **kwargs: Any) -> dict[str, Any]:
        self._call("transact_write_items", kwargs)
        return {}

    def put_item(self, **kwargs: Any) -> dict[str, Any]:
        self._call("put_item", kwargs)
        return {}

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        self._call("get_item", kwargs)
        return {"Item": {"pk": {"S": f"PARTICIPANT#{PID}"}, "sk": {"S": "META"}, "phone_number": {"S": PHONE}}}

    def get_paginator(self, name: str) -> FakeClient:
        assert name == "query"
        return self

    def paginate(self, **kwargs: Any) -> list[dict[str, Any]]:
        self._call("query", kwargs)
        return [{"Items": [{"pk": {"S": f"PARTICIPANT#{PID}"}, "sk": {"S": "MSG#1#a"}}]}]

    def batch_write_item(self, **kwargs: Any) -> dict[str, Any]:
        self._call("batch_write_item", kwargs)
        (table, requests), *_ = kwargs["RequestItems"].items()
        if self.unprocessed:
            self.unprocessed -= 1
            return {"UnprocessedItems": {table: requests}}
        return {}


def participant() -> ConversationParticipant:
    return ConversationParticipant(id=PID, phone_number=PHONE, enrolled_at=T0, created_at=T0, updated_at=T0)


# --- attribute values ----------------------------------------------------------------------------------


def test_attribute_values_round_trip_and_floats_are_refused() -> None:
    value = {"s": "x", "n": 3, "b": True, "none": None, "list": [1, "a"], "nested": {"k": False}}
    assert from_attribute(to_attribute(value)) == value
    assert to_attribute(T0) == {"S": "2026-03-02T12:00:00.000000Z"}
    with pytest.raises(TypeError, match="cannot store a float in DynamoDB"):
        to_attribute(1.5)
    with pytest.raises(TypeError, match="unsupported DynamoDB attribute type B"):
        from_attribute({"B": b"x"})


def test_sortable_timestamp_takes_naive_as_utc_and_sorts_in_time_order() -> None:
    assert sortable_timestamp(datetime(2026, 3, 2, 12, 0)) == "2026-03-02T12:00:00.000000Z"
    later = T0 + timedelta(microseconds=500_000)
    assert sortable_timestamp(T0) < sortable_timestamp(later)


def test_cancellation_codes_from_reasons_from_the_message_or_none() -> None:
    assert cancellation_codes(cancelled("None", "ConditionalCheckFailed")) == ["None", "ConditionalCheckFailed"]
    assert cancellation_codes(cancelled("None", "ConditionalCheckFailed", in_message=True)) == [
        "None",
        "ConditionalCheckFailed",
    ]
    assert cancellation_codes(error("TransactionCanceledException")) == []


# --- participants ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "raised", "message"),
    [
        (cancelled("None", "ConditionalCheckFailed", "None"), ParticipantAlreadyEnrolled, "is already enrolled"),
        (cancelled("ConditionalCheckFailed", "None", "None"), StateConflict, "already exists or is being written"),
        (cancelled("None", "None", "TransactionConflict"), StateConflict, "already exists or is being written"),
        (cancelled("ValidationError", "None", "None"), ClientError, "Transaction cancelled"),
        (error("ProvisionedThroughputExceededException"), ClientError, "ProvisionedThroughput"),
    ],
)
def test_create_maps_each_cancellation_reason(failure: ClientError, raised: type[Exception], message: str) -> None:
    repo = DynamoParticipantRepo("t", FakeClient(failure))
    with pytest.raises(raised, match=message):
        repo.create(participant(), FlowState(participant_id=PID))


def test_create_refuses_a_flow_of_someone_else() -> None:
    client = FakeClient()
    with pytest.raises(ValueError, match="flow state belongs to another participant"):
        DynamoParticipantRepo("t", client).create(participant(), FlowState(participant_id="p_" + "c" * 32))
    assert client.calls == []


@pytest.mark.parametrize(
    ("failure", "raised", "message"),
    [
        (error("ConditionalCheckFailedException", Item={"pk": {"S": "x"}}), ValidationFailed, "cannot be changed"),
        (error("ConditionalCheckFailedException"), ParticipantNotFound, "not found"),
        (error("InternalServerError"), ClientError, "InternalServerError"),
    ],
)
def test_update_maps_the_failed_condition(failure: ClientError, raised: type[Exception], message: str) -> None:
    with pytest.raises(raised, match=message):
        DynamoParticipantRepo("t", FakeClient(failure)).update(participant())


def test_delete_of_a_vanished_participant_is_not_found() -> None:
    client = FakeClient(None, cancelled("ConditionalCheckFailed", "None", "None"))
    with pytest.raises(ParticipantNotFound, match=f"participant {PID} not found"):
        DynamoParticipantRepo("t", client).delete(PID, keep_transcript=True)


def test_delete_leaves_a_phone_claim_owned_by_someone_else() -> None:
    client = FakeClient(None, cancelled("None", "ConditionalCheckFailed", "None"))
    DynamoParticipantRepo("t", client).delete(PID, keep_transcript=True)
    transactions = [kwargs["TransactItems"] for name, kwargs in client.calls if name == "transact_write_items"]
    assert len(transactions) == 2
    assert len(transactions[1]) == 2  # META and the flow state; not the claim
    assert all("PHONE#" not in str(action) for action in transactions[1])


def test_delete_reraises_other_cancellations() -> None:
    client = FakeClient(None, cancelled("None", "None", "ValidationError"))
    with pytest.raises(ClientError):
        DynamoParticipantRepo("t", client).delete(PID, keep_transcript=True)


def test_transcript_deletion_backs_off_while_throttled_then_gives_up() -> None:
    pauses: list[float] = []
    client = FakeClient(unprocessed=100)
    with pytest.raises(PromptPipeError, match="1 transcript items could not be written"):
        DynamoParticipantRepo("t", client, sleep=pauses.append).delete(PID, keep_transcript=False)
    assert pauses[:3] == [0.05, 0.1, 0.2]
    assert max(pauses) <= 2.0


def test_transcript_deletion_succeeds_after_a_throttled_batch() -> None:
    pauses: list[float] = []
    client = FakeClient(unprocessed=1)
    DynamoParticipantRepo("t", client, sleep=pauses.append).delete(PID, keep_transcript=False)
    assert pauses == [0.05]
    assert [name for name, _ in client.calls].count("batch_write_item") == 2


# --- state commits ----------------------------------------------------------------------------------


def a_commit(**changes: Any) -> StateCommit:
    values: dict[str, Any] = {
        "participant_id": PID,
        "expected_version": 1,
        "flow": FlowState(participant_id=PID, version=2),
        "participant": None,
        "recent_events": [],
        "transcript": [],
        "request_token": "tok-1",
    }
    values.update(changes)
    return StateCommit(**values)


@pytest.mark.parametrize(
    ("failure", "raised", "message"),
    [
        (cancelled("None", "ConditionalCheckFailed"), ParticipantNotFound, f"participant {PID} not found"),
        (cancelled("ConditionalCheckFailed", "None"), StateConflict, "moved past version 1"),
        (cancelled("None", "None", "ConditionalCheckFailed"), StateConflict, "a transcript entry of .+ already exists"),
        (cancelled("TransactionConflict", "None"), StateConflict, "concurrent write to"),
        (cancelled("ThrottlingError", "None"), ClientError, "Transaction cancelled"),
        (error("InternalServerError"), ClientError, "InternalServerError"),
    ],
)
def test_commit_maps_each_cancellation_reason(failure: ClientError, raised: type[Exception], message: str) -> None:
    client = FakeClient(failure)
    with pytest.raises(raised, match=message):
        DynamoStateStore("t", client).commit(a_commit())
    assert client.calls[0][1]["ClientRequestToken"] == "tok-1"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"flow": FlowState(participant_id="p_" + "c" * 32, version=2)}, "flow state belongs to another participant"),
        ({"flow": FlowState(participant_id=PID, version=3)}, "flow.version must be expected_version"),
        ({"participant": participant().model_copy(update={"id": "p_" + "c" * 32})}, "participant does not match"),
    ],
)
def test_inconsistent_commits_are_refused_before_any_call(changes: dict[str, Any], message: str) -> None:
    client = FakeClient()
    with pytest.raises(ValueError, match=message):
        DynamoStateStore("t", client).commit(a_commit(**changes))
    assert client.calls == []
