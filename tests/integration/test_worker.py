"""The inbound worker: real SQS FIFO event records from moto through the worker handler
(SqsFifoPartialProcessor + Powertools Idempotency on its own table), with the scripted coach and the
local outbox. Failures are retried by SQS (the drainer resets visibility) and finally dead-lettered
by the queue's redrive policy."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import LLMError
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, sqs_record
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.usecases.inbound_record import MODEL_UNAVAILABLE_REPLY
from tests.support import enroll_over_api

BASE = "/conversation/participants"
PHONE = "+14155550101"
OTHER_PHONE = "+14155550102"
TWILIO_URL = "https://localhost/webhooks/twilio"


# -- helpers ------------------------------------------------------------------------------------
def sqs() -> Any:
    return boto3.client("sqs", region_name="us-east-1")


def text_in(env: LocalEnvironment, text: str, sid: str, phone: str = PHONE) -> None:
    """A signed Twilio webhook, delivered to the webhook handler only: the turn waits on the queue."""
    from functions.inbound import webhook

    params = {"MessageSid": sid, "AccountSid": "AC1", "From": phone, "To": "+14155550000", "Body": text}
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token),
    }
    event = http_api_event(
        "POST", "/webhooks/twilio", body=twilio_form(params), headers=headers, base64_body=True, now=env.clock.now()
    )
    response = webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))
    assert response["statusCode"] == 200


def invoke_worker_once(env: LocalEnvironment) -> tuple[list[dict[str, Any]], set[str]]:
    """Receive one batch from the inbound queue and hand it to the worker as Lambda's SQS poller would.

    Returns the received messages and the ids that failed. Nothing is deleted or released: ``settle``
    does that, as the event source mapping would."""
    from functions.inbound import worker

    received = sqs().receive_message(
        QueueUrl=env.resources.inbound_queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
        VisibilityTimeout=30,
    )
    messages = received.get("Messages", [])
    event = {"Records": [sqs_record(m, env.resources.inbound_queue_arn) for m in messages]}
    try:
        result = worker.handler(event, FakeLambdaContext(function_name="promptpipe-worker"))
    except BatchProcessingError:  # every record failed: Lambda returns the whole batch to the queue
        return messages, {m["MessageId"] for m in messages}
    return messages, {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}


def settle(env: LocalEnvironment, messages: list[dict[str, Any]], failed: set[str]) -> None:
    """What Lambda's event source mapping does after a batch: delete successes, release failures."""
    for message in messages:
        if message["MessageId"] in failed:
            sqs().change_message_visibility(
                QueueUrl=env.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
        else:
            sqs().delete_message(QueueUrl=env.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"])


def history(env: LocalEnvironment, pid: str) -> list[tuple[str, str]]:
    response = env.api("GET", f"{BASE}/{pid}/history", query={"include_audit": "false"})
    assert response.status == 200, response.body
    return [(e["direction"], e["content"]) for e in response.body["result"]["messages"]]


def version(env: LocalEnvironment, pid: str) -> int:
    return env.api("GET", f"{BASE}/{pid}/state").body["result"]["version"]


def sent(env: LocalEnvironment, pid: str) -> list[str]:
    return [m.body for m in env.messages(pid)]


def queue_depth(env: LocalEnvironment, url: str) -> int:
    attributes = sqs().get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


# -- LLM failure ----------------------------------------------------------------------------------
@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_llm_failure_fails_the_record_commits_nothing_and_the_retry_succeeds_once(local_env_factory) -> None:
    # Given a greeted participant, and a model that fails once and then answers
    llm = ScriptedLLM(
        [ScriptedLLM.text("Hello!"), LLMError("boom", retryable=True), ScriptedLLM.text("Sorry for the wait: hi!")]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    before, before_version = history(env, pid), version(env, pid)
    text_in(env, "hi coach", "SM-llm-fail")

    # When the worker takes the turn and the model call fails
    messages, failed = invoke_worker_once(env)

    # Then the record is reported failed (so SQS retries it), nothing was committed, and the
    # message is in the record with the one fixed reply the participant got (docs/reliability.md)
    assert [m["MessageId"] for m in messages] == list(failed)
    assert history(env, pid) == [*before, ("inbound", "hi coach"), ("outbound", MODEL_UNAVAILABLE_REPLY)]
    assert version(env, pid) == before_version
    assert sent(env, pid) == ["Hello!", MODEL_UNAVAILABLE_REPLY]

    # When SQS redelivers it
    settle(env, messages, failed)
    assert env.drain() == 1

    # Then the turn runs once more and succeeds, with no duplicate history
    assert llm.calls == 3
    assert llm.requests[1].messages[-1].content == llm.requests[2].messages[-1].content == "hi coach"
    assert history(env, pid) == [
        ("outbound", "Hello!"),
        ("inbound", "hi coach"),
        ("outbound", "Sorry for the wait: hi!"),
        ("outbound", MODEL_UNAVAILABLE_REPLY),  # the same instant on the test's clock: sorted by seq
    ]
    assert sent(env, pid) == ["Hello!", MODEL_UNAVAILABLE_REPLY, "Sorry for the wait: hi!"]
    assert version(env, pid) == before_version + 1


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_llm_failure_then_success_through_the_drainer(local_env_factory) -> None:
    # Given a greeted participant and a model that fails twice before answering
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hello!"),
            LLMError("rate limited", status_code=429, retryable=True),
            LLMError("timeout", retryable=True),
            ScriptedLLM.text("Here now."),
        ]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When the message arrives and the queue is drained (SQS retries included)
    text_in(env, "hello?", "SM-twice")
    env.drain()

    # Then the third attempt answered, and the transcript holds the exchange once
    assert llm.calls == 4
    assert history(env, pid) == [
        ("outbound", "Hello!"),
        ("inbound", "hello?"),
        ("outbound", "Here now."),
        ("outbound", MODEL_UNAVAILABLE_REPLY),  # once, for the first failure (the test's clock stands still)
    ]
    assert queue_depth(env, env.resources.inbound_dlq_url) == 0


# -- send failure after commit --------------------------------------------------------------------
@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_send_failure_after_commit_is_resent_without_a_second_llm_call(local_env_factory) -> None:
    # Given a greeted participant, a model with one reply, and a provider that fails the next send
    llm = ScriptedLLM([ScriptedLLM.text("Hello!"), ScriptedLLM.text("The one and only reply.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    env.outbox.fail_next(1)
    text_in(env, "anyone there?", "SM-send-fail")

    # When the worker runs the turn and the send fails
    messages, failed = invoke_worker_once(env)

    # Then the record fails, but the turn is committed: the reply is in the transcript, not sent
    assert [m["MessageId"] for m in messages] == list(failed)
    assert llm.calls == 2
    assert history(env, pid)[-1] == ("outbound", "The one and only reply.")
    assert sent(env, pid) == ["Hello!"]

    # When SQS redelivers the record
    settle(env, messages, failed)
    assert env.drain() == 1

    # Then the stored reply is sent, without asking the model again and without a second entry
    assert llm.calls == 2
    assert sent(env, pid) == ["Hello!", "The one and only reply."]
    assert history(env, pid) == [
        ("outbound", "Hello!"),
        ("inbound", "anyone there?"),
        ("outbound", "The one and only reply."),
    ]


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_greeting_send_failure_keeps_the_enrollment_and_is_resent(local_env_factory) -> None:
    # Given a provider that fails the next send
    llm = ScriptedLLM([ScriptedLLM.text("Hello, nice to meet you!")])
    env = local_env_factory(llm=llm)
    env.outbox.fail_next(1)

    # When a participant is enrolled (the greeting is queued, generated, its send fails, then retried)
    pid = enroll_over_api(env)

    # Then enrollment stands and the greeting is sent once, generated once
    assert env.api("GET", f"{BASE}/{pid}").status == 200
    assert llm.calls == 1
    assert sent(env, pid) == ["Hello, nice to meet you!"]
    assert history(env, pid) == [("outbound", "Hello, nice to meet you!")]


# -- dead-lettering -------------------------------------------------------------------------------
@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_turn_that_keeps_failing_is_dead_lettered_after_three_receives(local_env_factory) -> None:
    # Given a greeted participant and a model that fails three times, then recovers
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hello!"),
            LLMError("down", retryable=True),
            LLMError("down", retryable=True),
            LLMError("down", retryable=True),
            ScriptedLLM.text("I'm back. How did it go?"),
        ]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    text_in(env, "lost message", "SM-doomed")

    # When the queue is drained: every receive fails until the redrive policy moves the message
    env.drain()

    # Then the model was tried three times (maxReceiveCount) and the turn is in the DLQ
    assert llm.calls == 4
    assert queue_depth(env, env.resources.inbound_queue_url) == 0
    dead = sqs().receive_message(QueueUrl=env.resources.inbound_dlq_url, MaxNumberOfMessages=10)["Messages"]
    assert len(dead) == 1
    body = json.loads(dead[0]["Body"])
    assert (body["participant_id"], body["event_id"], body["message"]["body"]) == (pid, "SM-doomed", "lost message")
    # And the participant was told once that we will get back to them, and their message is in the
    # record, not answered (the unanswered-turns sweep redrives it: test_faults_record.py)
    assert sent(env, pid) == ["Hello!", MODEL_UNAVAILABLE_REPLY]
    assert history(env, pid) == [
        ("outbound", "Hello!"),
        ("inbound", "lost message"),
        ("outbound", MODEL_UNAVAILABLE_REPLY),
    ]

    # When they write again
    text_in(env, "hello again", "SM-next")
    env.drain()

    # Then the new message is a fresh turn: the conversation is not stuck behind the dead letter
    assert sent(env, pid) == ["Hello!", MODEL_UNAVAILABLE_REPLY, "I'm back. How did it go?"]
    assert llm.requests[-1].messages[-1].content == "hello again"


# -- ordering and isolation -----------------------------------------------------------------------
class FailFirstFor:
    """A scripted step factory: the first call whose last user message is ``text`` fails; every call
    answers "re: <last user message>"."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.failed = False

    def __call__(self, request: ChatRequest) -> ChatResponse:
        last = request.messages[-1].content or ""
        if last == self.text and not self.failed:
            self.failed = True
            raise LLMError("transient", retryable=True)
        return ScriptedLLM.text(f"re: {last}")


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_failing_turn_holds_back_that_participants_later_messages_but_not_others(local_env_factory) -> None:
    # Given two greeted participants, and a model that fails A's first message once
    step = FailFirstFor("a1")
    llm = ScriptedLLM([ScriptedLLM.text("Hello A"), ScriptedLLM.text("Hello B"), *[step] * 6])
    env = local_env_factory(llm=llm)
    a, b = enroll_over_api(env, PHONE), enroll_over_api(env, OTHER_PHONE)

    # When A sends two messages and B one, all waiting on the queue together
    text_in(env, "a1", "SM-a1")
    text_in(env, "a2", "SM-a2")
    text_in(env, "b1", "SM-b1", phone=OTHER_PHONE)
    env.drain()

    # Then A's messages are still answered in order, after the retry, and B's is answered too
    assert sent(env, a) == ["Hello A", MODEL_UNAVAILABLE_REPLY, "re: a1", "re: a2"]
    assert sent(env, b) == ["Hello B", "re: b1"]
    assert history(env, a) == [
        ("outbound", "Hello A"),
        ("inbound", "a1"),
        ("outbound", "re: a1"),
        ("inbound", "a2"),
        ("outbound", "re: a2"),
        ("outbound", MODEL_UNAVAILABLE_REPLY),  # the same instant on the test's clock: sorted by seq
    ]
    # And a2 was never asked before a1 succeeded
    user_turns = [r.messages[-1].content for r in llm.requests[2:]]
    assert user_turns.index("a2") > max(i for i, t in enumerate(user_turns) if t == "a1")
