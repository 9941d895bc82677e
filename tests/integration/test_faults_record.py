"""Fault suite, the record (docs/reliability.md, "The record under faults"): a failed
send is never lost silently, parts resume on every channel, and the send rule is checked before
every message of an event.

Each scenario runs through the real handlers on the local stack (moto), with the participant and
helpers of ``test_faults_sending``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import LLMError
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.store import MAX_RECENT_EVENTS
from promptpipe.usecases.inbound_record import MODEL_UNAVAILABLE_REPLY
from tests.integration import test_faults_sending
from tests.integration.test_faults_sending import PHONE, TWILIO_URL, Stack

stack = test_faults_sending.stack  # the fixture: a greeted participant with a daily 09:30 prompt


def status_callback(s: Stack, sid: str) -> int:
    """A signed Twilio status callback (an earlier message reported undelivered): one commit of
    the webhook on the participant's state."""
    from functions.inbound import webhook

    params = {
        "MessageSid": sid,
        "AccountSid": "AC1",
        "From": "+14155550000",
        "To": PHONE,
        "MessageStatus": "undelivered",
        "ErrorCode": "30003",
    }
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, s.env.settings.twilio_auth_token or ""),
    }
    event = http_api_event(
        "POST", "/webhooks/twilio", now=s.env.clock.now(), body=twilio_form(params), headers=headers, base64_body=True
    )
    status: int = webhook.handler(event, FakeLambdaContext(function_name="webhook"))["statusCode"]
    return status


# ============================================== a failed send survives any number of commits ======
@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_a_failed_reply_is_sent_by_the_redelivery_after_30_webhook_commits(stack: Any) -> None:
    # Given a turn whose reply fails to send (the record goes back to the queue); the model is
    # scripted twice: the redelivery runs the turn again before its commit finds the id claimed
    s = stack(ScriptedLLM.text("Great question!"), ScriptedLLM.text("A second answer, never sent"))
    before = len(s.sent())
    record = s.enqueue("What should I do today?", "SM-r30")
    s.env.outbox.fail_next(1)
    assert len(s.work(record)) == 1  # (no API call here: the local API drains the queue)

    # When the webhook commits 30 status callbacks before SQS redelivers the turn (more than the
    # state item's window of event records)
    for n in range(MAX_RECENT_EVENTS + 5):
        assert status_callback(s, f"SM-old-{n}") == 200
    assert s.work(record) == []

    # Then the redelivery sent exactly the reply that was not sent, once, and its outcome says so
    assert [m.body for m in s.sent(before)] == ["Great question!"]
    [reply] = [m for m in s.outbound("reply") if m["content"] == "Great question!"]
    assert reply["delivery"]["status"] == "sent"
    assert not [m for m in s.outbound("reply") if m["content"] == "A second answer, never sent"]


class CountingProvider:
    """The local stack's provider double behind one that does not deduplicate (Twilio does not):
    every send that returns is one more message on the participant's phone."""

    def __init__(self, s: Stack) -> None:
        self.inner, self.accepted = s.env.app.messenger, list[str]()

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        result = self.inner.send(message, before_part)
        self.accepted.append(message.body)
        return result


@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_a_reply_resumed_after_30_webhook_commits_is_not_sent_again_by_a_third_copy(stack: Any) -> None:
    # Given a turn whose reply failed to send, 30 webhook commits, and the redelivery that sent it
    # from the sent record (each copy past the window runs the model again; the answer is discarded)
    discarded = ScriptedLLM.text("A second answer, never sent")
    s = stack(ScriptedLLM.text("Great question!"), discarded, discarded)
    provider = CountingProvider(s)
    s.env.use_ports(messenger=provider)
    record = s.enqueue("What should I do today?", "SM-r3")
    s.env.outbox.fail_next(1)
    assert len(s.work(record)) == 1
    for n in range(MAX_RECENT_EVENTS + 5):
        assert status_callback(s, f"SM-old-{n}") == 200
    assert s.work(record) == []

    # When SQS delivers a third copy of the turn (its record still only in the sent record)
    assert s.work(record) == []

    # Then the provider accepted the reply once across the three copies, and its outcome says sent
    assert provider.accepted == ["Great question!"]
    [reply] = [m for m in s.outbound("reply") if m["content"] == "Great question!"]
    assert reply["delivery"]["status"] == "sent"


