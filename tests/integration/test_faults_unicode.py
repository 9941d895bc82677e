"""Fault suite: text that is not valid Unicode at the edge (docs/reliability.md, "Input at the edge").

A JSON ``"\\ud83d"`` (a lone UTF-16 surrogate, which no UTF-8 encoder writes) in a signed Meta
payload's text, caption, button title or reaction, and a Twilio form whose bytes are not UTF-8, are
repaired field by field to U+FFFD: the webhook answers 200, the message is taken with the repair,
and the messages after it in the same batch are still queued. One message whose acceptance fails
(a fault of ours) does not leave the rest of its batch untaken either: they are queued, and the 5xx
makes Meta retry the whole POST.

Then a property-based fuzz (hypothesis) of the two webhooks over the providers' published payload
shapes (tests/data/inbound_payloads.json), correctly signed, with any of their string fields replaced
by text that may carry lone surrogates (Meta) or bytes that are not UTF-8 (Twilio): never a 5xx, and
every message of the enrolled sender whose text was spoiled is still queued, with U+FFFD in place.
``PROMPTPIPE_FUZZ_EXAMPLES`` sets the examples per webhook (default 25: a few seconds).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote_from_bytes

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from functions.inbound import webhook
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event
from promptpipe.local.signing import meta_signature, twilio_signature
from promptpipe.rules.http_body import repair_unicode, valid_unicode
from tests.integration.test_webhooks import history, meta_button, meta_payload, meta_text
from tests.support import enroll_over_api as enroll

REPLACEMENT = "\ufffd"
PHONE = "+14155550101"
WA_ID = PHONE[1:]
TWILIO_URL = "https://localhost/webhooks/twilio"
CORPUS = json.loads((Path(__file__).parent.parent / "data" / "inbound_payloads.json").read_text())
_CLEAN_IDS = itertools.count()
EXAMPLES = int(os.environ.get("PROMPTPIPE_FUZZ_EXAMPLES", "25"))


# -- helpers ---------------------------------------------------------------------------------------
def _meta_bytes(payload: dict[str, Any]) -> bytes:
    # ensure_ascii: a lone surrogate goes out as the escape "\ud83d", as a JSON encoder of Meta's would
    return json.dumps(payload, separators=(",", ":")).encode()


def post_meta_no_drain(env: LocalEnvironment, payload: dict[str, Any]) -> dict[str, Any]:
    """The signed POST through the webhook handler only: what it enqueued stays on the queue."""
    raw = _meta_bytes(payload)
    headers = {
        "content-type": "application/json",
        "x-hub-signature-256": meta_signature(raw, env.settings.whatsapp_app_secret),
    }
    event = http_api_event("POST", "/webhooks/whatsapp", body=raw.decode(), headers=headers, now=env.clock.now())
    return webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))


def post_twilio_bytes(env: LocalEnvironment, body: bytes) -> dict[str, Any]:
    """A Twilio form post of exactly ``body`` (base64, as API Gateway passes a form), signed over the
    fields as the webhook reads them."""
    params = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token),
    }
    event = http_api_event("POST", "/webhooks/twilio", body=body, headers=headers, now=env.clock.now())
    return webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))


def drain_queue(env: LocalEnvironment) -> list[dict[str, Any]]:
    """Every turn waiting on the inbound queue (received, then deleted), oldest first."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    turns: list[dict[str, Any]] = []
    while True:
        received = sqs.receive_message(QueueUrl=env.resources.inbound_queue_url, MaxNumberOfMessages=10)
        messages = received.get("Messages", [])
        if not messages:
            return turns
        for message in messages:
            turns.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=env.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"])


def queued_texts(env: LocalEnvironment) -> list[str]:
    return [turn["message"]["body"] for turn in drain_queue(env)]


def inbound_texts(env: LocalEnvironment, pid: str) -> list[str]:
    return [e["content"] for e in history(env, pid) if e["direction"] == "inbound"]


def meta_image(message_id: str, caption: str) -> dict[str, Any]:
    return {
        "from": WA_ID,
        "id": message_id,
        "timestamp": "1772456400",
        "type": "image",
        "image": {"caption": caption, "mime_type": "image/jpeg", "sha256": "x", "id": "MEDIA1"},
    }


def meta_reaction(message_id: str, emoji: str) -> dict[str, Any]:
    return {
        "from": WA_ID,
        "id": message_id,
        "timestamp": "1772456400",
        "type": "reaction",
        "reaction": {"message_id": "wamid.PROMPT1", "emoji": emoji},
    }


# -- the repair itself -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "repaired"),
    [
        ("hi \ud83d there", f"hi {REPLACEMENT} there"),
        ("\udc00\ud800", REPLACEMENT * 2),
        ("ok 😀 \ude00", f"ok 😀 {REPLACEMENT}"),
        ("plain", "plain"),
        ("", ""),
    ],
)
def test_valid_unicode_replaces_each_lone_surrogate_and_keeps_the_rest(text: str, repaired: str) -> None:
    assert valid_unicode(text) == repaired
    repaired.encode("utf-8")  # writable by any UTF-8 encoder


