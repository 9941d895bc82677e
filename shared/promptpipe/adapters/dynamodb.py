"""The ``ParticipantRepo`` and ``StateStore`` ports over one DynamoDB table (docs/architecture.md#state).

| item        | pk                   | sk                           |
|-------------|----------------------|------------------------------|
| participant | ``PARTICIPANT#{id}`` | ``META`` (+ gsi1pk/gsi1sk)   |
| phone claim | ``PHONE#{e164}``     | ``PHONE``                    |
| flow state  | ``PARTICIPANT#{id}`` | ``FLOW#conversation``        |
| transcript  | ``PARTICIPANT#{id}`` | ``MSG#{utc iso}#{seq}``      |

The low-level client is used with a small attribute mapping of our own: values are strings, ints,
bools and string maps only, so no float (and no ``Decimal``) ever crosses the boundary. Free-form
data (transcript metadata, recent events) is stored as JSON strings.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from botocore.exceptions import ClientError
from pydantic import TypeAdapter
from pydantic_core import to_json

from promptpipe.adapters.aws import TTL_ATTRIBUTE, AwsClient
from promptpipe.errors import (
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    PromptPipeError,
    StateConflict,
    ValidationFailed,
)
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FLOW_TYPE, FlowState
from promptpipe.models.store import Direction, EventRecord, LoadedState, StateCommit, TranscriptEntry

PARTICIPANT_PREFIX = "PARTICIPANT#"
PHONE_PREFIX = "PHONE#"
META_SK = "META"
PHONE_SK = "PHONE"
FLOW_SK_PREFIX = "FLOW#"
FLOW_SK = f"{FLOW_SK_PREFIX}{FLOW_TYPE}"
MSG_SK_PREFIX = "MSG#"
PARTICIPANTS_GSI_PK = "PARTICIPANTS"

# TransactWriteItems allows 100 actions; keep headroom below it.
MAX_COMMIT_ITEMS = 95
_BATCH_WRITE_SIZE = 25
_BATCH_RETRIES = 8
_MAX_TOKEN_CHARS = 2048

_KEY_ATTRIBUTES = frozenset({"pk", "sk", "gsi1pk", "gsi1sk"})
_CONDITION_FAILED = "ConditionalCheckFailed"
_TRANSACTION_CONFLICT = "TransactionConflict"
_REASONS_IN_MESSAGE = re.compile(r"reasons \[([^\]]*)\]")
_EVENT_RECORDS = TypeAdapter(list[EventRecord])

Item = dict[str, dict[str, Any]]


# --- keys and attribute mapping --------------------------------------------------------------------
def participant_pk(participant_id: str) -> str:
    return f"{PARTICIPANT_PREFIX}{participant_id}"


def phone_pk(phone_number: str) -> str:
    return f"{PHONE_PREFIX}{phone_number}"


def sortable_timestamp(instant: datetime) -> str:
    """Fixed-width UTC ISO with microseconds and ``Z``: sorts lexically in time order (RFC3339 with
    optional fractions does not: ``…:00.5Z`` < ``…:00Z``). Naive datetimes are taken as UTC."""
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def transcript_sk(entry: TranscriptEntry) -> str:
    return f"{MSG_SK_PREFIX}{sortable_timestamp(entry.at)}#{entry.seq}"


def _s(value: str) -> dict[str, Any]:
    return {"S": value}


def to_attribute(value: Any) -> dict[str, Any]:
    """One Python value as a DynamoDB attribute value. Floats are refused on purpose."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):  # before int: bool is an int
        return {"BOOL": value}
    if isinstance(value, Enum):
        return to_attribute(value.value)
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, datetime):
        return {"S": sortable_timestamp(value)}
    if isinstance(value, dict):
        return {"M": {str(k): to_attribute(v) for k, v in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [to_attribute(v) for v in value]}
    raise TypeError(f"cannot store a {type(value).__name__} in DynamoDB (store it as a JSON string)")


def from_attribute(attribute: dict[str, Any]) -> Any:
    """The inverse of ``to_attribute``."""
    (kind, value), *_ = attribute.items()
    if kind == "S":
        return value
    if kind == "N":
        return int(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "M":
        return {k: from_attribute(v) for k, v in value.items()}
    if kind == "L":
        return [from_attribute(v) for v in value]
    raise TypeError(f"unsupported DynamoDB attribute type {kind}")


def participant_item(participant: ConversationParticipant) -> Item:
    item: Item = {
        "pk": _s(participant_pk(participant.id)),
        "sk": _s(META_SK),
        "gsi1pk": _s(PARTICIPANTS_GSI_PK),
        "gsi1sk": _s(f"{sortable_timestamp(participant.created_at)}#{participant.id}"),
    }
    for name, value in participant.model_dump().items():
        item[name] = to_attribute(value)
    return item


def participant_from_item(item: Item) -> ConversationParticipant:
    fields = {k: from_attribute(v) for k, v in item.items() if k not in _KEY_ATTRIBUTES}
    return ConversationParticipant.model_validate(fields)


def flow_item(flow: FlowState, recent_events: list[EventRecord]) -> Item:
    item: Item = {
        "pk": _s(participant_pk(flow.participant_id)),
        "sk": _s(f"{FLOW_SK_PREFIX}{flow.flow_type}"),
        "flow_type": _s(flow.flow_type),
        "current_state": _s(flow.current_state),
        "state_data": {"M": {k: _s(v) for k, v in flow.state_data.items()}},
        "version": {"N": str(flow.version)},
        "recent_events": _s(_EVENT_RECORDS.dump_json(recent_events).decode()),
    }
    if flow.updated_at is not None:
        item["updated_at"] = _s(sortable_timestamp(flow.updated_at))
    return item


def flow_from_item(participant_id: str, item: Item) -> tuple[FlowState, list[EventRecord]]:
    updated_at = item.get("updated_at")
    flow = FlowState(
        participant_id=participant_id,
        flow_type=item["flow_type"]["S"],
        current_state=item["current_state"]["S"],
        state_data={k: v["S"] for k, v in item.get("state_data", {"M": {}})["M"].items()},
        version=int(item["version"]["N"]),
        updated_at=updated_at["S"] if updated_at and "S" in updated_at else None,
    )
    raw_events = item.get("recent_events", {}).get("S") or "[]"
    return flow, _EVENT_RECORDS.validate_json(raw_events)


def transcript_item(entry: TranscriptEntry) -> Item:
    return {
        "pk": _s(participant_pk(entry.participant_id)),
        "sk": _s(transcript_sk(entry)),
        "at": _s(sortable_timestamp(entry.at)),
        "seq": _s(entry.seq),
        "direction": _s(entry.direction.value),
        "kind": _s(entry.kind),
        "content": _s(entry.content),
        "event_id": _s(entry.event_id),
        # JSON: metadata holds floats (durations, temperatures) that DynamoDB would want as Decimal.
        "metadata": _s(to_json(entry.metadata).decode()),
    } | ({"outbound": _s(entry.outbound.model_dump_json(exclude_none=True))} if entry.outbound else {})


def transcript_from_item(item: Item) -> TranscriptEntry:
    return TranscriptEntry(
        participant_id=item["pk"]["S"].removeprefix(PARTICIPANT_PREFIX),
        at=item["at"]["S"],
        seq=item["seq"]["S"],
        direction=Direction(item["direction"]["S"]),
        kind=item["kind"]["S"],
        content=item["content"]["S"],
        event_id=item.get("event_id", {}).get("S", ""),
        metadata=json.loads(item.get("metadata", {}).get("S") or "{}"),
        outbound=OutboundMessage.model_validate_json(item["outbound"]["S"]) if "outbound" in item else None,
    )


# --- pagination tokens -------------------------------------------------------------------------------
def encode_token(key: Item) -> str:
    """An opaque, URL-safe token for a LastEvaluatedKey whose attributes are all strings."""
    plain = {name: value["S"] for name, value in key.items()}
    raw = json.dumps(plain, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str, *, keys: frozenset[str], check: Callable[[dict[str, str]], bool]) -> Item:
    """The ExclusiveStartKey of ``token``. Anything malformed, or not a key of this listing (``check``),
    is a ``ValidationFailed`` on ``next_token``."""
    invalid = ValidationFailed("invalid next_token", field="next_token")
    if not token or len(token) > _MAX_TOKEN_CHARS:
        raise invalid
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError as exc:  # binascii, JSON and Unicode errors are all ValueErrors
        raise invalid from exc
    if (
        not isinstance(data, dict)
        or set(data) != keys
        or not all(isinstance(v, str) and v for v in data.values())
        or not check(data)
    ):
        raise invalid
    return {name: _s(value) for name, value in data.items()}


def _validate_limit(limit: int) -> None:
    if limit < 1:
        raise ValidationFailed("limit must be at least 1", field="limit")


def _query_page(
    client: AwsClient, request: dict[str, Any], *, limit: int, key_names: Iterable[str]
) -> tuple[list[Item], str | None]:
    """One page of at most ``limit`` items. Asks for one more so that the last page carries no token
    (DynamoDB returns a LastEvaluatedKey whenever Limit is reached, even with nothing after it)."""
    response = client.query(**request, Limit=limit + 1)
    items: list[Item] = response.get("Items", [])
    if len(items) > limit:
        items = items[:limit]
        return items, encode_token({name: items[-1][name] for name in key_names})
    last_key = response.get("LastEvaluatedKey")
    return items, encode_token(last_key) if last_key else None


# --- transaction errors ------------------------------------------------------------------------------
def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_codes(exc: ClientError) -> list[str]:
    """Per-action reason codes of a ``TransactionCanceledException`` ("None" where it passed)."""
    reasons = exc.response.get("CancellationReasons")
    if reasons:
        return [str(reason.get("Code") or "None") for reason in reasons]
    # Fallback: the message says "... reasons [None, ConditionalCheckFailed, None]".
    match = _REASONS_IN_MESSAGE.search(str(exc.response.get("Error", {}).get("Message", "")))
    return [code.strip() for code in match.group(1).split(",")] if match else []


def _failed(codes: list[str], index: int) -> bool:
    return index < len(codes) and codes[index] == _CONDITION_FAILED


def _is_cancellation(exc: ClientError) -> bool:
    return _error_code(exc) == "TransactionCanceledException"


# --- ParticipantRepo ---------------------------------------------------------------------------------
class DynamoParticipantRepo:
    """``ParticipantRepo`` port adapter (plus ``update``)."""

    def __init__(
        self,
        table_name: str,
        client: AwsClient,
        index_name: str = "gsi1",
        *,
        sleep: Callable[[float], None] = time.sleep,
        retention: timedelta | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._table = table_name
        self._client = client
        self._index = index_name
        self._sleep = sleep
        # A kept transcript of a deleted participant expires (DynamoDB TTL) this long after the
        # deletion; None keeps it (docs/retention.md).
        self._retention = retention
        self._now = now or (lambda: datetime.now(UTC))

    def create(self, participant: ConversationParticipant, flow: FlowState) -> None:
        """Participant, phone claim and flow state in one transaction, each only if new."""
        if flow.participant_id != participant.id:
            raise ValueError("flow state belongs to another participant")
        claim: Item = {
            "pk": _s(phone_pk(participant.phone_number)),
            "sk": _s(PHONE_SK),
            "participant_id": _s(participant.id),
        }
        actions = [
            self._put_new(participant_item(participant)),
            self._put_new(claim),
            self._put_new(flow_item(flow, [])),
        ]
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as exc:
            if not _is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if _failed(codes, 1):
                raise ParticipantAlreadyEnrolled(
                    f"phone number {participant.phone_number} is already enrolled"
                ) from exc
            if _CONDITION_FAILED in codes or _TRANSACTION_CONFLICT in codes:
                raise StateConflict(f"participant {participant.id} already exists or is being written") from exc
            raise

    def get(self, participant_id: str) -> ConversationParticipant:
        return participant_from_item(self._get_meta(participant_id))

    def find_id_by_phone(self, phone_number: str) -> str | None:
        response = self._client.get_item(
            TableName=self._table,
            Key={"pk": _s(phone_pk(phone_number)), "sk": _s(PHONE_SK)},
            ConsistentRead=True,
        )
        item = response.get("Item")
        return str(item["participant_id"]["S"]) if item else None

    def list(self, *, limit: int, next_token: str | None) -> tuple[list[ConversationParticipant], str | None]:
        """Newest first (by ``created_at``), through the participants GSI."""
        _validate_limit(limit)
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": self._index,
            "KeyConditionExpression": "gsi1pk = :g",
            "ExpressionAttributeValues": {":g": _s(PARTICIPANTS_GSI_PK)},
            "ScanIndexForward": False,
        }
        if next_token is not None:
            request["ExclusiveStartKey"] = decode_token(
                next_token,
                keys=_KEY_ATTRIBUTES,
                check=lambda k: (
                    k["gsi1pk"] == PARTICIPANTS_GSI_PK and k["pk"].startswith(PARTICIPANT_PREFIX) and k["sk"] == META_SK
                ),
            )
        items, token = _query_page(self._client, request, limit=limit, key_names=sorted(_KEY_ATTRIBUTES))
        return [participant_from_item(item) for item in items], token

    def update(self, participant: ConversationParticipant) -> None:
        """Replace the participant's fields. ``ParticipantNotFound`` if missing. The phone number is
        fixed at enrollment (its claim item would go stale), so a change is a ``ValidationFailed``.

        Not version-conditioned: a change that must not race a turn goes through ``StateStore.commit``.
        """
        try:
            self._client.put_item(
                TableName=self._table,
                Item=participant_item(participant),
                ConditionExpression="attribute_exists(pk) AND #phone = :phone",
                ExpressionAttributeNames={"#phone": "phone_number"},
                ExpressionAttributeValues={":phone": _s(participant.phone_number)},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if _error_code(exc) != "ConditionalCheckFailedException":
                raise
            if exc.response.get("Item"):
                raise ValidationFailed("phone_number cannot be changed", field="phone_number") from exc
            raise ParticipantNotFound(f"participant {participant.id} not found") from exc

    def delete(self, participant_id: str, *, keep_transcript: bool) -> None:
        """META, phone claim and flow state in one transaction; then the transcript, unless kept."""
        meta = self._get_meta(participant_id)
        pk = participant_pk(participant_id)
        delete_meta = {
            "Delete": {
                "TableName": self._table,
                "Key": {"pk": _s(pk), "sk": _s(META_SK)},
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
        delete_claim = {
            "Delete": {
                "TableName": self._table,
                "Key": {"pk": _s(phone_pk(meta["phone_number"]["S"])), "sk": _s(PHONE_SK)},
                # Only our own claim; a missing one is fine.
                "ConditionExpression": "attribute_not_exists(pk) OR participant_id = :id",
                "ExpressionAttributeValues": {":id": _s(participant_id)},
            }
        }
        delete_flow = {"Delete": {"TableName": self._table, "Key": {"pk": _s(pk), "sk": _s(FLOW_SK)}}}
        try:
            self._client.transact_write_items(TransactItems=[delete_meta, delete_claim, delete_flow])
        except ClientError as exc:
            if not _is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if _failed(codes, 0):
                raise ParticipantNotFound(f"participant {participant_id} not found") from exc
            if not _failed(codes, 1):
                raise
            # The claim belongs to someone else (never written so by this code): leave it alone.
            self._client.transact_write_items(TransactItems=[delete_meta, delete_flow])
        if not keep_transcript:
            self._delete_transcript(pk)
        elif self._retention is not None:
            self._expire_transcript(pk, self._now() + self._retention)

    # -- helpers --------------------------------------------------------------------------------------
    def _put_new(self, item: Item) -> dict[str, Any]:
        return {"Put": {"TableName": self._table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}}

    def _get_meta(self, participant_id: str) -> Item:
        response = self._client.get_item(
            TableName=self._table,
            Key={"pk": _s(participant_pk(participant_id)), "sk": _s(META_SK)},
            ConsistentRead=True,
        )
        item: Item | None = response.get("Item")
        if not item:
            raise ParticipantNotFound(f"participant {participant_id} not found")
        return item

    def _delete_transcript(self, pk: str) -> None:
        paginator = self._client.get_paginator("query")
        pages = paginator.paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :msg)",
            ExpressionAttributeValues={":pk": _s(pk), ":msg": _s(MSG_SK_PREFIX)},
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
        for page in pages:
            keys = page.get("Items", [])
            for start in range(0, len(keys), _BATCH_WRITE_SIZE):
                self._batch_delete(keys[start : start + _BATCH_WRITE_SIZE])

    def _expire_transcript(self, pk: str, at: datetime) -> None:
        """Stamp the TTL attribute on every remaining item of the partition (rewritten in batches).
        An item that already expires sooner (a sent-ledger record) keeps its own expiry."""
        stamp = int(at.timestamp())

        def expiring(item: Item) -> Item:
            current = item.get(TTL_ATTRIBUTE, {}).get("N")
            return {**item, TTL_ATTRIBUTE: {"N": str(min(stamp, int(current)) if current else stamp)}}

        paginator = self._client.get_paginator("query")
        pages = paginator.paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": _s(pk)},
            ConsistentRead=True,
        )
        for page in pages:
            items = page.get("Items", [])
            for start in range(0, len(items), _BATCH_WRITE_SIZE):
                chunk = items[start : start + _BATCH_WRITE_SIZE]
                self._batch_write([{"PutRequest": {"Item": expiring(i)}} for i in chunk])

    def _batch_delete(self, keys: Sequence[Item]) -> None:
        self._batch_write([{"DeleteRequest": {"Key": key}} for key in keys])

    def _batch_write(self, requests: list[dict[str, Any]]) -> None:
        for attempt in range(_BATCH_RETRIES):
            response = self._client.batch_write_item(RequestItems={self._table: requests})
            requests = response.get("UnprocessedItems", {}).get(self._table, [])
            if not requests:
                return
            self._sleep(min(0.05 * 2**attempt, 2.0))  # unprocessed items mean throttling: back off
        raise PromptPipeError(f"{len(requests)} transcript items could not be written")


# --- StateStore --------------------------------------------------------------------------------------
class DynamoStateStore:
    """``StateStore`` port adapter: one Query to load, one transaction to commit."""

    def __init__(self, table_name: str, client: AwsClient) -> None:
        self._table = table_name
        self._client = client

    def load(self, participant_id: str) -> LoadedState:
        """META and the flow state in one strongly consistent Query; the range stops before ``MSG#``
        so the transcript is never read."""
        response = self._client.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            ExpressionAttributeValues={
                ":pk": _s(participant_pk(participant_id)),
                ":lo": _s(FLOW_SK_PREFIX),
                ":hi": _s(META_SK),
            },
            ConsistentRead=True,
        )
        by_sk = {item["sk"]["S"]: item for item in response.get("Items", [])}
        meta = by_sk.get(META_SK)
        if meta is None:
            raise ParticipantNotFound(f"participant {participant_id} not found")
        participant = participant_from_item(meta)
        flow_raw = by_sk.get(FLOW_SK)
        if flow_raw is None:
            return LoadedState(participant=participant, flow=FlowState(participant_id=participant_id))
        flow, recent_events = flow_from_item(participant_id, flow_raw)
        return LoadedState(participant=participant, flow=flow, recent_events=recent_events)

    def commit(self, commit: StateCommit) -> None:
        """One transaction: the flow state if its version is still ``expected_version``, META (written
        or only checked to exist) and the new transcript entries."""
        actions = self._commit_actions(commit)
        request: dict[str, Any] = {"TransactItems": actions}
        if commit.request_token:
            request["ClientRequestToken"] = commit.request_token
        try:
            self._client.transact_write_items(**request)
        except ClientError as exc:
            if not _is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if _failed(codes, 1):
                raise ParticipantNotFound(f"participant {commit.participant_id} not found") from exc
            if _failed(codes, 0):
                raise StateConflict(
                    f"flow state of {commit.participant_id} moved past version {commit.expected_version}"
                ) from exc
            if _CONDITION_FAILED in codes:
                raise StateConflict(f"a transcript entry of {commit.participant_id} already exists") from exc
            if _TRANSACTION_CONFLICT in codes:
                raise StateConflict(f"concurrent write to {commit.participant_id}") from exc
            raise

    def list_transcript(
        self, participant_id: str, *, limit: int, next_token: str | None
    ) -> tuple[list[TranscriptEntry], str | None]:
        """Oldest first. A participant deleted with ``keep_transcript`` still has theirs listed."""
        _validate_limit(limit)
        pk = participant_pk(participant_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :msg)",
            "ExpressionAttributeValues": {":pk": _s(pk), ":msg": _s(MSG_SK_PREFIX)},
            "ScanIndexForward": True,
        }
        if next_token is not None:
            request["ExclusiveStartKey"] = decode_token(
                next_token,
                keys=frozenset({"pk", "sk"}),
                check=lambda k: k["pk"] == pk and k["sk"].startswith(MSG_SK_PREFIX),
            )
        items, token = _query_page(self._client, request, limit=limit, key_names=("pk", "sk"))
        return [transcript_from_item(item) for item in items], token

    def load_outbound(self, participant_id: str, record: EventRecord) -> list[OutboundMessage]:
        """The messages of a committed event, from its transcript entries (one BatchGetItem)."""
        pk = participant_pk(participant_id)
        at = sortable_timestamp(record.committed_at)
        keys = [{"pk": _s(pk), "sk": _s(f"{MSG_SK_PREFIX}{at}#{ref.seq}")} for ref in record.messages]
        if not keys:
            return []
        found: dict[str, TranscriptEntry] = {}
        request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
        for _ in range(_BATCH_RETRIES):
            response = self._client.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(self._table, []):
                found[item["seq"]["S"]] = transcript_from_item(item)
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
        messages = [found[ref.seq].outbound for ref in record.messages if ref.seq in found]
        return [m for m in messages if m is not None]

    def _commit_actions(self, commit: StateCommit) -> list[dict[str, Any]]:
        participant_id = commit.participant_id
        if commit.flow.participant_id != participant_id:
            raise ValueError("flow state belongs to another participant")
        if commit.flow.flow_type != FLOW_TYPE:
            raise ValueError(f"unsupported flow type {commit.flow.flow_type!r}")
        if commit.flow.version != commit.expected_version + 1:
            raise ValueError("flow.version must be expected_version + 1")
        if commit.participant is not None and commit.participant.id != participant_id:
            raise ValueError("participant does not match the commit")
        if any(entry.participant_id != participant_id for entry in commit.transcript):
            raise ValueError("transcript entry belongs to another participant")
        if 2 + len(commit.transcript) > MAX_COMMIT_ITEMS:
            raise ValueError(f"a commit holds at most {MAX_COMMIT_ITEMS} items")
        transcript_items = [transcript_item(entry) for entry in commit.transcript]
        if len({item["sk"]["S"] for item in transcript_items}) != len(transcript_items):
            raise ValueError("two transcript entries share a timestamp and seq")

        pk = _s(participant_pk(participant_id))
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": flow_item(commit.flow, commit.recent_events),
                    # A flow item may not exist yet (version 0): both cases in one condition.
                    "ConditionExpression": "attribute_not_exists(pk) OR #v = :expected",
                    "ExpressionAttributeNames": {"#v": "version"},
                    "ExpressionAttributeValues": {":expected": {"N": str(commit.expected_version)}},
                }
            }
        ]
        if commit.participant is not None:
            actions.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": participant_item(commit.participant),
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                }
            )
        else:
            actions.append(
                {
                    "ConditionCheck": {
                        "TableName": self._table,
                        "Key": {"pk": pk, "sk": _s(META_SK)},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                }
            )
        actions += [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
            for item in transcript_items
        ]
        return actions
