"""Messenger adapters against captured provider requests: Twilio's REST API and Meta WhatsApp
Cloud (httpx MockTransport and a local HTTP server), recorded provider responses
(tests/data/outbound_exchanges.json), the WhatsApp 24-hour window, SMS segments, the local outbox
and ``build_messenger``."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from promptpipe.adapters.messengers import (
    LocalOutbox,
    TwilioMessenger,
    WhatsAppCloudMessenger,
    WhatsAppTemplates,
    build_messenger,
)
from promptpipe.errors import ConfigurationError, MessagingError
from promptpipe.flow.questions import DONE_QUESTION, intensity_question
from promptpipe.models.messaging import NEVER_WROTE, OutboundKind, OutboundMessage
from promptpipe.ports import Messenger
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings

ACCOUNT_SID = "AC0123456789abcdef0123456789abcdef"
AUTH_TOKEN = "twilio-auth-token"
TO = "+14155550100"
PROMPT_SID = "HX" + "1" * 32
REENGAGE_SID = "HX" + "2" * 32
REMINDER_SID = "HX" + "3" * 32
EXCHANGES = json.loads((Path(__file__).parent.parent / "data" / "outbound_exchanges.json").read_text())


def _recorded(name: str) -> httpx.Response:
    exchange = EXCHANGES[name]
    return httpx.Response(exchange["status"], json=exchange["body"])


def _message(body: str = "Take a 10-minute walk after lunch.", **extra: Any) -> OutboundMessage:
    return OutboundMessage(participant_id="p_1", to=TO, body=body, **extra)


# --- Twilio -------------------------------------------------------------------------------------


class TwilioRecorder:
    """An httpx MockTransport handler standing in for Twilio's REST API."""

    def __init__(self, responses: list[httpx.Response] | None = None, error: Exception | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.responses = responses or []
        self.error = error

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        if self.responses:
            return self.responses.pop(0)
        return _recorded("twilio_message_created")

    def forms(self) -> list[dict[str, str]]:
        return [dict(parse_qsl(r.content.decode(), keep_blank_values=True)) for r in self.requests]


def _twilio(recorder: TwilioRecorder, **kwargs: Any) -> TwilioMessenger:
    kwargs.setdefault("from_number", "+14155550199")
    return TwilioMessenger(
        ACCOUNT_SID,
        AUTH_TOKEN,
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
        publish=False,
        **kwargs,
    )


def test_twilio_sms_request() -> None:
    # Given an SMS messenger / When it sends a plain message
    recorder = TwilioRecorder()
    result = _twilio(recorder).send(_message())
    # Then one Messages.json call goes to the account, authenticated with the account credentials
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == f"https://api.twilio.com/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json"
    expected_auth = base64.b64encode(f"{ACCOUNT_SID}:{AUTH_TOKEN}".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {expected_auth}"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert recorder.forms() == [{"To": TO, "From": "+14155550199", "Body": "Take a 10-minute walk after lunch."}]
    assert (result.provider, result.provider_message_id) == ("twilio", "SM00000000000000000000000000000001")
    assert (result.segments, result.parts) == (1, 1)


def test_twilio_whatsapp_with_question_as_numbered_text() -> None:
    recorder = TwilioRecorder()
    _twilio(recorder, channel="whatsapp").send(_message(question=DONE_QUESTION, kind=OutboundKind.DAILY_PROMPT))
    (form,) = recorder.forms()
    assert form["To"] == "whatsapp:+14155550100"
    assert form["From"] == "whatsapp:+14155550199"
    assert form["Body"] == ("Take a 10-minute walk after lunch.\n\nDid you do it? Reply 1 for Done or 2 for Next time.")


def test_twilio_question_only_and_messaging_service() -> None:
    recorder = TwilioRecorder()
    messenger = _twilio(recorder, from_number=None, messaging_service_sid="MG0123456789abcdef0123456789abcdef")
    result = messenger.send(_message(body="", question=intensity_question("high")))
    (form,) = recorder.forms()
    assert "From" not in form
    assert form["MessagingServiceSid"] == "MG0123456789abcdef0123456789abcdef"
    # On SMS the em dash of the poll becomes a hyphen: one GSM-7 segment instead of two UCS-2 ones
    assert form["Body"] == (
        "How's the intensity? Reply LESS (decrease) or SAME (keep current) - or low, normal or high."
    )
    assert result.segments == 1


def test_twilio_sms_is_kept_in_gsm7_and_emoji_follow_the_tone() -> None:
    recorder = TwilioRecorder()
    messenger = _twilio(recorder)
    text = "“Great job” today 🎉 — you’re on a roll… see you tomorrow at the same time, same place!"
    dropped = messenger.send(_message(body=text))
    kept = messenger.send(_message(body=text, allow_emoji=True))
    first, second = recorder.forms()
    assert first["Body"] == '"Great job" today - you\'re on a roll... see you tomorrow at the same time, same place!'
    assert dropped.segments == 1
    assert (
        second["Body"] == '"Great job" today 🎉 - you\'re on a roll... see you tomorrow at the same time, same place!'
    )
    assert kept.segments == 2  # the emoji makes it UCS-2: 91 code units > 70


def test_twilio_sms_over_1600_characters_is_split_at_sentences() -> None:
    recorder = TwilioRecorder()
    body = "Here is one more idea for your habit this week. " * 50  # 2,400 characters
    result = _twilio(recorder).send(_message(body=body))
    bodies = [form["Body"] for form in recorder.forms()]
    assert len(bodies) == 2 and all(len(b) <= 1600 and b.endswith(".") for b in bodies)
    assert " ".join(bodies) == body.strip()
    assert result.parts == 2
    assert result.segments == sum(-(-len(b) // 153) for b in bodies)


def test_twilio_publishes_segments_as_a_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    from promptpipe import observability

    published: list[tuple[str, float, dict[str, str]]] = []
    monkeypatch.setattr(
        observability, "count", lambda name, value=1, unit=None, **dims: published.append((name, value, dims))
    )
    recorder = TwilioRecorder()
    messenger = TwilioMessenger(
        ACCOUNT_SID,
        AUTH_TOKEN,
        from_number="+14155550199",
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
    )
    messenger.send(_message(body="x" * 200))
    assert published == [("SmsSegments", 2, {})]


def test_twilio_client_is_reused() -> None:
    recorder = TwilioRecorder()
    messenger = _twilio(recorder)
    messenger.send(_message())
    messenger.send(_message())
    assert len(recorder.requests) == 2


def test_twilio_rest_error_maps_to_messaging_error_with_code() -> None:
    recorder = TwilioRecorder(
        [
            httpx.Response(
                400,
                json={
                    "code": 21211,
                    "message": "The 'To' number +14155550100 is not a valid phone number.",
                    "more_info": "https://www.twilio.com/docs/errors/21211",
                    "status": 400,
                },
            )
        ]
    )
    with pytest.raises(MessagingError) as caught:
        _twilio(recorder).send(_message())
    text = str(caught.value)
    assert "HTTP 400" in text and "code 21211" in text
    assert "+14155550100" not in text  # the number is masked before it can reach a log
    assert "0100" in text
    assert (caught.value.code, caught.value.status, caught.value.retryable) == ("21211", 400, False)


def test_twilio_recorded_unsubscribed_error() -> None:
    recorder = TwilioRecorder([_recorded("twilio_unsubscribed")])
    with pytest.raises(MessagingError, match="code 21610") as caught:
        _twilio(recorder).send(_message())
    assert caught.value.code == "21610"
    assert caught.value.undeliverable  # recorded failed, not retried: the recipient opted out at the carrier


def test_twilio_rfc9457_error_maps_to_messaging_error() -> None:
    recorder = TwilioRecorder(
        [
            httpx.Response(
                429,
                json={
                    "type": "https://www.twilio.com/docs/errors/20429",
                    "title": "Too Many Requests",
                    "status": 429,
                    "code": 20429,
                },
            )
        ]
    )
    with pytest.raises(MessagingError, match=r"HTTP 429, code 20429\): Too Many Requests") as caught:
        _twilio(recorder).send(_message())
    assert caught.value.retryable and not caught.value.undeliverable


def test_twilio_error_without_json_body() -> None:
    recorder = TwilioRecorder([httpx.Response(502, text="<html>Bad Gateway</html>")])
    with pytest.raises(MessagingError, match="HTTP 502"):
        _twilio(recorder).send(_message())


def test_twilio_network_error_maps_to_messaging_error() -> None:
    recorder = TwilioRecorder(error=httpx.ConnectError("connection refused"))
    with pytest.raises(MessagingError, match="ConnectError"):
        _twilio(recorder).send(_message())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"account_sid": "", "auth_token": "t", "from_number": "+1"}, "TWILIO_ACCOUNT_SID"),
        ({"account_sid": ACCOUNT_SID, "auth_token": "t"}, "TWILIO_FROM_NUMBER"),
        (
            {"account_sid": ACCOUNT_SID, "auth_token": "t", "from_number": "+1", "channel": "mms"},
            "TWILIO_CHANNEL",
        ),
    ],
)
def test_twilio_configuration_errors(kwargs: dict[str, Any], message: str) -> None:
    sid, token = kwargs.pop("account_sid"), kwargs.pop("auth_token")
    with pytest.raises(ConfigurationError, match=message):
        TwilioMessenger(sid, token, **kwargs)


