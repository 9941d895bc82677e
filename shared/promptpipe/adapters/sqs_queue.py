"""The ``TurnQueue`` port over the inbound SQS FIFO queue (docs/architecture.md#events).

The message group is the participant id, so each participant's turns are handled one at a time and
in order. The deduplication id is derived from the event id: a webhook retried by the provider
within SQS's five-minute window is enqueued once (longer-range dedup is the worker's idempotency).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from promptpipe.adapters.aws import AwsClient
from promptpipe.errors import QueueError
from promptpipe.models.events import TurnEvent

__all__ = ["QueueError", "SqsDeadLetters", "SqsTurnQueue", "deduplication_id"]


def deduplication_id(event_id: str) -> str:
    """SHA-256 hex of the event id: within SQS's 128-character limit and its character set, whatever
    the provider's id looks like."""
    return hashlib.sha256(event_id.encode()).hexdigest()


# Characters SQS refuses in a message body although JSON may carry them raw: U+FFFE and U+FFFF
# (controls are escaped by JSON already; lone surrogates cannot be encoded at all).
_NOT_FOR_SQS = re.compile("[\ufffe\uffff]")


def message_body(event: TurnEvent) -> str:
    """The event as JSON, with the characters SQS refuses written as JSON escapes (the same text once
    parsed): a participant's message may contain them, and AWS would answer InvalidMessageContents."""
    return _NOT_FOR_SQS.sub(lambda m: f"\\u{ord(m[0]):04x}", event.model_dump_json())


class SqsTurnQueue:
    """``TurnQueue`` port adapter."""

    def __init__(self, queue_url: str, client: AwsClient) -> None:
        self._queue_url = queue_url
        self._client = client

    def enqueue(self, event: TurnEvent) -> None:
        try:
            self._client.send_message(
                QueueUrl=self._queue_url,
                MessageBody=message_body(event),
                MessageGroupId=event.participant_id,
                MessageDeduplicationId=deduplication_id(event.event_id),
            )
        except (ClientError, BotoCoreError) as exc:
            raise QueueError(f"could not enqueue turn {event.event_id} for {event.participant_id}: {exc}") from exc


class SqsDeadLetters:
    """``DeadLetters`` port adapter: the inbound FIFO queue's dead-letter queue, redriven to the
    inbound queue by the unanswered-turns sweep (``usecases/redrive.py``). Each message goes back
    on its participant's message group, with a deduplication id of its own (the original's may
    still be inside SQS's five minutes); it is deleted from the dead-letter queue once re-sent."""

    def __init__(self, dead_letter_url: str, queue_url: str, client: AwsClient) -> None:
        self._dead_letters = dead_letter_url
        self._queue_url = queue_url
        self._client = client

    def waiting(self) -> int:
        try:
            attributes = self._client.get_queue_attributes(
                QueueUrl=self._dead_letters, AttributeNames=["ApproximateNumberOfMessages"]
            )
        except (ClientError, BotoCoreError) as exc:
            raise QueueError(f"could not read the dead-letter queue: {exc}") from exc
        return int(attributes.get("Attributes", {}).get("ApproximateNumberOfMessages", "0"))

    def redrive(self, limit: int) -> int:
        moved = 0
        try:
            while moved < limit:
                received = self._client.receive_message(
                    QueueUrl=self._dead_letters,
                    MaxNumberOfMessages=min(10, limit - moved),
                    AttributeNames=["MessageGroupId"],
                    MessageAttributeNames=[REDRIVES],
                    WaitTimeSeconds=0,
                )
                # A turn redriven MAX_REDRIVES times already fails for another reason than the model:
                # it stays for an operator (the queue is alarmed), and is not fed back forever.
                movable = [m for m in received.get("Messages", []) if _redrives(m) < MAX_REDRIVES]
                if not movable:
                    break
                for message in movable:
                    self._client.send_message(
                        QueueUrl=self._queue_url,
                        MessageBody=message["Body"],
                        MessageGroupId=message["Attributes"]["MessageGroupId"],
                        MessageDeduplicationId=deduplication_id(f"redrive:{message['MessageId']}"),
                        MessageAttributes={
                            REDRIVES: {"DataType": "Number", "StringValue": str(_redrives(message) + 1)}
                        },
                    )
                    self._client.delete_message(QueueUrl=self._dead_letters, ReceiptHandle=message["ReceiptHandle"])
                    moved += 1
        except (ClientError, BotoCoreError) as exc:
            raise QueueError(f"redrive stopped after {moved} turn(s): {exc}") from exc
        return moved


REDRIVES = "redrives"
MAX_REDRIVES = 3


def _redrives(message: dict[str, Any]) -> int:
    value = message.get("MessageAttributes", {}).get(REDRIVES, {}).get("StringValue", "0")
    return int(value) if value.isdigit() else 0