def test_repair_unicode_repairs_every_string_of_a_json_value_keys_included_and_nothing_else() -> None:
    value = {"a\ud83d": ["x\udfff", 1, None, {"b": "\ud83d", "n": 2.5, "ok": "fine"}], "t": True}
    assert repair_unicode(value) == {
        f"a{REPLACEMENT}": [f"x{REPLACEMENT}", 1, None, {"b": REPLACEMENT, "n": 2.5, "ok": "fine"}],
        "t": True,
    }
    assert repair_unicode("\ud800") == REPLACEMENT and repair_unicode(7) == 7
    deep: Any = "\ud83d"
    for _ in range(5000):  # deeper than Python's recursion limit: iterative, never RecursionError
        deep = [deep]
    repaired = repair_unicode(deep)
    for _ in range(5000):
        repaired = repaired[0]
    assert repaired == REPLACEMENT


# -- Meta: every text field, and the batch ---------------------------------------------------------
def test_lone_surrogate_in_a_meta_text_is_repaired_and_the_rest_of_the_batch_is_queued(local_env_factory) -> None:
    env = local_env_factory()
    pid = enroll(env)
    payload = meta_payload(meta_text("wamid.s1", "hi \ud83d there"), meta_text("wamid.s2", "second one"))
    response = post_meta_no_drain(env, payload)
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"]) == {"received": 2}
    assert queued_texts(env) == [f"hi {REPLACEMENT} there", "second one"]
    assert pid


@pytest.mark.parametrize(
    ("message", "recorded"),
    [
        (meta_button("wamid.b1", "done", "Done \ud83d"), f"Done {REPLACEMENT}"),
        (meta_image("wamid.i1", "my walk \udc4d"), f"my walk {REPLACEMENT}"),
    ],
    ids=["button_title", "caption"],
)
def test_lone_surrogate_in_a_button_title_or_caption_is_a_turn_with_the_repair(
    local_env_factory, message: dict[str, Any], recorded: str
) -> None:
    env = local_env_factory()
    enroll(env)
    response = post_meta_no_drain(env, meta_payload(message, meta_text("wamid.after", "after it")))
    assert response["statusCode"] == 200, response
    assert queued_texts(env) == [recorded, "after it"]


def test_lone_surrogate_in_a_reaction_is_recorded_repaired_and_the_next_message_queued(local_env_factory) -> None:
    env = local_env_factory()
    pid = enroll(env)
    payload = meta_payload(meta_reaction("wamid.r1", "\ud83d"), meta_text("wamid.r2", "and a text"))
    payload["entry"][0]["changes"][0]["value"]["contacts"][0]["profile"]["name"] = "Al\udc00ex"
    response = post_meta_no_drain(env, payload)
    assert response["statusCode"] == 200, response
    assert queued_texts(env) == ["and a text"]
    assert REPLACEMENT in inbound_texts(env, pid)  # the reaction, in the record


def test_lone_surrogate_in_a_failed_status_title_is_recorded_repaired(local_env_factory) -> None:
    env = local_env_factory()
    pid = enroll(env)
    status = {
        "id": "wamid.OUT1",
        "status": "failed",
        "recipient_id": WA_ID,
        "errors": [{"code": 131026, "title": "Message undeliverable \ud83d"}],
    }
    response = post_meta_no_drain(env, meta_payload(statuses=[status]))
    assert response["statusCode"] == 200, response
    failures = [e for e in history(env, pid) if e["kind"] == "delivery_failed"]
    assert [e["event_id"] for e in failures] == ["status:wamid.OUT1:failed"]


@pytest.mark.logs_errors  # the failed item is logged at ERROR; the test asserts the rest was taken
def test_a_failing_message_does_not_lose_the_rest_of_its_batch(local_env_factory, monkeypatch) -> None:
    env = local_env_factory()
    enroll(env)
    real_accept = webhook.accept

    def accept_failing_first(message: Any) -> Any:
        if message.provider_message_id == "wamid.f1":
            raise RuntimeError("a fault of ours")
        return real_accept(message)

    monkeypatch.setattr(webhook, "accept", accept_failing_first)
    payload = meta_payload(meta_text("wamid.f1", "first"), meta_text("wamid.f2", "second"), meta_text("wamid.f3", "3"))
    # the error is raised (a 5xx: Meta retries the POST) once the messages after it are queued
    with pytest.raises(RuntimeError, match="a fault of ours"):
        post_meta_no_drain(env, payload)
    assert queued_texts(env) == ["second", "3"]


# -- Twilio: a body that is not UTF-8 --------------------------------------------------------------
@pytest.mark.parametrize(
    "spoiled",
    [b"%ED%A0%BD", b"%FF%FE", b"\xed\xa0\xbd", b"\xff"],
    ids=["escaped_surrogate", "escaped_invalid", "raw_surrogate", "raw_invalid"],
)
def test_twilio_body_that_is_not_utf8_is_queued_with_the_repair(local_env_factory, spoiled: bytes) -> None:
    env = local_env_factory()
    enroll(env)
    body = b"MessageSid=SM1&AccountSid=AC0&From=%2B14155550101&To=%2B14155550000&Body=hi+" + spoiled + b"+there"
    response = post_twilio_bytes(env, body)
    assert response["statusCode"] == 200, response
    [text] = queued_texts(env)
    assert text.startswith("hi ") and text.endswith(" there") and REPLACEMENT in text


