"""What the effects of a committed event leave in the table: the delivery outcome of each message
(``DeliveryLog``) and the pending-effects marker of a participant whose schedule changes failed
(``PendingEffects``). Docs: docs/architecture.md, "Delivery outcomes" and "Effects that failed".

Delivery outcomes are written onto the transcript entries the commit wrote (``delivery``), each
conditional on the entry still existing (an erased transcript is not re-created as fragments), with,
for each message the provider accepted, a pointer from its provider id to the entry (``PMSG#{id}`` in
the participant's partition, outside the range the state Query reads; expires after
``PROVIDER_REPORT_DAYS``): one ``UpdateItem`` when that is one item (a message not sent), else one
``TransactWriteItems`` of them all. A provider's later report of success (``record_receipt``)
follows the pointer: the phone claim, the pointer (two ``GetItem``), then one ``UpdateItem`` by key,
conditional on the receipt moving forward (``read`` after ``delivered``, never back) and on the
outcome not being ``failed`` — no Query, no scan, and reports arriving out of order or twice change
nothing more. A failure report (``find_sent``) follows the same pointer, and falls back to a Query of
the last days' transcript only without one (an earlier part, a message sent before the pointers).

The marker is one item per participant inside the range the state Query reads (``FLOW#conversation
#pending``), so an event sees it at no extra call; its ``gsi1pk = PENDING_EFFECTS`` lets the sweep
list every marker with one Query on the participants index. Store failures are ``StoreError``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import (
    CONDITION_FAILED,
    CONDITIONAL_CHECK_FAILED,
    cancellation_codes,
    condition_held,
    error_code,
    is_cancellation,
    store_operation,
)
from promptpipe.adapters.dynamodb_items import (
    GSI_PK,
    GSI_SK,
    MSG_SK_PREFIX,
    PENDING_EFFECTS_GSI_PK,
    PK,
    RECEIPT,
    RECEIPT_AT,
    RECEIPT_RANK,
    SK,
    delivery_attribute,
    expires_at,
    index_partition_query,
    key,
    participant_pk,
    pending_effects_key,
    provider_message_key,
    sortable_timestamp,
    transcript_from_item,
)
from promptpipe.models.store import (
    PROVIDER_REPORT_DAYS,
    RECEIPT_ORDER,
    DeliveryOutcome,
    Receipt,
    TranscriptEntry,
)

_EXISTS = f"attribute_exists({PK})"
# How a failed outcome reads inside the stored ``delivery`` JSON (``delivery_attribute``).
FAILED_IN_DELIVERY = '"status":"failed"'


class DynamoDeliveryLog(TableAdapter):
    """``DeliveryLog`` on the transcript items of the main table."""

    @store_operation
    def record_outcomes(
        self, participant_id: str, committed_at: datetime, outcomes: dict[str, DeliveryOutcome]
    ) -> None:
        pk, at = participant_pk(participant_id), sortable_timestamp(committed_at)
        updates = [
            {
                "TableName": self._table,
                "Key": key(pk, f"{MSG_SK_PREFIX}{at}#{seq}"),
                "UpdateExpression": "SET delivery = :d",
                "ConditionExpression": _EXISTS,
                "ExpressionAttributeValues": {":d": delivery_attribute(outcome)},
            }
            for seq, outcome in sorted(outcomes.items())
        ]
        expires = expires_at(int(time.time()) + PROVIDER_REPORT_DAYS * 24 * 3600)
        pointers = [
            {
                "TableName": self._table,
                "Item": {
                    **provider_message_key(participant_id, outcome.provider_id),
                    "entry_sk": {"S": f"{MSG_SK_PREFIX}{at}#{seq}"},
                    **expires,
                },
            }
            for seq, outcome in sorted(outcomes.items())
            if outcome.status == "sent" and outcome.provider_id
        ]
        if not updates:
            return
        try:
            if len(updates) == 1 and not pointers:
                self._client.update_item(**updates[0])
            else:
                writes = [{"Update": update} for update in updates] + [{"Put": put} for put in pointers]
                self._client.transact_write_items(TransactItems=writes)
        except ClientError as exc:
            erased = error_code(exc) == CONDITIONAL_CHECK_FAILED or (
                is_cancellation(exc) and CONDITION_FAILED in cancellation_codes(exc)
            )
            if not erased:
                raise

    @store_operation
    def find_sent(self, participant_id: str, provider_id: str, since: datetime) -> TranscriptEntry | None:
        # By key when the outcome's write left a pointer from this id (two GetItem); else (a part
        # before the last, a message sent before the pointers) a Query of the transcript since
        # ``since``, filtered on the outcome (stored as JSON text): a failure report's rare path.
        pointer = self._client.get_item(
            TableName=self._table, Key=provider_message_key(participant_id, provider_id)
        ).get("Item")
        if pointer:
            found = self._client.get_item(
                TableName=self._table,
                Key=key(participant_pk(participant_id), pointer["entry_sk"]["S"]),
                ConsistentRead=True,
            ).get("Item")
            if found and transcript_from_item(found).at >= since:
                return transcript_from_item(found)
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": f"{PK} = :pk AND {SK} BETWEEN :since AND :end",
            "FilterExpression": "contains(delivery, :id)",
            "ExpressionAttributeValues": {
                ":pk": {"S": participant_pk(participant_id)},
                ":since": {"S": f"{MSG_SK_PREFIX}{sortable_timestamp(since)}"},
                ":end": {"S": f"{MSG_SK_PREFIX}~"},
                ":id": {"S": f'"{provider_id}"'},
            },
        }
        while True:
            response = self._client.query(**request)
            for item in response.get("Items", []):
                entry = transcript_from_item(item)
                outcome = entry.delivery
                if outcome is not None and provider_id in (outcome.provider_id, *outcome.parts):
                    return entry
            if "LastEvaluatedKey" not in response:
                return None
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    @store_operation
    def record_receipt(self, participant_id: str, provider_id: str, receipt: Receipt, at: datetime) -> bool:
        pointer = self._client.get_item(
            TableName=self._table, Key=provider_message_key(participant_id, provider_id)
        ).get("Item")
        if not pointer:
            return False
        # A lost condition: an earlier or equal report already landed, the message failed, or its
        # entry was erased.
        condition_held(
            self._client.update_item,
            TableName=self._table,
            Key=key(participant_pk(participant_id), pointer["entry_sk"]["S"]),
            UpdateExpression="SET #r = :r, #at = :at, #rank = :rank",
            ConditionExpression=f"{_EXISTS} AND (attribute_not_exists(#rank) OR #rank < :rank) "
            "AND NOT contains(delivery, :failed)",
            ExpressionAttributeNames={"#r": RECEIPT, "#at": RECEIPT_AT, "#rank": RECEIPT_RANK},
            ExpressionAttributeValues={
                ":r": {"S": receipt},
                ":at": {"S": at.isoformat()},
                ":rank": {"N": str(RECEIPT_ORDER[receipt])},
                ":failed": {"S": FAILED_IN_DELIVERY},
            },
        )
        return True


class DynamoPendingEffects(TableAdapter):
    """``PendingEffects`` as one marker item per participant (see the module docstring)."""

    def __init__(
        self, table_name: str, client: Any, *, index_name: str, now: Callable[[], datetime], token: Callable[[], str]
    ) -> None:
        super().__init__(table_name, client)
        self._index = index_name
        self._now = now
        self._token = token

    @store_operation
    def mark(self, participant_id: str) -> str:
        token = self._token()
        # The sweep lists markers by the time of their latest failure, oldest first.
        self._client.put_item(
            TableName=self._table,
            Item={
                **pending_effects_key(participant_id),
                "token": {"S": token},
                GSI_PK: {"S": PENDING_EFFECTS_GSI_PK},
                GSI_SK: {"S": f"{sortable_timestamp(self._now())}#{participant_id}"},
                "participant_id": {"S": participant_id},
            },
        )
        return token

    @store_operation
    def clear(self, participant_id: str, token: str) -> None:
        # A lost condition: a newer failure renewed the marker (or it is already gone), it stays for
        # its own repair.
        condition_held(
            self._client.delete_item,
            TableName=self._table,
            Key=pending_effects_key(participant_id),
            ConditionExpression="#t = :t",
            ExpressionAttributeNames={"#t": "token"},
            ExpressionAttributeValues={":t": {"S": token}},
        )

    @store_operation
    def pending(self, limit: int) -> list[tuple[str, str]]:
        request = index_partition_query(self._table, self._index, PENDING_EFFECTS_GSI_PK)
        response = self._client.query(**request, Limit=limit)
        return [(item["participant_id"]["S"], item["token"]["S"]) for item in response.get("Items", [])]


def new_token() -> str:
    return secrets.token_hex(8)


class InMemoryPendingEffects:
    """``PendingEffects`` of the in-memory stack (local runs and tests), in a dict (the in-memory store
    reads it for ``load``)."""

    def __init__(self) -> None:
        self.markers: dict[str, str] = {}
        self._lock = threading.Lock()

    def mark(self, participant_id: str) -> str:
        token = new_token()
        with self._lock:
            self.markers.pop(participant_id, None)
            self.markers[participant_id] = token  # oldest first: a renewed marker moves to the end
        return token

    def clear(self, participant_id: str, token: str) -> None:
        with self._lock:
            if self.markers.get(participant_id) == token:
                del self.markers[participant_id]

    def pending(self, limit: int) -> list[tuple[str, str]]:
        with self._lock:
            return list(self.markers.items())[:limit]
