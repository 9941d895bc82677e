"""``InboundLog`` on the transcript items of the main table (docs/reliability.md, "The record under
faults"): a participant's message is written when the worker first receives it, with a ``state``
(awaiting reply, not answered: model unavailable …), at a key fixed by the message (its receipt
time and event id), so the turn's commit rewrites the same item as answered (``dynamodb_commit``:
a transcript put may replace an item that carries a state). Store failures are ``StoreError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import condition_held, store_operation
from promptpipe.adapters.dynamodb_items import (
    INBOUND_STATE,
    MSG_SK_PREFIX,
    SK,
    key,
    participant_pk,
    sortable_timestamp,
    transcript_item,
)
from promptpipe.models.store import TranscriptEntry

_NEW = f"attribute_not_exists({SK})"
_NEW_OR_ACCEPTED = f"attribute_not_exists({SK}) OR attribute_exists(#state)"


class DynamoInboundLog(TableAdapter):
    @store_operation
    def accept(self, entry: TranscriptEntry) -> bool:
        # False: a redelivery, the entry (accepted, or answered) is there.
        return condition_held(
            self._client.put_item, TableName=self._table, Item=transcript_item(entry), ConditionExpression=_NEW
        )

    @store_operation
    def mark(self, participant_id: str, at: datetime, seq: str, state: str, *, expect: str) -> bool:
        return condition_held(
            self._client.update_item,
            TableName=self._table,
            Key=_key(participant_id, at, seq),
            UpdateExpression="SET #state = :state",
            ConditionExpression="#state = :expect",
            ExpressionAttributeNames={"#state": INBOUND_STATE},
            ExpressionAttributeValues={":state": {"S": state}, ":expect": {"S": expect}},
        )

    @store_operation
    def write_unsaved(self, entries: Sequence[TranscriptEntry]) -> None:
        # One put each, not a transaction: this runs when the state's transaction just failed.
        for entry in entries:
            condition_held(  # a lost condition: an answered entry is there already, left as it is
                self._client.put_item,
                TableName=self._table,
                Item=transcript_item(entry),
                ConditionExpression=_NEW_OR_ACCEPTED,
                ExpressionAttributeNames={"#state": INBOUND_STATE},
            )

    @store_operation
    def discard(self, participant_id: str, at: datetime, seq: str) -> None:
        condition_held(
            self._client.delete_item,
            TableName=self._table,
            Key=_key(participant_id, at, seq),
            ConditionExpression="attribute_exists(#state)",
            ExpressionAttributeNames={"#state": INBOUND_STATE},
        )


def _key(participant_id: str, at: datetime, seq: str) -> dict[str, Any]:
    return key(participant_pk(participant_id), f"{MSG_SK_PREFIX}{sortable_timestamp(at)}#{seq}")
