"""Fuzzing the two webhooks with payloads that can succeed, so that the tests can fail.

Hypothesis draws requests of four classes from the providers' real payload shapes (Twilio's form
post, Meta's ``whatsapp_business_account`` JSON), for an enrolled sender and for unknown ones,
correctly signed (Twilio: ``RequestValidator.compute_signature`` over the URL and every field; Meta:
HMAC-SHA256 over the raw bytes), with extra fields, nesting, encodings and sizes; each request goes
to the real webhook handler (moto behind it) and the exact outcome of its class is asserted:

- valid: 200, and exactly the enrolled sender's messages are on the queue (ids, participant, body);
- unknown sender / unusable JSON shape: 200 and nothing queued;
- malformed (a signed Twilio form without MessageSid or From, or with an impossible number; a signed
  Meta body that is not UTF-8 JSON or nests too deeply): 400 and nothing queued;
- too large: 413 and nothing queued; bad signature: 403 and nothing queued.

``make test`` runs ``PROMPTPIPE_FUZZ_EXAMPLES`` examples per entry point (default 50). The large run
(docs/reliability.md has its figures):

    PROMPTPIPE_FUZZ_EXAMPLES=10000 python -m pytest tests/integration/test_webhook_fuzz.py -m slow \\
        -n 0 -p no:cacheprovider --hypothesis-show-statistics
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, response_json
from promptpipe.local.signing import meta_signature, twilio_signature
from promptpipe.rules.opt_out import read_opt_message

EXAMPLES = int(os.environ.get("PROMPTPIPE_FUZZ_EXAMPLES", "50"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
PHONE = "+14155550101"  # enrolled
WA_ID = PHONE[1:]
STRANGER = "+14155550177"  # valid, never enrolled
TWILIO_URL = "https://localhost/webhooks/twilio"
FORM = {"content-type": "application/x-www-form-urlencoded"}
JSON = {"content-type": "application/json"}
# What SQS takes in a message body; moto does not check, AWS answers InvalidMessageContents.
SQS_BODY_CHARACTERS = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
_ids = itertools.count()  # message ids unique across examples: SQS deduplicates ids for five minutes


# --- strategies ------------------------------------------------------------------------------

# Any text a phone can send (no lone surrogates: they cannot be UTF-8), opt-out/in and help messages aside
# (they are answered at the webhook, not queued: tests/integration/test_webhooks.py covers them).
# Characters worth drawing more often than chance: noncharacters SQS refuses raw, controls, RTL marks,
# zero-width and combining characters.
_TRICKY = st.sampled_from(
    ["\ufffe", "\uffff", "\x00", "\x0b", "\u202e", "\u200b", "\u0301", "\U0010ffff", "%", "&", "="]
)
text = st.text(st.characters(exclude_categories=("Cs",)) | _TRICKY, max_size=300).filter(
    lambda t: read_opt_message(t) is None
)
long_text = st.integers(4000, 6000).map(lambda n: "é😀x" * (n // 3))
any_text = st.one_of(text, text, text, long_text)
_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
junk_json = _leaves
for _ in range(6):  # at most 6 levels, so a valid payload carrying it stays under the 32-level limit
    junk_json = _leaves | st.lists(junk_json, max_size=3) | st.dictionaries(st.text(max_size=8), junk_json, max_size=3)


def _next_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):08d}"


# Twilio ---------------------------------------------------------------------------------------

# Fields of a real post whose values do not change what the message is. The ones that do (SmsStatus,
# MessageStatus: a status callback; NumMedia, MediaUrl0, MessageType, Latitude: an attachment) are
# drawn by class below.
TWILIO_EXTRAS = st.dictionaries(
    st.sampled_from(
        ["ToCountry", "NumSegments", "ApiVersion", "ProfileName", "WaId", "ButtonText", "ButtonPayload", "ListId",
         "junk", "Body2"]
    ),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=30),
    max_size=6,
)  # fmt: skip
TWILIO_MEDIA = st.fixed_dictionaries(
    {
        "NumMedia": st.sampled_from(["1", "2"]),
        "MediaUrl0": st.just("https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/MM0/Media/ME0"),
        "MediaContentType0": st.sampled_from(["image/jpeg", "audio/ogg", "video/mp4", "application/pdf"]),
    }
) | st.sampled_from([{"MessageType": "location", "Latitude": "43.65"}, {"Latitude": "43.65"}])


@st.composite
def twilio_valid(draw: st.DrawFn) -> dict[str, Any]:
    """An inbound message as Twilio posts it (``SmsStatus=received`` when present); with an attachment
    it always has text, so it is a turn (media without text is the ``media_only`` class)."""
    sender = draw(st.sampled_from([PHONE, f"whatsapp:{PHONE}", " +1 (415) 555-0101 "]))
    params = {
        **draw(TWILIO_EXTRAS),
        "MessageSid": _next_id("SM"),
        "AccountSid": "AC" + "0" * 32,
        "From": sender,
        "To": "+14155550000",
        "Body": draw(any_text),
    }
    if draw(st.booleans()):
        params["SmsStatus"] = "received"
    if draw(st.booleans()):
        params.update(draw(TWILIO_MEDIA))
        params["Body"] = "my walk " + params["Body"]  # a caption: text with the attachment
    return params


@st.composite
def twilio_request(draw: st.DrawFn) -> tuple[str, dict[str, Any], bytes, dict[str, str]]:
    """(class, params, body, headers)."""
    kind = draw(
        st.sampled_from(
            ["valid", "valid", "valid", "stranger", "media_only", "status", "malformed", "bad_signature", "too_large"]
        )
    )
    params = draw(twilio_valid())
    url, token = TWILIO_URL, _TOKEN
    if kind == "stranger":
        params["From"] = STRANGER
    elif kind == "media_only":  # recorded (and answered with a notice), never a turn
        params.update(draw(TWILIO_MEDIA), Body=draw(st.sampled_from(["", " ", "\n"])))
        params.pop("ButtonText", None)
    elif kind == "status":  # a status callback posted to the same URL
        if draw(st.booleans()):
            params["SmsStatus"] = draw(st.sampled_from(["queued", "sent", "delivered", "undelivered", "failed"]))
        else:
            params["MessageStatus"] = draw(st.sampled_from(["sent", "delivered", "read", "failed"]))
            del params["Body"]
        if draw(st.booleans()):
            params.update(ErrorCode="30008", ErrorMessage="Unknown error")
    elif kind == "malformed":
        broken = draw(st.sampled_from(["no_sid", "no_from", "bad_from", "long_sid"]))
        if broken == "no_sid":
            params.pop("MessageSid")
        elif broken == "no_from":
            params["From"] = draw(st.sampled_from(["", "   "]))
            if draw(st.booleans()):
                del params["From"]
        elif broken == "bad_from":
            params["From"] = draw(st.sampled_from(["abc", "+1234", "+999 1234567", "447911123456", "whatsapp:"]))
        else:
            params["MessageSid"] = "SM" + "x" * 300
    elif kind == "too_large":
        params["Body"] = "y" * (_CAPS["webhook"] + draw(st.integers(1, 2000)))
    body = urlencode(params).encode()
    signature: str | None = twilio_signature(url, params, token)
    if kind == "bad_signature":
        how = draw(st.sampled_from(["none", "random", "other_host", "tampered", "other_token", "other_path"]))
        signature = {
            "none": None,
            "random": draw(st.text(max_size=40)),
            "other_host": twilio_signature("https://evil.example/webhooks/twilio", params, token),
            "tampered": twilio_signature(url, {**params, "Body": str(params["Body"]) + "!"}, token),
            "other_token": twilio_signature(url, params, token + "x"),
            "other_path": twilio_signature("https://localhost/webhooks/whatsapp", params, token),
        }[how]
    headers = dict(FORM)
    if signature is not None:
        headers["x-twilio-signature"] = signature
        if kind == "bad_signature" and draw(st.booleans()):
            headers["x-forwarded-host"] = "evil.example"  # never trusted without WEBHOOK_TRUSTED_PROXY
    return kind, params, body, headers


# Meta -------------------------------------------------------------------------------------------

OBJECT = "whatsapp_business_account"
MEDIA_TYPES = ["image", "audio", "video", "document", "sticker", "location", "contacts", "reaction", "unknown"]
CAPTIONED = ("image", "audio", "video", "document", "sticker")


@st.composite
def meta_message(draw: st.DrawFn, sender: str) -> tuple[dict[str, Any], str | None]:
    """A message of one of Meta's types, and the body the webhook should queue for it (``None``: it
    is recorded, not a turn — media without a caption, a location, a reaction, an unknown type)."""
    message_id = _next_id("wamid.")
    kind = draw(st.sampled_from(["text", "text", "button_reply", "list_reply", "button", "media"]))
    base: dict[str, Any] = {"from": sender, "id": message_id, "timestamp": "1772456400"}
    if kind == "text":
        body = draw(any_text)
        message = {**base, "type": "text", "text": {"body": body}}
    elif kind in ("button_reply", "list_reply"):
        body = draw(text)
        reply = {"id": draw(st.sampled_from(["done:done", "intensity:keep", "x"])), "title": body}
        message = {**base, "type": "interactive", "interactive": {"type": kind, kind: reply}}
    elif kind == "button":
        body = draw(text)
        message = {**base, "type": "button", "button": {"payload": "done", "text": body}}
    else:
        media = draw(st.sampled_from(MEDIA_TYPES))
        caption = draw(text)
        # A caption of a photo, voice note, video, document or sticker is the turn's text.
        body = caption if media in CAPTIONED and caption.strip() else None
        message = {**base, "type": media, media: {"id": "MEDIA1", "caption": caption}}
    if draw(st.booleans()):
        message["extra"] = draw(junk_json)  # fields Meta may add are ignored
    return message, body


@st.composite
def meta_valid(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A signed payload as Meta sends it, and the (id, body) of each message it should queue."""
    expected: list[tuple[str, str]] = []
    entries = []
    for _ in range(draw(st.integers(1, 3))):
        changes = []
        for _ in range(draw(st.integers(1, 2))):
            field = draw(st.sampled_from(["messages", "messages", "messages", "account_update"]))
            value: dict[str, Any] = {
                "messaging_product": "whatsapp",
                "metadata": {"display_phone_number": "15550001111", "phone_number_id": "123456789012345"},
            }
            messages = []
            for _ in range(draw(st.integers(0, 4))):
                enrolled = draw(st.booleans()) or not messages
                message, body = draw(meta_message(WA_ID if enrolled else STRANGER[1:]))
                messages.append(message)
                if enrolled and field == "messages" and body is not None:
                    expected.append((message["id"], body))
            if messages:
                value["contacts"] = [{"profile": {"name": draw(text)}, "wa_id": WA_ID}]
                value["messages"] = messages
            if draw(st.booleans()):
                value["statuses"] = [{"id": "wamid.OUT", "status": "delivered", "recipient_id": WA_ID}]
            changes.append({"field": field, "value": value})
        entries.append({"id": "WABA1", "changes": changes})
    return {"object": OBJECT, "entry": entries}, expected


