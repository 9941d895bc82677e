"""A send that fails part-way: the retry re-sends only what did not reach the provider."""

from __future__ import annotations

from dataclasses import replace

import pytest

from promptpipe.adapters.sent_ledger import InMemorySentLedger
from promptpipe.errors import MessagingError
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from tests.support import START


class FlakyMessenger:
    """Fails the n-th send once; records every message that reached the 'provider'."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.calls = 0
        self.delivered: list[str] = []

    def send(self, message: OutboundMessage) -> SendResult:
        self.calls += 1
        if self.calls == self.fail_at:
            raise MessagingError("provider down", retryable=True)
        self.delivered.append(message.message_id)
        return SendResult(provider="fake")


def _messages() -> list[OutboundMessage]:
    return [
        OutboundMessage(participant_id="p", to="+14155550101", body=body, kind=kind, message_id=f"ev#{i}")
        for i, (body, kind) in enumerate([("prompt", OutboundKind.DAILY_PROMPT), ("poll", OutboundKind.INTENSITY_POLL)])
    ]


def _outcome(*, replayed: bool) -> EventOutcome:
    # Decided for, and still addressed to, an active participant: the send rule lets them go.
    recipient = ConversationParticipant(
        id="p_" + "0" * 32, phone_number="+14155550101", enrolled_at=START, created_at=START, updated_at=START
    )
    return EventOutcome(
        participant_id="p",
        event_id="ev",
        replayed=replayed,
        outbound=_messages(),
        decided_status=ParticipantStatus.ACTIVE,
        recipient=recipient,
    )


def test_a_retry_after_a_partial_send_skips_what_was_sent() -> None:
    from tests.support import memory_harness

    # Given an event whose second message fails to send
    h = memory_harness()
    messenger = FlakyMessenger(fail_at=2)
    h.app = replace(h.app, messenger=messenger, ledger=InMemorySentLedger())  # the context is frozen
    with pytest.raises(MessagingError):
        apply_effects(h.app, _outcome(replayed=False))
    # When the event is redelivered and finds its committed record
    assert apply_effects(h.app, _outcome(replayed=True)) == 1
    # Then the prompt reached the participant once and the poll once
    assert messenger.delivered == ["ev#0", "ev#1"]


def test_a_redelivery_of_a_finished_event_sends_nothing() -> None:
    from tests.support import memory_harness

    # Given an event whose effects all went out
    h = memory_harness()
    messenger = FlakyMessenger(fail_at=99)
    h.app = replace(h.app, messenger=messenger)
    assert apply_effects(h.app, _outcome(replayed=False)) == 2
    # When a duplicate delivery of it arrives (at-least-once), it sends nothing again
    assert apply_effects(h.app, _outcome(replayed=True)) == 0
    assert messenger.delivered == ["ev#0", "ev#1"]


def test_a_failure_before_the_first_send_is_recorded_and_the_redelivery_sends_everything() -> None:
    from tests.support import memory_harness

    h = memory_harness()
    messenger = FlakyMessenger(fail_at=1)
    h.app = replace(h.app, messenger=messenger)
    with pytest.raises(MessagingError):
        apply_effects(h.app, _outcome(replayed=False))
    assert apply_effects(h.app, _outcome(replayed=True)) == 2
    assert messenger.delivered == ["ev#0", "ev#1"]
