"""Inbound webhooks: Twilio and Meta signatures, handshake and payload parsing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.channels.parsing import parse_meta_payload, parse_twilio_form
from promptpipe.channels.signatures import verify_meta_handshake, verify_meta_signature, verify_twilio_signature
from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.models.messaging import Attachment, DeliveryStatus, InboundKind, InboundMessage

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
AUTH_TOKEN = "12345678901234567890123456789012"
WEBHOOK_URL = "https://abc123.execute-api.us-east-1.amazonaws.com/webhooks/twilio"
APP_SECRET = "meta-app-secret"

# Field order and blank values as Twilio posts an inbound SMS.
TWILIO_SMS_FIELDS = [
    ("ToCountry", "US"),
    ("ToState", "CA"),
    ("SmsMessageSid", "SM0123456789abcdef0123456789abcdef"),
    ("NumMedia", "0"),
    ("ToCity", ""),
    ("FromZip", "94105"),
    ("SmsSid", "SM0123456789abcdef0123456789abcdef"),
    ("FromState", "CA"),
    ("SmsStatus", "received"),
    ("FromCity", "SAN FRANCISCO"),
    ("Body", "Hello there, 50% done & more"),
    ("FromCountry", "US"),
    ("To", "+14155550199"),
    ("ToZip", ""),
    ("NumSegments", "1"),
    ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
    ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
    ("From", "+14155550100"),
    ("ApiVersion", "2010-04-01"),
]

# A WhatsApp quick-reply press through Twilio.
TWILIO_WHATSAPP_FIELDS = [
    ("SmsMessageSid", "SMfedcba9876543210fedcba9876543210"),
    ("NumMedia", "0"),
    ("ProfileName", "Alex"),
    ("MessageType", "button"),
    ("SmsSid", "SMfedcba9876543210fedcba9876543210"),
    ("WaId", "14155550100"),
    ("SmsStatus", "received"),
    ("Body", "Done"),
    ("ButtonText", "Done"),
    ("To", "whatsapp:+14155238886"),
    ("ButtonPayload", "done:done"),
    ("NumSegments", "1"),
    ("ReferralNumMedia", "0"),
    ("MessageSid", "SMfedcba9876543210fedcba9876543210"),
    ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
    ("From", "whatsapp:+14155550100"),
    ("ApiVersion", "2010-04-01"),
]


def _twilio_signature(url: str, fields: list[tuple[str, str]], token: str = AUTH_TOKEN) -> str:
    """Twilio's algorithm written out independently of the library (docs/platform.md#webhook-signatures)."""
    signed = url + "".join(key + value for key, value in sorted(fields))
    digest = hmac.new(token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def _meta_signature(raw: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


# --- Twilio signature --------------------------------------------------------------------------


def test_twilio_signature_accepted_with_blank_values_kept() -> None:
    # Given the raw form body as Twilio posted it
    body = urlencode(TWILIO_SMS_FIELDS)
    signature = _twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS)
    # When parsed keeping blank values / Then the signature verifies (as list and as dict)
    params = parse_qsl(body, keep_blank_values=True)
    assert verify_twilio_signature(WEBHOOK_URL, params, signature, AUTH_TOKEN)
    assert verify_twilio_signature(WEBHOOK_URL, dict(params), signature, AUTH_TOKEN)


def test_twilio_signature_fails_when_blank_values_are_dropped() -> None:
    body = urlencode(TWILIO_SMS_FIELDS)
    signature = _twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS)
    dropped = parse_qsl(body)  # docs/platform.md#webhook-signatures: ToCity= and ToZip= vanish
    assert not verify_twilio_signature(WEBHOOK_URL, dropped, signature, AUTH_TOKEN)


def test_twilio_signature_rejects_a_tampered_param() -> None:
    signature = _twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS)
    tampered = [(k, "I quit" if k == "Body" else v) for k, v in TWILIO_SMS_FIELDS]
    assert not verify_twilio_signature(WEBHOOK_URL, tampered, signature, AUTH_TOKEN)


def test_twilio_signature_rejects_wrong_url_token_or_missing_signature() -> None:
    signature = _twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS)
    assert not verify_twilio_signature(WEBHOOK_URL + "/", TWILIO_SMS_FIELDS, signature, AUTH_TOKEN)
    assert not verify_twilio_signature(
        WEBHOOK_URL.replace("/webhooks", "/prod/webhooks"), TWILIO_SMS_FIELDS, signature, AUTH_TOKEN
    )
    assert not verify_twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS, signature, "other-token")
    assert not verify_twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS, None, AUTH_TOKEN)
    assert not verify_twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS, "", AUTH_TOKEN)
    assert not verify_twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS, signature, "")