# -- the property: no 5xx over the signed payload shapes -------------------------------------------
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a loaded 2-core box: never a timing failure
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Any text, lone surrogates drawn often (Meta's JSON escapes can carry them).
_SURROGATES = st.sampled_from(["\ud83d", "\ude00", "\udfff", "\ud800"])
spoiled_text = st.lists(st.characters() | _SURROGATES, max_size=20).map("".join)
# Not a number change: it moves the enrolled sender to another number for the rest of the run.
_META_SHAPES = sorted(name for name, case in CORPUS["meta"].items() if "payload" in case and "number" not in name)
_TWILIO_SHAPES = sorted(name for name, case in CORPUS["twilio"].items() if "form" in case)


def _string_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [p for key, child in value.items() for p in _string_paths(child, (*path, key))]
    if isinstance(value, list):
        return [p for index, child in enumerate(value) for p in _string_paths(child, (*path, index))]
    return []


def _set(value: Any, path: tuple[Any, ...], text: str) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = text


def _as_enrolled_sender(value: Any) -> Any:
    """The corpus's sender (+14155550100) as the enrolled participant's, so messages are turns."""
    return json.loads(json.dumps(value).replace("14155550100", WA_ID))


@st.composite
def spoiled_meta_payload(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    """A published payload with some string fields spoiled, then a clean text after it in the same
    batch; and the index of that clean text among the batch's messages."""
    payload = _as_enrolled_sender(copy.deepcopy(CORPUS["meta"][draw(st.sampled_from(_META_SHAPES))]["payload"]))
    # not the envelope's names (``object``, a change's ``field``): spoiled, they rightly make the
    # payload or the change one we do not read
    paths = [p for p in _string_paths(payload) if p[:1] != ("object",) and p[-1] != "field"]
    for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4)):
        _set(payload, path, draw(spoiled_text))
    value = payload["entry"][0]["changes"][0].get("value")
    if not isinstance(value, dict):  # the envelope itself was spoiled: no batch to add to
        return payload, -1
    messages = value.setdefault("messages", [])
    if not isinstance(messages, list):
        return payload, -1
    # an id never used before: the environment lives across examples, and a seen id is taken once
    messages.append(meta_text(f"wamid.CLEAN{next(_CLEAN_IDS)}", "clean after it", wa_id=WA_ID))
    return payload, len(messages) - 1


@pytest.fixture
def fuzz_env(local_env_factory: Any) -> LocalEnvironment:
    """One environment for all the examples of a test (hypothesis runs them inside one call)."""
    env = local_env_factory()
    enroll(env)
    return env


@FUZZ
@given(case=spoiled_meta_payload())
def test_fuzz_meta_payloads_with_lone_surrogates_are_never_a_5xx(fuzz_env: LocalEnvironment, case: Any) -> None:
    payload, clean_index = case
    response = post_meta_no_drain(fuzz_env, payload)
    assert response["statusCode"] < 500, response
    texts = queued_texts(fuzz_env)
    for text in texts:
        text.encode("utf-8")  # nothing queued that an encoder refuses
    if clean_index >= 0 and response["statusCode"] == 200 and "received" in json.loads(response["body"]):
        assert "clean after it" in texts, json.dumps(payload)  # the message after the spoiled ones is kept


@st.composite
def spoiled_twilio_body(draw: st.DrawFn) -> bytes:
    """A published Twilio form, some values replaced by bytes that may not be UTF-8 (raw or escaped)."""
    params = dict(parse_qsl(CORPUS["twilio"][draw(st.sampled_from(_TWILIO_SHAPES))]["form"], keep_blank_values=True))
    params = {key: value.replace("+14155550100", PHONE) for key, value in params.items()}
    parts = {key: quote_from_bytes(value.encode()).encode() for key, value in params.items()}
    for key in draw(st.lists(st.sampled_from(sorted(parts)), min_size=1, max_size=3)):
        noise = draw(st.binary(max_size=12) | st.sampled_from([b"\xed\xa0\xbd", b"\xff\xfe", b"\xc3"]))
        parts[key] = parts[key] + (quote_from_bytes(noise).encode() if draw(st.booleans()) else noise)
    return b"&".join(quote_from_bytes(key.encode()).encode() + b"=" + value for key, value in parts.items())


@FUZZ
@given(body=spoiled_twilio_body())
def test_fuzz_twilio_forms_that_are_not_utf8_are_never_a_5xx(fuzz_env: LocalEnvironment, body: bytes) -> None:
    response = post_twilio_bytes(fuzz_env, body)
    assert response["statusCode"] < 500, response
    for text in queued_texts(fuzz_env):
        text.encode("utf-8")