# ====================================== the send rule before every message of an event ======
class StopDuringTheFirstSend:
    """The provider double of the local stack; while the event's first message goes out, the
    participant's STOP arrives through the webhook (and is committed)."""

    def __init__(self, s: Stack) -> None:
        self.s, self.inner, self.stopped = s, s.env.app.messenger, False

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        result = self.inner.send(message, before_part)
        if not self.stopped and message.kind is OutboundKind.DAILY_PROMPT:
            self.stopped = True
            assert self.s.text("STOP", "SM-stop-between") == 200
        return result


def test_a_stop_between_the_daily_prompt_and_its_poll_stops_the_poll(stack: Any) -> None:
    # Given the day's prompt and its intensity poll, two messages of one event
    s = stack()
    before = len(s.sent())
    s.env.use_ports(messenger=StopDuringTheFirstSend(s))

    # When the participant's STOP lands while the prompt goes out
    s.fire_prompt(s.prompt_invocation("exec-stop-between"))

    # Then the poll is not sent after the unsubscribe confirmation: prompt, confirmation, nothing more
    kinds = [m.kind for m in s.sent(before)]
    assert kinds == [OutboundKind.DAILY_PROMPT, OutboundKind.NOTICE]
    [poll] = s.outbound("intensity_poll")
    assert poll["delivery"]["status"] == "skipped" and poll["delivery"]["reason"] == "participant opted out"


# ============================================= every inbound message is in the record once ======
def inbound(s: Stack) -> list[dict[str, Any]]:
    return [m for m in s.history() if m["direction"] == "inbound"]


def test_a_message_is_in_the_record_once_with_its_provider_id(stack: Any) -> None:
    # Given a turn that goes well
    s = stack(ScriptedLLM.text("Sounds good."))
    assert s.text("I walked today", "SM-once") == 200
    # Then the message is in the transcript once, answered, with its provider id
    [entry] = [m for m in inbound(s) if m["content"] == "I walked today"]
    assert entry["state"] == "" and entry["metadata"]["provider_message_id"] == "SM-once"


def sweep(s: Stack) -> dict[str, Any]:
    """The stack's unanswered-turns sweep schedule, invoking the worker."""
    from functions.inbound import worker

    result: dict[str, Any] = worker.handler({"sweep": "unanswered"}, FakeLambdaContext(function_name="worker"))
    return result


@pytest.mark.logs_errors  # the outage is the case: each receive fails and is logged
def test_a_model_outage_is_told_once_and_marked_not_answered_in_the_record(stack: Any) -> None:
    # Given the model down for every receive of the turn (and for the sweep's first look), then back
    s = stack(
        *[LLMError("model down") for _ in range(INBOUND_MAX_RECEIVE_COUNT + 1)],
        ScriptedLLM.text("OK"),
        ScriptedLLM.text("Yes, I'm here: how did today go?"),
    )
    before = len(s.sent())

    # When the participant writes (the queue's three receives fail, then the dead-letter queue)
    assert s.text("Are you there?", "SM-outage") == 200

    # Then they heard one short fixed reply, once, and the record says the message was not answered
    assert [m.body for m in s.sent(before)] == [MODEL_UNAVAILABLE_REPLY]
    [entry] = [m for m in inbound(s) if m["content"] == "Are you there?"]
    assert entry["state"] == "not answered: model unavailable"
    [notice] = [m for m in s.outbound("notice") if m["content"] == MODEL_UNAVAILABLE_REPLY]
    assert notice["delivery"]["status"] == "sent"
    # and the turn waits in the dead-letter queue
    dead = s.env._sqs.receive_message(QueueUrl=s.env.resources.inbound_dlq_url, MaxNumberOfMessages=10)
    assert [json.loads(m["Body"])["event_id"] for m in dead.get("Messages", [])] == ["SM-outage"]
    for message in dead["Messages"]:  # looked at, not taken: visible again for the sweep
        s.env._sqs.change_message_visibility(
            QueueUrl=s.env.resources.inbound_dlq_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )

    # When the sweep runs while the model is still down: nothing moves, nobody is told twice
    assert sweep(s) == {"waiting": 1, "model_answers": False, "redriven": 0}
    # When it runs once the model answers again: the turn goes back on the queue and is answered
    assert sweep(s) == {"waiting": 1, "model_answers": True, "redriven": 1}
    s.env.drain()
    assert [m.body for m in s.sent(before)] == [MODEL_UNAVAILABLE_REPLY, "Yes, I'm here: how did today go?"]
    # and the message is in the record once, answered
    [entry] = [m for m in inbound(s) if m["content"] == "Are you there?"]
    assert entry["state"] == ""
    assert s.env._sqs.receive_message(QueueUrl=s.env.resources.inbound_dlq_url).get("Messages", []) == []