def test_twilio_signature_with_repeated_keys() -> None:
    fields = [("MediaUrl0", "https://a.example/1"), ("Tag", "b"), ("Tag", "a")]
    signature = _twilio_signature(WEBHOOK_URL, fields)
    assert verify_twilio_signature(WEBHOOK_URL, fields, signature, AUTH_TOKEN)


def test_twilio_signature_tolerates_the_default_port() -> None:
    signature = _twilio_signature(WEBHOOK_URL, TWILIO_SMS_FIELDS)
    with_port = WEBHOOK_URL.replace(".com/", ".com:443/")
    assert verify_twilio_signature(with_port, TWILIO_SMS_FIELDS, signature, AUTH_TOKEN)


# --- Twilio form --------------------------------------------------------------------------------


def test_parse_twilio_sms_form() -> None:
    message = parse_twilio_form(urlencode(TWILIO_SMS_FIELDS), NOW, "US")
    assert message.provider == "twilio"
    assert message.provider_message_id == "SM0123456789abcdef0123456789abcdef"
    assert message.from_phone == "+14155550100"
    assert message.body == "Hello there, 50% done & more"
    assert message.answer_id is None
    assert message.profile_name is None
    assert message.received_at == NOW


def test_parse_twilio_whatsapp_button_form() -> None:
    message = parse_twilio_form(urlencode(TWILIO_WHATSAPP_FIELDS), NOW, "US")
    assert message.from_phone == "+14155550100"  # "whatsapp:" prefix removed
    assert message.body == "Done"
    assert message.answer_id == "done:done"
    assert message.profile_name == "Alex"


def test_parse_twilio_list_reply_and_media() -> None:
    listed = urlencode(
        [
            ("MessageSid", "SM1"),
            ("From", "whatsapp:+14155550100"),
            ("Body", ""),
            ("ListId", "intensity:keep"),
            ("ListTitle", "Keep current"),
        ]
    )
    assert parse_twilio_form(listed, NOW, "US").answer_id == "intensity:keep"
    media = urlencode(
        [
            ("MessageSid", "SM2"),
            ("From", "+14155550100"),
            ("Body", ""),
            ("NumMedia", "1"),
            ("MessageType", "image"),
            ("MediaUrl0", "https://api.twilio.com/x"),
        ]
    )
    parsed = parse_twilio_form(media, NOW, "US")
    assert isinstance(parsed, InboundMessage)
    assert (parsed.kind, parsed.body) == (InboundKind.MEDIA, "")
    assert parsed.attachments == [Attachment(type="image", media_id="https://api.twilio.com/x")]