def _encode(payload: Any, style: str) -> bytes:
    if style == "ascii":
        return json.dumps(payload).encode()
    if style == "utf8":
        return json.dumps(payload, ensure_ascii=False).encode()
    if style == "pretty":
        return json.dumps(payload, ensure_ascii=False, indent=2).encode()
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()


@st.composite
def meta_request(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]], bytes, dict[str, str]]:
    """(class, expected (id, body) pairs, raw body, headers)."""
    kind = draw(
        st.sampled_from(
            ["valid", "valid", "valid", "unusable_shape", "not_json", "too_deep", "bad_signature", "too_large"]
        )
    )
    payload, expected = draw(meta_valid())
    raw = _encode(payload, draw(st.sampled_from(["ascii", "utf8", "pretty", "compact"])))
    if kind == "unusable_shape":
        expected = []
        raw = _encode(
            draw(
                st.one_of(
                    junk_json,
                    st.fixed_dictionaries({"object": st.text(max_size=10), "entry": junk_json}),
                    st.just({**payload, "object": "page"}),
                    st.just({"object": OBJECT, "entry": [{"changes": [{"value": {"messages": [1, "x", {}]}}]}]}),
                )
            ),
            "ascii",
        )  # fmt: skip
    elif kind == "not_json":
        expected = []
        raw = draw(
            st.sampled_from([raw[:-1], raw + b"}", raw.replace(b'"', b"'", 1), b"\xff" + raw, raw + b"\xc3", b"[" * 9])
        )
    elif kind == "too_deep":
        expected = []
        depth = draw(st.integers(33, 6000))
        raw = raw[:-1] + b', "nested": ' + b"[" * depth + b"]" * depth + b"}"
    elif kind == "too_large":
        expected = []
        raw = raw[:-1] + b', "pad": "' + b"p" * (_CAPS["webhook"] + draw(st.integers(1, 2000))) + b'"}'
    signature: str | None = meta_signature(raw, _SECRET)
    if kind == "bad_signature":
        expected = []
        how = draw(st.sampled_from(["none", "random", "other_secret", "other_body", "sha1", "no_prefix"]))
        signature = {
            "none": None,
            "random": draw(st.text(max_size=80)),
            "other_secret": meta_signature(raw, _SECRET + "x"),
            "other_body": meta_signature(raw + b" ", _SECRET),
            "sha1": "sha1=" + hmac.new(_SECRET.encode(), raw, hashlib.sha1).hexdigest(),
            "no_prefix": meta_signature(raw, _SECRET).removeprefix("sha256="),
        }[how]
    headers = dict(JSON)
    if signature is not None:
        headers["x-hub-signature-256"] = signature
    return kind, expected, raw, headers


