"""Inbound webhooks end to end: real Twilio form posts (base64 bodies, signed) and Meta
WhatsApp Cloud payloads as API Gateway HTTP API v2 events, through the webhook handler, the inbound
FIFO queue (moto) and the worker, with the scripted coach and the local outbox."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.lifecycle import OPT_IN_CONFIRMATION, OPT_OUT_CONFIRMATION
from promptpipe.local.environment import ApiResponse, LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event
from promptpipe.local.signing import meta_signature, twilio_form, twilio_signature
from tests.support import enroll_over_api

BASE = "/conversation/participants"
PHONE = "+14155550101"
STRANGER = "+14155550109"
TWILIO_URL = "https://localhost/webhooks/twilio"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
FORM = "application/x-www-form-urlencoded"


# -- helpers ------------------------------------------------------------------------------------
def twilio_params(text: str, sid: str, phone: str = PHONE, **extra: str) -> dict[str, str]:
    return {
        "ToCountry": "US",
        "SmsMessageSid": sid,
        "NumMedia": "0",
        "SmsSid": sid,
        "SmsStatus": "received",
        "Body": text,
        "To": "+14155550000",
        "NumSegments": "1",
        "MessageSid": sid,
        "AccountSid": "AC00000000000000000000000000000000",
        "From": phone,
        "ApiVersion": "2010-04-01",
        **extra,
    }


def twilio_event_parts(env: LocalEnvironment, params: dict[str, str], signature: str | None = "sign") -> dict:
    headers = {"content-type": FORM}
    if signature == "sign":
        headers["x-twilio-signature"] = twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token)
    elif signature is not None:
        headers["x-twilio-signature"] = signature
    return {"body": twilio_form(params), "headers": headers, "base64_body": True}


def post_twilio(env: LocalEnvironment, params: dict[str, str], signature: str | None = "sign") -> ApiResponse:
    """Deliver a Twilio webhook and let the worker drain the queue (as the deployed system does)."""
    return env.api("POST", "/webhooks/twilio", **twilio_event_parts(env, params, signature))


def post_twilio_no_drain(env: LocalEnvironment, params: dict[str, str], signature: str | None = "sign") -> int:
    """Deliver a Twilio webhook to the handler only: what it enqueued stays on the queue."""
    from functions.inbound import webhook

    event = http_api_event(
        "POST", "/webhooks/twilio", now=env.clock.now(), **twilio_event_parts(env, params, signature)
    )
    return int(webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))["statusCode"])


def queued(env: LocalEnvironment) -> list[dict[str, Any]]:
    """Receive (and so hide for a while) whatever is waiting on the inbound queue."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    received = sqs.receive_message(QueueUrl=env.resources.inbound_queue_url, MaxNumberOfMessages=10)
    return received.get("Messages", [])


def meta_text(message_id: str, text: str, wa_id: str = "14155550101") -> dict[str, Any]:
    return {"from": wa_id, "id": message_id, "timestamp": "1772456400", "type": "text", "text": {"body": text}}


def meta_button(message_id: str, answer_id: str, title: str, wa_id: str = "14155550101") -> dict[str, Any]:
    return {
        "context": {"from": "15550000000", "id": "wamid.question"},
        "from": wa_id,
        "id": message_id,
        "timestamp": "1772456400",
        "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": answer_id, "title": title}},
    }


def meta_payload(*messages: dict[str, Any], statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": "PHONE_NUMBER_ID"},
    }
    if messages:
        value["contacts"] = [{"profile": {"name": "Alice"}, "wa_id": m["from"]} for m in messages]
        value["messages"] = list(messages)
    if statuses is not None:
        value["statuses"] = statuses
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA_ID", "changes": [{"value": value, "field": "messages"}]}],
    }


def post_meta(
    env: LocalEnvironment, payload: dict[str, Any], *, signature: str | None = None, raw_utf8: bool = False
) -> ApiResponse:
    """Post a Meta payload; with ``raw_utf8`` the body carries raw UTF-8 (not \\u escapes) and
    arrives base64-encoded, so the signature must be checked over the exact bytes."""
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=not raw_utf8).encode()
    header = signature if signature is not None else meta_signature(raw, env.settings.whatsapp_app_secret)
    return env.api(
        "POST",
        "/webhooks/whatsapp",
        body=raw if raw_utf8 else raw.decode(),
        headers={"content-type": "application/json", "x-hub-signature-256": header},
    )


