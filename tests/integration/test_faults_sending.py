"""Fault suite, sending (docs/reliability.md, "Fault suite"): nothing is sent that should not be,
nothing promised is lost, and the transcript says what really happened.

Each scenario runs through the real handlers on the local stack (moto: DynamoDB, SQS FIFO,
EventBridge Scheduler): a greeted participant whose first turn creates a daily 09:30 prompt, then
a fault. The SQS record or the scheduler invocation is handed to its handler directly, so that a
STOP, a pause or a deletion can land between a failed delivery and its retry:

- messages after opt-out or pause: a reply redelivered by SQS after STOP; a daily prompt retried by
  the scheduler after STOP or an operator pause; a redelivery after the participant was deleted;
- vanished schedules: START by text or ``PUT status=active`` while CreateSchedule is throttled (every
  attempt of botocore's six), then the stack's sweep or the participant's next event;
- the transcript says sent for unsent: a prompt lost in the crash window between the commit and the
  send, and prompts the provider refused for good (WhatsApp 131047) or that were skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT, aws_client
from promptpipe.adapters.local_outbox import OutboxRecord
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.coordinator.summary import summarize
from promptpipe.errors import MessagingError
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, sqs_record
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import TranscriptEntry
from tests.support.scheduler_faults import ATTEMPTS, throttled_create_schedule

BASE = "/conversation/participants"
PHONE = "+14155550123"
TWILIO_URL = "https://localhost/webhooks/twilio"
GREETING = "Hello! What habit would you like to build?"
REPLY = "Done: a prompt every day at 09:30."
ASK = "Please remind me every day at 9:30."
SCHEDULE = {"action": "create", "type": "fixed", "fixed_time": "09:30"}
SWEEP = {"sweep": "pending_effects"}


@dataclass
class Stack:
    env: LocalEnvironment
    pid: str
    schedule: str  # the daily prompt's schedule name

    # -- actions, through the handlers ----------------------------------------------------------
    def text(self, body: str, sid: str) -> int:
        """A signed Twilio webhook through the API (the queue is drained after it)."""
        return self.env.api("POST", "/webhooks/twilio", **twilio_event(self.env, body, sid)).status

    def enqueue(self, body: str, sid: str) -> dict[str, Any]:
        """A signed Twilio webhook straight to the webhook handler: the turn waits on the queue;
        returns its SQS record."""
        from functions.inbound import webhook

        event = http_api_event(
            "POST", "/webhooks/twilio", now=self.env.clock.now(), **twilio_event(self.env, body, sid)
        )
        assert webhook.handler(event, FakeLambdaContext(function_name="webhook"))["statusCode"] == 200
        received = self.env._sqs.receive_message(
            QueueUrl=self.env.resources.inbound_queue_url, MaxNumberOfMessages=1, AttributeNames=["All"]
        )
        [message] = received["Messages"]
        # Visible again at once: the local stack's next drain is SQS's redelivery.
        self.env._sqs.change_message_visibility(
            QueueUrl=self.env.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
        return sqs_record(message, self.env.resources.inbound_queue_arn)

    def work(self, record: dict[str, Any]) -> list[Any]:
        """The worker handler on one SQS record; the records it failed (a batch whose every record
        failed raises, and Lambda hands all of them back to SQS)."""
        from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

        from functions.inbound import worker

        try:
            result = worker.handler({"Records": [record]}, FakeLambdaContext(function_name="worker"))
        except BatchProcessingError:
            return [record]
        return list(result["batchItemFailures"])

    def prompt_invocation(self, execution_id: str) -> dict[str, Any]:
        """The daily schedule's Input as EventBridge Scheduler hands it over (one execution id)."""
        item = aws_client("scheduler", self.env.settings).get_schedule(
            Name=self.schedule, GroupName=self.env.settings.schedule_group_name
        )
        return {**json.loads(item["Target"]["Input"]), "execution_id": execution_id}

    def fire_prompt(self, event: dict[str, Any]) -> dict[str, Any]:
        from functions.scheduled_prompt import handler

        result: dict[str, Any] = handler.handler(event, FakeLambdaContext(function_name="scheduled-prompt"))
        return result

    def sweep(self) -> dict[str, Any]:
        """The stack's periodic sweep schedule, invoking the timers function."""
        from functions.timers import handler

        result: dict[str, Any] = handler.handler(SWEEP, FakeLambdaContext(function_name="timers"))
        return result

    def put_status(self, status: str) -> Any:
        return self.env.api("PUT", f"{BASE}/{self.pid}", json_body={"status": status})

    # -- observations ---------------------------------------------------------------------------
    def sent(self, after: int = 0) -> list[OutboxRecord]:
        """What the provider received for this participant (the local outbox), from index ``after``."""
        return self.env.outbox.messages(self.pid)[after:]

    def live(self) -> list[str]:
        return sorted(self.env.app.timers.list_names(participant_prefix(self.pid)))

    def state(self) -> dict[str, Any]:
        response = self.env.api("GET", f"{BASE}/{self.pid}/state")
        assert response.status == 200, response.body
        result: dict[str, Any] = response.body["result"]
        return result

    def history(self) -> list[dict[str, Any]]:
        """The transcript as the API gives it (what export and the console read)."""
        response = self.env.api("GET", f"{BASE}/{self.pid}/history")
        assert response.status == 200, response.body
        messages: list[dict[str, Any]] = response.body["result"]["messages"]
        return messages

    def outbound(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.history() if m["direction"] == "outbound" and m["kind"] == kind]

    def summary_prompts_sent(self) -> int:
        participant = ConversationParticipant.model_validate(self.env.api("GET", f"{BASE}/{self.pid}").body["result"])
        entries = [TranscriptEntry.model_validate(m) for m in self.history()]
        return summarize(participant, entries, self.state()).prompts_sent