def test_parse_twilio_national_from_uses_the_default_region() -> None:
    body = urlencode([("MessageSid", "SM1"), ("From", "06 12 34 56 78"), ("Body", "hi")])
    assert parse_twilio_form(body, NOW, "FR").from_phone == "+33612345678"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([("From", "+14155550100"), ("Body", "hi")], "MessageSid"),
        ([("MessageSid", ""), ("From", "+14155550100")], "MessageSid"),
        ([("MessageSid", "SM1"), ("Body", "hi")], "From"),
        ([("MessageSid", "SM1"), ("From", "")], "From"),
        ([("MessageSid", "S" * 300), ("From", "+14155550100")], "provider_message_id"),
    ],
)
def test_parse_twilio_form_rejects_missing_fields(fields: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(ValidationFailed, match=message):
        parse_twilio_form(urlencode(fields), NOW, "US")


def test_parse_twilio_digits_only_from_is_read_in_the_default_region() -> None:
    # Twilio always sends "+"; digits without it are a number typed somewhere, read nationally.
    body = urlencode([("MessageSid", "SM1"), ("From", "5164845567"), ("Body", "hi")])
    assert parse_twilio_form(body, NOW, "US").from_phone == "+15164845567"


def test_parse_meta_sender_id_is_international_even_when_it_reads_as_national() -> None:
    # Meta's "from" is a WhatsApp id: the country code is always included, without "+".
    payload = _payload(
        _value(messages=[{"from": "5164845567", "id": "wamid.PE", "type": "text", "text": {"body": "hola"}}])
    )
    [message] = parse_meta_payload(payload, NOW, "US")
    assert message.from_phone == "+5164845567"


def test_every_whatsapp_id_is_read_with_its_country_code_whatever_the_default_region() -> None:
    # Given a deployment in the US and WhatsApp ids of a UK sender (no "+", country code included):
    # a text, a number change (old and new names of the new id) and a delivery status
    uk, new_uk = "447911123456", "447911123457"
    statuses: list[DeliveryStatus] = []
    payload = _payload(
        _value(
            messages=[
                {"from": uk, "id": "wamid.T", "type": "text", "text": {"body": "hello"}},
                {
                    "from": uk,
                    "id": "wamid.S1",
                    "type": "system",
                    "system": {"type": "user_changed_number", "wa_id": new_uk},
                },
                {
                    "from": uk,
                    "id": "wamid.S2",
                    "type": "system",
                    "system": {"type": "customer_changed_number", "new_wa_id": new_uk},
                },
            ],
            statuses=[{"id": "wamid.OUT", "status": "delivered", "recipient_id": uk}],
        )
    )
    # When parsed with DEFAULT_PHONE_REGION=US
    text, changed, changed_old_name = parse_meta_payload(payload, NOW, "US", statuses=statuses)
    # Then each one is the UK number, never refused nor read as a US one
    assert text.from_phone == changed.from_phone == changed_old_name.from_phone == "+447911123456"
    assert changed.new_phone == changed_old_name.new_phone == "+447911123457"
    assert [s.recipient for s in statuses] == ["+447911123456"]


def test_twilio_numbers_follow_the_rule_of_typed_numbers() -> None:
    # Twilio sends E.164; a status callback's To without "+" is read in the default region, like From
    status = parse_twilio_form(
        urlencode([("MessageSid", "SM2"), ("MessageStatus", "delivered"), ("To", "5164845567")]), NOW, "US"
    )
    assert isinstance(status, DeliveryStatus) and status.recipient == "+15164845567"
    uk = urlencode([("MessageSid", "SM3"), ("From", "whatsapp:+447911123456"), ("Body", "hi")])
    assert parse_twilio_form(uk, NOW, "US").from_phone == "+447911123456"


def test_parse_twilio_form_rejects_an_impossible_sender() -> None:
    with pytest.raises(InvalidPhoneNumber, match=r"^'\+1234' is not a valid phone number$"):
        parse_twilio_form(urlencode([("MessageSid", "SM1"), ("From", "+1234")]), NOW, "US")


# --- Meta handshake and signature ----------------------------------------------------------------


def test_meta_handshake() -> None:
    query = {"hub.mode": "subscribe", "hub.verify_token": "s3cret", "hub.challenge": "1158201444"}
    assert verify_meta_handshake(query, "s3cret") == "1158201444"
    assert verify_meta_handshake({**query, "hub.verify_token": "wrong"}, "s3cret") is None
    assert verify_meta_handshake({**query, "hub.mode": "unsubscribe"}, "s3cret") is None
    assert verify_meta_handshake({**query, "hub.challenge": ""}, "s3cret") is None
    assert verify_meta_handshake({"hub.mode": "subscribe", "hub.challenge": "1"}, "s3cret") is None
    assert verify_meta_handshake({**query, "hub.verify_token": ""}, "") is None  # unset token


def test_meta_signature() -> None:
    raw = b'{"object":"whatsapp_business_account","entry":[]}'
    header = _meta_signature(raw)
    assert verify_meta_signature(raw, header, APP_SECRET)
    assert verify_meta_signature(raw, header.upper().replace("SHA256=", "sha256="), APP_SECRET)
    assert not verify_meta_signature(raw + b" ", header, APP_SECRET)  # re-serialised body
    assert not verify_meta_signature(raw, header, "other-secret")
    assert not verify_meta_signature(raw, header.removeprefix("sha256="), APP_SECRET)
    assert not verify_meta_signature(raw, "sha1=" + header[7:], APP_SECRET)
    assert not verify_meta_signature(raw, None, APP_SECRET)
    assert not verify_meta_signature(raw, "sha256=", APP_SECRET)
    assert not verify_meta_signature(raw, "sha256=zz\u00e9", APP_SECRET)
    assert not verify_meta_signature(raw, header, "")


# --- Meta payload ---------------------------------------------------------------------------------


def _value(messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550001111", "phone_number_id": "123456789012345"},
        **extra,
    }
    if messages is not None:
        value["messages"] = messages
    return value


def _payload(*values: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA1", "changes": [{"field": "messages", "value": v}]} for v in values],
    }


MULTI_ENTRY_PAYLOAD = {
    "object": "whatsapp_business_account",
    "entry": [
        {
            "id": "102290129340398",
            "changes": [
                {
                    "field": "messages",
                    "value": _value(
                        [
                            {
                                "from": "14155550100",
                                "id": "wamid.TEXT1",
                                "timestamp": "1772452800",
                                "type": "text",
                                "text": {"body": "I walked after lunch"},
                            },
                            {
                                "context": {"from": "15550001111", "id": "wamid.POLL"},
                                "from": "14155550100",
                                "id": "wamid.BUTTON1",
                                "timestamp": "1772452801",
                                "type": "interactive",
                                "interactive": {
                                    "type": "button_reply",
                                    "button_reply": {"id": "done:done", "title": "Done"},
                                },
                            },
                        ],
                        contacts=[{"profile": {"name": "Alex"}, "wa_id": "14155550100"}],
                    ),
                },
                {
                    "field": "messages",
                    "value": _value(
                        statuses=[
                            {
                                "id": "wamid.OUT1",
                                "status": "delivered",
                                "timestamp": "1772452802",
                                "recipient_id": "14155550100",
                            }
                        ]
                    ),
                },
            ],
        },
        {
            "id": "102290129340398",
            "changes": [
                {
                    "field": "messages",
                    "value": _value(
                        [
                            {
                                "from": "447911123456",
                                "id": "wamid.LIST1",
                                "timestamp": "1772452803",
                                "type": "interactive",
                                "interactive": {
                                    "type": "list_reply",
                                    "list_reply": {
                                        "id": "intensity:increase",
                                        "title": "Increase",
                                        "description": "A bit harder",
                                    },
                                },
                            }
                        ],
                        contacts=[{"profile": {"name": "Sam"}, "wa_id": "447911123456"}],
                    ),
                },
                {"field": "account_update", "value": {"event": "VERIFIED_ACCOUNT"}},
            ],
        },
    ],
}


def test_parse_meta_multi_entry_payload() -> None:
    # Given one POST batching two entries with text, a button reply, a list reply and a status
    messages = parse_meta_payload(MULTI_ENTRY_PAYLOAD, NOW, "US")
    # Then every participant message comes out, in order, and statuses are ignored
    assert [m.provider_message_id for m in messages] == ["wamid.TEXT1", "wamid.BUTTON1", "wamid.LIST1"]
    text, button, listed = messages
    assert (text.from_phone, text.body, text.answer_id, text.profile_name) == (
        "+14155550100",
        "I walked after lunch",
        None,
        "Alex",
    )
    assert (button.body, button.answer_id) == ("Done", "done:done")
    assert (listed.from_phone, listed.body, listed.answer_id, listed.profile_name) == (
        "+447911123456",
        "Increase",
        "intensity:increase",
        "Sam",
    )
    assert all(m.provider == "whatsapp_cloud" and m.received_at == NOW for m in messages)


def test_parse_meta_statuses_only() -> None:
    payload = _payload(_value(statuses=[{"id": "wamid.X", "status": "read"}]))
    assert parse_meta_payload(payload, NOW, "US") == []


def test_parse_meta_template_quick_reply_button() -> None:
    message = {
        "from": "14155550100",
        "id": "wamid.TPL",
        "type": "button",
        "button": {"payload": "next_time", "text": "Next time"},
    }
    (parsed,) = parse_meta_payload(_payload(_value([message])), NOW, "US")
    assert (parsed.body, parsed.answer_id) == ("Next time", "next_time")


@pytest.mark.parametrize(
    ("message", "kind", "body", "attachments"),
    [
        (
            {"type": "image", "image": {"id": "m1", "mime_type": "image/jpeg"}},
            InboundKind.MEDIA,
            "",
            [Attachment(type="image", media_id="m1", mime_type="image/jpeg")],
        ),
        (
            {"type": "image", "image": {"id": "m1", "caption": "my walk"}},
            InboundKind.MEDIA,
            "my walk",
            [Attachment(type="image", media_id="m1")],
        ),
        ({"type": "audio", "audio": {"id": "a1"}}, InboundKind.MEDIA, "", [Attachment(type="audio", media_id="a1")]),
        ({"type": "reaction", "reaction": {"emoji": "👍"}}, InboundKind.REACTION, "👍", []),
        (
            {"type": "interactive", "interactive": {"type": "nfm_reply", "nfm_reply": {}}},
            InboundKind.UNSUPPORTED,
            "",
            [],
        ),
    ],
)
def test_parse_meta_non_text_types_keep_what_they_are(
    message: dict[str, Any], kind: InboundKind, body: str, attachments: list[Attachment]
) -> None:
    full = {"from": "14155550100", "id": "wamid.U", **message}
    (parsed,) = parse_meta_payload(_payload(_value([full])), NOW, "US")
    assert (parsed.kind, parsed.body, parsed.attachments) == (kind, body, attachments)
    assert parsed.answer_id is None


def _with(message: dict[str, Any]) -> dict[str, Any]:
    return _payload(_value([message]))


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([], "payload must be an object"),
        ({"entry": []}, "payload.object"),
        ({"object": "page", "entry": []}, "payload.object"),
        ({"object": "whatsapp_business_account"}, "entry must be a list"),
        ({"object": "whatsapp_business_account", "entry": {}}, "entry must be a list"),
        ({"object": "whatsapp_business_account", "entry": ["x"]}, r"entry\[0\] must be an object"),
        ({"object": "whatsapp_business_account", "entry": [{"changes": {}}]}, r"entry\[0\].changes"),
        ({"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages"}]}]}, "value"),
        (
            {"object": "whatsapp_business_account", "entry": [{"changes": [{"value": {"messages": {}}}]}]},
            "messages must",
        ),
        (_with({"id": "wamid.1", "type": "text", "text": {"body": "x"}}), r"messages\[0\].from"),
        (_with({"from": "14155550100", "type": "text", "text": {"body": "x"}}), r"messages\[0\].id"),
        (_with({"from": "14155550100", "id": "", "type": "text", "text": {}}), r"messages\[0\].id"),
        (_with({"from": "14155550100", "id": "w", "text": {"body": "x"}}), r"messages\[0\].type"),
        (_with({"from": "14155550100", "id": "w", "type": "text"}), "text must be an object"),
        (_with({"from": "14155550100", "id": "w", "type": "text", "text": {"body": 5}}), "text.body"),
        (
            _with(
                {
                    "from": "14155550100",
                    "id": "w",
                    "type": "interactive",
                    "interactive": {"type": "button_reply"},
                }
            ),
            "button_reply must be an object",
        ),
        (
            _with(
                {
                    "from": "14155550100",
                    "id": "w",
                    "type": "interactive",
                    "interactive": {"type": "list_reply", "list_reply": {"title": "x"}},
                }
            ),
            "list_reply.id",
        ),
        (
            _with({"from": "14155550100", "id": "w", "type": "button", "button": "x"}),
            "button must be an object",
        ),
        (
            _with({"from": 14155550100, "id": "w", "type": "text", "text": {"body": "x"}}),
            "from must be a string",
        ),
        (_with({"from": "12", "id": "w", "type": "text", "text": {"body": "x"}}), "not a valid phone number"),
    ],
)
def test_parse_meta_malformed_payloads(payload: Any, message: str) -> None:
    with pytest.raises(ValidationFailed, match=message):
        parse_meta_payload(payload, NOW, "US")