def history(env: LocalEnvironment, pid: str) -> list[dict[str, Any]]:
    response = env.api("GET", f"{BASE}/{pid}/history", query={"include_audit": "false"})
    assert response.status == 200, response.body
    return response.body["result"]["messages"]


def status_of(env: LocalEnvironment, pid: str) -> str:
    return env.api("GET", f"{BASE}/{pid}").body["result"]["status"]


def schedule_names(env: LocalEnvironment) -> list[str]:
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    schedules = scheduler.list_schedules(GroupName=env.settings.schedule_group_name)["Schedules"]
    return sorted(s["Name"] for s in schedules)


def participants(env: LocalEnvironment) -> list[dict[str, Any]]:
    return env.api("GET", BASE).body["result"]["participants"]


# -- Twilio signatures ----------------------------------------------------------------------------
def test_twilio_signed_message_is_accepted_and_answered_with_empty_twiml(local_env_factory) -> None:
    # Given an enrolled participant (greeted) and a coach with one reply ready
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Walking it is.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When Twilio posts a correctly signed SMS
    response = post_twilio(env, twilio_params("I want to walk more 🚶", "SM0001"))

    # Then the webhook answers empty TwiML and the turn runs: one LLM call, one reply
    assert response.status == 200
    assert response.headers["content-type"] == "text/xml"
    assert response.body == EMPTY_TWIML
    assert llm.calls == 2
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Walking it is."]
    inbound = [e for e in history(env, pid) if e["direction"] == "inbound"]
    assert [e["content"] for e in inbound] == ["I want to walk more 🚶"]