def twilio_event(env: LocalEnvironment, text: str, sid: str) -> dict[str, Any]:
    params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": text}
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or ""),
    }
    return {"body": twilio_form(params), "headers": headers, "base64_body": True}


@pytest.fixture
def stack(local_env_factory: Any) -> Callable[..., Stack]:
    """``stack(*more_steps)``: a participant greeted, whose first turn created the daily 09:30
    prompt; the model then scripted with ``more_steps``."""

    def make(*steps: Any) -> Stack:
        llm = ScriptedLLM(
            [ScriptedLLM.text(GREETING), ScriptedLLM.tool_call("scheduler", SCHEDULE), ScriptedLLM.text(REPLY), *steps]
        )
        env = local_env_factory(llm=llm)
        response = env.api("POST", BASE, json_body={"phone_number": PHONE, "name": "Alice"})
        assert response.status == 201, response.body
        pid = response.body["result"]["id"]
        assert env.api("POST", "/webhooks/twilio", **twilio_event(env, ASK, "SM-setup")).status == 200
        registry = env.api("GET", f"{BASE}/{pid}/state").body["result"]["schedules"]
        [schedule] = [s["timer_id"] for s in registry]
        built = Stack(env=env, pid=pid, schedule=schedule)
        assert [m.body for m in built.sent()] == [GREETING, REPLY] and built.live() == [schedule]
        return built

    return make


# ===================================================== messages after opt-out or pause: 0 ======
@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_a_reply_redelivered_after_stop_is_not_sent(stack: Any) -> None:
    # Given a turn whose reply fails to send (the record goes back to the queue)
    s = stack(ScriptedLLM.text("Great question!"))
    before = len(s.sent())
    record = s.enqueue("What should I do today?", "SM-r1")
    s.env.outbox.fail_next(1)
    assert len(s.work(record)) == 1

    # When the participant texts STOP before SQS redelivers the turn (the API drains the queue after it)
    assert s.text("STOP", "SM-stop") == 200

    # Then only the STOP confirmation went out: the redelivered reply was decided for an active
    # participant, and the committed state now says they opted out
    assert [m.kind for m in s.sent(before)] == [OutboundKind.NOTICE]
    assert "unsubscribed" in s.sent(before)[0].body
    [reply] = [m for m in s.outbound("reply") if m["content"] == "Great question!"]
    assert reply["delivery"]["status"] == "skipped" and reply["delivery"]["reason"] == "participant opted out"
    assert s.outbound("notice")[-1]["delivery"]["status"] == "sent"