# ============================================== a later delivery report updates the message ======
def test_a_prompt_reported_undelivered_later_is_failed_everywhere_it_is_counted(stack: Any) -> None:
    # Given the day's prompt, accepted by the provider
    s = stack()
    s.fire_prompt(s.prompt_invocation("exec-reported"))
    [prompt] = s.outbound("daily_prompt")
    assert prompt["delivery"]["status"] == "sent" and s.summary_prompts_sent() == 1
    assert rows_prompts_sent(s) == 1

    # When Twilio reports it undelivered later (30003)
    assert status_callback(s, prompt["delivery"]["provider_id"]) == 200

    # Then the prompt's own outcome says so, in plain words, and the counts follow it
    [prompt] = s.outbound("daily_prompt")
    assert prompt["delivery"]["status"] == "failed" and prompt["delivery"]["code"] == "30003"
    assert prompt["delivery"]["reason"] == "undelivered: the phone was unreachable (off or out of coverage)"
    assert s.summary_prompts_sent() == 0
    assert rows_prompts_sent(s) == 0  # the list's counter, on the flow state
    # and the same report again changes nothing more
    assert status_callback(s, prompt["delivery"]["provider_id"]) == 200
    assert rows_prompts_sent(s) == 0 and len([m for m in s.history() if m["kind"] == "delivery_failed"]) == 1


def rows_prompts_sent(s: Stack) -> int:
    response = s.env.api("GET", "/conversation/participant-rows")
    assert response.status == 200, response.body
    [row] = [r for r in response.body["result"]["rows"] if r["participant"]["id"] == s.pid]
    count: int = row["prompts_sent"]
    return count


def test_the_transcript_reads_a_later_report_in_plain_words() -> None:
    from datetime import UTC, datetime

    from promptpipe.coordinator.summary import not_delivered
    from promptpipe.models.store import DeliveryOutcome, Direction, TranscriptEntry

    entry = TranscriptEntry(
        participant_id="p",
        at=datetime(2026, 3, 2, tzinfo=UTC),
        seq="1",
        direction=Direction.OUTBOUND,
        kind="daily_prompt",
        content="",
        delivery=DeliveryOutcome(status="failed", code="30005", reason="undelivered: the number is unknown"),
    )
    assert not_delivered(entry) == "not delivered (provider code 30005: the number is unknown)"


def test_the_inbound_log_on_dynamodb(stack: Any) -> None:
    from datetime import timedelta

    from promptpipe.models.store import Direction, InboundState, TranscriptEntry

    s = stack()
    log = s.env.app.inbound
    assert log is not None
    at = s.env.clock.now()
    entry = TranscriptEntry(
        participant_id=s.pid,
        at=at,
        seq="in#SM-log",
        direction=Direction.INBOUND,
        kind="message",
        content="hi",
        state=InboundState.AWAITING_REPLY,
    )
    assert log.accept(entry) and not log.accept(entry)
    assert log.mark(s.pid, at, entry.seq, InboundState.MODEL_UNAVAILABLE, expect=InboundState.AWAITING_REPLY)
    assert not log.mark(s.pid, at, entry.seq, InboundState.MODEL_UNAVAILABLE, expect=InboundState.AWAITING_REPLY)
    # an answered entry is never overwritten by an unsaved one, and is not discarded
    answered = entry.model_copy(update={"seq": "0000000009#000", "state": ""})
    log.write_unsaved([answered])
    log.write_unsaved([answered.model_copy(update={"content": "other"})])
    log.discard(s.pid, at, answered.seq)
    log.discard(s.pid, at, entry.seq)
    log.discard(s.pid, at, entry.seq)  # gone already: nothing to do
    mine = [m for m in s.history() if m["direction"] == "inbound" and m["content"] in ("hi", "other")]
    assert [(m["content"], m["state"]) for m in mine] == [("hi", "")]
    # a report for a message nobody sent finds nothing
    deliveries = s.env.app.deliveries
    assert deliveries is not None
    assert deliveries.find_sent(s.pid, "SM-nobody", at - timedelta(days=1)) is None