def test_twilio_unsigned_or_wrongly_signed_request_is_403_and_nothing_is_enqueued(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    before = history(env, pid)
    params = twilio_params("let me in", "SM0002")
    forged = twilio_signature(TWILIO_URL, params, "someone-elses-token")
    tampered = twilio_signature(TWILIO_URL, {**params, "Body": "something else"}, env.settings.twilio_auth_token)

    for signature in (None, "", forged, tampered):
        # When a request arrives without a signature, or one that does not match
        status = post_twilio_no_drain(env, params, signature=signature)

        # Then it is refused with 403 and nothing reaches the queue
        assert status == 403
        assert queued(env) == []

    # And no turn ran: no LLM call, no reply, the transcript unchanged
    env.drain()
    assert llm.calls == 1
    assert len(env.messages(pid)) == 1
    assert history(env, pid) == before


def test_twilio_signature_over_a_different_url_is_rejected(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    enroll_over_api(env)
    params = twilio_params("hi", "SM0003")
    signature = twilio_signature("https://evil.example/webhooks/twilio", params, env.settings.twilio_auth_token)

    # When the signature was computed for another URL
    response = post_twilio(env, params, signature=signature)

    # Then it is refused and no turn runs
    assert response.status == 403
    assert llm.calls == 1


def _forwarded(env: LocalEnvironment, params: dict[str, str], host: str) -> ApiResponse:
    """A Twilio form signed for ``https://<host>/webhooks/twilio``, claiming that host in X-Forwarded-Host."""
    signature = twilio_signature(f"https://{host}/webhooks/twilio", params, env.settings.twilio_auth_token or "")
    parts = twilio_event_parts(env, params, signature)
    parts["headers"] = {**parts["headers"], "x-forwarded-host": host}
    return env.api("POST", "/webhooks/twilio", **parts)


@pytest.mark.parametrize("base_url", [None, "https://hooks.example.org"], ids=["no-base-url", "base-url"])
def test_twilio_signature_for_a_host_a_client_header_claims_is_rejected(local_env_factory, base_url) -> None:
    # Given an enrolled participant, and no trusted proxy configured
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm, public_webhook_base_url=base_url)
    enroll_over_api(env)
    # When a request signed for another host says it came through that host (X-Forwarded-Host)
    response = _forwarded(env, twilio_params("hi", "SM-fwd-1"), "evil.example")
    # Then the signature is checked against our own URL, so it is refused and no turn runs
    assert response.status == 403
    assert llm.calls == 1


def test_twilio_forwarded_host_is_used_only_behind_a_trusted_proxy(local_env_factory) -> None:
    # Given a deployment behind a proxy it controls (which sets X-Forwarded-Host itself)
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Hi again.")])
    env = local_env_factory(llm=llm, webhook_trusted_proxy=True)
    enroll_over_api(env)
    # When Twilio signed the proxy's public host / Then the signature holds and the turn runs
    assert _forwarded(env, twilio_params("hi", "SM-fwd-2"), "sms.example.org").status == 200
    assert llm.calls == 2


def test_twilio_base64_form_with_blank_values_still_verifies(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Got it.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    # And a WhatsApp-via-Twilio form whose signature covers blank fields (MediaUrl0=, ProfileName=…)
    params = twilio_params(
        "hello coach",
        "SM0004",
        phone=f"whatsapp:{PHONE}",
        MediaUrl0="",
        MediaContentType0="",
        ProfileName="",
        WaId="14155550101",
    )
    parts = twilio_event_parts(env, params)
    assert "MediaUrl0=&" in parts["body"]

    # When it is posted base64-encoded, as API Gateway delivers form bodies
    response = env.api("POST", "/webhooks/twilio", **parts)

    # Then the signature verifies and the message is handled as the participant's turn
    assert response.status == 200
    assert [m.body for m in env.messages(pid)][-1] == "Got it."
    assert llm.calls == 2


def test_same_twilio_webhook_three_times_is_one_turn_and_one_reply(local_env_factory) -> None:
    # Given an enrolled participant and a coach scripted for exactly one turn
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Only once.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    params = twilio_params("are you there?", "SM0005")

    # When Twilio delivers the same webhook three times (its retries)
    statuses = [post_twilio(env, params).status for _ in range(3)]

    # Then each delivery is acknowledged, but there is one turn: one LLM call, one reply, one entry each
    assert statuses == [200, 200, 200]
    assert llm.calls == 2
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Only once."]
    entries = [(e["direction"], e["content"]) for e in history(env, pid)]
    assert entries == [("outbound", "Hello Alice!"), ("inbound", "are you there?"), ("outbound", "Only once.")]


def test_same_twilio_webhook_three_times_before_the_worker_runs_is_one_turn(local_env_factory) -> None:
    # Given an enrolled participant and a coach scripted for exactly one turn
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Only once.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    params = twilio_params("quick question", "SM0006")

    # When the three deliveries all land on the queue before the worker runs
    assert [post_twilio_no_drain(env, params) for _ in range(3)] == [200, 200, 200]
    env.drain()

    # Then the FIFO deduplication id (the MessageSid) leaves one turn and one reply
    assert llm.calls == 2
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Only once."]
    assert [e["content"] for e in history(env, pid)].count("quick question") == 1


def test_three_rapid_messages_are_processed_in_order_each_seeing_the_previous_reply(local_env_factory) -> None:
    # Given an enrolled participant and three scripted replies
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hello Alice!"),
            ScriptedLLM.text("Reply one."),
            ScriptedLLM.text("Reply two."),
            ScriptedLLM.text("Reply three."),
        ]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When three messages arrive before the worker runs
    for i, text in enumerate(("first", "second", "third"), start=1):
        assert post_twilio_no_drain(env, twilio_params(text, f"SM00{i}0")) == 200
    assert llm.calls == 1
    env.drain()

    # Then they are answered in order
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Reply one.", "Reply two.", "Reply three."]
    # And each turn's LLM request carries its own message and the reply to the one before it
    for request, text, previous in zip(
        llm.requests[1:], ("first", "second", "third"), ("Hello Alice!", "Reply one.", "Reply two."), strict=True
    ):
        contents = [(m.role, m.content) for m in request.messages]
        assert contents[-1] == ("user", text)
        assert ("assistant", previous) in contents
    # And the transcript alternates message and reply
    assert [e["content"] for e in history(env, pid)] == [
        "Hello Alice!",
        "first",
        "Reply one.",
        "second",
        "Reply two.",
        "third",
        "Reply three.",
    ]


# -- Meta WhatsApp Cloud ----------------------------------------------------------------------------
def test_meta_verification_handshake_echoes_the_challenge(local_env_factory) -> None:
    # Given the configured verify token
    env = local_env_factory()
    query = {
        "hub.mode": "subscribe",
        "hub.verify_token": env.settings.whatsapp_verify_token,
        "hub.challenge": "1158201444",
    }

    # When Meta subscribes the webhook
    response = env.api("GET", "/webhooks/whatsapp", query=query)

    # Then the challenge is echoed as text
    assert response.status == 200
    assert response.headers["content-type"] == "text/plain"
    assert str(response.body) == "1158201444"


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/webhooks/twilio"), ("PUT", "/webhooks/whatsapp"), ("POST", "/webhooks/twilio/"), ("POST", "/webhooks")],
)
def test_a_route_the_webhook_does_not_serve_is_404_in_the_error_envelope(local_env_factory, method, path) -> None:
    # Given a running stack (the webhook dispatches its three routes from a table)
    env = local_env_factory()

    # When a request names another method or path under /webhooks/
    from functions.inbound import webhook

    event = http_api_event(method, path, now=env.clock.now(), body="x=1", headers={"content-type": FORM})
    answer = webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))

    # Then it is refused in the API's error envelope and nothing is enqueued
    assert answer["statusCode"] == 404
    assert answer["headers"] == {"Content-Type": "application/json"}
    assert json.loads(answer["body"]) == {"status": "error", "message": "not_found"}
    assert env.drain() == 0


