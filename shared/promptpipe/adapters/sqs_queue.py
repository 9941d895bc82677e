"""The ``TurnQueue`` port over the inbound SQS FIFO queue (docs/architecture.md#events).

The message group is the participant id, so each participant's turns are handled one at a time and
in order. The deduplication id is derived from the event id: a webhook retried by the provider
within SQS's five-minute window is enqueued once (longer-range dedup is the worker's idempotency).
"""

from __future__ import annotations

import hashlib
import re

from botocore.exceptions import BotoCoreError, ClientError

from promptpipe.adapters.aws import AwsClient
from promptpipe.errors import QueueError
from promptpipe.models.events import TurnEvent

__all__ = ["QueueError", "SqsTurnQueue", "deduplication_id"]


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