# --- properties: only ValidationFailed ever escapes ---------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)
_message_keys = st.sampled_from(["from", "id", "type", "text", "interactive", "button", "image", "context"])
_message = st.dictionaries(_message_keys, _json | st.sampled_from(["text", "interactive", "button", "14155550100"]))
_structured = st.builds(
    lambda messages, extra: {
        "object": "whatsapp_business_account",
        "entry": [{"changes": [{"field": "messages", "value": {"messages": messages, **extra}}]}],
    },
    st.lists(_message, max_size=3),
    st.dictionaries(st.sampled_from(["contacts", "statuses", "metadata"]), _json, max_size=2),
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(_json, _structured))
def test_parse_meta_payload_only_raises_validation_failed(payload: Any) -> None:
    try:
        messages = parse_meta_payload(payload, NOW, "US")
    except ValidationFailed:
        return
    assert all(m.from_phone.startswith("+") for m in messages)


_form_keys = st.sampled_from(["MessageSid", "From", "Body", "ButtonPayload", "ListId", "NumMedia", "ProfileName"])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=200), st.lists(st.tuples(_form_keys, st.text(max_size=30)), max_size=8)))
def test_parse_twilio_form_only_raises_validation_failed(raw: str | list[tuple[str, str]]) -> None:
    body = raw if isinstance(raw, str) else urlencode(raw)
    try:
        message = parse_twilio_form(body, NOW, "US")
    except ValidationFailed:
        return
    assert message.provider_message_id