def test_meta_verification_with_a_wrong_token_is_403(local_env_factory) -> None:
    # Given the configured verify token
    env = local_env_factory()

    # When the subscription request carries another token, or no mode
    wrong = {"hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "42"}
    no_mode = {"hub.verify_token": env.settings.whatsapp_verify_token, "hub.challenge": "42"}
    responses = [env.api("GET", "/webhooks/whatsapp", query=q) for q in (wrong, no_mode)]

    # Then it is refused
    assert [r.status for r in responses] == [403, 403]


def test_meta_signed_text_and_button_reply_are_turns(local_env_factory) -> None:
    # Given an enrolled participant and two scripted replies
    llm = ScriptedLLM(
        [ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Nice to hear."), ScriptedLLM.text("Well done!")]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When Meta posts a signed payload with a text and, in the same POST, a "Done" button reply
    payload = meta_payload(
        meta_text("wamid.TEXT1", "I stretched today"), meta_button("wamid.BTN1", "done:done", "Done")
    )
    response = post_meta(env, payload)

    # Then both are accepted and answered in order
    assert response.status == 200
    assert response.body == {"received": 2}
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Nice to hear.", "Well done!"]
    # And the button answer reaches the coach in its canonical form; the transcript keeps what the
    # participant pressed, with the parsed answer beside it
    assert llm.requests[2].messages[-1].content == "Q: Did you do it? A: Done"
    audited = env.api("GET", f"{BASE}/{pid}/history").body["result"]["messages"]
    inbound = [e for e in audited if e["direction"] == "inbound"]
    assert [e["content"] for e in inbound] == ["I stretched today", "Done"]
    assert inbound[1]["metadata"]["parsed_answer"] == "Q: Did you do it? A: Done"


def test_meta_raw_utf8_base64_body_verifies_over_the_exact_bytes(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("¡Muy bien!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When Meta posts non-ASCII text as raw UTF-8, base64-encoded by API Gateway
    response = post_meta(env, meta_payload(meta_text("wamid.UTF8", "Caminé 10 minutos 🚶‍♀️")), raw_utf8=True)

    # Then the signature verifies and the text arrives intact
    assert response.status == 200
    assert [e["content"] for e in history(env, pid) if e["direction"] == "inbound"] == ["Caminé 10 minutos 🚶‍♀️"]
    assert llm.calls == 2


def test_meta_payloads_in_several_entries_are_all_processed(local_env_factory) -> None:
    # Given two enrolled participants
    llm = ScriptedLLM(
        [ScriptedLLM.text("Hi A"), ScriptedLLM.text("Hi B"), ScriptedLLM.text("R1"), ScriptedLLM.text("R2")]
    )
    env = local_env_factory(llm=llm)
    first = enroll_over_api(env, PHONE)
    second = enroll_over_api(env, "+14155550102")
    # And one POST carrying two entries, one message each
    one = meta_payload(meta_text("wamid.E1", "from A"))
    two = meta_payload(meta_text("wamid.E2", "from B", wa_id="14155550102"))
    payload = {"object": "whatsapp_business_account", "entry": one["entry"] + two["entry"]}

    # When it is posted
    response = post_meta(env, payload)

    # Then each participant's message is a turn of their own
    assert response.body == {"received": 2}
    assert [e["content"] for e in history(env, first) if e["direction"] == "inbound"] == ["from A"]
    assert [e["content"] for e in history(env, second) if e["direction"] == "inbound"] == ["from B"]


def test_meta_statuses_only_payload_is_accepted_with_nothing_enqueued(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    before = history(env, pid)
    statuses = [
        {"id": "wamid.OUT1", "status": "delivered", "timestamp": "1772456400", "recipient_id": "14155550101"},
        {"id": "wamid.OUT1", "status": "read", "timestamp": "1772456460", "recipient_id": "14155550101"},
    ]

    # When Meta posts delivery statuses only
    response = post_meta(env, meta_payload(statuses=statuses))

    # Then it is acknowledged and nothing happens
    assert response.status == 200
    assert response.body == {"received": 0}
    assert llm.calls == 1
    assert history(env, pid) == before


def test_meta_bad_signature_is_403_and_nothing_happens(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    payload = meta_payload(meta_text("wamid.BAD", "sneaky"))
    raw = json.dumps(payload, separators=(",", ":")).encode()

    # When the signature is missing, malformed, or made with another secret
    bad = ("", "md5=abc", "sha256=" + "0" * 64, meta_signature(raw, "not-the-app-secret"))
    responses = [post_meta(env, payload, signature=header) for header in bad]

    # Then every request is refused and no turn runs
    assert [r.status for r in responses] == [403, 403, 403, 403]
    assert llm.calls == 1
    assert len(history(env, pid)) == 1


# -- STOP / START -----------------------------------------------------------------------------------
def test_stop_pauses_and_confirms_once_and_start_resumes_without_any_llm_call(local_env_factory) -> None:
    # Given an enrolled, greeted participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When they text STOP
    assert post_twilio(env, twilio_params("STOP", "SM-stop-1")).status == 200

    # Then they are paused and get one confirmation
    assert status_of(env, pid) == "paused"
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", OPT_OUT_CONFIRMATION]

    # When they text "stop" again (a new message)
    assert post_twilio(env, twilio_params(" stop ", "SM-stop-2")).status == 200

    # Then they stay paused and get no second confirmation
    assert status_of(env, pid) == "paused"
    assert [m.body for m in env.messages(pid)].count(OPT_OUT_CONFIRMATION) == 1

    # When they text START
    assert post_twilio(env, twilio_params("START", "SM-start-1")).status == 200

    # Then they are active again and are told so
    assert status_of(env, pid) == "active"
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", OPT_OUT_CONFIRMATION, OPT_IN_CONFIRMATION]
    # And the model was never asked: the only LLM call is the greeting
    assert llm.calls == 1
    # And the keywords and status changes are in the transcript
    kinds = [(e["direction"], e["kind"]) for e in history(env, pid)]
    assert kinds.count(("inbound", "message")) == 3
    assert kinds.count(("system", "status_change")) == 2


def test_stop_cancels_the_schedules_and_start_restores_them(local_env_factory) -> None:
    # Given a participant whose coach created a daily prompt schedule
    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hello Alice!"),
            ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed", "fixed_time": "09:30"}),
            ScriptedLLM.text("Every day at 9:30."),
        ]
    )
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    post_twilio(env, twilio_params("remind me at 9:30", "SM-sched"))
    names = schedule_names(env)
    assert len(names) == 1

    # When they text STOP
    post_twilio(env, twilio_params("STOP", "SM-stop"))

    # Then no schedule is left, so no daily prompt can reach them
    assert status_of(env, pid) == "paused"
    assert schedule_names(env) == []

    # When they text START
    post_twilio(env, twilio_params("START", "SM-start"))

    # Then the daily schedule is back
    assert schedule_names(env) == names
    assert llm.calls == 3


def test_redelivered_stop_confirms_once(local_env_factory) -> None:
    # Given an enrolled participant
    env = local_env_factory(llm=ScriptedLLM([ScriptedLLM.text("Hello Alice!")]))
    pid = enroll_over_api(env)

    # When Twilio delivers the same STOP twice
    for _ in range(2):
        post_twilio(env, twilio_params("STOP", "SM-stop-dup"))

    # Then one confirmation and one transcript entry for the keyword
    assert [m.body for m in env.messages(pid)].count(OPT_OUT_CONFIRMATION) == 1
    assert [e["content"] for e in history(env, pid) if e["direction"] == "inbound"] == ["STOP"]


@pytest.mark.parametrize("body", ["ＳＴＯＰ", "S\u200bTOP!", "can you stop sending me these"])
def test_an_opt_out_in_another_written_form_is_honoured_over_a_signed_webhook(local_env_factory, body: str) -> None:
    # Given an enrolled, greeted participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When they opt out in another written form
    assert post_twilio(env, twilio_params(body, "SM-stop-form")).status == 200

    # Then they are paused, confirmed once, and no model was asked (the one call is the greeting)
    assert status_of(env, pid) == "paused"
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", OPT_OUT_CONFIRMATION]
    assert llm.calls == 1


def test_help_is_answered_once_and_recorded_over_a_signed_webhook(local_env_factory) -> None:
    # Given an enrolled, greeted participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)

    # When Twilio delivers the same HELP twice
    for _ in range(2):
        assert post_twilio(env, twilio_params("help", "SM-help-dup")).status == 200

    # Then one help reply that says how to stop, in the transcript with the message; nothing else changed
    replies = [m.body for m in env.messages(pid)][1:]
    assert len(replies) == 1 and "Reply STOP" in replies[0]
    assert [(e["direction"], e["content"]) for e in history(env, pid) if e["direction"] != "system"][-2:] == [
        ("inbound", "help"),
        ("outbound", replies[0]),
    ]
    assert status_of(env, pid) == "active"
    assert llm.calls == 1


def test_message_while_paused_is_recorded_but_not_answered(local_env_factory) -> None:
    # Given a participant who opted out
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    post_twilio(env, twilio_params("STOP", "SM-stop"))
    sent = len(env.messages(pid))

    # When they send an ordinary message
    assert post_twilio(env, twilio_params("are you still there?", "SM-after-stop")).status == 200

    # Then it is kept in the transcript, but no model call and no reply
    assert llm.calls == 1
    assert len(env.messages(pid)) == sent
    assert history(env, pid)[-1]["content"] == "are you still there?"


# -- unknown numbers ----------------------------------------------------------------------------------
def test_unknown_number_is_acknowledged_and_dropped(local_env_factory) -> None:
    # Given a system with auto-enroll off (the default) and nobody enrolled
    llm = ScriptedLLM()
    env = local_env_factory(llm=llm)

    # When a stranger texts
    response = post_twilio(env, twilio_params("hello?", "SM-stranger", phone=STRANGER))

    # Then Twilio gets its empty TwiML, but nobody is enrolled, nothing is sent and the model is not asked
    assert response.status == 200
    assert response.body == EMPTY_TWIML
    assert participants(env) == []
    assert env.messages() == []
    assert llm.calls == 0


def test_unknown_number_is_auto_enrolled_and_the_message_is_the_first_turn(local_env_factory) -> None:
    # Given auto-enroll on
    llm = ScriptedLLM([ScriptedLLM.text("Hi! Let's build a habit together.")])
    env = local_env_factory(llm=llm, auto_enroll_new_users=True)

    # When a stranger texts
    response = post_twilio(env, twilio_params("hello, a friend sent me", "SM-new", phone=STRANGER))

    # Then they are enrolled
    assert response.status == 200
    [participant] = participants(env)
    assert participant["phone_number"] == STRANGER
    assert participant["status"] == "active"
    # with their consent on record as implied by texting in (docs/safety.md#consent)
    assert participant["consent"]["method"] == "implied"
    pid = participant["id"]
    # And their message is the first turn: one LLM call on their text, one reply, no separate greeting
    assert llm.calls == 1
    assert llm.requests[0].messages[-1].content == "hello, a friend sent me"
    assert [m.body for m in env.messages(pid)] == ["Hi! Let's build a habit together."]
    entries = [(e["direction"], e["kind"]) for e in history(env, pid)]
    assert ("outbound", "greeting") not in entries
    assert entries == [("inbound", "message"), ("outbound", "reply")]


def test_auto_enroll_by_whatsapp_cloud_uses_the_canonical_phone(local_env_factory) -> None:
    # Given auto-enroll on
    llm = ScriptedLLM([ScriptedLLM.text("Welcome!")])
    env = local_env_factory(llm=llm, auto_enroll_new_users=True)

    # When a stranger writes on WhatsApp (Meta sends digits without "+")
    response = post_meta(env, meta_payload(meta_text("wamid.NEW", "hi", wa_id="14155550109")))

    # Then the participant is enrolled under the E.164 number and answered
    assert response.status == 200
    [participant] = participants(env)
    assert participant["phone_number"] == STRANGER
    assert [m.body for m in env.messages(participant["id"])] == ["Welcome!"]


def test_meta_one_malformed_message_does_not_drop_its_batch(local_env_factory) -> None:
    # Given an enrolled participant
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Got it.")])
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    # When one POST carries a good text and a message with no sender
    broken = meta_text("wamid.BAD", "lost")
    del broken["from"]
    payload = meta_payload(meta_text("wamid.GOOD", "I walked today"))
    payload["entry"][0]["changes"][0]["value"]["messages"].append(broken)
    response = post_meta(env, payload)
    # Then the good message is a turn and the malformed one is skipped, with a 200 (no Meta retries)
    assert response.status == 200 and response.body == {"received": 1}
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Got it."]
    assert llm.requests[-1].messages[-1].content == "I walked today"


# -- channel credentials: missing, or checks switched off for local development -----------------------
@pytest.mark.logs_errors  # the ERROR and metric: tests/integration/test_webhook_misconfigured.py
def test_a_webhook_whose_secret_is_not_configured_answers_503_and_takes_nothing(local_env_factory) -> None:
    # Given a deployment where neither channel's signing secret is set (no value, no channel secret)
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!")])
    env = local_env_factory(llm=llm, twilio_auth_token=None, whatsapp_app_secret=None)
    pid = enroll_over_api(env)
    before = len(history(env, pid))

    # When each provider posts a message
    twilio = env.api("POST", "/webhooks/twilio", **twilio_event_parts(env, twilio_params("hi", "SM-nocfg"), None))
    meta = post_meta(env, meta_payload(meta_text("wamid.nocfg", "hi")), signature="sha256=00")

    # Then both are refused as a server-side problem (the provider retries), and nothing is taken
    assert (twilio.status, meta.status) == (503, 503)
    assert twilio.body == meta.body == {"status": "error", "message": "not_configured"}
    assert len(history(env, pid)) == before and llm.calls == 1


def test_signature_checks_switched_off_for_local_development_accept_unsigned_posts(local_env_factory) -> None:
    # Given LOCAL_DEV_DISABLE_SIGNATURE_CHECK
    llm = ScriptedLLM([ScriptedLLM.text("Hello Alice!"), ScriptedLLM.text("Hi again."), ScriptedLLM.text("Sure.")])
    env = local_env_factory(llm=llm, local_dev_disable_signature_check=True)
    pid = enroll_over_api(env)

    # When each provider's post carries no signature at all
    twilio = env.api("POST", "/webhooks/twilio", **twilio_event_parts(env, twilio_params("hi", "SM-unsigned"), None))
    raw = json.dumps(meta_payload(meta_text("wamid.unsigned", "and again"))).encode()
    meta = env.api("POST", "/webhooks/whatsapp", body=raw.decode(), headers={"content-type": "application/json"})

    # Then both are taken as turns and answered
    assert (twilio.status, meta.status) == (200, 200)
    assert [m.body for m in env.messages(pid)] == ["Hello Alice!", "Hi again.", "Sure."]
