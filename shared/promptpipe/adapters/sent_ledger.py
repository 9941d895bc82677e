"""What an event whose effects failed part-way had already delivered (``SentLedger`` port).

Written only when applying an event's effects fails (one item per event: the ids of the messages
that went out before the failure) and read only when that event is redelivered: the normal path
costs nothing. No item for a redelivered event means its earlier delivery finished. Items live in
the participant's partition of the main table (``sk = SENT#<event id>``, ``dynamodb_items``), outside
the range the state Query reads, and expire through the table's TTL as the event's id claim does
(15 days: a dead-letter redrive comes within 14). Each item also carries the event's record (its
messages' transcript keys, its schedules, the status it decided for), so a redelivery resumes
the event even after its record has left the state item's window of 25 (any number of later
commits: docs/reliability.md). A split SMS refused part-way is recorded with the provider ids of its parts already
accepted (``parts``), so that the redelivery sends only the rest. Store failures are ``StoreError``
(``aws_errors.store_operation``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from promptpipe.adapters.aws import TableAdapter
from promptpipe.adapters.aws_errors import store_operation
from promptpipe.adapters.dynamodb_items import expires_at, sent_key
from promptpipe.models.store import EVENT_ID_RETENTION_DAYS, EventRecord, PartialDelivery

LEDGER_TTL_SECONDS = EVENT_ID_RETENTION_DAYS * 24 * 3600


class DynamoSentLedger(TableAdapter):
    @store_operation
    def record_partial(self, participant_id: str, event_id: str, delivered: PartialDelivery) -> None:
        item = {
            **sent_key(participant_id, event_id),
            # A list, not a string set: a set cannot be empty, and "none sent yet" is a record too.
            "sent": {"L": [{"S": mid} for mid in delivered.sent]},
            **expires_at(int(time.time()) + LEDGER_TTL_SECONDS),
        }
        parts = delivered.parts
        if parts:
            item["parts"] = {"M": {mid: {"L": [{"S": pid} for pid in ids]} for mid, ids in parts.items() if ids}}
        if delivered.record is not None:
            item["record"] = {"S": delivered.record.model_dump_json()}
        self._client.put_item(TableName=self._table, Item=item)

    @store_operation
    def unfinished(self, participant_id: str, event_id: str) -> EventRecord | None:
        item = self._item(participant_id, event_id) or {}
        stored = item.get("record", {}).get("S")
        return EventRecord.model_validate_json(stored) if stored else None

    @store_operation
    def partial(self, participant_id: str, event_id: str) -> set[str] | None:
        item = self._item(participant_id, event_id)
        if not item:
            return None
        return {value["S"] for value in item.get("sent", {}).get("L", [])}

    @store_operation
    def accepted_parts(self, participant_id: str, event_id: str) -> dict[str, list[str]]:
        item = self._item(participant_id, event_id) or {}
        stored = item.get("parts", {}).get("M", {})
        return {mid: [value["S"] for value in ids.get("L", [])] for mid, ids in stored.items()}

    def _item(self, participant_id: str, event_id: str) -> dict[str, Any] | None:
        response = self._client.get_item(
            TableName=self._table, Key=sent_key(participant_id, event_id), ConsistentRead=True
        )
        item: dict[str, Any] | None = response.get("Item")
        return item


class InMemorySentLedger:
    def __init__(self) -> None:
        self._records: dict[tuple[str, str], set[str]] = {}
        self._parts: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._events: dict[tuple[str, str], EventRecord] = {}
        self._lock = threading.Lock()

    def record_partial(self, participant_id: str, event_id: str, delivered: PartialDelivery) -> None:
        with self._lock:
            self._records[(participant_id, event_id)] = set(delivered.sent)
            self._parts[(participant_id, event_id)] = {mid: list(ids) for mid, ids in delivered.parts.items() if ids}
            if delivered.record is not None:
                self._events[(participant_id, event_id)] = delivered.record

    def unfinished(self, participant_id: str, event_id: str) -> EventRecord | None:
        with self._lock:
            return self._events.get((participant_id, event_id))

    def partial(self, participant_id: str, event_id: str) -> set[str] | None:
        with self._lock:
            found = self._records.get((participant_id, event_id))
            return None if found is None else set(found)

    def accepted_parts(self, participant_id: str, event_id: str) -> dict[str, list[str]]:
        with self._lock:
            return {mid: list(ids) for mid, ids in self._parts.get((participant_id, event_id), {}).items()}