# --- the environment -------------------------------------------------------------------------

_TOKEN = "fuzz-twilio-token"
_SECRET = "fuzz-meta-secret"
_CAPS: dict[str, int] = {"webhook": 1024 * 1024}
_ENV: dict[str, Any] = {}  # "factory" (kept referenced) -> the environment built with it


def _env(factory: Callable[..., LocalEnvironment]) -> tuple[LocalEnvironment, str]:
    """One environment per test function (hypothesis calls the body many times): one enrolled
    participant (greeted by the offline coach), an empty queue."""
    if _ENV.get("factory") is not factory:
        _ENV.clear()
        env = factory(twilio_auth_token=_TOKEN, whatsapp_app_secret=_SECRET)
        _CAPS["webhook"] = env.settings.max_webhook_body_bytes
        enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": PHONE})
        assert enrolled.status == 201, enrolled.body
        assert _drain_queue(env) == []
        _ENV.update(factory=factory, env=(env, enrolled.body["result"]["id"]))
    return _ENV["env"]


def _post(env: LocalEnvironment, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    from functions.inbound import webhook

    request = http_api_event("POST", path, body=body, headers=headers, now=env.clock.now())
    response = webhook.handler(request, FakeLambdaContext(function_name="promptpipe-webhook"))
    return int(response["statusCode"]), response_json(response)


def _drain_queue(env: LocalEnvironment) -> list[dict[str, Any]]:
    """Every turn waiting on the inbound queue (removed from it), in queue order."""
    sqs, url = env._sqs, env.resources.inbound_queue_url
    turns: list[dict[str, Any]] = []
    while True:
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30)
        messages = received.get("Messages", [])
        if not messages:
            return turns
        for message in messages:
            assert SQS_BODY_CHARACTERS.fullmatch(message["Body"]), "AWS would refuse this body"
        turns += [json.loads(m["Body"]) for m in messages]
        sqs.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
        )


