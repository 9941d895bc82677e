"""The DynamoDB adapters' error paths, with clients that answer what moto never does: transactions
cancelled for a given reason, throttled batches, unknown error codes, no answer at all (the happy
paths run against moto in tests/integration/test_dynamodb_store.py).

Every failure that is not a domain outcome leaves an adapter as ``StoreError`` (chained to the
botocore error); a bug (a ``TypeError`` or ``KeyError`` while reading an item, a malformed request)
leaves it untranslated."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ParamValidationError,
    ReadTimeoutError,
)
from botocore.stub import Stubber

from promptpipe.adapters.aws_errors import cancellation_codes, condition_held, store_operation
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.adapters.dynamodb_flows import DynamoFlowDefinitionStore
from promptpipe.adapters.dynamodb_items import from_attribute, sortable_timestamp, to_attribute
from promptpipe.adapters.phone_claims import DynamoPhoneClaims
from promptpipe.adapters.sent_ledger import DynamoSentLedger
from promptpipe.controller.definition import parse_definition
from promptpipe.controller.ports import FlowVersionConflict, StoredFlow
from promptpipe.errors import (
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StateConflict,
    StoreError,
    ValidationFailed,
)
from promptpipe.models.effects import MessageRef
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import EventRecord, PartialDelivery, StateCommit

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


def test_condition_held_says_whether_a_conditional_write_landed_and_lets_other_errors_out() -> None:
    client = FakeClient(None, error("ConditionalCheckFailedException"), error("ProvisionedThroughputExceededException"))
    assert condition_held(client.put_item, TableName="t", ConditionExpression="c") is True
    assert condition_held(client.put_item, TableName="t", ConditionExpression="c") is False
    with pytest.raises(ClientError, match="ProvisionedThroughputExceededException"):
        condition_held(client.put_item, TableName="t", ConditionExpression="c")
    assert client.calls == [("put_item", {"TableName": "t", "ConditionExpression": "c"})] * 3


# --- participants ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "raised", "message"),
    [
        (cancelled("None", "ConditionalCheckFailed", "None"), ParticipantAlreadyEnrolled, "is already enrolled"),
        (cancelled("ConditionalCheckFailed", "None", "None"), StateConflict, "already exists or is being written"),
        (cancelled("None", "None", "TransactionConflict"), StateConflict, "already exists or is being written"),
        (
            cancelled("ValidationError", "None", "None"),
            StoreError,
            "DynamoParticipantRepo.create: TransactWriteItems TransactionCanceledException: Transaction cancelled",
        ),
        (
            error("ProvisionedThroughputExceededException"),
            StoreError,
            "DynamoParticipantRepo.create: Op ProvisionedThroughputExceededException",
        ),
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
        (error("InternalServerError"), StoreError, "DynamoParticipantRepo.update: Op InternalServerError"),
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
    assert len(transactions[1]) == 3  # META, the flow state and the needs-a-person marker; not the claim
    assert all("PHONE#" not in str(action) for action in transactions[1])


def test_delete_translates_other_cancellations() -> None:
    client = FakeClient(None, cancelled("None", "None", "ValidationError"))
    with pytest.raises(StoreError, match=r"DynamoParticipantRepo\.delete: TransactWriteItems TransactionCanceled"):
        DynamoParticipantRepo("t", client).delete(PID, keep_transcript=True)


def test_transcript_deletion_backs_off_while_throttled_then_gives_up() -> None:
    pauses: list[float] = []
    client = FakeClient(unprocessed=100)
    with pytest.raises(StoreError, match="1 transcript items could not be written") as raised:
        DynamoParticipantRepo("t", client, sleep=pauses.append).delete(PID, keep_transcript=False)
    assert (raised.value.operation, raised.value.code) == ("DynamoParticipantRepo.delete", "UnprocessedItems")
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
        (cancelled("ThrottlingError", "None"), StoreError, "DynamoStateStore.commit: .* Transaction cancelled"),
        (error("InternalServerError"), StoreError, "DynamoStateStore.commit: Op InternalServerError"),
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


# --- every store failure, translated where it arises ----------------------------------------------------
THROTTLED = "ProvisionedThroughputExceededException"
INTAKE = json.loads((Path(__file__).parents[2] / "prompts" / "flows" / "intake.json").read_text())


def real_client(**config: Any) -> Any:
    """A botocore DynamoDB client (never reaching AWS: stubbed or failing before the send)."""
    session = botocore.session.get_session()
    return session.create_client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"mode": "standard", "max_attempts": 2}, **config),
    )


def stored_flow() -> StoredFlow:
    return StoredFlow(definition=parse_definition({**INTAKE, "id": "f1", "version": 2}), created_at=T0)


def a_record() -> EventRecord:
    return EventRecord(event_id="SM1", committed_at=T0, messages=[MessageRef(id="SM1#0", seq="SM1#0")])


# Each public method of each DynamoDB adapter, and the name its failures carry.
OPERATIONS: dict[str, Callable[[Any], object]] = {
    "DynamoParticipantRepo.create": lambda c: DynamoParticipantRepo("t", c).create(
        participant(), FlowState(participant_id=PID)
    ),
    "DynamoParticipantRepo.get": lambda c: DynamoParticipantRepo("t", c).get(PID),
    "DynamoParticipantRepo.find_id_by_phone": lambda c: DynamoParticipantRepo("t", c).find_id_by_phone(PHONE),
    "DynamoParticipantRepo.list": lambda c: DynamoParticipantRepo("t", c).list(limit=5, next_token=None),
    "DynamoParticipantRepo.update": lambda c: DynamoParticipantRepo("t", c).update(participant()),
    "DynamoParticipantRepo.delete": lambda c: DynamoParticipantRepo("t", c).delete(PID, keep_transcript=False),
    "DynamoStateStore.load": lambda c: DynamoStateStore("t", c).load(PID),
    "DynamoStateStore.commit": lambda c: DynamoStateStore("t", c).commit(a_commit()),
    "DynamoStateStore.list_transcript": lambda c: DynamoStateStore("t", c).list_transcript(
        PID, limit=5, next_token=None
    ),
    "DynamoStateStore.load_outbound": lambda c: DynamoStateStore("t", c).load_outbound(PID, a_record()),
    "DynamoFlowDefinitionStore.latest": lambda c: DynamoFlowDefinitionStore("t", c).latest("f1"),
    "DynamoFlowDefinitionStore.get": lambda c: DynamoFlowDefinitionStore("t", c).get("f1", 1),
    "DynamoFlowDefinitionStore.put": lambda c: DynamoFlowDefinitionStore("t", c).put(stored_flow()),
    "DynamoFlowDefinitionStore.versions": lambda c: DynamoFlowDefinitionStore("t", c).versions("f1"),
    "DynamoSentLedger.record_partial": lambda c: DynamoSentLedger("t", c).record_partial(
        PID, "SM1", PartialDelivery(sent=["SM1#0"])
    ),
    "DynamoSentLedger.partial": lambda c: DynamoSentLedger("t", c).partial(PID, "SM1"),
    "DynamoPhoneClaims.move": lambda c: DynamoPhoneClaims("t", c).move(PID, PHONE, "+15551230002"),
}


class FailingClient:
    """Every DynamoDB call raises ``failure``."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure
        self.calls: list[str] = []

    def get_paginator(self, name: str) -> FailingClient:
        return self

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(**_: Any) -> Any:
            self.calls.append(name)
            raise self.failure

        return call


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_every_operation_translates_an_aws_error_into_a_store_error(operation: str) -> None:
    # Given a table that throttles every call past the client's own retries
    failure = ClientError({"Error": {"Code": THROTTLED, "Message": "Rate exceeded"}}, "AnyCall")
    client = FailingClient(failure)

    # When the operation runs, Then it raises the domain's StoreError, naming itself and the AWS code,
    # chained to botocore's error
    with pytest.raises(StoreError, match=rf"^{operation}: AnyCall {THROTTLED}: Rate exceeded$") as raised:
        OPERATIONS[operation](client)
    assert (raised.value.operation, raised.value.code, raised.value.__cause__) == (operation, THROTTLED, failure)
    assert client.calls  # the failure came from the store, not from a check before it


