"""Inbound webhooks: signature checks and parsing into ``InboundMessage`` (Twilio and Meta).

Pure functions of the request; the handler decides what a failure means (403 for a bad signature,
400 for ``ValidationFailed``). Parsing never raises anything but ``ValidationFailed`` (including
its subclass ``InvalidPhoneNumber``). Nothing here logs, so message bodies never reach the logs.

Unsupported message types (image, audio, location, reaction…) are not dropped: they become a
message whose body is ``"[unsupported message type: <type>]"`` (plus the caption, if any), so the
participant still gets a reply and the turn is recorded.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from pydantic import ValidationError

from promptpipe.errors import ValidationFailed
from promptpipe.models.messaging import InboundMessage
from promptpipe.phone import canonicalize_phone, canonicalize_whatsapp_sender

TWILIO_PROVIDER = "twilio"
META_PROVIDER = "whatsapp_cloud"
META_OBJECT = "whatsapp_business_account"
_SIGNATURE_PREFIX = "sha256="
# Media types whose caption is worth passing on with the placeholder.
_CAPTIONED = ("image", "video", "document")


def unsupported_body(message_type: str, caption: str = "") -> str:
    """The body given to a message we cannot read (a photo, a voice note…)."""
    body = f"[unsupported message type: {message_type or 'unknown'}]"
    return f"{body}\n{caption}" if caption else body


# --- Twilio ------------------------------------------------------------------------------------


def parse_twilio_form(body: str, received_at: datetime, default_region: str) -> InboundMessage:
    """An inbound SMS or WhatsApp message from Twilio's form post (``application/x-www-form-
    urlencoded``, already base64-decoded)."""
    if not isinstance(body, str):
        raise ValidationFailed("Twilio webhook body must be form-encoded text")
    fields: dict[str, str] = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(key, value)
    sid = fields.get("MessageSid") or fields.get("SmsMessageSid") or ""
    if not sid.strip():
        raise ValidationFailed("Twilio webhook has no MessageSid", field="MessageSid")
    sender = fields.get("From", "")
    if not sender.strip():
        raise ValidationFailed("Twilio webhook has no From", field="From")
    text = fields.get("Body", "")
    if not text and fields.get("ButtonText"):
        text = fields["ButtonText"]
    if not text and _media_count(fields.get("NumMedia", "")) > 0:
        text = unsupported_body(fields.get("MessageType") or "media")
    answer_id = fields.get("ButtonPayload") or fields.get("ListId") or None
    return _inbound(
        provider=TWILIO_PROVIDER,
        provider_message_id=sid.strip(),
        # Twilio sends E.164 ("+1…", "whatsapp:+1…"); anything else is read like typed input.
        from_phone=canonicalize_phone(sender, default_region),
        body=text,
        answer_id=answer_id,
        received_at=received_at,
        profile_name=fields.get("ProfileName") or None,
    )


def _media_count(value: str) -> int:
    return int(value) if value.strip().isdigit() else 0


# --- Meta WhatsApp Cloud API -------------------------------------------------------------------


def verify_meta_handshake(query: Mapping[str, str], verify_token: str) -> str | None:
    """The ``hub.challenge`` to echo when the subscription request carries our verify token;
    ``None`` otherwise (answer 403)."""
    if not verify_token:
        return None
    mode = query.get("hub.mode")
    token = query.get("hub.verify_token")
    challenge = query.get("hub.challenge")
    if mode != "subscribe" or not isinstance(token, str) or not isinstance(challenge, str):
        return None
    if not hmac.compare_digest(token.encode("utf-8"), verify_token.encode("utf-8")):
        return None
    return challenge or None


def verify_meta_signature(raw_body: bytes, header: str | None, app_secret: str) -> bool:
    """Whether ``X-Hub-Signature-256`` (``sha256=<hex>``) is the HMAC-SHA256 of the raw body."""
    if not header or not app_secret or not isinstance(raw_body, bytes | bytearray):
        return False
    header = header.strip()
    if not header.lower().startswith(_SIGNATURE_PREFIX):
        return False
    given = header[len(_SIGNATURE_PREFIX) :].strip().lower()
    expected = hmac.new(app_secret.encode("utf-8"), bytes(raw_body), hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode("ascii", "replace"), expected.encode("ascii"))


def parse_meta_payload(
    payload: dict[str, Any],
    received_at: datetime,
    default_region: str,
    *,
    rejected: list[ValidationFailed] | None = None,
) -> list[InboundMessage]:
    """Every participant message in a webhook POST (several entries and changes may be batched).

    Delivery statuses, errors and changes of other fields are ignored. With ``rejected`` given, a
    malformed message is collected there and the others are still returned (one bad message must
    not drop its whole batch); without it, the first one raises.
    """
    root = _obj(payload, "payload")
    kind = root.get("object")
    if kind != META_OBJECT:
        raise ValidationFailed(f"payload.object must be {META_OBJECT!r}", field="object")
    messages: list[InboundMessage] = []
    for i, entry_raw in enumerate(_list(root.get("entry"), "entry")):
        entry = _obj(entry_raw, f"entry[{i}]")
        changes = _list(entry.get("changes", []), f"entry[{i}].changes")
        for j, change_raw in enumerate(changes):
            path = f"entry[{i}].changes[{j}]"
            change = _obj(change_raw, path)
            if change.get("field", "messages") != "messages":
                continue
            value = _obj(change.get("value"), f"{path}.value")
            names = _profile_names(value.get("contacts"))
            for k, message_raw in enumerate(_list(value.get("messages", []), f"{path}.value.messages")):
                message_path = f"{path}.value.messages[{k}]"
                try:
                    message = _obj(message_raw, message_path)
                    messages.append(_meta_message(message, message_path, names, received_at, default_region))
                except ValidationFailed as exc:
                    if rejected is None:
                        raise
                    rejected.append(exc)
    return messages


def _meta_message(
    message: dict[str, Any],
    path: str,
    names: Mapping[str, str],
    received_at: datetime,
    default_region: str,
) -> InboundMessage:
    sender = _str(message.get("from"), f"{path}.from")
    message_id = _str(message.get("id"), f"{path}.id")
    kind = _str(message.get("type"), f"{path}.type")
    body, answer_id = _meta_content(message, kind, path)
    return _inbound(
        provider=META_PROVIDER,
        provider_message_id=message_id,
        # A WhatsApp id: country code included, no "+" (not a number a person typed).
        from_phone=canonicalize_whatsapp_sender(sender, default_region),
        body=body,
        answer_id=answer_id,
        received_at=received_at,
        profile_name=names.get(sender),
    )


def _meta_content(message: dict[str, Any], kind: str, path: str) -> tuple[str, str | None]:
    """(body, answer id) of one message."""
    if kind == "text":
        text = _obj(message.get("text"), f"{path}.text")
        return _str(text.get("body"), f"{path}.text.body", allow_empty=True), None
    if kind == "interactive":
        interactive = _obj(message.get("interactive"), f"{path}.interactive")
        sub = interactive.get("type")
        if sub in ("button_reply", "list_reply"):
            reply = _obj(interactive.get(sub), f"{path}.interactive.{sub}")
            answer_id = _str(reply.get("id"), f"{path}.interactive.{sub}.id")
            title = _str(reply.get("title", ""), f"{path}.interactive.{sub}.title", allow_empty=True)
            return title, answer_id
        return unsupported_body(f"interactive {sub}" if isinstance(sub, str) else "interactive"), None
    if kind == "button":
        button = _obj(message.get("button"), f"{path}.button")
        payload = _str(button.get("payload", ""), f"{path}.button.payload", allow_empty=True)
        text = _str(button.get("text", ""), f"{path}.button.text", allow_empty=True)
        return text, payload or None
    caption = ""
    if kind in _CAPTIONED:
        media = message.get(kind)
        if isinstance(media, dict) and isinstance(media.get("caption"), str):
            caption = media["caption"]
    return unsupported_body(kind, caption), None


def _profile_names(contacts: Any) -> dict[str, str]:
    """wa_id -> profile name; optional information, so a malformed list is simply ignored."""
    names: dict[str, str] = {}
    if not isinstance(contacts, list):
        return names
    for contact in contacts:
        if not isinstance(contact, dict):
            continue
        wa_id = contact.get("wa_id")
        profile = contact.get("profile")
        name = profile.get("name") if isinstance(profile, dict) else None
        if isinstance(wa_id, str) and isinstance(name, str) and name:
            names[wa_id] = name
    return names


# --- helpers -------------------------------------------------------------------------------------


def _inbound(**fields: Any) -> InboundMessage:
    try:
        return InboundMessage(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise ValidationFailed(f"inbound message {where}: {first.get('msg')}", field=where) from exc


def _obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationFailed(f"{path} must be an object", field=path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValidationFailed(f"{path} must be a list", field=path)
    return value


def _str(value: Any, path: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValidationFailed(f"{path} must be a string", field=path)
    if not allow_empty and not value.strip():
        raise ValidationFailed(f"{path} must not be empty", field=path)
    return value