@settings(deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.text(max_size=10), st.text(max_size=10)), max_size=6), st.text(max_size=40))
def test_verify_twilio_signature_never_raises(params: list[tuple[str, str]], signature: str) -> None:
    assert verify_twilio_signature(WEBHOOK_URL, params, signature, AUTH_TOKEN) in (True, False)


@settings(deadline=None, derandomize=True)
@given(st.binary(max_size=64), st.one_of(st.none(), st.text(max_size=80)))
def test_verify_meta_signature_never_raises(raw: bytes, header: str | None) -> None:
    assert verify_meta_signature(raw, header, APP_SECRET) in (True, False)


def test_meta_payload_round_trips_through_json() -> None:
    # The handler parses the raw body with json.loads; the same structure must parse.
    raw = json.dumps(MULTI_ENTRY_PAYLOAD).encode()
    assert len(parse_meta_payload(json.loads(raw), NOW, "US")) == 3


# --- what the payload models changed ------------------------------------------------------------


def test_parse_twilio_num_media_in_digits_int_cannot_read_counts_as_none() -> None:
    # "²" is a digit to str.isdigit() but not to int(): it once escaped as a bare ValueError (a 500).
    body = urlencode([("MessageSid", "SM1"), ("From", "+14155550100"), ("NumMedia", "²"), ("MediaUrl0", "u")])
    parsed = parse_twilio_form(body, NOW, "US")
    assert isinstance(parsed, InboundMessage)
    assert (parsed.kind, parsed.attachments) == (InboundKind.TEXT, [])


