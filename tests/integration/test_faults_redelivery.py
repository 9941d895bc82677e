"""Fault suite: copies of an event that come back late, and an enrolment whose answer is lost
(docs/reliability.md#fault-suite).

Everything runs through the real handlers on the local stack (moto: DynamoDB, SQS FIFO, EventBridge
Scheduler; the worker drained from the queue):

- **late redelivery**: a 30-message batch is answered, then more than 25 newer events commit (the
  window of event records kept on the flow-state item), the clock moves days on, and the batch comes
  back (Meta retries an unacknowledged webhook for days; a dead-letter queue is redriven). Each copy
  must be answered at most once: no second reply, nothing committed. A scheduler firing (same
  execution id) redriven days later sends no second prompt.
- **lost enrolment answer**: the enrolment's write lands but its answer is lost (the client gets a
  503); the client's retry must get the participant it created, and the greeting goes out once.

Nothing sleeps: the clock is the environment's ``ManualClock``; the redelivered copies are put on the
queue as SQS would take them days later (a new deduplication id: moto's five-minute window runs on
the wall clock, AWS's would be long past).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.environment import SCHEDULED_PROMPT_ARN, LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.events import TurnEvent
from promptpipe.models.messaging import OutboundKind, OutboundMessage

BASE = "/conversation/participants"
PHONE = "+14155550123"
TWILIO_URL = "https://localhost/webhooks/twilio"
GREETING = "Hello! What habit would you like to build?"
BATCH = 30
NEWER = 26  # more than MAX_RECENT_EVENTS (25) newer events push the batch's records out of the window
DAYS_LATER = timedelta(days=3)


# ===================================================================================== harness ==
class RecordingMessenger:
    """The app's messenger, recording every message handed over successfully."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[OutboundMessage] = []

    def send(self, message: OutboundMessage, before_part: Any = None) -> Any:
        result = self.inner.send(message, before_part)
        self.sent.append(message)
        return result