def test_twilio_sends_without_the_twilio_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    # The send path needs only httpx: an import of the SDK would fail here
    import builtins

    real_import = builtins.__import__

    def no_twilio(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "twilio" or name.startswith("twilio."):
            raise ImportError("twilio SDK not installed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_twilio)
    recorder = TwilioRecorder()
    assert _twilio(recorder).send(_message()).provider_message_id.startswith("SM")


# --- Twilio WhatsApp outside the 24-hour window ---------------------------------------------------


def _twilio_wa(recorder: TwilioRecorder, clock: ManualClock, **templates: Any) -> TwilioMessenger:
    templates.setdefault("prompt", PROMPT_SID)
    templates.setdefault("reengagement", REENGAGE_SID)
    return _twilio(recorder, channel="whatsapp", templates=WhatsAppTemplates(**templates), clock=clock)


def test_twilio_whatsapp_inside_the_window_is_free_form(clock: ManualClock) -> None:
    recorder = TwilioRecorder()
    last = clock.now() - timedelta(hours=23)
    result = _twilio_wa(recorder, clock).send(_message(kind=OutboundKind.DAILY_PROMPT, last_inbound_at=last))
    (form,) = recorder.forms()
    assert form["Body"] == "Take a 10-minute walk after lunch." and "ContentSid" not in form
    assert result.template == ""


def test_twilio_whatsapp_outside_the_window_sends_the_content_template(clock: ManualClock) -> None:
    recorder = TwilioRecorder()
    last = clock.now() - timedelta(days=2)
    result = _twilio_wa(recorder, clock).send(
        _message(
            body="Take a\n10-minute walk.", kind=OutboundKind.DAILY_PROMPT, question=DONE_QUESTION, last_inbound_at=last
        )
    )
    (form,) = recorder.forms()
    assert form == {
        "To": "whatsapp:+14155550100",
        "From": "whatsapp:+14155550199",
        "ContentSid": PROMPT_SID,
        "ContentVariables": '{"1": "Take a 10-minute walk."}',
    }
    assert result.template == PROMPT_SID


def test_twilio_whatsapp_without_a_prompt_template_sends_the_fixed_one(clock: ManualClock) -> None:
    recorder = TwilioRecorder()
    _twilio_wa(recorder, clock, prompt=None).send(_message(kind=OutboundKind.DAILY_PROMPT, last_inbound_at=NEVER_WROTE))
    (form,) = recorder.forms()
    assert form["ContentSid"] == REENGAGE_SID and "ContentVariables" not in form and "Body" not in form


def test_twilio_whatsapp_refusal_63016_switches_to_the_template_once(clock: ManualClock) -> None:
    # Given a caller that does not know when the participant last wrote, and Twilio refusing
    recorder = TwilioRecorder([_recorded("twilio_outside_window")])
    result = _twilio_wa(recorder, clock).send(_message(kind=OutboundKind.DAILY_PROMPT))
    first, second = recorder.forms()
    assert "Body" in first and "ContentSid" not in first
    assert second["ContentSid"] == PROMPT_SID
    assert result.template == PROMPT_SID and result.provider_message_id.startswith("SM")


def test_twilio_whatsapp_refusal_of_the_template_too_is_not_retried_again(clock: ManualClock) -> None:
    recorder = TwilioRecorder([_recorded("twilio_outside_window"), _recorded("twilio_outside_window")])
    with pytest.raises(MessagingError, match="code 63016") as caught:
        _twilio_wa(recorder, clock).send(_message(kind=OutboundKind.DAILY_PROMPT))
    assert len(recorder.requests) == 2 and not caught.value.retryable


def test_twilio_whatsapp_poll_outside_the_window_is_skipped(clock: ManualClock) -> None:
    recorder = TwilioRecorder()
    result = _twilio_wa(recorder, clock).send(
        _message(
            body="",
            kind=OutboundKind.INTENSITY_POLL,
            question=intensity_question("normal"),
            last_inbound_at=NEVER_WROTE,
        )
    )
    assert recorder.requests == [] and result.skipped == "outside_window"


def test_twilio_whatsapp_without_templates_keeps_the_refusal(clock: ManualClock) -> None:
    recorder = TwilioRecorder([_recorded("twilio_outside_window")])
    with pytest.raises(MessagingError, match="63016"):
        _twilio(recorder, channel="whatsapp", clock=clock).send(_message(last_inbound_at=NEVER_WROTE))
    assert len(recorder.requests) == 1


# --- WhatsApp Cloud API ---------------------------------------------------------------------------


class GraphRecorder:
    """An httpx MockTransport handler standing in for the Graph API."""

    def __init__(self, responses: list[httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.responses = responses or []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.responses:
            return self.responses.pop(0)
        n = len(self.requests)
        return httpx.Response(
            200,
            json={
                "messaging_product": "whatsapp",
                "contacts": [{"input": "14155550100", "wa_id": "14155550100"}],
                "messages": [{"id": f"wamid.OUT{n}"}],
            },
        )

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def _cloud(recorder: GraphRecorder, **kwargs: Any) -> WhatsAppCloudMessenger:
    client = httpx.Client(transport=httpx.MockTransport(recorder))
    return WhatsAppCloudMessenger("EAAG-token", "123456789012345", http_client=client, publish=False, **kwargs)


def test_whatsapp_cloud_text() -> None:
    recorder = GraphRecorder()
    result = _cloud(recorder).send(_message())
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == "https://graph.facebook.com/v21.0/123456789012345/messages"
    assert request.headers["Authorization"] == "Bearer EAAG-token"
    assert request.headers["Content-Type"] == "application/json"
    assert recorder.bodies() == [
        {
            "messaging_product": "whatsapp",
            "to": "14155550100",
            "type": "text",
            "text": {"body": "Take a 10-minute walk after lunch."},
        }
    ]
    assert (result.provider, result.provider_message_id) == ("whatsapp_cloud", "wamid.OUT1")


def test_whatsapp_cloud_text_and_question_in_one_interactive_message() -> None:
    # One API call: a retry can never repeat half of the message
    recorder = GraphRecorder()
    result = _cloud(recorder).send(_message(question=DONE_QUESTION))
    assert recorder.bodies() == [
        {
            "messaging_product": "whatsapp",
            "to": "14155550100",
            "type": "interactive",
            "interactive": {
                "type": "button",
                "body": {"text": "Take a 10-minute walk after lunch.\n\nDid you do it?"},
                "action": {
                    "buttons": [
                        {"type": "reply", "reply": {"id": "done:done", "title": "Done"}},
                        {"type": "reply", "reply": {"id": "done:next_time", "title": "Next time"}},
                    ]
                },
            },
        },
    ]
    assert result.provider_message_id == "wamid.OUT1"  # the message a button reply refers to


def test_whatsapp_cloud_long_text_goes_first_then_the_buttons() -> None:
    recorder = GraphRecorder()
    long_body = "x" * 1100  # over the interactive body limit
    result = _cloud(recorder).send(_message(body=long_body, question=DONE_QUESTION))
    first, second = recorder.bodies()
    assert first["type"] == "text" and first["text"] == {"body": long_body}
    assert second["type"] == "interactive" and second["interactive"]["body"] == {"text": "Did you do it?"}
    assert result.provider_message_id == "wamid.OUT2"


def test_whatsapp_cloud_question_only_sends_just_the_buttons() -> None:
    recorder = GraphRecorder()
    _cloud(recorder).send(_message(body="", question=intensity_question("normal")))
    (body,) = recorder.bodies()
    assert body["type"] == "interactive"
    assert body["interactive"]["body"] == {"text": "How's the intensity?"}
    assert [b["reply"] for b in body["interactive"]["action"]["buttons"]] == [
        {"id": "intensity:decrease", "title": "Decrease"},
        {"id": "intensity:keep", "title": "Keep current"},
        {"id": "intensity:increase", "title": "Increase"},
    ]


def test_whatsapp_cloud_error_maps_status_and_meta_message() -> None:
    error = {
        "error": {
            "message": "(#131030) Recipient phone number not in allowed list",
            "type": "OAuthException",
            "code": 131030,
            "fbtrace_id": "AbCdEf",
        }
    }
    recorder = GraphRecorder([httpx.Response(400, json=error)])
    with pytest.raises(MessagingError) as caught:
        _cloud(recorder).send(_message())
    text = str(caught.value)
    assert "HTTP 400" in text and "code 131030" in text
    assert "Recipient phone number not in allowed list" in text
    assert "EAAG-token" not in text


def test_whatsapp_cloud_error_without_json_body() -> None:
    recorder = GraphRecorder([httpx.Response(502, text="<html>Bad Gateway</html>")])
    with pytest.raises(MessagingError, match="HTTP 502"):
        _cloud(recorder).send(_message())


def test_whatsapp_cloud_buttons_failure_after_long_text_raises() -> None:
    recorder = GraphRecorder([httpx.Response(200, json={"messages": [{"id": "wamid.T"}]})])
    recorder.responses.append(httpx.Response(500, json={"error": {"message": "Service unavailable", "code": 2}}))
    with pytest.raises(MessagingError, match="HTTP 500"):
        _cloud(recorder).send(_message(body="y" * 1100, question=DONE_QUESTION))
    assert len(recorder.requests) == 2


def test_whatsapp_cloud_network_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    messenger = WhatsAppCloudMessenger(
        "EAAG-token", "123", http_client=httpx.Client(transport=httpx.MockTransport(refuse))
    )
    with pytest.raises(MessagingError, match="ConnectError"):
        messenger.send(_message())


# --- WhatsApp Cloud outside the 24-hour window ----------------------------------------------------


def _cloud_templates(**kwargs: Any) -> WhatsAppTemplates:
    kwargs.setdefault("prompt", "daily_habit_prompt")
    kwargs.setdefault("reengagement", "habit_checkin")
    return WhatsAppTemplates(**kwargs)


def test_whatsapp_cloud_inside_the_window_is_free_form(clock: ManualClock) -> None:
    recorder = GraphRecorder()
    last = clock.now() - timedelta(hours=20)
    _cloud(recorder, templates=_cloud_templates(), clock=clock).send(
        _message(kind=OutboundKind.DAILY_PROMPT, question=DONE_QUESTION, last_inbound_at=last)
    )
    assert [b["type"] for b in recorder.bodies()] == ["interactive"]


def test_whatsapp_cloud_outside_the_window_sends_the_prompt_template(clock: ManualClock) -> None:
    recorder = GraphRecorder([_recorded("meta_message_sent")])
    last = clock.now() - timedelta(days=2)
    messenger = _cloud(recorder, templates=_cloud_templates(language="en", quick_replies=True), clock=clock)
    result = messenger.send(
        _message(
            body="Take a 10-minute walk\n\nafter lunch.",
            kind=OutboundKind.DAILY_PROMPT,
            question=DONE_QUESTION,
            last_inbound_at=last,
        )
    )
    assert recorder.bodies() == [
        {
            "messaging_product": "whatsapp",
            "to": "14155550100",
            "type": "template",
            "template": {
                "name": "daily_habit_prompt",
                "language": {"code": "en"},
                "components": [
                    {"type": "body", "parameters": [{"type": "text", "text": "Take a 10-minute walk after lunch."}]},
                    {
                        "type": "button",
                        "sub_type": "quick_reply",
                        "index": "0",
                        "parameters": [{"type": "payload", "payload": "done:done"}],
                    },
                    {
                        "type": "button",
                        "sub_type": "quick_reply",
                        "index": "1",
                        "parameters": [{"type": "payload", "payload": "done:next_time"}],
                    },
                ],
            },
        }
    ]
    assert result.template == "daily_habit_prompt"
    assert result.provider_message_id == EXCHANGES["meta_message_sent"]["body"]["messages"][0]["id"]


def test_whatsapp_cloud_text_too_long_for_a_parameter_uses_the_fixed_template(clock: ManualClock) -> None:
    recorder = GraphRecorder()
    _cloud(recorder, templates=_cloud_templates(), clock=clock).send(
        _message(body="word " * 300, kind=OutboundKind.DAILY_PROMPT, last_inbound_at=NEVER_WROTE)
    )
    (body,) = recorder.bodies()
    assert body["template"] == {"name": "habit_checkin", "language": {"code": "en_US"}}


def test_whatsapp_cloud_refusal_131047_switches_to_the_template_once(clock: ManualClock) -> None:
    # Given the recorded refusal of a free-form message outside the window
    recorder = GraphRecorder([_recorded("meta_outside_window")])
    result = _cloud(recorder, templates=_cloud_templates(), clock=clock).send(_message(kind=OutboundKind.DAILY_PROMPT))
    free_form, template = recorder.bodies()
    assert free_form["type"] == "text"
    assert template["type"] == "template" and template["template"]["name"] == "daily_habit_prompt"
    assert result.template == "daily_habit_prompt"


def test_whatsapp_cloud_refusal_is_raised_not_retried_when_no_template_is_configured(clock: ManualClock) -> None:
    recorder = GraphRecorder([_recorded("meta_outside_window")])
    with pytest.raises(MessagingError, match="code 131047") as caught:
        _cloud(recorder, clock=clock).send(_message(kind=OutboundKind.DAILY_PROMPT))
    assert len(recorder.requests) == 1
    assert (caught.value.code, caught.value.retryable, caught.value.undeliverable) == ("131047", False, True)


def test_whatsapp_cloud_reply_is_never_a_template(clock: ManualClock) -> None:
    recorder = GraphRecorder()
    _cloud(recorder, templates=_cloud_templates(), clock=clock).send(_message(last_inbound_at=NEVER_WROTE))
    assert recorder.bodies()[0]["type"] == "text"


def test_whatsapp_cloud_poll_outside_the_window_is_skipped(clock: ManualClock) -> None:
    recorder = GraphRecorder()
    result = _cloud(recorder, templates=_cloud_templates(), clock=clock).send(
        _message(
            body="", kind=OutboundKind.INTENSITY_POLL, question=intensity_question("low"), last_inbound_at=NEVER_WROTE
        )
    )
    assert recorder.requests == [] and result.skipped == "outside_window"


class _GraphHandler(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []  # noqa: RUF012  (reset per test)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.received.append((self.path, dict(self.headers), self.rfile.read(length)))
        body = json.dumps({"messages": [{"id": "wamid.LOCAL"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def graph_server() -> Iterator[str]:
    _GraphHandler.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GraphHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_whatsapp_cloud_over_real_http(graph_server: str) -> None:
    # Given the messenger's own httpx client (no injected client) and a local Graph stand-in
    messenger = WhatsAppCloudMessenger("tok", "999", api_version="v22.0", base_url=graph_server + "/", timeout=5)
    try:
        result = messenger.send(_message(body="Hello"))
    finally:
        messenger.close()
    ((path, headers, raw),) = _GraphHandler.received
    assert path == "/v22.0/999/messages"
    assert headers["Authorization"] == "Bearer tok"
    assert json.loads(raw)["text"] == {"body": "Hello"}
    assert result.provider_message_id == "wamid.LOCAL"


# --- local outbox ---------------------------------------------------------------------------------


def test_local_outbox_records_messages(clock: ManualClock) -> None:
    outbox = LocalOutbox(clock)
    first = outbox.send(_message(question=DONE_QUESTION, kind=OutboundKind.DAILY_PROMPT, message_id="m1"))
    outbox.send(OutboundMessage(participant_id="p_2", to="+447911123456", body="Hi"))
    records = outbox.messages()
    assert [r.participant_id for r in records] == ["p_1", "p_2"]
    record = outbox.messages("p_1")[0]
    assert record.question == DONE_QUESTION
    assert record.body == "Take a 10-minute walk after lunch."
    assert record.body_text.endswith("\n\nDid you do it? Reply 1 for Done or 2 for Next time.")
    assert record.kind == OutboundKind.DAILY_PROMPT
    assert record.sent_at == clock.now()
    assert record.provider_message_id == first.provider_message_id == "local-1"
    assert first.provider == "local"


def test_local_outbox_same_message_id_is_sent_once(clock: ManualClock) -> None:
    outbox = LocalOutbox(clock)
    first = outbox.send(_message(message_id="m1"))
    again = outbox.send(_message(message_id="m1"))
    outbox.send(_message())  # no message id: never deduplicated
    outbox.send(_message())
    assert again == first
    assert len(outbox.messages()) == 3


def test_local_outbox_injected_failures(clock: ManualClock) -> None:
    outbox = LocalOutbox(clock)
    outbox.fail_next(2)
    with pytest.raises(MessagingError, match="injected"):
        outbox.send(_message())
    outbox.fail_next(1, error=RuntimeError("boom"))
    with pytest.raises(MessagingError):
        outbox.send(_message())
    with pytest.raises(RuntimeError, match="boom"):
        outbox.send(_message())
    outbox.send(_message())
    assert len(outbox.messages()) == 1


def test_local_outbox_is_thread_safe(clock: ManualClock) -> None:
    outbox = LocalOutbox(clock)

    def send_many(worker: int) -> None:
        for i in range(50):
            outbox.send(_message(message_id=f"{worker}-{i}"))

    threads = [threading.Thread(target=send_many, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = outbox.messages()
    assert len(records) == 400
    assert len({r.provider_message_id for r in records}) == 400


# --- build_messenger --------------------------------------------------------------------------------


def _settings(**values: Any) -> Settings:
    return Settings.model_validate(values)


def test_build_local_messenger_uses_the_given_outbox(clock: ManualClock) -> None:
    outbox = LocalOutbox(clock)
    assert build_messenger(_settings(messaging_provider="local"), clock=clock, outbox=outbox) is outbox
    assert isinstance(build_messenger(_settings(messaging_provider="local"), clock=clock), LocalOutbox)


def test_build_twilio_messenger_prefers_the_secret(clock: ManualClock) -> None:
    settings = _settings(
        messaging_provider="twilio",
        twilio_account_sid="AC-from-env",
        twilio_auth_token="env-token",
        twilio_from_number="+14155550199",
        twilio_channel="whatsapp",
    )
    messenger = build_messenger(
        settings, clock=clock, secrets={"TWILIO_ACCOUNT_SID": ACCOUNT_SID, "twilio_auth_token": AUTH_TOKEN}
    )
    assert isinstance(messenger, TwilioMessenger)
    assert messenger._account_sid == ACCOUNT_SID
    assert messenger._auth_token == AUTH_TOKEN
    assert messenger._channel == "whatsapp"


def test_build_whatsapp_cloud_messenger(clock: ManualClock) -> None:
    settings = _settings(messaging_provider="whatsapp_cloud", whatsapp_graph_api_version="v22.0")
    messenger = build_messenger(
        settings,
        clock=clock,
        secrets={"whatsapp_access_token": "tok", "whatsapp_phone_number_id": "555"},
    )
    assert isinstance(messenger, WhatsAppCloudMessenger)
    assert messenger._url == "https://graph.facebook.com/v22.0/555/messages"


# Each kind's template setting: (its Twilio Content SID, its Cloud API template name).
_TEMPLATE_SETTINGS = {"prompt": ("twilio_template_content_sid", "whatsapp_template_name")} | {
    kind: (f"twilio_{kind}_content_sid", f"whatsapp_{kind}_template_name")
    for kind in ("reengagement", "greeting", "reminder", "feedback", "staff")
}


@pytest.mark.parametrize("provider", ["twilio", "whatsapp_cloud"])
def test_build_messenger_gives_each_kind_its_own_template_of_the_provider(clock: ManualClock, provider: str) -> None:
    # Given every kind's template set for both providers, each to a value of its own
    twilio = {sid: f"HX{n:032x}" for n, (sid, _) in enumerate(_TEMPLATE_SETTINGS.values())}
    cloud = {name: f"{kind}_template" for kind, (_, name) in _TEMPLATE_SETTINGS.items()}
    settings = _settings(
        messaging_provider=provider,
        twilio_from_number="+14155550199",
        whatsapp_template_language="es",
        **twilio,
        **cloud,
    )
    secrets = {"twilio_account_sid": ACCOUNT_SID, "twilio_auth_token": AUTH_TOKEN}
    secrets |= {"whatsapp_access_token": "tok", "whatsapp_phone_number_id": "555"}
    # When the messenger is built
    messenger = build_messenger(settings, clock=clock, secrets=secrets)
    # Then each kind goes on the provider's own template for that kind
    assert isinstance(messenger, TwilioMessenger | WhatsAppCloudMessenger)
    column = 0 if provider == "twilio" else 1
    for kind, names in _TEMPLATE_SETTINGS.items():
        assert getattr(messenger._templates, kind) == getattr(settings, names[column]), kind
    if provider == "whatsapp_cloud":
        assert messenger._templates.language == "es"


@pytest.mark.parametrize(
    ("values", "missing"),
    [
        (
            {"messaging_provider": "twilio", "twilio_auth_token": "t", "twilio_from_number": "+1"},
            "TWILIO_ACCOUNT_SID",
        ),
        (
            {"messaging_provider": "twilio", "twilio_account_sid": "AC", "twilio_from_number": "+1"},
            "TWILIO_AUTH_TOKEN",
        ),
        (
            {"messaging_provider": "twilio", "twilio_account_sid": "AC", "twilio_auth_token": "t"},
            "TWILIO_FROM_NUMBER",
        ),
        ({"messaging_provider": "whatsapp_cloud", "whatsapp_phone_number_id": "1"}, "WHATSAPP_ACCESS_TOKEN"),
        ({"messaging_provider": "whatsapp_cloud", "whatsapp_access_token": "t"}, "WHATSAPP_PHONE_NUMBER_ID"),
    ],
)
def test_build_messenger_names_the_missing_setting(clock: ManualClock, values: dict[str, Any], missing: str) -> None:
    with pytest.raises(ConfigurationError, match=missing):
        build_messenger(_settings(**values), clock=clock, secrets={})


def test_every_messenger_satisfies_the_port(clock: ManualClock) -> None:
    messengers: list[Messenger] = [
        LocalOutbox(clock),
        _twilio(TwilioRecorder()),
        _cloud(GraphRecorder()),
    ]
    for messenger in messengers:
        assert messenger.send(_message()).provider in ("local", "twilio", "whatsapp_cloud")


# --- templates: the choice, and what it is counted as -------------------------------------------------


@pytest.mark.parametrize(
    ("templates", "text", "chosen"),
    [
        # our text fits the prompt template's parameter
        (
            WhatsAppTemplates(prompt=PROMPT_SID, reengagement=REENGAGE_SID),
            "Walk  after\nlunch.",
            (PROMPT_SID, "Walk after lunch."),
        ),
        # too long for it: the fixed template, when there is one
        (
            WhatsAppTemplates(prompt=PROMPT_SID, reengagement=REENGAGE_SID, max_parameter_chars=5),
            "Walk after lunch.",
            (REENGAGE_SID, None),
        ),
        # too long and no fixed template: cut at the cap, with an ellipsis
        (WhatsAppTemplates(prompt=PROMPT_SID, max_parameter_chars=6), "Walk after lunch.", (PROMPT_SID, "Walk…")),
        # nothing to say and no fixed template: the parameter cannot be empty
        (WhatsAppTemplates(prompt=PROMPT_SID), "  ", (PROMPT_SID, " ")),
        (WhatsAppTemplates(reengagement=REENGAGE_SID), "Walk after lunch.", (REENGAGE_SID, None)),
    ],
)
def test_whatsapp_template_choice(templates: WhatsAppTemplates, text: str, chosen: tuple[str, str | None]) -> None:
    assert templates.choose(text) == chosen


def test_no_whatsapp_template_is_a_configuration_error() -> None:
    assert not WhatsAppTemplates().configured
    with pytest.raises(ConfigurationError, match=r"^no WhatsApp template configured$"):
        WhatsAppTemplates().choose("Walk after lunch.")


def test_twilio_template_sends_are_counted_by_kind(monkeypatch: pytest.MonkeyPatch, clock: ManualClock) -> None:
    from promptpipe import observability

    published: list[tuple[str, float, dict[str, str]]] = []
    monkeypatch.setattr(
        observability, "count", lambda name, value=1, unit=None, **dims: published.append((name, value, dims))
    )
    recorder = TwilioRecorder()
    messenger = TwilioMessenger(
        ACCOUNT_SID,
        AUTH_TOKEN,
        from_number="+14155550199",
        channel="whatsapp",
        templates=WhatsAppTemplates(prompt=PROMPT_SID, reminder=REMINDER_SID),
        clock=clock,
        http_client=httpx.Client(transport=httpx.MockTransport(recorder)),
    )
    messenger.send(_message(kind=OutboundKind.REMINDER, last_inbound_at=NEVER_WROTE))
    assert published == [("WhatsAppTemplateSends", 1, {"kind": "reminder"})]
    assert recorder.forms()[0]["ContentSid"] == REMINDER_SID


def test_twilio_error_whose_body_is_not_an_object_is_named_by_its_status() -> None:
    recorder = TwilioRecorder([httpx.Response(400, json=["unexpected"])])
    with pytest.raises(MessagingError, match=r"^Twilio refused the message \(HTTP 400, code None\): Bad Request$"):
        _twilio(recorder).send(_message())


def test_twilio_success_without_a_json_body_has_no_message_id() -> None:
    recorder = TwilioRecorder([httpx.Response(201, text="created")])
    result = _twilio(recorder).send(_message())
    assert (result.provider, result.provider_message_id, result.parts) == ("twilio", "", 1)


@pytest.mark.parametrize(("token", "number_id"), [("", "123"), ("EAAG-token", "")])
def test_whatsapp_cloud_needs_its_token_and_number(token: str, number_id: str) -> None:
    with pytest.raises(
        ConfigurationError, match=r"^WhatsApp Cloud needs WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID$"
    ):
        WhatsAppCloudMessenger(token, number_id)