def test_parse_meta_envelope_is_checked_before_any_message() -> None:
    # A bad message in entry[0] and a bad entry[1]: the envelope is read whole first, so the error
    # named is the envelope's (with or without ``rejected``), and no message is returned.
    payload = {
        "object": "whatsapp_business_account",
        "entry": [{"changes": [{"field": "messages", "value": {"messages": [{}]}}]}, None],
    }
    with pytest.raises(ValidationFailed, match=r"^entry\[1\] must be an object$") as raised:
        parse_meta_payload(payload, NOW, "US")
    assert raised.value.field == "entry[1]"
    rejected: list[ValidationFailed] = []
    with pytest.raises(ValidationFailed, match=r"^entry\[1\] must be an object$"):
        parse_meta_payload(payload, NOW, "US", rejected=rejected)
    assert rejected == []


def test_parse_meta_error_fields_name_the_offending_part() -> None:
    # The webhook logs ``field`` (never the body): it must point at the part, alias included.
    def first_error(message: Any) -> tuple[str, str | None]:
        rejected: list[ValidationFailed] = []
        assert parse_meta_payload(_with(message), NOW, "US", rejected=rejected) == []
        return type(rejected[0]).__name__, rejected[0].field

    base = "entry[0].changes[0].value.messages[0]"
    assert first_error({"id": "w", "type": "text", "text": {"body": "x"}}) == ("ValidationFailed", f"{base}.from")
    assert first_error({"id": "w", "from_user_id": "US.13a", "type": "text"}) == ("SenderWithoutPhone", f"{base}.from")
    assert first_error({"id": " ", "from": "14155550100", "type": "text"}) == ("ValidationFailed", f"{base}.id")
    reply = {"id": "w", "from": "14155550100", "type": "interactive", "interactive": {"type": "list_reply"}}
    assert first_error(reply) == ("ValidationFailed", f"{base}.interactive.list_reply")


def test_twilio_names_the_keyword_it_answered_itself() -> None:
    # Twilio's own keyword handling (Advanced Opt-Out) posts OptOutType with the message (docs/compliance.md)
    fields = [*[(k, v) for k, v in TWILIO_SMS_FIELDS if k != "Body"], ("Body", "BAJA"), ("OptOutType", "stop")]
    message = parse_twilio_form(urlencode(fields), NOW, "US")
    assert isinstance(message, InboundMessage) and message.provider_keyword == "STOP"
    plain = parse_twilio_form(urlencode(TWILIO_SMS_FIELDS), NOW, "US")
    assert isinstance(plain, InboundMessage) and plain.provider_keyword is None
