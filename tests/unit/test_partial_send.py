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

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
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
    pid = h.enroll().id  # enrolled: the send rule, asked before part 2, lets it go
    reply = OutboundMessage(participant_id=pid, to="+14155550101", body=TWO_PARTS, message_id="ev#0")

    def outcome(replayed: bool) -> EventOutcome:
        built = _outcome(replayed=replayed, pid=pid)
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


# -- the send rule before every part (docs/reliability.md, "The record under faults") -------------------
class TwilioStopAfterFirstPart:
    """Twilio's Messages.json as an httpx transport: while the first part is in flight, the
    participant's STOP arrives through the webhook's use case and is committed."""

    def __init__(self, h: Any, participant: ConversationParticipant) -> None:
        self.h, self.participant, self.bodies = h, participant, []  # type: ignore[var-annotated]

    def __call__(self, request: Any) -> Any:
        import httpx

        from promptpipe.usecases.receive_inbound import receive_inbound

        form = dict(parse_qsl(request.content.decode(), keep_blank_values=True))
        self.bodies.append(form.get("Body", ""))
        sid = f"SM-{self.bodies[-1][:5]}"
        if len(self.bodies) == 1:
            stop = self.h.message(self.participant, "STOP", msg_id="SM-stop")
            assert receive_inbound(self.h.app, stop).action == "opted_out"
        return httpx.Response(201, json={"sid": sid, "status": "queued"})


@pytest.mark.parametrize("channel", ["sms", "whatsapp"])
def test_a_stop_committed_between_two_parts_stops_the_second_part(channel: str) -> None:
    import httpx

    from promptpipe.adapters.messengers import TwilioMessenger
    from promptpipe.adapters.scripted_llm import ScriptedLLM
    from tests.support import memory_harness, turn

    # Given a reply in two parts, through Twilio (SMS or WhatsApp)
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(TWO_PARTS)]))
    participant = h.enroll()
    api = TwilioStopAfterFirstPart(h, participant)
    messenger = TwilioMessenger(
        "AC0123456789abcdef0123456789abcdef",
        "twilio-auth-token",
        from_number="+14155550000",
        channel=channel,  # type: ignore[arg-type]
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
        publish=False,
    )
    h.app = replace(h.app, messenger=messenger)

    # When the participant's STOP is committed while part 1 goes out
    turn(h, participant, "Tell me everything about habits", msg_id="SM-long")

    # Then part 2 is never sent: part 1, then the unsubscribe confirmation, nothing after it
    assert [b[:5] for b in api.bodies] == ["Alpha", "You'r"]
    # and the reply's own outcome says so: skipped, why, and which part went
    [reply] = [e for e in h.store.transcripts[participant.id] if e.kind == "reply"]
    assert reply.delivery is not None and reply.delivery.status == "skipped"
    assert reply.delivery.reason == "participant opted out (after part 1 of 2)"
    assert reply.delivery.parts == ["SM-Alpha"] and not reply.delivered


def test_a_participant_deleted_between_two_parts_gets_no_second_part() -> None:
    from tests.support import memory_harness

    # Given a 2-part WhatsApp reply through Twilio, whose recipient is deleted while part 1 goes out
    h = memory_harness()
    pid = h.enroll().id
    bodies: list[str] = []

    def api(request: Any) -> Any:
        import httpx

        bodies.append(dict(parse_qsl(request.content.decode())).get("Body", ""))
        h.store.participants.pop(pid)
        return httpx.Response(201, json={"sid": f"SM-{len(bodies)}"})

    h.app = replace(h.app, messenger=_twilio_whatsapp(api))
    built = _outcome(replayed=False, pid=pid)
    built.outbound = [OutboundMessage(participant_id=pid, to="+14155550101", body=TWO_PARTS, message_id="ev#0")]

    # When its effects are applied
    assert apply_effects(h.app, built) == 0
    # Then only part 1 reached the provider
    assert [b[:5] for b in bodies] == ["Alpha"]


def test_meta_buttons_after_a_long_text_are_not_sent_once_the_rule_says_stop() -> None:
    import httpx

    from promptpipe.adapters.messengers import WhatsAppCloudMessenger
    from promptpipe.flow import questions

    # Given a long text followed by its buttons (two Cloud API calls)
    posts: list[dict[str, Any]] = []

    def meta(request: httpx.Request) -> httpx.Response:
        posts.append(json.loads(request.content))
        return httpx.Response(200, json={"messages": [{"id": f"wamid.{len(posts)}"}]})

    messenger = WhatsAppCloudMessenger(
        "token", "123", http_client=httpx.Client(transport=httpx.MockTransport(meta)), publish=False
    )
    message = OutboundMessage(
        participant_id="p", to="+14155550101", body="x" * 1100, question=questions.DONE_QUESTION, message_id="ev#0"
    )
    asked: list[int] = []

    def opted_out() -> str:
        asked.append(len(posts))
        return "participant opted out"

    # When the send rule, asked after the text went, says the participant opted out
    result = messenger.send(message, before_part=opted_out)
    # Then the buttons never went; the result names the part sent and why the rest stopped
    assert [p["type"] for p in posts] == ["text"] and asked == [1]
    assert result.part_ids == ["wamid.1"] and result.stopped == "participant opted out"
    # and a resumed send whose text was accepted earlier sends the buttons without asking (the
    # caller checked the rule before the message)
    resumed = messenger.send(message.model_copy(update={"parts_accepted": ["wamid.1"]}), before_part=opted_out)
    assert [p["type"] for p in posts] == ["text", "interactive"] and asked == [1]
    assert resumed.part_ids == ["wamid.1", "wamid.2"] and not resumed.stopped


def test_the_rule_is_asked_before_each_part_after_the_first_sent() -> None:
    # Given a 3-part SMS resumed after its first part, and a rule that lets everything go
    import httpx

    from promptpipe.adapters.messengers import TwilioMessenger

    api = TwilioParts(fail_at=99)
    messenger = TwilioMessenger(
        "AC0123456789abcdef0123456789abcdef",
        "twilio-auth-token",
        from_number="+14155550000",
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
        publish=False,
    )
    three = " ".join(f"{word * 300}." for word in ("Alpha", "Bravo", "Charlie"[:5]))
    asked: list[int] = []

    def allowed() -> None:
        asked.append(len(api.bodies))

    message = OutboundMessage(participant_id="p", to="+14155550101", body=three, message_id="ev#0")
    result = messenger.send(message.model_copy(update={"parts_accepted": ["SM-0"]}), before_part=allowed)
    # Then parts 2 and 3 went, the rule asked once between them (not before part 2: the caller did)
    assert [b[:5] for b in api.bodies] == ["Bravo", "Charl"] and asked == [1]
    assert result.part_ids == ["SM-0", "SM-1", "SM-2"] and not result.stopped