@pytest.mark.parametrize(
    "failure",
    [
        ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/"),
        ConnectTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/"),
        EndpointConnectionError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/"),
    ],
    ids=type,
)
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_every_operation_translates_a_store_that_never_answered(operation: str, failure: BotoCoreError) -> None:
    with pytest.raises(StoreError, match=rf"^{operation}: {type(failure).__name__}: .*dynamodb\.us-east-1") as raised:
        OPERATIONS[operation](FailingClient(failure))
    assert (raised.value.code, raised.value.__cause__) == (type(failure).__name__, failure)


def test_a_real_client_stubbed_to_answer_an_error_raises_a_store_error() -> None:
    # Given botocore's own client, stubbed to answer the state Query with a validation error
    client = real_client()
    with Stubber(client) as stub:
        stub.add_client_error("query", service_error_code="ValidationException", service_message="Item too big")

        # When the state is loaded, Then the error is a StoreError carrying the AWS operation and code
        with pytest.raises(StoreError, match=r"^DynamoStateStore\.load: Query ValidationException: Item too big$") as e:
            DynamoStateStore("t", client).load(PID)
    assert e.value.code == "ValidationException" and isinstance(e.value.__cause__, ClientError)


def test_a_real_client_timing_out_after_its_retries_raises_a_store_error() -> None:
    # Given botocore's own client (standard retries: 2 attempts) whose every send times out
    client = real_client()
    sends: list[str] = []

    def time_out(**_: Any) -> None:
        sends.append("send")
        raise ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/")

    client.meta.events.register("before-send.dynamodb.TransactWriteItems", time_out)

    # When a commit is sent, Then botocore retried it and the adapter raised one StoreError
    with pytest.raises(StoreError, match=r"^DynamoStateStore.commit: ReadTimeoutError: Read timeout") as raised:
        DynamoStateStore("t", client).commit(a_commit())
    assert len(sends) > 1 and raised.value.code == "ReadTimeoutError"


