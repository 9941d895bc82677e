"""What an event whose effects failed part-way had already delivered (``SentLedger`` port).

Written only when applying an event's effects fails (one item per event: the ids of the messages
that went out before the failure) and read only when that event is redelivered: the normal path
costs nothing. No item for a redelivered event means its earlier delivery finished. Items live in
the participant's partition of the main table (``sk = SENT#<event id>``, ``dynamodb_items``), outside
the range the state Query reads, and expire after a day through the table's TTL (longer than any
redelivery). Store failures are ``StoreError`` (``aws_errors.store_operation``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from promptpipe.adapters.aws_errors import store_operation
from promptpipe.adapters.dynamodb_items import expires_at, sent_key

LEDGER_TTL_SECONDS = 24 * 3600


class DynamoSentLedger:
    def __init__(self, table_name: str, client: Any) -> None:
        self._table = table_name
        self._client = client

    @store_operation
    def record_partial(self, participant_id: str, event_id: str, message_ids: Sequence[str]) -> None:
        item = {
            **sent_key(participant_id, event_id),
            # A list, not a string set: a set cannot be empty, and "none sent yet" is a record too.
            "sent": {"L": [{"S": mid} for mid in message_ids]},
            **expires_at(int(time.time()) + LEDGER_TTL_SECONDS),
        }
        self._client.put_item(TableName=self._table, Item=item)

    @store_operation
    def partial(self, participant_id: str, event_id: str) -> set[str] | None:
        response = self._client.get_item(
            TableName=self._table, Key=sent_key(participant_id, event_id), ConsistentRead=True
        )
        item = response.get("Item")
        if not item:
            return None
        return {value["S"] for value in item.get("sent", {}).get("L", [])}


class InMemorySentLedger:
    def __init__(self) -> None:
        self._records: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()

    def record_partial(self, participant_id: str, event_id: str, message_ids: Sequence[str]) -> None:
        with self._lock:
            self._records[(participant_id, event_id)] = set(message_ids)

    def partial(self, participant_id: str, event_id: str) -> set[str] | None:
        with self._lock:
            found = self._records.get((participant_id, event_id))
            return None if found is None else set(found)
