"""Which outbound messages already reached the provider, so a retried event re-sends only the rest.

Written only when a send fails part-way (the messages before the failure are recorded) and read
only when an event is replayed: the normal path costs nothing. Entries live in the idempotency table
(``id = sent#<message id>``) and expire with its TTL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from promptpipe.adapters.idempotency import IDEMPOTENCY_TTL_SECONDS

_BATCH_WRITE = 25
_BATCH_GET = 100


def _key(message_id: str) -> dict[str, Any]:
    return {"id": {"S": f"sent#{message_id}"}}


class DynamoSentLedger:
    def __init__(self, table_name: str, client: Any) -> None:
        self._table = table_name
        self._client = client

    def mark_sent(self, message_ids: Sequence[str]) -> None:
        expires = str(int(time.time()) + IDEMPOTENCY_TTL_SECONDS)
        for start in range(0, len(message_ids), _BATCH_WRITE):
            requests = [
                {"PutRequest": {"Item": {**_key(mid), "expiration": {"N": expires}}}}
                for mid in message_ids[start : start + _BATCH_WRITE]
            ]
            pending: dict[str, Any] = {self._table: requests}
            for _ in range(5):  # unprocessed items are rare; a few tries, then give up (best effort)
                response = self._client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending:
                    break

    def already_sent(self, message_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(message_ids), _BATCH_GET):
            keys = [_key(mid) for mid in message_ids[start : start + _BATCH_GET]]
            response = self._client.batch_get_item(RequestItems={self._table: {"Keys": keys, "ConsistentRead": True}})
            for item in response.get("Responses", {}).get(self._table, []):
                found.add(item["id"]["S"].removeprefix("sent#"))
        return found


class InMemorySentLedger:
    def __init__(self) -> None:
        self._sent: set[str] = set()
        self._lock = threading.Lock()

    def mark_sent(self, message_ids: Sequence[str]) -> None:
        with self._lock:
            self._sent.update(message_ids)

    def already_sent(self, message_ids: Sequence[str]) -> set[str]:
        with self._lock:
            return {mid for mid in message_ids if mid in self._sent}
