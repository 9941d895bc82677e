"""A send that fails part-way: the retry re-sends only what did not reach the provider."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

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


def _outcome(*, replayed: bool, pid: str = "p") -> EventOutcome:
    # Decided for, and still addressed to, an active participant: the send rule lets them go (an
    # event's second message reads the participant again: ``pid`` is enrolled in the harness).
    recipient = ConversationParticipant(
        id="p_" + "0" * 32, phone_number="+14155550101", enrolled_at=START, created_at=START, updated_at=START
    )
    return EventOutcome(
        participant_id=pid,
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
    pid = h.enroll().id
    with pytest.raises(MessagingError):
        apply_effects(h.app, _outcome(replayed=False, pid=pid))
    # When the event is redelivered and finds its committed record
    assert apply_effects(h.app, _outcome(replayed=True, pid=pid)) == 1
    # Then the prompt reached the participant once and the poll once
    assert messenger.delivered == ["ev#0", "ev#1"]


def test_a_redelivery_of_a_finished_event_sends_nothing() -> None:
    from tests.support import memory_harness

    # Given an event whose effects all went out
    h = memory_harness()
    messenger = FlakyMessenger(fail_at=99)
    h.app = replace(h.app, messenger=messenger)
    pid = h.enroll().id
    assert apply_effects(h.app, _outcome(replayed=False, pid=pid)) == 2
    # When a duplicate delivery of it arrives (at-least-once), it sends nothing again
    assert apply_effects(h.app, _outcome(replayed=True, pid=pid)) == 0
    assert messenger.delivered == ["ev#0", "ev#1"]


def test_a_failure_before_the_first_send_is_recorded_and_the_redelivery_sends_everything() -> None:
    from tests.support import memory_harness

    h = memory_harness()
    messenger = FlakyMessenger(fail_at=1)
    h.app = replace(h.app, messenger=messenger)
    pid = h.enroll().id
    with pytest.raises(MessagingError):
        apply_effects(h.app, _outcome(replayed=False, pid=pid))
    assert apply_effects(h.app, _outcome(replayed=True, pid=pid)) == 2
    assert messenger.delivered == ["ev#0", "ev#1"]


# -- parts resume on every channel (docs/reliability.md, "The record under faults") ----------------------
TWO_PARTS = " ".join(f"{word * 300}." for word in ("Alpha", "Bravo"))  # two parts of 1,600 characters


class TwilioParts:
    """Twilio's Messages.json as an httpx transport: the n-th call answered with a 500 once."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at, self.bodies = fail_at, []  # type: ignore[var-annotated]

    def __call__(self, request: Any) -> Any:
        import httpx

        form = dict(parse_qsl(request.content.decode(), keep_blank_values=True))
        self.bodies.append(form.get("Body", ""))
        if len(self.bodies) == self.fail_at:
            return httpx.Response(500, json={"code": 20500, "message": "Internal Server Error"})
        return httpx.Response(201, json={"sid": f"SM-{len(self.bodies)}", "status": "queued"})


def _twilio_whatsapp(api: TwilioParts) -> Any:
    import httpx

    from promptpipe.adapters.messengers import TwilioMessenger

    return TwilioMessenger(
        "AC0123456789abcdef0123456789abcdef",
        "twilio-auth-token",
        from_number="+14155550000",
        channel="whatsapp",
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
        publish=False,
    )


@pytest.mark.logs_errors  # the failed part is logged: the case itself
def test_a_two_part_twilio_whatsapp_reply_whose_second_part_fails_resends_only_that_part() -> None:
    from tests.support import memory_harness

    # Given a 2-part WhatsApp reply through Twilio, whose second part fails once
    h = memory_harness()
    api = TwilioParts(fail_at=2)
    h.app = replace(h.app, messenger=_twilio_whatsapp(api), ledger=InMemorySentLedger())
    reply = OutboundMessage(participant_id="p", to="+14155550101", body=TWO_PARTS, message_id="ev#0")

    def outcome(replayed: bool) -> EventOutcome:
        built = _outcome(replayed=replayed)
        built.outbound = [reply]
        return built

    with pytest.raises(MessagingError):
        apply_effects(h.app, outcome(False))
    # When the event is redelivered
    assert apply_effects(h.app, outcome(True)) == 1
    # Then part 1 went once, part 2 twice (refused, then accepted): part 1 is not sent again
    assert [b[:5] for b in api.bodies] == ["Alpha", "Bravo", "Bravo"]


def test_a_meta_reply_with_buttons_after_a_long_text_resumes_after_the_text() -> None:
    import httpx

    from promptpipe.adapters.messengers import WhatsAppCloudMessenger
    from promptpipe.flow import questions

    # Given a long text followed by its buttons (two Cloud API calls), the buttons failing once
    posts: list[dict[str, Any]] = []

    def meta(request: httpx.Request) -> httpx.Response:
        posts.append(json.loads(request.content))
        if len(posts) == 2:
            return httpx.Response(500, json={"error": {"code": 1, "message": "down"}})
        return httpx.Response(200, json={"messages": [{"id": f"wamid.{len(posts)}"}]})

    messenger = WhatsAppCloudMessenger(
        "token", "123", http_client=httpx.Client(transport=httpx.MockTransport(meta)), publish=False
    )
    message = OutboundMessage(
        participant_id="p", to="+14155550101", body="x" * 1100, question=questions.DONE_QUESTION, message_id="ev#0"
    )
    with pytest.raises(MessagingError) as refused:
        messenger.send(message)
    assert refused.value.accepted_parts == ["wamid.1"]
    # When it is sent again with the text accepted: only the buttons go
    result = messenger.send(message.model_copy(update={"parts_accepted": ["wamid.1"]}))
    assert [p["type"] for p in posts] == ["text", "interactive", "interactive"]
    assert result.part_ids == ["wamid.1", "wamid.3"] and result.provider_message_id == "wamid.3"
