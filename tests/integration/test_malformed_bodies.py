"""Malformed request bodies at every route: deeply nested JSON, bytes that are not UTF-8, bodies over
the size cap and empty bodies are answered 400 (413 for size) in the error envelope — never a
``RecursionError`` or ``UnicodeDecodeError`` (a 5xx in AWS) — and change nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.signing import meta_signature, twilio_form, twilio_signature

BASE = "/conversation/participants"
FLOWS = "/conversation/flows"
PHONE = "+14155550101"
TWILIO_URL = "https://localhost/webhooks/twilio"
DEEP = ("[" * 5000 + "]" * 5000).encode()
DEEP_OBJECT = ('{"a":' * 5000 + "1" + "}" * 5000).encode()
NESTED_100 = ('{"phone_number": ' + "[" * 100 + "]" * 100 + "}").encode()
NOT_UTF8 = b'{"phone_number": "+1415555\xff\xfe0101", "name": "caf\xe9"}'
JSON = {"content-type": "application/json"}


@pytest.fixture
def env(local_env_factory: Any) -> LocalEnvironment:
    return local_env_factory()


def _enrolled(env: LocalEnvironment) -> str:
    response = env.api("POST", BASE, json_body={"phone_number": PHONE})
    assert response.status == 201, response.body
    return response.body["result"]["id"]


def _routes(pid: str) -> list[tuple[str, str]]:
    return [
        ("POST", BASE),
        ("GET", BASE),
        ("GET", f"{BASE}/{pid}"),
        ("PUT", f"{BASE}/{pid}"),
        ("DELETE", f"{BASE}/{pid}"),
        ("GET", f"{BASE}/{pid}/history"),
        ("GET", f"{BASE}/{pid}/state"),
        ("POST", f"{BASE}/{pid}/state"),
        # the flow definitions of the same function (docs/controller.md)
        ("POST", f"{FLOWS}/validate"),
        ("GET", f"{FLOWS}/intake"),
        ("PUT", f"{FLOWS}/intake"),
        ("GET", f"{FLOWS}/intake/versions"),
    ]


def _is_error_envelope(response: Any, status: int) -> bool:
    return (
        response.status == status
        and isinstance(response.body, dict)
        and response.body.get("status") == "error"
        and isinstance(response.body.get("message"), str)
        and response.body["message"].strip() != ""
    )


def _unchanged(env: LocalEnvironment, pid: str, version: int) -> None:
    listed = env.api("GET", BASE).body["result"]["participants"]
    assert [p["id"] for p in listed] == [pid]
    assert env.app.store.load(pid).flow.version == version
    flows = env.api("GET", f"{FLOWS}/intake/versions").body["result"]["versions"]
    assert [v["version"] for v in flows] == [1]  # the seeded definition only


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (DEEP, "nested"),
        (DEEP_OBJECT, "nested"),
        (NESTED_100, "nested"),
        (NOT_UTF8, "UTF-8"),
    ],
    ids=["5000-lists", "5000-objects", "100-levels", "not-utf8"],
)
def test_every_api_route_answers_a_malformed_body_with_400(env: LocalEnvironment, body: bytes, fragment: str) -> None:
    # Given an enrolled participant
    pid = _enrolled(env)
    version = env.app.store.load(pid).flow.version
    for method, path in _routes(pid):
        # When the body is nested 5,000 levels deep / not UTF-8 (API Gateway base64-encodes it)
        response = env.api(method, path, body=body, headers=JSON, base64_body=True)
        # Then 400 in the envelope, naming the problem
        assert _is_error_envelope(response, 400), (method, path, response)
        assert fragment in response.body["message"], (method, path, response.body)
    # And nothing changed
    _unchanged(env, pid, version)


def test_every_api_route_refuses_a_body_over_the_cap_with_413(env: LocalEnvironment) -> None:
    pid = _enrolled(env)
    version = env.app.store.load(pid).flow.version
    cap = env.settings.max_api_body_bytes
    big = json.dumps({"phone_number": "+14155550102", "background": "x" * cap}).encode()
    for method, path in _routes(pid):
        response = env.api(method, path, body=big, headers=JSON, base64_body=True)
        assert _is_error_envelope(response, 413), (method, path, response)
        assert str(cap) in response.body["message"]
    _unchanged(env, pid, version)


def test_a_body_at_the_cap_is_read(env: LocalEnvironment) -> None:
    # A body exactly at the cap is not refused for its size (the model's own limits apply)
    cap = env.settings.max_api_body_bytes
    prefix = b'{"phone_number": "+14155550102", "name": "'
    body = prefix + b" " * (cap - len(prefix) - 2) + b'"}'
    assert len(body) == cap
    response = env.api("POST", BASE, body=body, headers=JSON, base64_body=True)
    assert response.status == 201, response.body


@pytest.mark.parametrize("body", [None, "", "   "], ids=["absent", "empty", "blank"])
def test_an_empty_post_body_names_the_missing_field(env: LocalEnvironment, body: str | None) -> None:
    # When POST enroll / POST state arrive without a body
    pid = _enrolled(env)
    enroll = env.api("POST", BASE, body=body, headers=JSON)
    state = env.api("POST", f"{BASE}/{pid}/state", body=body, headers=JSON)
    # Then the message names the required field (not " is required")
    assert enroll.status == 400 and enroll.body == {"status": "error", "message": "phone_number is required"}
    assert state.status == 400 and state.body == {"status": "error", "message": "reason is required"}


def test_an_empty_put_body_is_a_400_and_changes_nothing(env: LocalEnvironment) -> None:
    # A body is required (the OpenAPI document says so); its fields are all optional, so the answer
    # names the body
    pid = _enrolled(env)
    before = env.api("GET", f"{BASE}/{pid}").body["result"]
    for body in (None, "", "  "):
        response = env.api("PUT", f"{BASE}/{pid}", body=body, headers=JSON)
        assert response.status == 400 and response.body == {"status": "error", "message": "request body is required"}
        flows = env.api("POST", f"{FLOWS}/validate", body=body, headers=JSON)
        assert flows.status == 400 and flows.body["message"] == "request body is required"
    assert env.api("GET", f"{BASE}/{pid}").body["result"] == before


# --- the webhooks ----------------------------------------------------------------------------


def _queue_depth(env: LocalEnvironment) -> int:
    attributes = env._sqs.get_queue_attributes(
        QueueUrl=env.resources.inbound_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def _webhook(env: LocalEnvironment, path: str, body: bytes, headers: dict[str, str]) -> Any:
    from functions.inbound import webhook
    from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, response_json

    event = http_api_event("POST", path, body=body, headers=headers, now=env.clock.now())
    response = webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))
    return response["statusCode"], response_json(response)


def _meta(env: LocalEnvironment, raw: bytes) -> Any:
    secret = env.settings.whatsapp_app_secret or ""
    return _webhook(env, "/webhooks/whatsapp", raw, {**JSON, "x-hub-signature-256": meta_signature(raw, secret)})


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b'{"object": "whatsapp_business_account", "entry": ' + DEEP + b"}", "nested"),
        (DEEP_OBJECT, "nested"),
        (b'{"object":"whatsapp_business_account","entry":[\xff]}', "UTF-8"),
        (b'{"object": "whatsapp_business_account", "entry": [', "JSON"),
    ],
    ids=["5000-lists", "5000-objects", "not-utf8", "not-json"],
)
def test_a_signed_whatsapp_body_that_is_not_json_is_400_and_nothing_is_enqueued(
    env: LocalEnvironment, raw: bytes, fragment: str
) -> None:
    _enrolled(env)
    env.drain()
    status, body = _meta(env, raw)
    assert status == 400 and body["status"] == "error" and fragment in body["message"], body
    assert _queue_depth(env) == 0


def test_signed_whatsapp_json_of_an_unexpected_shape_is_still_acknowledged(env: LocalEnvironment) -> None:
    # Meta retries any non-200 for days; a JSON payload it might send that we cannot use is dropped with a 200.
    status, _body = _meta(env, json.dumps({"object": "page", "entry": []}).encode())
    assert status == 200
    assert _queue_depth(env) == 0


def test_webhook_bodies_over_the_cap_are_413_before_anything_else(env: LocalEnvironment) -> None:
    cap = env.settings.max_webhook_body_bytes
    raw = json.dumps({"object": "whatsapp_business_account", "entry": [], "pad": "x" * cap}).encode()
    status, body = _meta(env, raw)
    assert status == 413 and body["status"] == "error" and str(cap) in body["message"]
    params = {"MessageSid": "SMbig", "From": PHONE, "To": "+14155550000", "Body": "y" * cap}
    signed = twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or "")
    headers = {"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signed}
    status, body = _webhook(env, "/webhooks/twilio", twilio_form(params).encode(), headers)
    assert status == 413 and body["status"] == "error"
    assert _queue_depth(env) == 0
