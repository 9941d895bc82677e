"""Which outbound messages already reached the provider, so a resumed event re-sends only the rest.

Written only when a send fails part-way (the messages before the failure are recorded) and read
only when an event is resumed: the normal path costs nothing. Entries live in the participant's
partition of the main table (``sk = SENT#<message id>``), outside the range the state Query reads,
and expire after a day through the table's TTL (longer than any redelivery of the event).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from promptpipe.adapters.aws import TTL_ATTRIBUTE

SENT_SK_PREFIX = "SENT#"
LEDGER_TTL_SECONDS = 24 * 3600
_BATCH_WRITE = 25
_BATCH_GET = 100


def _key(participant_id: str, message_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"PARTICIPANT#{participant_id}"}, "sk": {"S": f"{SENT_SK_PREFIX}{message_id}"}}


class DynamoSentLedger:
    def __init__(self, table_name: str, client: Any) -> None:
        self._table = table_name
        self._client = client

    def mark_sent(self, participant_id: str, message_ids: Sequence[str]) -> None:
        expires = str(int(time.time()) + LEDGER_TTL_SECONDS)
        for start in range(0, len(message_ids), _BATCH_WRITE):
            requests = [
                {"PutRequest": {"Item": {**_key(participant_id, mid), TTL_ATTRIBUTE: {"N": expires}}}}
                for mid in message_ids[start : start + _BATCH_WRITE]
            ]
            pending: dict[str, Any] = {self._table: requests}
            for _ in range(5):  # unprocessed items are rare; a few tries, then give up (best effort)
                response = self._client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending:
                    break

    def already_sent(self, participant_id: str, message_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(message_ids), _BATCH_GET):
            keys = [_key(participant_id, mid) for mid in message_ids[start : start + _BATCH_GET]]
            response = self._client.batch_get_item(RequestItems={self._table: {"Keys": keys, "ConsistentRead": True}})
            for item in response.get("Responses", {}).get(self._table, []):
                found.add(item["sk"]["S"].removeprefix(SENT_SK_PREFIX))
        return found


class InMemorySentLedger:
    def __init__(self) -> None:
        self._sent: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def mark_sent(self, participant_id: str, message_ids: Sequence[str]) -> None:
        with self._lock:
            self._sent.update((participant_id, mid) for mid in message_ids)

    def already_sent(self, participant_id: str, message_ids: Sequence[str]) -> set[str]:
        with self._lock:
            return {mid for mid in message_ids if (participant_id, mid) in self._sent}