@pytest.mark.parametrize("stop", ["STOP by text", "operator pause"])
def test_a_daily_prompt_retried_by_the_scheduler_after_stop_or_pause_is_not_sent(stack: Any, stop: str) -> None:
    # Given the day's prompt (and the intensity poll that goes with it) failing to send
    s = stack()
    invocation = s.prompt_invocation("exec-day-1")
    before = len(s.sent())
    s.env.outbox.fail_next(1)
    with pytest.raises(MessagingError):
        s.fire_prompt(invocation)

    # When the participant opts out (or an operator pauses them) before the scheduler retries
    if stop == "STOP by text":
        assert s.text("STOP", "SM-stop") == 200
    else:
        assert s.put_status("paused").status == 200
    after_stop = len(s.sent())
    s.fire_prompt(invocation)  # the scheduler's retry: the same execution id

    # Then the retry sent nothing (only the STOP confirmation went out, for STOP), and the
    # transcript says the prompt was skipped, not sent
    assert len(s.sent()) == after_stop
    assert [m.kind for m in s.sent(before)] == ([OutboundKind.NOTICE] if stop == "STOP by text" else [])
    [prompt] = s.outbound("daily_prompt")
    assert prompt["delivery"]["status"] == "skipped"
    assert s.summary_prompts_sent() == 0


@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_a_redelivery_after_the_participant_was_deleted_sends_nothing(stack: Any) -> None:
    # Given a turn whose reply failed to send
    s = stack(ScriptedLLM.text("Great question!"))
    before = len(s.sent())
    record = s.enqueue("What should I do today?", "SM-d1")
    s.env.outbox.fail_next(1)
    assert len(s.work(record)) == 1

    # When the participant is deleted before SQS redelivers it
    assert s.env.api("DELETE", f"{BASE}/{s.pid}").status == 200
    assert s.work(record) == []

    # Then only the unregister notice went out
    assert [m.kind for m in s.sent(before)] == [OutboundKind.NOTICE]


# ====================================== vanished schedules after a throttled Scheduler: 0 ======
@pytest.mark.logs_errors  # the worker's failed deliveries are logged, then redelivered: the case itself
def test_start_by_text_while_create_schedule_is_throttled_once_is_applied_by_the_queues_redelivery(
    stack: Any,
) -> None:
    # Given a participant who opted out (their daily schedule deleted)
    s = stack(ScriptedLLM.text("Welcome back, see you at 09:30."))
    assert s.text("STOP", "SM-stop") == 200
    assert s.live() == []

    # When they text START while the first delivery of its schedule changes meets a throttled
    # CreateSchedule (all six attempts)
    with throttled_create_schedule() as calls:
        status = s.text("START", "SM-start")

    # Then the provider is answered 200 (the webhook changes no schedule); the worker's `schedules`
    # event failed once and SQS's redelivery made the schedule live: nothing is left pending
    assert status == 200 and len(calls) == ATTEMPTS + 1
    assert s.state()["status"] == "active" and s.live() == [s.schedule]
    assert s.state()["effects_pending"] is False and s.sweep() == {"repaired": 0, "hold_alerts": 0}


@pytest.mark.logs_errors  # every delivery of the schedule changes fails until SQS dead-letters it
@pytest.mark.parametrize("repair", ["sweep", "next event"])
def test_start_by_text_while_create_schedule_is_throttled_is_repaired_without_an_operator(
    stack: Any, repair: str
) -> None:
    # Given a participant who opted out (their daily schedule deleted)
    s = stack(ScriptedLLM.text("Welcome back, see you at 09:30."))
    assert s.text("STOP", "SM-stop") == 200
    assert s.live() == []

    # When they text START while CreateSchedule is throttled for longer than the queue retries
    with throttled_create_schedule(times=ATTEMPTS * INBOUND_MAX_RECEIVE_COUNT) as calls:
        status = s.text("START", "SM-start")

    # Then the provider is answered 200 (its retry would change nothing), the participant is active,
    # every delivery of the schedule changes failed and the state says they are pending
    assert status == 200 and len(calls) == ATTEMPTS * INBOUND_MAX_RECEIVE_COUNT
    assert s.state()["status"] == "active" and s.state()["effects_pending"] is True
    assert s.live() == []

    # And without an operator — the stack's sweep, or the participant's next message — the schedule
    # is live again and the marker is gone
    if repair == "sweep":
        assert s.sweep() == {"repaired": 1, "hold_alerts": 0}
    else:
        assert s.text("Thanks!", "SM-next") == 200
    assert s.live() == [s.schedule]
    assert s.state()["effects_pending"] is False
    assert s.sweep() == {"repaired": 0, "hold_alerts": 0}