def test_a_real_client_stubbed_with_a_cancelled_transaction_still_maps_the_conflict() -> None:
    client = real_client()
    with Stubber(client) as stub:
        stub.add_client_error(
            "transact_write_items",
            service_error_code="TransactionCanceledException",
            service_message="Transaction cancelled, please refer cancellation reasons [ConditionalCheckFailed, None]",
        )
        with pytest.raises(StateConflict, match="moved past version 1"):
            DynamoStateStore("t", client).commit(a_commit())


# --- bugs stay bugs -----------------------------------------------------------------------------------------
class AnsweringClient:
    """Answers every call with ``answer`` (an item shape of the test's choosing)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return lambda **_: self.answer


def test_a_type_error_while_reading_an_item_is_not_translated() -> None:
    # Given a META item holding an attribute type the mapping does not know (a binary)
    meta = {"pk": {"S": f"PARTICIPANT#{PID}"}, "sk": {"S": "META"}, "photo": {"B": b"x"}}

    # When it is read, Then the bug surfaces as the TypeError it is, not as a store failure
    with pytest.raises(TypeError, match="unsupported DynamoDB attribute type B"):
        DynamoParticipantRepo("t", AnsweringClient({"Item": meta})).get(PID)


def test_a_key_error_while_reading_an_item_is_not_translated() -> None:
    # Given a flow-state item without its version
    meta = {"sk": {"S": "META"}, **{k: to_attribute(v) for k, v in participant().model_dump().items()}}
    flow = {"sk": {"S": "FLOW#conversation"}, "flow_type": {"S": "conversation"}, "current_state": {"S": "x"}}
    with pytest.raises(KeyError, match="version"):
        DynamoStateStore("t", AnsweringClient({"Items": [meta, flow]})).load(PID)


def test_a_type_error_while_building_an_item_is_not_translated(monkeypatch: pytest.MonkeyPatch) -> None:
    import promptpipe.adapters.dynamodb as adapter

    def broken(*_: Any) -> Any:
        return adapter.participant_item(participant()) | {"score": to_attribute(0.5)}

    monkeypatch.setattr(adapter, "flow_item", broken)
    client = FailingClient(AssertionError("no call expected"))
    with pytest.raises(TypeError, match="cannot store a float in DynamoDB"):
        DynamoParticipantRepo("t", client).create(participant(), FlowState(participant_id=PID))
    assert client.calls == []


def test_botocore_refusing_a_malformed_request_is_not_translated() -> None:
    # Given a real client and a request botocore refuses before sending it (a bug in the adapter)
    client = real_client()

    @store_operation
    def malformed() -> None:
        client.get_item(TableName="t", Key={"pk": "not an attribute value"})

    with pytest.raises(ParamValidationError, match=r"Invalid type for parameter Key\.pk"):
        malformed()


# --- partial answers and the flow catalog --------------------------------------------------------------------
class UnprocessedKeys:
    """A BatchGetItem that leaves every key unprocessed (throttling), ``times`` times."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.calls = 0

    def batch_get_item(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.times:
            return {"Responses": {}, "UnprocessedKeys": kwargs["RequestItems"]}
        (key,) = kwargs["RequestItems"]["t"]["Keys"]
        outbound = {"message_id": "SM1#0", "participant_id": PID, "to": PHONE, "body": "hello"}
        item = {
            **key,
            "at": {"S": "2026-03-02T12:00:00.000000Z"},
            "seq": {"S": "SM1#0"},
            "direction": {"S": "outbound"},
            "kind": {"S": "reply"},
            "content": {"S": "hello"},
            "outbound": {"S": json.dumps(outbound)},
        }
        return {"Responses": {"t": [item]}}


def test_outbound_read_back_retries_unprocessed_keys_with_backoff() -> None:
    pauses: list[float] = []
    client = UnprocessedKeys(times=2)
    messages = DynamoStateStore("t", client, sleep=pauses.append).load_outbound(PID, a_record())
    assert [m.body for m in messages] == ["hello"]
    assert (client.calls, pauses) == (3, [0.05, 0.1])


def test_outbound_read_back_that_stays_throttled_is_a_store_error_not_fewer_messages() -> None:
    pauses: list[float] = []
    client = UnprocessedKeys(times=100)
    with pytest.raises(StoreError, match="1 transcript items could not be read") as raised:
        DynamoStateStore("t", client, sleep=pauses.append).load_outbound(PID, a_record())
    assert (raised.value.operation, raised.value.code) == ("DynamoStateStore.load_outbound", "UnprocessedKeys")
    assert client.calls == 8 and len(pauses) == 7 and max(pauses) <= 2.0


@pytest.mark.parametrize(
    ("failure", "raised", "message"),
    [
        (cancelled("None", "ConditionalCheckFailed"), FlowVersionConflict, "f1: version 2 is not next"),
        (cancelled("TransactionConflict", "None"), FlowVersionConflict, "f1: version 2 is not next"),
        (cancelled("ThrottlingError", "None"), StoreError, "DynamoFlowDefinitionStore.put: .*TransactionCanceled"),
    ],
)
def test_flow_put_maps_only_a_lost_condition_to_a_version_conflict(
    failure: ClientError, raised: type[Exception], message: str
) -> None:
    with pytest.raises(raised, match=message):
        DynamoFlowDefinitionStore("t", FakeClient(failure)).put(stored_flow())
