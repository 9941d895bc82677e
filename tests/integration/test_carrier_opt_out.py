"""Carrier opt-outs and split SMS through the real Twilio messenger (docs/reliability.md, "Fault
suite"; docs/architecture.md, "Carrier opt-outs" and "Delivery outcomes").

The local stack (moto: DynamoDB, SQS FIFO, EventBridge Scheduler, the real handlers) with the
application's messenger swapped for ``TwilioMessenger`` over an httpx MockTransport standing in for
Twilio's REST API: it answers each ``Messages.json`` call as the test says (accepted with a sid,
refused with 21610, a 500), and keeps every request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.messengers import TwilioMessenger
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import MessagingError, StoreError
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.messaging import OutboundMessage
from promptpipe.usecases import sending

BASE = "/conversation/participants"
PHONE = "+14155550123"
TWILIO_URL = "https://localhost/webhooks/twilio"
SCHEDULE = {"action": "create", "type": "fixed", "fixed_time": "09:30"}
UNSUBSCRIBED = {"code": 21610, "message": "Attempt to send to unsubscribed recipient", "status": 400}
# Three SMS parts: each sentence fits a part of 1,600 characters, no two do.
LONG_REPLY = " ".join(f"{word * 300}." for word in ("Alpha", "Bravo", "Delta"))


class TwilioApi:
    """Twilio's Messages.json: ``answers`` queued per call (a status and JSON body), else accepted
    with a fresh sid; ``refuse_all``: every call refused with 21610."""

    def __init__(self) -> None:
        self.forms: list[dict[str, str]] = []
        self.answers: list[tuple[int, dict[str, Any]]] = []
        self.refuse_all = False

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.forms.append(dict(parse_qsl(request.content.decode(), keep_blank_values=True)))
        if self.refuse_all:
            return httpx.Response(400, json=UNSUBSCRIBED)
        if self.answers:
            status, body = self.answers.pop(0)
            return httpx.Response(status, json=body)
        return httpx.Response(201, json={"sid": f"SM{len(self.forms):032d}", "status": "queued"})

    def bodies(self, after: int = 0) -> list[str]:
        return [form["Body"] for form in self.forms[after:]]


class Stack:
    def __init__(self, env: LocalEnvironment, pid: str, twilio: TwilioApi) -> None:
        self.env, self.pid, self.twilio = env, pid, twilio

    def text(self, body: str, sid: str) -> int:
        params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": body}
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "x-twilio-signature": twilio_signature(TWILIO_URL, params, self.env.settings.twilio_auth_token or ""),
        }
        return self.env.api(
            "POST", "/webhooks/twilio", body=twilio_form(params), headers=headers, base64_body=True
        ).status

    def prompt_invocation(self, execution_id: str) -> dict[str, Any]:
        """The daily schedule's Input as EventBridge Scheduler hands it over (one execution id)."""
        [name] = self.live()
        item = aws_client("scheduler", self.env.settings).get_schedule(
            Name=name, GroupName=self.env.settings.schedule_group_name
        )
        return {**json.loads(item["Target"]["Input"]), "execution_id": execution_id}

    def fire_prompt(self, event: dict[str, Any]) -> None:
        from functions.scheduled_prompt import handler

        handler.handler(event, FakeLambdaContext(function_name="scheduled-prompt"))

    def live(self) -> list[str]:
        return sorted(self.env.app.timers.list_names(participant_prefix(self.pid)))

    def participant(self) -> dict[str, Any]:
        result: dict[str, Any] = self.env.api("GET", f"{BASE}/{self.pid}").body["result"]
        return result

    def history(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.env.api("GET", f"{BASE}/{self.pid}/history").body["result"]["messages"]
        return messages


@pytest.fixture
def stack(local_env_factory: Any) -> Callable[..., Stack]:
    """``stack(*more_steps)``: a participant greeted over SMS through ``TwilioMessenger``, whose
    first turn created the daily 09:30 prompt; the model then scripted with ``more_steps``."""

    def make(*steps: Any) -> Stack:
        llm = ScriptedLLM(
            [
                ScriptedLLM.text("Hello! What habit would you like to build?"),
                ScriptedLLM.tool_call("scheduler", SCHEDULE),
                ScriptedLLM.text("Done: a prompt every day at 09:30."),
                *steps,
            ]
        )
        env = local_env_factory(llm=llm)
        twilio = TwilioApi()
        env.use_ports(
            messenger=TwilioMessenger(
                "AC0123456789abcdef0123456789abcdef",
                "twilio-auth-token",
                from_number="+14155550000",
                http_client=httpx.Client(transport=httpx.MockTransport(twilio)),
                publish=False,
            )
        )
        response = env.api("POST", BASE, json_body={"phone_number": PHONE, "name": "Alice"})
        assert response.status == 201, response.body
        built = Stack(env, response.body["result"]["id"], twilio)
        assert built.text("Please remind me every day at 9:30.", "SM-setup") == 200
        assert len(twilio.forms) == 2 and len(built.live()) == 1  # greeting, reply; the daily prompt
        return built

    return make


def test_a_prompt_refused_with_21610_opts_the_participant_out_like_stop(stack: Any) -> None:
    # Given the carrier reporting the number unsubscribed (the participant texted STOP to the carrier)
    s = stack()
    s.twilio.refuse_all = True
    before = len(s.twilio.forms)

    # When the next day's prompt fires (and the queue is drained)
    s.env.advance(timedelta(days=1))

    # Then the prompt was attempted once, refused, and the participant is opted out as by STOP: paused,
    # flagged, every schedule gone, and the transcript says why
    assert len(s.twilio.forms) == before + 1
    participant = s.participant()
    assert (participant["status"], participant["opted_out"]) == ("paused", True)
    assert s.live() == []
    history = s.history()
    [prompt] = [m for m in history if m["kind"] == "daily_prompt"]
    assert {k: prompt["delivery"][k] for k in ("status", "code", "reason")} == {
        "status": "failed",
        "code": "21610",
        "reason": "undeliverable",
    }
    changes = [m["content"] for m in history if m["direction"] == "system" and m["kind"] == "status_change"]
    assert changes == ["status active -> paused: carrier reports the number opted out (21610)"]

    # When two more days pass: nothing is attempted (no prompt, no reminder)
    s.env.advance(timedelta(days=2))
    assert len(s.twilio.forms) == before + 1

    # When the participant texts START (the carrier lifted the block): they resume as after STOP
    s.twilio.refuse_all = False
    assert s.text("START", "SM-start") == 200
    participant = s.participant()
    assert (participant["status"], participant["opted_out"]) == ("active", False)
    assert len(s.live()) == 1
    assert "back" in s.twilio.bodies(before + 1)[-1]


def test_a_refusal_after_an_organiser_resumed_them_is_its_own_opt_out(stack: Any) -> None:
    # Given a participant the carrier reports opted out by a refused prompt
    s = stack()
    s.twilio.refuse_all = True
    s.env.advance(timedelta(days=1))
    assert s.participant()["status"] == "paused"

    # When an organiser resumes them while the carrier still refuses, and the next prompt is refused too
    assert s.env.api("PUT", f"{BASE}/{s.pid}", json_body={"status": "active"}).status == 200
    s.env.advance(timedelta(days=1))

    # Then each refusal is its own event: two opt-outs, each recorded once
    changes = [m["content"] for m in s.history() if m["direction"] == "system" and m["kind"] == "status_change"]
    assert changes.count("status active -> paused: carrier reports the number opted out (21610)") == 2
    assert s.participant()["status"] == "paused" and s.live() == []


@pytest.mark.logs_errors  # the failed opt-out commit is logged, then the prompt retried: the case itself
def test_a_prompt_retried_after_its_opt_out_failed_records_it_once(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a refused prompt whose opt-out cannot be committed the first time (the store fails)
    s = stack()
    s.twilio.refuse_all = True
    before = len(s.twilio.forms)
    real_record = sending.record_carrier_opt_out
    failures = [StoreError("DynamoDB unavailable", operation="DynamoStateStore.commit", code="InternalServerError")]

    def record_once_failing(*args: Any) -> bool:
        if failures:
            raise failures.pop()
        return real_record(*args)

    monkeypatch.setattr(sending, "record_carrier_opt_out", record_once_failing)
    invocation = s.prompt_invocation("exec-1")
    with pytest.raises(StoreError):
        s.fire_prompt(invocation)
    assert s.participant()["status"] == "active"

    # When the scheduler retries the invocation, and then retries it once more
    s.fire_prompt(invocation)
    s.env.drain()
    s.fire_prompt(invocation)

    # Then the prompt was attempted again by the first retry only (its refusal was not final without the
    # opt-out), and the opt-out is recorded once
    assert len(s.twilio.forms) == before + 2
    changes = [m["content"] for m in s.history() if m["direction"] == "system" and m["kind"] == "status_change"]
    assert changes == ["status active -> paused: carrier reports the number opted out (21610)"]
    assert s.participant()["opted_out"] is True and s.live() == []


@pytest.mark.logs_errors  # the failed part is logged, then the turn redelivered: the case itself
def test_a_split_sms_whose_second_part_fails_resends_only_the_rest(stack: Any) -> None:
    # Given a reply of three SMS parts, and Twilio failing the second part once (a 500)
    s = stack(ScriptedLLM.text(LONG_REPLY))
    before = len(s.twilio.forms)
    s.twilio.answers = [
        (201, {"sid": "SM-part-1", "status": "queued"}),
        (500, {"code": 20500, "message": "Internal Server Error"}),
        (201, {"sid": "SM-part-2", "status": "queued"}),
        (201, {"sid": "SM-part-3", "status": "queued"}),
    ]

    # When the participant writes; the turn fails at the second part and SQS redelivers it
    assert s.text("Tell me everything.", "SM-long") == 200

    # Then the provider received part 1 once, part 2 twice (refused, then accepted), part 3 once
    bodies = s.twilio.bodies(before)
    assert [b[:5] for b in bodies] == ["Alpha", "Bravo", "Bravo", "Delta"]
    # and the transcript's outcome lists the three parts' ids
    [reply] = [m for m in s.history() if m["kind"] == "reply" and m["content"].startswith("Alpha")]
    assert reply["delivery"]["status"] == "sent"
    assert reply["delivery"]["parts"] == ["SM-part-1", "SM-part-2", "SM-part-3"]
    assert reply["delivery"]["provider_id"] == "SM-part-3"


def _messenger(twilio: TwilioApi) -> TwilioMessenger:
    return TwilioMessenger(
        "AC0123456789abcdef0123456789abcdef",
        "twilio-auth-token",
        from_number="+14155550000",
        http_client=httpx.Client(transport=httpx.MockTransport(twilio)),
        publish=False,
    )


def test_the_twilio_messenger_reports_and_skips_the_parts_already_accepted() -> None:
    # Given Twilio failing the second of three parts
    twilio = TwilioApi()
    twilio.answers = [(201, {"sid": "SM-a"}), (503, {"code": 20503, "message": "Service Unavailable"})]
    message = OutboundMessage(participant_id="p_1", to=PHONE, body=LONG_REPLY)

    # When the message is sent: the refusal carries the part accepted before it
    with pytest.raises(MessagingError) as refused:
        _messenger(twilio).send(message)
    assert refused.value.accepted_parts == ["SM-a"] and refused.value.retryable

    # When it is sent again with that part accepted: only parts 2 and 3 go out, all three ids come back
    twilio.forms.clear()
    result = _messenger(twilio).send(message.model_copy(update={"parts_accepted": ["SM-a"]}))
    assert [body[:5] for body in twilio.bodies()] == ["Bravo", "Delta"]
    assert result.part_ids == ["SM-a", f"SM{1:032d}", f"SM{2:032d}"] and result.parts == 3
