"""Messenger adapters against captured provider requests: Twilio (through the real ``twilio``
client and its ``http_client`` hook), Meta WhatsApp Cloud (httpx MockTransport and a local HTTP
server), the local outbox and ``build_messenger``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import requests
from twilio.http import HttpClient
from twilio.http.response import Response as TwilioResponse
from twilio.rest import Client

from promptpipe.adapters.messengers import (
    LocalOutbox,
    TwilioMessenger,
    WhatsAppCloudMessenger,
    build_messenger,
)
from promptpipe.clock import ManualClock
from promptpipe.errors import ConfigurationError, MessagingError
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.ports import Messenger
from promptpipe.questions import DONE_QUESTION, intensity_question
from promptpipe.settings import Settings

ACCOUNT_SID = "AC0123456789abcdef0123456789abcdef"
AUTH_TOKEN = "twilio-auth-token"
TO = "+14155550100"


def _message(body: str = "Take a 10-minute walk after lunch.", **extra: Any) -> OutboundMessage:
    return OutboundMessage(participant_id="p_1", to=TO, body=body, **extra)


# --- Twilio -------------------------------------------------------------------------------------


class RecordingTwilioHttp(HttpClient):
    """Twilio's HTTP hook: records each REST request and answers with a canned response."""

    def __init__(
        self, status: int = 201, payload: dict[str, Any] | None = None, error: Exception | None = None
    ) -> None:
        super().__init__(logger=None, is_async=False)  # type: ignore[arg-type]
        self.status = status
        self.payload = payload if payload is not None else {"sid": "SM00000000000000000000000000000001"}
        self.error = error
        self.requests: list[dict[str, Any]] = []

    def request(  # noqa: PLR0917  (the signature of twilio's HttpClient.request)
        self,
        method: str,
        uri: str,
        params: Any = None,
        data: Any = None,
        headers: Any = None,
        auth: Any = None,
        timeout: Any = None,
        allow_redirects: bool = False,
    ) -> TwilioResponse:
        self.requests.append({"method": method, "uri": uri, "data": dict(data or {}), "auth": auth})
        if self.error is not None:
            raise self.error
        return TwilioResponse(self.status, json.dumps(self.payload))


def _twilio(http: RecordingTwilioHttp, **kwargs: Any) -> TwilioMessenger:
    kwargs.setdefault("from_number", "+14155550199")
    return TwilioMessenger(
        ACCOUNT_SID,
        AUTH_TOKEN,
        client_factory=lambda sid, token: Client(sid, token, http_client=http),
        **kwargs,
    )


def test_twilio_sms_request() -> None:
    # Given an SMS messenger / When it sends a plain message
    http = RecordingTwilioHttp()
    result = _twilio(http).send(_message())
    # Then one Messages.create call goes to the account, authenticated with the account credentials
    (request,) = http.requests
    assert request["method"] == "POST"
    assert request["uri"] == f"https://api.twilio.com/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json"
    assert request["auth"] == (ACCOUNT_SID, AUTH_TOKEN)
    assert request["data"] == {"To": TO, "From": "+14155550199", "Body": "Take a 10-minute walk after lunch."}
    assert (result.provider, result.provider_message_id) == ("twilio", "SM00000000000000000000000000000001")


def test_twilio_whatsapp_with_question_as_numbered_text() -> None:
    http = RecordingTwilioHttp()
    _twilio(http, channel="whatsapp").send(_message(question=DONE_QUESTION, kind=OutboundKind.DAILY_PROMPT))
    (request,) = http.requests
    assert request["data"]["To"] == "whatsapp:+14155550100"
    assert request["data"]["From"] == "whatsapp:+14155550199"
    assert request["data"]["Body"] == (
        "Take a 10-minute walk after lunch.\n\nDid you do it? Reply 1 for Done or 2 for Next time."
    )


def test_twilio_question_only_and_messaging_service() -> None:
    http = RecordingTwilioHttp()
    messenger = _twilio(http, from_number=None, messaging_service_sid="MG0123456789abcdef0123456789abcdef")
    messenger.send(_message(body="", question=intensity_question("high")))
    (request,) = http.requests
    assert "From" not in request["data"]
    assert request["data"]["MessagingServiceSid"] == "MG0123456789abcdef0123456789abcdef"
    assert request["data"]["Body"] == (
        "How's the intensity? Reply LESS (decrease) or SAME (keep current) — or low, normal or high."
    )


def test_twilio_client_is_built_once() -> None:
    built: list[str] = []
    http = RecordingTwilioHttp()

    def factory(sid: str, token: str) -> Client:
        built.append(sid)
        return Client(sid, token, http_client=http)

    messenger = TwilioMessenger(ACCOUNT_SID, AUTH_TOKEN, from_number="+14155550199", client_factory=factory)
    messenger.send(_message())
    messenger.send(_message())
    assert built == [ACCOUNT_SID]
    assert len(http.requests) == 2


def test_twilio_rest_error_maps_to_messaging_error_with_code() -> None:
    http = RecordingTwilioHttp(
        status=400,
        payload={
            "code": 21211,
            "message": "The 'To' number +14155550100 is not a valid phone number.",
            "status": 400,
        },
    )
    with pytest.raises(MessagingError) as caught:
        _twilio(http).send(_message())
    text = str(caught.value)
    assert "HTTP 400" in text and "code 21211" in text
    assert "+14155550100" not in text  # the number is masked before it can reach a log
    assert "0100" in text


def test_twilio_rfc9457_error_maps_to_messaging_error() -> None:
    http = RecordingTwilioHttp(
        status=429,
        payload={
            "type": "https://www.twilio.com/docs/errors/20429",
            "title": "Too Many Requests",
            "status": 429,
            "code": 20429,
        },
    )
    with pytest.raises(MessagingError, match=r"HTTP 429, code 20429\): Too Many Requests"):
        _twilio(http).send(_message())


def test_twilio_network_error_maps_to_messaging_error() -> None:
    http = RecordingTwilioHttp(error=requests.ConnectionError("connection refused"))
    with pytest.raises(MessagingError, match="ConnectionError"):
        _twilio(http).send(_message())


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


def _cloud(recorder: GraphRecorder) -> WhatsAppCloudMessenger:
    client = httpx.Client(transport=httpx.MockTransport(recorder))
    return WhatsAppCloudMessenger("EAAG-token", "123456789012345", http_client=client)


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
        _twilio(RecordingTwilioHttp()),
        _cloud(GraphRecorder()),
    ]
    for messenger in messengers:
        assert messenger.send(_message()).provider in ("local", "twilio", "whatsapp_cloud")
