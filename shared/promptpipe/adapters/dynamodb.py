"""The ``ParticipantRepo`` and ``StateStore`` ports over one DynamoDB table (docs/architecture.md#state).

The I/O only: the items and their keys are ``promptpipe.adapters.dynamodb_items``, the table's shape
``promptpipe.adapters.dynamodb_table``. The low-level client is used directly. Every public method
translates what it does not map to a domain outcome into ``StoreError``
(``promptpipe.adapters.aws_errors.store_operation``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import AwsClient, TableAdapter
from promptpipe.adapters.aws_errors import (
    CONDITION_FAILED,
    CONDITIONAL_CHECK_FAILED,
    TRANSACTION_CONFLICT,
    cancellation_codes,
    condition_failed,
    condition_held,
    error_code,
    is_cancellation,
    store_operation,
)
from promptpipe.adapters.dynamodb_commit import CLAIM_INDEX, FLOW_INDEX, META_INDEX, commit_actions
from promptpipe.adapters.dynamodb_items import (
    FLOW_SK,
    FLOW_SK_PREFIX,
    KEY_ATTRIBUTES,
    META_SK,
    MSG_SK_PREFIX,
    NEEDS_PERSON_SK,
    PK,
    SK,
    Item,
    decode_token,
    encode_token,
    flow_from_item,
    flow_item,
    flow_key,
    key,
    meta_key,
    needs_person_from_item,
    needs_person_key,
    participant_from_item,
    participant_item,
    participant_pk,
    pending_effects_token,
    phone_claim_item,
    phone_claim_key,
    sortable_timestamp,
    transcript_from_item,
)
from promptpipe.adapters.dynamodb_listing import DynamoParticipantListing
from promptpipe.adapters.dynamodb_retention import partition_pages, with_expiry
from promptpipe.adapters.dynamodb_table import PARTICIPANTS_INDEX
from promptpipe.errors import (
    EventAlreadyCommitted,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StateConflict,
    StoreError,
    ValidationFailed,
)
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState
from promptpipe.models.store import EventRecord, LoadedState, StateCommit, TranscriptEntry
from promptpipe.rules.clock import to_rfc3339

_BATCH_WRITE_SIZE = 25
_BATCH_RETRIES = 8


def _s(value: str) -> dict[str, Any]:
    return {"S": value}


def _backoff(attempt: int) -> float:
    """Seconds to wait before retrying unprocessed batch items (they mean throttling)."""
    return min(0.05 * 2**attempt, 2.0)


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


# --- ParticipantRepo ---------------------------------------------------------------------------------
class DynamoParticipantRepo(DynamoParticipantListing):
    """``ParticipantRepo`` port adapter (plus ``update``)."""

    def __init__(
        self,
        table_name: str,
        client: AwsClient,
        index_name: str = PARTICIPANTS_INDEX.name,
        *,
        sleep: Callable[[float], None] = time.sleep,
        retention: timedelta | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(table_name, client)
        self._index = index_name
        self._sleep = sleep
        # A kept transcript of a deleted participant expires (DynamoDB TTL) this long after the
        # deletion; None keeps it (docs/retention.md).
        self._retention = retention
        self._now = now or (lambda: datetime.now(UTC))

    @store_operation
    def create(self, participant: ConversationParticipant, flow: FlowState, *, enrollment: str | None = None) -> None:
        """Participant, phone claim (with the enrolment request's fingerprint) and flow state in one
        transaction, each only if new. A claimed number is ``ParticipantAlreadyEnrolled`` carrying
        what the claim says (returned by the cancelled transaction itself: no extra read)."""
        if flow.participant_id != participant.id:
            raise ValueError("flow state belongs to another participant")
        claim = self._put_new(phone_claim_item(participant.phone_number, participant.id, enrollment))
        claim["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        actions = [
            self._put_new(participant_item(participant)),
            claim,
            self._put_new(flow_item(flow, [])),
        ]
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as exc:
            if not is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if condition_failed(codes, 1):
                held = (exc.response.get("CancellationReasons") or [{}, {}])[1].get("Item") or {}
                raise ParticipantAlreadyEnrolled(
                    f"phone number {participant.phone_number} is already enrolled",
                    participant_id=held.get("participant_id", {}).get("S"),
                    enrollment=held.get("enrollment", {}).get("S"),
                ) from exc
            if CONDITION_FAILED in codes or TRANSACTION_CONFLICT in codes:
                raise StateConflict(f"participant {participant.id} already exists or is being written") from exc
            raise

    @store_operation
    def get(self, participant_id: str) -> ConversationParticipant:
        return participant_from_item(self._get_meta(participant_id))

    @store_operation
    def find_id_by_phone(self, phone_number: str) -> str | None:
        response = self._client.get_item(
            TableName=self._table,
            Key=phone_claim_key(phone_number),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return str(item["participant_id"]["S"]) if item else None

    @store_operation
    def list(self, *, limit: int, next_token: str | None) -> tuple[list[ConversationParticipant], str | None]:
        """Newest first (by ``created_at``), through the participants GSI."""
        _validate_limit(limit)
        request = self._index_request(None, next_token=next_token)
        items, token = _query_page(self._client, request, limit=limit, key_names=sorted(KEY_ATTRIBUTES))
        return [participant_from_item(item) for item in items], token

    @store_operation
    def update(self, participant: ConversationParticipant) -> None:
        """Replace the participant's fields. ``ParticipantNotFound`` if missing. The phone number is
        fixed at enrollment (its claim item would go stale), so a change is a ``ValidationFailed``.

        Not version-conditioned: a change that must not race a turn goes through ``StateStore.commit``.
        """
        try:
            self._client.put_item(
                TableName=self._table,
                Item=participant_item(participant),
                ConditionExpression=f"attribute_exists({PK}) AND #phone = :phone",
                ExpressionAttributeNames={"#phone": "phone_number"},
                ExpressionAttributeValues={":phone": _s(participant.phone_number)},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if error_code(exc) != CONDITIONAL_CHECK_FAILED:
                raise
            if exc.response.get("Item"):
                raise ValidationFailed("phone_number cannot be changed", field="phone_number") from exc
            raise ParticipantNotFound(f"participant {participant.id} not found") from exc

    @store_operation
    def delete(self, participant_id: str, *, keep_transcript: bool) -> None:
        """META, phone claim and flow state in one transaction; then the transcript, unless kept."""
        meta = self._get_meta(participant_id)
        pk = participant_pk(participant_id)
        delete_meta = {
            "Delete": {
                "TableName": self._table,
                "Key": meta_key(participant_id),
                "ConditionExpression": f"attribute_exists({PK})",
            }
        }
        delete_claim = {
            "Delete": {
                "TableName": self._table,
                "Key": phone_claim_key(meta["phone_number"]["S"]),
                # Only our own claim; a missing one is fine.
                "ConditionExpression": f"attribute_not_exists({PK}) OR participant_id = :id",
                "ExpressionAttributeValues": {":id": _s(participant_id)},
            }
        }
        delete_flow = {"Delete": {"TableName": self._table, "Key": flow_key(participant_id)}}
        # Out of the needs-a-person queue with the state (docs/console.md, "Nobody missed").
        delete_held = {"Delete": {"TableName": self._table, "Key": needs_person_key(participant_id)}}
        try:
            self._client.transact_write_items(TransactItems=[delete_meta, delete_claim, delete_flow, delete_held])
        except ClientError as exc:
            if not is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if condition_failed(codes, 0):
                raise ParticipantNotFound(f"participant {participant_id} not found") from exc
            if not condition_failed(codes, 1):
                raise
            # The claim belongs to someone else (never written so by this code): leave it alone.
            self._client.transact_write_items(TransactItems=[delete_meta, delete_flow, delete_held])
        if not keep_transcript:
            self._delete_transcript(pk)
        elif self._retention is not None:
            self._rewrite_expiry(pk, self._now() + self._retention)

    @store_operation
    def hold_alerted(self, participant_id: str, since: datetime) -> None:
        """One ``UpdateItem`` of the needs-a-person marker, only while it holds the hold of ``since``."""
        condition_held(  # a lost condition: released, deleted or replaced since, nothing left to mark
            self._client.update_item,
            TableName=self._table,
            Key=needs_person_key(participant_id),
            UpdateExpression="SET alert_pending = :f",
            ConditionExpression=f"attribute_exists({PK}) AND since = :since",
            ExpressionAttributeValues={":f": {"BOOL": False}, ":since": _s(to_rfc3339(since))},
        )

    @store_operation
    def expire(self, participant_id: str, at: datetime | None) -> None:
        """Stamp ``at`` (None: clear it) on the items no commit rewrites: the transcript and the
        phone claim (docs/retention.md)."""
        meta = self._get_meta(participant_id)
        self._rewrite_expiry(participant_pk(participant_id), at, MSG_SK_PREFIX)
        # Rewritten whole (a claim is its key and owner): the enrollment API may not read claims.
        condition_held(
            self._client.put_item,
            TableName=self._table,
            Item=with_expiry(phone_claim_item(meta["phone_number"]["S"], participant_id), at),
            ConditionExpression="participant_id = :id",  # only while it is still theirs
            ExpressionAttributeValues={":id": _s(participant_id)},
        )

    # -- helpers --------------------------------------------------------------------------------------
    def _put_new(self, item: Item) -> dict[str, Any]:
        return {"Put": {"TableName": self._table, "Item": item, "ConditionExpression": f"attribute_not_exists({PK})"}}

    def _get_meta(self, participant_id: str) -> Item:
        response = self._client.get_item(
            TableName=self._table,
            Key=meta_key(participant_id),
            ConsistentRead=True,
        )
        item: Item | None = response.get("Item")
        if not item:
            raise ParticipantNotFound(f"participant {participant_id} not found")
        return item

    def _delete_transcript(self, pk: str) -> None:
        """Everything left in the partition once META and the flow state are gone: the transcript,
        and the claimed event ids and sent records (which would otherwise wait for their TTL)."""
        paginator = self._client.get_paginator("query")
        pages = paginator.paginate(
            TableName=self._table,
            KeyConditionExpression=f"{PK} = :pk",
            ExpressionAttributeValues={":pk": _s(pk)},
            ProjectionExpression=f"{PK}, {SK}",
            ConsistentRead=True,
        )
        for page in pages:
            keys = page.get("Items", [])
            for start in range(0, len(keys), _BATCH_WRITE_SIZE):
                self._batch_delete(keys[start : start + _BATCH_WRITE_SIZE])

    def _rewrite_expiry(self, pk: str, at: datetime | None, sk_prefix: str = "") -> None:
        """Stamp (or clear) the TTL attribute on the partition's items (of ``sk_prefix``), rewritten
        in batches; an item that already expires sooner keeps its own expiry (``with_expiry``)."""
        for items in partition_pages(self._client, self._table, pk, sk_prefix):
            for start in range(0, len(items), _BATCH_WRITE_SIZE):
                chunk = items[start : start + _BATCH_WRITE_SIZE]
                self._batch_write([{"PutRequest": {"Item": with_expiry(i, at)}} for i in chunk])

    def _batch_delete(self, keys: Sequence[Item]) -> None:
        self._batch_write([{"DeleteRequest": {"Key": item_key}} for item_key in keys])

    def _batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        for attempt in range(_BATCH_RETRIES):
            response = self._client.batch_write_item(RequestItems={self._table: requests})
            requests = response.get("UnprocessedItems", {}).get(self._table, [])
            if not requests:
                return
            self._sleep(_backoff(attempt))
        raise StoreError(
            f"DynamoParticipantRepo.delete: {len(requests)} transcript items could not be written (throttled)",
            operation="DynamoParticipantRepo.delete",
            code="UnprocessedItems",
        )


# --- StateStore --------------------------------------------------------------------------------------
class DynamoStateStore(TableAdapter):
    """``StateStore`` port adapter: one Query to load, one transaction to commit."""

    def __init__(self, table_name: str, client: AwsClient, *, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(table_name, client)
        self._sleep = sleep

    @store_operation
    def load(self, participant_id: str) -> LoadedState:
        """META and the flow state in one strongly consistent Query; the range stops before ``MSG#``
        so the transcript is never read."""
        response = self._client.query(
            TableName=self._table,
            KeyConditionExpression=f"{PK} = :pk AND {SK} BETWEEN :lo AND :hi",
            ExpressionAttributeValues={
                ":pk": _s(participant_pk(participant_id)),
                ":lo": _s(FLOW_SK_PREFIX),
                ":hi": _s(META_SK),
            },
            ConsistentRead=True,
        )
        by_sk = {item[SK]["S"]: item for item in response.get("Items", [])}
        meta = by_sk.get(META_SK)
        if meta is None:
            raise ParticipantNotFound(f"participant {participant_id} not found")
        participant = participant_from_item(meta)
        flow_raw, pending = by_sk.get(FLOW_SK), pending_effects_token(by_sk)
        flow, recent_events = (
            flow_from_item(participant_id, flow_raw)
            if flow_raw is not None
            else (FlowState(participant_id=participant_id), list[EventRecord]())
        )
        return LoadedState(
            participant=participant,
            flow=flow,
            recent_events=recent_events,
            pending_effects=pending,
            needs_person=needs_person_from_item(by_sk.get(NEEDS_PERSON_SK)),
        )

    @store_operation
    def commit(self, commit: StateCommit) -> None:
        """One transaction: the flow state if its version is still ``expected_version``, META (written
        or only checked to exist), the event id if no commit claimed it before, and the new
        transcript entries. A lost version wins over a claimed id (the reload then tells this
        session's own landed attempt from another delivery); a claimed id alone is
        ``EventAlreadyCommitted``."""
        actions = commit_actions(self._table, commit)
        request: dict[str, Any] = {"TransactItems": actions}
        if commit.request_token:
            request["ClientRequestToken"] = commit.request_token
        try:
            self._client.transact_write_items(**request)
        except ClientError as exc:
            if not is_cancellation(exc):
                raise
            codes = cancellation_codes(exc)
            if condition_failed(codes, META_INDEX):
                raise ParticipantNotFound(f"participant {commit.participant_id} not found") from exc
            if condition_failed(codes, FLOW_INDEX):
                raise StateConflict(
                    f"flow state of {commit.participant_id} moved past version {commit.expected_version}"
                ) from exc
            if commit.claim is not None and condition_failed(codes, CLAIM_INDEX):
                raise EventAlreadyCommitted(
                    f"event {commit.claim.event_id} of {commit.participant_id} was committed before"
                ) from exc
            if CONDITION_FAILED in codes:
                raise StateConflict(f"a transcript entry of {commit.participant_id} already exists") from exc
            if TRANSACTION_CONFLICT in codes:
                raise StateConflict(f"concurrent write to {commit.participant_id}") from exc
            raise

    @store_operation
    def list_transcript(
        self, participant_id: str, *, limit: int, next_token: str | None
    ) -> tuple[list[TranscriptEntry], str | None]:
        """Oldest first. A participant deleted with ``keep_transcript`` still has theirs listed."""
        _validate_limit(limit)
        pk = participant_pk(participant_id)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": f"{PK} = :pk AND begins_with({SK}, :msg)",
            "ExpressionAttributeValues": {":pk": _s(pk), ":msg": _s(MSG_SK_PREFIX)},
            "ScanIndexForward": True,
        }
        if next_token is not None:
            request["ExclusiveStartKey"] = decode_token(
                next_token,
                keys=frozenset({PK, SK}),
                check=lambda k: k[PK] == pk and k[SK].startswith(MSG_SK_PREFIX),
            )
        items, token = _query_page(self._client, request, limit=limit, key_names=(PK, SK))
        return [transcript_from_item(item) for item in items], token

    @store_operation
    def load_outbound(self, participant_id: str, record: EventRecord) -> list[OutboundMessage]:
        """The messages of a committed event, from its transcript entries (one BatchGetItem; keys it
        leaves unprocessed are asked for again, with backoff, then it is a ``StoreError``)."""
        pk = participant_pk(participant_id)
        at = sortable_timestamp(record.committed_at)
        keys = [key(pk, f"{MSG_SK_PREFIX}{at}#{ref.seq}") for ref in record.messages]
        if not keys:
            return []
        found: dict[str, TranscriptEntry] = {}
        request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(_BATCH_RETRIES):
            response = self._client.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(self._table, []):
                found[item["seq"]["S"]] = transcript_from_item(item)
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            if attempt + 1 < _BATCH_RETRIES:
                self._sleep(_backoff(attempt))
        else:
            # Sending fewer messages than the event committed would lose them without a trace.
            raise StoreError(
                f"DynamoStateStore.load_outbound: {len(request[self._table]['Keys'])} transcript items could not"
                " be read (throttled)",
                operation="DynamoStateStore.load_outbound",
                code="UnprocessedKeys",
            )
        messages = [found[ref.seq].outbound for ref in record.messages if ref.seq in found]
        return [m for m in messages if m is not None]
