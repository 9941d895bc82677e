"""The local outbox: the ``Messenger`` of local runs and tests, which records what would be sent."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import ConfigDict

from promptpipe.errors import MessagingError
from promptpipe.flow.questions import with_question_text
from promptpipe.lazy_model import LazyModel
from promptpipe.models.messaging import OutboundKind, OutboundMessage, Question, SendResult
from promptpipe.rules.clock import Clock

if TYPE_CHECKING:
    from promptpipe.ports import PartCheck


class OutboxRecord(LazyModel):
    """One message "sent" to the local outbox."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    to: str
    body: str
    # What a participant on a text channel would read: body plus the numbered question.
    body_text: str
    kind: OutboundKind
    question: Question | None
    message_id: str
    sent_at: datetime
    provider_message_id: str
    allow_emoji: bool = False
    follow_up: Question | None = None


class LocalOutbox:
    """An in-memory Messenger for local runs and tests. Thread-safe.

    Like a provider keyed by ``message_id``, a repeated ``message_id`` is not recorded twice: the
    first result is returned again.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._records: list[OutboxRecord] = []
        self._by_message_id: dict[str, SendResult] = {}
        self._failures: list[Exception] = []
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage, before_part: PartCheck | None = None) -> SendResult:
        # One record per message, never split: ``before_part`` has no part to be asked before.
        with self._lock:
            if message.message_id and message.message_id in self._by_message_id:
                return self._by_message_id[message.message_id]
            if self._failures:
                raise self._failures.pop(0)
            result = SendResult(provider_message_id=f"local-{len(self._records) + 1}", provider="local")
            self._records.append(
                OutboxRecord(
                    participant_id=message.participant_id,
                    to=message.to,
                    body=message.body,
                    body_text=with_question_text(message.body, message.question, message.follow_up),
                    follow_up=message.follow_up,
                    kind=message.kind,
                    question=message.question,
                    message_id=message.message_id,
                    sent_at=self._clock.now(),
                    provider_message_id=result.provider_message_id,
                    allow_emoji=message.allow_emoji,
                )
            )
            if message.message_id:
                self._by_message_id[message.message_id] = result
            return result

    def fail_next(self, n: int = 1, error: Exception | str = "injected send failure") -> None:
        """Make the next ``n`` sends raise (``MessagingError`` unless an exception is given)."""
        with self._lock:
            for _ in range(n):
                self._failures.append(error if isinstance(error, Exception) else MessagingError(error))

    def messages(self, participant_id: str | None = None) -> list[OutboxRecord]:
        with self._lock:
            return [r for r in self._records if participant_id is None or r.participant_id == participant_id]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._by_message_id.clear()
            self._failures.clear()