def _clipped(body: str, env: LocalEnvironment) -> str:
    """The body as the webhook queues it: unchanged, or clipped when over the limit."""
    from promptpipe.rules.text_clipping import clip_inbound_text

    limit = env.settings.max_inbound_message_chars
    return body if len(body) <= limit else clip_inbound_text(body, limit)


# --- the tests -----------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(request=twilio_request())
def test_twilio_webhook_fuzz(local_env_factory, request) -> None:
    env, pid = _env(local_env_factory)
    kind, params, body, headers = request
    status, answer = _post(env, "/webhooks/twilio", body, headers)
    turns = _drain_queue(env)
    event(f"twilio {kind} -> {status}")
    expected_status = {
        "valid": 200,
        "stranger": 200,
        "media_only": 200,
        "status": 200,
        "malformed": 400,
        "bad_signature": 403,
        "too_large": 413,
    }[kind]
    assert status == expected_status, (kind, status, answer)
    if kind != "valid":
        assert turns == [], kind
        if status != 200:
            assert answer["status"] == "error"
        return
    # Exactly one turn, for the enrolled participant, with this message's id and its body
    [turn] = turns
    assert (turn["participant_id"], turn["event_id"]) == (pid, params["MessageSid"])
    message = turn["message"]
    assert message["from_phone"] == PHONE
    sent = params["Body"] or (params.get("ButtonText") or "")  # a caption is the turn's text
    if sent:
        assert message["body"] == _clipped(sent, env)


@pytest.mark.slow
@FUZZ
@given(request=meta_request())
def test_meta_webhook_fuzz(local_env_factory, request) -> None:
    env, pid = _env(local_env_factory)
    kind, expected, raw, headers = request
    status, answer = _post(env, "/webhooks/whatsapp", raw, headers)
    turns = _drain_queue(env)
    event(f"meta {kind} -> {status}")
    expected_status = {
        "valid": 200,
        "unusable_shape": 200,
        "not_json": 400,
        "too_deep": 400,
        "bad_signature": 403,
        "too_large": 413,
    }[kind]
    assert status == expected_status, (kind, status, answer)
    if status != 200:
        assert answer["status"] == "error"
    # Exactly the enrolled sender's messages were queued, in the payload's order, each once
    assert [(t["participant_id"], t["event_id"]) for t in turns] == [(pid, i) for i, _ in expected]
    assert [t["message"]["body"] for t in turns] == [_clipped(b, env) for _, b in expected]
    if kind == "valid":
        assert answer == {"received": _parsed(raw)}


def _parsed(raw: bytes) -> int:
    """Every message of a "messages" change is parsed and counted in "received": those of the unknown
    sender and those recorded without a turn (media without caption, reactions…) too."""
    payload = json.loads(raw)
    return sum(
        len(change["value"].get("messages", []))
        for entry in payload["entry"]
        for change in entry["changes"]
        if change["field"] == "messages"
    )
