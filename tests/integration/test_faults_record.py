"""Fault suite, the record (docs/reliability.md, "The record under faults"; issue 37): a failed
send is never lost silently, parts resume on every channel, and the send rule is checked before
every message of an event.

Each scenario runs through the real handlers on the local stack (moto), with the participant and
helpers of ``test_faults_sending``.
"""

from __future__ import annotations

from typing import Any

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.store import MAX_RECENT_EVENTS
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