def test_put_status_active_while_create_schedule_is_throttled_answers_202_and_the_sweep_repairs(stack: Any) -> None:
    # Given a participant paused by an operator
    s = stack()
    assert s.put_status("paused").status == 200 and s.live() == []

    # When the operator resumes them while CreateSchedule is throttled
    with throttled_create_schedule():
        response = s.put_status("active")

    # Then the answer is the truth: 202, stored, its schedule changes pending; a retry is not needed
    assert response.status == 202, response.body
    assert response.body["result"]["status"] == "active"
    assert s.state()["effects_pending"] is True and s.live() == []

    # And the stack's sweep (the timers function, on its rate schedule) makes the schedule live
    assert s.sweep() == {"repaired": 1, "hold_alerts": 0}
    assert s.live() == [s.schedule] and s.state()["effects_pending"] is False


def test_an_operator_override_while_the_scheduler_fails_answers_202_with_the_pending_state(stack: Any) -> None:
    # Given a paused participant resumed while CreateSchedule is throttled (marker written)
    s = stack()
    assert s.put_status("paused").status == 200
    with throttled_create_schedule():
        assert s.put_status("active").status == 202

    # When an operator override lands meanwhile, its answer shows the pending state
    response = s.env.api("POST", f"{BASE}/{s.pid}/state", json_body={"debug_mode": True, "reason": "check"})
    assert response.status == 202, response.body
    assert response.body["result"]["effects_pending"] is True


# ==================================================== transcript says sent for unsent: 0 ======
def test_a_prompt_lost_in_the_crash_window_is_not_shown_or_counted_as_sent(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the scheduled-prompt function killed after its commit, before it could send anything
    s = stack()
    before = len(s.sent())
    from functions import common

    real_finish = common.apply_effects
    crashed: list[bool] = []

    def crash_once(app: Any, outcome: Any) -> int:
        if not crashed:
            crashed.append(True)
            raise SystemExit("the Lambda was killed")  # nothing in the handler can record it
        return real_finish(app, outcome)

    monkeypatch.setattr(common, "apply_effects", crash_once)
    invocation = s.prompt_invocation("exec-crash")
    with pytest.raises(SystemExit):
        s.fire_prompt(invocation)

    # When the scheduler retries
    s.fire_prompt(invocation)

    # Then nothing was sent (at most once), and the transcript says the prompt was never confirmed:
    # not sent, not counted
    assert s.sent(before) == []
    [prompt] = s.outbound("daily_prompt")
    assert prompt["delivery"]["status"] == "pending"
    assert s.summary_prompts_sent() == 0


def test_a_prompt_whatsapp_refused_for_good_is_recorded_failed_and_not_counted(stack: Any) -> None:
    # Given the provider refusing the day's prompt for good (Meta 131047: outside the 24-hour window
    # and no template configured)
    s = stack()
    before = len(s.sent())
    refusal = MessagingError("re-engagement message", code="131047", status=400, retryable=False, undeliverable=True)
    s.env.outbox.fail_next(2, error=refusal)  # the prompt and the intensity poll after it

    # When the prompt fires: not retried (it would be refused again), its follow-ups still armed
    result = s.fire_prompt(s.prompt_invocation("exec-refused"))

    # Then the transcript carries the provider's code, and the prompt does not count as sent
    assert result["messages"] == 0 and s.sent(before) == []
    for kind in ("daily_prompt", "intensity_poll"):
        [entry] = s.outbound(kind)
        assert {k: entry["delivery"][k] for k in ("status", "code", "reason")} == {
            "status": "failed",
            "code": "131047",
            "reason": "undeliverable",
        }
    assert s.summary_prompts_sent() == 0
    assert any(name.endswith("-reminder") for name in s.live())


def test_a_skipped_poll_and_a_sent_prompt_carry_their_outcomes(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a messenger that skips the intensity poll (WhatsApp's window: a poll without text waits)
    s = stack()
    outbox_send = s.env.app.messenger.send

    def send(message: OutboundMessage, before_part: Any = None) -> SendResult:
        if message.kind is OutboundKind.INTENSITY_POLL:
            return SendResult(provider="whatsapp_cloud", parts=0, skipped="outside_window")
        return outbox_send(message, before_part)

    monkeypatch.setattr(s.env.app.messenger, "send", send)

    # When the prompt fires
    s.fire_prompt(s.prompt_invocation("exec-ok"))

    # Then the prompt is sent with its provider id, the poll skipped with the reason; one prompt counts
    [prompt] = s.outbound("daily_prompt")
    [poll] = s.outbound("intensity_poll")
    assert prompt["delivery"]["status"] == "sent" and prompt["delivery"]["provider_id"]
    assert poll["delivery"]["status"] == "skipped" and poll["delivery"]["reason"] == "outside_window"
    assert s.summary_prompts_sent() == 1