class RecordingQueue:
    """The app's turn queue, keeping every turn the webhook or the enrolment enqueued."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.enqueued: list[TurnEvent] = []

    def enqueue(self, event: TurnEvent) -> None:
        self.inner.enqueue(event)
        self.enqueued.append(event)


@dataclass
class Stack:
    env: LocalEnvironment
    llm: ScriptedLLM
    messenger: RecordingMessenger
    queue: RecordingQueue
    pid: str = ""
    firings: list[dict[str, Any]] = field(default_factory=list)  # scheduled-prompt invocations

    def enroll(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        return self.env.api("POST", BASE, json_body=body, headers=headers)

    def text(self, body: str, sid: str) -> None:
        params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": body}
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "x-twilio-signature": twilio_signature(TWILIO_URL, params, self.env.settings.twilio_auth_token or ""),
        }
        response = self.env.api("POST", "/webhooks/twilio", body=twilio_form(params), headers=headers, base64_body=True)
        assert response.status == 200, response.body

    def redeliver(self, events: list[TurnEvent]) -> None:
        """The same turns enqueued again, as a provider's late webhook retry is (SQS accepts them:
        its five-minute deduplication window is long past), then the worker drains the queue."""
        sqs = self.env._sqs
        for event in events:
            copy = event.model_copy(update={"enqueued_at": self.env.clock.now()})
            sqs.send_message(
                QueueUrl=self.env.resources.inbound_queue_url,
                MessageBody=copy.model_dump_json(),
                MessageGroupId=copy.participant_id,
                MessageDeduplicationId=f"late-{copy.event_id}",
            )
        self.env.drain()

    def sent_for(self, event_ids: set[str]) -> list[OutboundMessage]:
        """Messages decided by these events (a message id is ``{event id}#{n}``)."""
        return [m for m in self.messenger.sent if m.message_id.rsplit("#", 1)[0] in event_ids]

    def version(self) -> int:
        return self.env.app.store.load(self.pid).flow.version

    def transcript_size(self) -> int:
        entries, _ = self.env.app.store.list_transcript(self.pid, limit=1000, next_token=None)
        return len(entries)

    def dead_letters(self) -> int:
        attributes = self.env._sqs.get_queue_attributes(
            QueueUrl=self.env.resources.inbound_dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
        )
        return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


@pytest.fixture
def stack(local_env_factory: Any) -> Iterator[Callable[..., Stack]]:
    """``stack(*model_steps)``: the local stack, the model scripted, messenger and queue recorded, the
    scheduled-prompt function's invocations kept (to redrive one later)."""

    def make(*steps: Any) -> Stack:
        llm = ScriptedLLM(list(steps))
        # Bursts of 30 messages, each answered: no participant budget here (docs/safety.md#budgets). The
        # scripted model answers without tools: with the flow controller on, intake would hand the
        # participant to a person after a few turns, and the hold answers without the model
        # (docs/safety.md). These cases are about redelivery, not intake.
        env = local_env_factory(
            llm=llm, budget_model_calls_per_hour=0, budget_model_calls_per_day=0, flow_controller_enabled=False
        )
        messenger = RecordingMessenger(env.app.messenger)
        queue = RecordingQueue(env.app.queue)
        env.use_ports(messenger=messenger, queue=queue)
        built = Stack(env=env, llm=llm, messenger=messenger, queue=queue)
        target = env._targets[SCHEDULED_PROMPT_ARN]

        def kept(event: dict[str, Any], context: Any) -> Any:
            built.firings.append(event)
            return target(event, context)

        env._targets[SCHEDULED_PROMPT_ARN] = kept
        return built

    yield make


def greeted(make: Callable[..., Stack], *steps: Any) -> Stack:
    s = make(ScriptedLLM.text(GREETING), *steps)
    response = s.enroll({"phone_number": PHONE, "name": "Alice"})
    assert response.status == 201, response.body
    s.pid = response.body["result"]["id"]
    assert [m.body for m in s.messenger.sent] == [GREETING]
    return s


def answers(prefix: str, count: int) -> list[Any]:
    return [ScriptedLLM.text(f"{prefix} {i}") for i in range(count)]


# ======================================================================= late redelivery (item 2) ==
def test_a_batch_redelivered_after_the_window_and_days_later_is_not_answered_again(stack: Any) -> None:
    # Given a participant whose 30-message batch was answered, then 26 newer messages (more than
    # the 25 event records the state item keeps), and three days passing
    s = greeted(stack, *answers("reply", BATCH + NEWER))
    for i in range(BATCH):
        s.text(f"batch message {i}", f"SMbatch{i:02d}")
    batch = [e for e in s.queue.enqueued if e.event_id.startswith("SMbatch")]
    batch_ids = {e.event_id for e in batch}
    assert len(batch) == BATCH and len(s.sent_for(batch_ids)) == BATCH
    for i in range(NEWER):
        s.text(f"newer message {i}", f"SMnewer{i:02d}")
    s.env.clock.advance(DAYS_LATER)
    loaded = s.env.app.store.load(s.pid)
    assert not batch_ids & {r.event_id for r in loaded.recent_events}  # the window no longer has them
    version, transcript, calls = s.version(), s.transcript_size(), s.llm.calls
    s.llm.add(*answers("second answer", BATCH))  # a late copy may still reach the model

    # When the provider redelivers the whole batch
    s.redeliver(batch)

    # Then no copy is answered again: no second reply, nothing committed, nothing dead-lettered
    assert len(s.sent_for(batch_ids)) == BATCH
    assert not [m for m in s.messenger.sent if m.body.startswith("second answer")]
    assert (s.version(), s.transcript_size()) == (version, transcript)
    assert s.dead_letters() == 0
    assert s.llm.calls - calls == BATCH  # each copy spent its one model call; no answer left (documented)


def test_a_scheduler_firing_redriven_days_later_sends_no_second_prompt(stack: Any) -> None:
    # Given a participant whose daily prompt (a scheduler firing) was delivered, then more than 25
    # newer events, and days passing
    schedule = {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    s = greeted(stack, ScriptedLLM.tool_call("scheduler", schedule), ScriptedLLM.text("Scheduled."))
    s.text("Remind me every day at 9:30.", "SMask")
    s.llm.add(*answers("generated", 5))  # whatever the delivery asks the model (prompt generation)
    s.env.advance(timedelta(days=1))
    assert s.firings, "the daily prompt fired"
    firing = s.firings[0]
    prompts = [m for m in s.messenger.sent if m.kind is OutboundKind.DAILY_PROMPT]
    assert len(prompts) == 1
    s.llm.add(*answers("reply", NEWER))
    for i in range(NEWER):
        s.text(f"newer message {i}", f"SMnewer{i:02d}")
    s.env.clock.advance(DAYS_LATER)
    version = s.version()
    s.llm.add(*answers("late", 5))

    # When the same firing (same execution id) is redriven from the dead-letter queue
    s.env._targets[SCHEDULED_PROMPT_ARN](firing, FakeLambdaContext(function_name="promptpipe-scheduled-prompt"))

    # Then no second prompt goes out and nothing is committed
    assert [m for m in s.messenger.sent if m.kind is OutboundKind.DAILY_PROMPT] == prompts
    assert s.version() == version


# ================================================================= lost enrolment answer (item 4) ==
def lose_the_answer_of_the_next_enrolment(s: Stack, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The enrolment's transaction lands in DynamoDB, then its answer is lost (a read timeout after
    botocore's retries): the API answers 503 although the participant exists."""
    client = s.env.app.repo._client  # type: ignore[attr-defined]
    real = client.transact_write_items
    lost: list[int] = []

    def landed_then_lost(**request: Any) -> Any:
        result = real(**request)
        if not lost:
            lost.append(1)
            raise ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com")
        return result

    monkeypatch.setattr(client, "transact_write_items", landed_then_lost)
    return lost


def greetings(s: Stack) -> list[OutboundMessage]:
    return [m for m in s.messenger.sent if m.kind is OutboundKind.GREETING]


def test_an_enrolment_whose_answer_was_lost_is_answered_by_its_retry_and_greets_once(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an enrolment whose write landed but whose answer was lost (the client got a 503)
    s = stack(ScriptedLLM.text(GREETING))
    lost = lose_the_answer_of_the_next_enrolment(s, monkeypatch)
    body = {"phone_number": PHONE, "name": "Alice", "timezone": "America/Toronto"}
    first = s.enroll(body)
    assert (first.status, lost) == (503, [1])
    pid = s.env.app.repo.find_id_by_phone(PHONE)
    assert pid is not None and greetings(s) == []  # enrolled, not greeted

    # When the client retries the same request, twice
    retry = s.enroll(body)
    again = s.enroll(body)

    # Then each retry gets the participant the first attempt created, as it is stored, and the
    # greeting went out exactly once
    stored = s.env.api("GET", f"{BASE}/{pid}")
    assert (retry.status, again.status) == (200, 200), retry.body
    assert retry.body["result"] == again.body["result"] == stored.body["result"]
    assert [m.body for m in greetings(s)] == [GREETING]
    s.llm.assert_exhausted()


def test_an_enrolment_retried_with_its_idempotency_key_gets_its_participant_and_another_request_a_conflict(
    stack: Any,
) -> None:
    # Given a participant enrolled with an Idempotency-Key
    s = stack(ScriptedLLM.text(GREETING))
    body = {"phone_number": PHONE, "name": "Alice"}
    key = {"Idempotency-Key": "3f1c9a52-enrol-alice"}
    created = s.enroll(body, key)
    assert created.status == 201, created.body

    # When the same request comes again, and then other requests for the same number
    retried = s.enroll(body, key)
    other_key = s.enroll(body, {"Idempotency-Key": "another-request"})
    no_key = s.enroll(body)
    other_body = s.enroll({**body, "name": "Bob"}, key)

    # Then the retry is the same participant (200, the same representation); the others are 409
    assert retried.status == 200 and retried.body["result"] == created.body["result"]
    assert (other_key.status, no_key.status, other_body.status) == (409, 409, 409)
    assert [m.body for m in greetings(s)] == [GREETING]


def test_an_enrolment_without_a_key_is_retried_by_the_same_body_only(stack: Any) -> None:
    # Given a participant enrolled without a key
    s = stack(ScriptedLLM.text(GREETING))
    created = s.enroll({"phone_number": PHONE, "name": "Alice"})
    assert created.status == 201

    # When the same body comes again (the number spelled otherwise), and a different body
    same = s.enroll({"phone_number": "+1 415 555 0123", "name": "Alice"})
    different = s.enroll({"phone_number": PHONE, "name": "Alice B."})

    # Then the same body is the same participant; a different one stays a conflict
    assert same.status == 200 and same.body["result"] == created.body["result"]
    assert different.status == 409
    assert [m.body for m in greetings(s)] == [GREETING]
