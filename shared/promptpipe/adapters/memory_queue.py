"""The inbound FIFO queue in memory: the ``TurnQueue`` port, and the receive side the local stack's
drainer reads (docs/architecture.md#local-runs), with the SQS FIFO rules the engine relies on.

- One line per participant (the message group); messages come back in the order they were sent.
- The same deduplication id within five minutes is enqueued once (``deduplication_id``, as
  ``SqsTurnQueue`` sends it).
- A message received and not deleted (``release``) comes back; after ``max_receives`` receives it
  is set aside as dead-lettered (the queue's redrive policy), with its receive count.

The receive answers the shape of SQS ``ReceiveMessage`` with every attribute, so the same code turns
either into the worker's event records. The dedup window is pruned as the clock moves, so the queue
holds only what waits and the last five minutes' ids.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from promptpipe.adapters.sqs_queue import deduplication_id, message_body
from promptpipe.models.events import TurnEvent

DEDUPLICATION_WINDOW = timedelta(minutes=5)


@dataclass
class _Message:
    message_id: str
    body: str
    group: str
    dedup: str
    sequence: int
    sent_at: datetime
    receives: int = 0
    in_flight: bool = False


class InMemoryTurnQueue:
    """``TurnQueue`` port adapter in memory, and the queue's receive side (``receive``, ``delete``,
    ``release``) for the local drainer."""

    def __init__(self, now: Callable[[], datetime], *, max_receives: int) -> None:
        self._now = now
        self._max_receives = max_receives
        self._waiting: OrderedDict[str, _Message] = OrderedDict()  # by sequence: the send order
        self._recent: OrderedDict[str, datetime] = OrderedDict()  # dedup id -> when sent
        self._sequence = itertools.count(1)
        self.dead_letters: list[dict[str, Any]] = []

    def enqueue(self, event: TurnEvent) -> None:
        now = self._now()
        while self._recent and next(iter(self._recent.values())) <= now - DEDUPLICATION_WINDOW:
            self._recent.popitem(last=False)
        dedup = deduplication_id(event.event_id)
        if dedup in self._recent:
            return
        self._recent[dedup] = now
        sequence = next(self._sequence)
        message = _Message(
            message_id=hashlib.sha256(f"{sequence}|{dedup}".encode()).hexdigest()[:32],
            body=message_body(event),
            group=event.participant_id,
            dedup=dedup,
            sequence=sequence,
            sent_at=now,
        )
        self._waiting[message.message_id] = message

    def waiting(self) -> int:
        """How many messages wait (in flight included)."""
        return len(self._waiting)

    def receive(self, limit: int = 10) -> list[dict[str, Any]]:
        """Up to ``limit`` messages in send order, none of a group with a message already in
        flight; each counts a receive. A message past its last receive is dead-lettered instead."""
        batch: list[dict[str, Any]] = []
        busy = {m.group for m in self._waiting.values() if m.in_flight}
        for message in list(self._waiting.values()):
            if len(batch) >= limit:
                break
            if message.group in busy:  # its line waits for the message in flight
                continue
            if message.receives >= self._max_receives:
                del self._waiting[message.message_id]
                self.dead_letters.append(self._shape(message))
                continue
            message.receives += 1
            message.in_flight = True
            batch.append(self._shape(message))
        return batch

    def delete(self, receipt_handle: str) -> None:
        self._waiting.pop(receipt_handle, None)

    def release(self, receipt_handle: str) -> None:
        """Visible again at once (a visibility timeout of 0)."""
        message = self._waiting.get(receipt_handle)
        if message is not None:
            message.in_flight = False

    @staticmethod
    def _shape(message: _Message) -> dict[str, Any]:
        epoch_ms = str(int(message.sent_at.timestamp() * 1000))
        return {
            "MessageId": message.message_id,
            "ReceiptHandle": message.message_id,
            "MD5OfBody": hashlib.md5(message.body.encode()).hexdigest(),
            "Body": message.body,
            "Attributes": {
                "ApproximateReceiveCount": str(message.receives),
                "SentTimestamp": epoch_ms,
                "SenderId": "local",
                "ApproximateFirstReceiveTimestamp": epoch_ms,
                "MessageGroupId": message.group,
                "MessageDeduplicationId": message.dedup,
                "SequenceNumber": str(message.sequence),
            },
        }
