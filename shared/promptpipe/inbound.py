"""Inbound webhooks: signature checks and parsing into ``InboundMessage`` (Twilio and Meta).

Pure functions of the request; the handler decides what a failure means (403 for a bad signature,
400 for ``ValidationFailed``). Parsing never raises anything but ``ValidationFailed`` (including
its subclass ``InvalidPhoneNumber``). Nothing here logs, so message bodies never reach the logs.

Every message keeps what it is (``InboundMessage.kind``): text; media (image, audio, video,
document, sticker, location, contacts: the caption is the body, the attachment's type and provider
id are kept, never its content); a reaction, edit or deletion (with the id of the message it refers
to); a platform notice (``system``: a number or identity change, with the new number); or a type the
provider does not pass on. What each one does is decided by ``promptpipe.inbound_events``.

Twilio posts its status callbacks to the same URL when so configured: they parse to a
``DeliveryStatus``, as do Meta's ``statuses``. A sender known only by a business-scoped user id
(no phone number) raises ``SenderWithoutPhone``: the handler answers 200 and drops it (see
docs/architecture.md, "Inbound traffic that is not text").
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from pydantic import ValidationError

from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.models.messaging import Attachment, DeliveryStatus, InboundKind, InboundMessage
from promptpipe.phone import canonicalize_phone

TWILIO_PROVIDER = "twilio"
META_PROVIDER = "whatsapp_cloud"
META_OBJECT = "whatsapp_business_account"
_SIGNATURE_PREFIX = "sha256="
_META_MEDIA = ("image", "audio", "video", "document", "sticker")
# Number changes: Meta's current name and the older ones still seen on older API versions.
NUMBER_CHANGES = frozenset({"user_changed_number", "customer_changed_number"})
# A business-scoped user id in place of a number: Twilio "whatsapp:US.1349…", Meta "US.1349…".
_USER_ID = re.compile(r"^[A-Z]{2}\.[0-9A-Za-z]+$")


class SenderWithoutPhone(ValidationFailed):
    """A well-formed message from a sender known only by a business-scoped user id."""


def _sender_phone(raw: str, default_region: str) -> str:
    address = raw.strip().removeprefix("whatsapp:")
    if _USER_ID.match(address):
        raise SenderWithoutPhone("sender has a business-scoped user id and no phone number", field="From")
    return canonicalize_phone(raw, default_region)


def _optional_phone(raw: Any, default_region: str) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return canonicalize_phone(
            raw if raw.lstrip().startswith(("+", "whatsapp:")) else f"+{raw.strip()}", default_region
        )
    except InvalidPhoneNumber:
        return None


# --- Twilio ------------------------------------------------------------------------------------


def parse_twilio_form(body: str, received_at: datetime, default_region: str) -> InboundMessage | DeliveryStatus:
    """An inbound SMS or WhatsApp message from Twilio's form post (``application/x-www-form-
    urlencoded``, already base64-decoded), or a status callback posted to the same URL."""
    if not isinstance(body, str):
        raise ValidationFailed("Twilio webhook body must be form-encoded text")
    fields: dict[str, str] = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(key, value)
    sid = fields.get("MessageSid") or fields.get("SmsMessageSid") or fields.get("SmsSid") or ""
    if not sid.strip():
        raise ValidationFailed("Twilio webhook has no MessageSid", field="MessageSid")
    if _is_status_callback(fields):
        return _twilio_status(fields, sid.strip(), received_at, default_region)
    sender = fields.get("From", "")
    if not sender.strip():
        raise ValidationFailed("Twilio webhook has no From", field="From")
    text = fields.get("Body", "")
    if not text and fields.get("ButtonText"):
        text = fields["ButtonText"]
    attachments = _twilio_attachments(fields)
    kind = InboundKind.TEXT if text.strip() or not attachments else InboundKind.MEDIA
    answer_id = fields.get("ButtonPayload") or fields.get("ListId") or None
    return _inbound(
        provider=TWILIO_PROVIDER,
        provider_message_id=sid.strip(),
        from_phone=_sender_phone(sender, default_region),
        body=text,
        answer_id=answer_id,
        received_at=received_at,
        profile_name=fields.get("ProfileName") or None,
        kind=kind,
        attachments=attachments,
    )


def _is_status_callback(fields: Mapping[str, str]) -> bool:
    """Twilio's status callbacks: ``MessageStatus`` without a ``Body``, or an ``SmsStatus`` other
    than ``received`` (inbound messages carry ``SmsStatus=received``)."""
    sms_status = fields.get("SmsStatus", "")
    if sms_status and sms_status != "received":
        return True
    return bool(fields.get("MessageStatus")) and "Body" not in fields


def _twilio_status(fields: Mapping[str, str], sid: str, received_at: datetime, region: str) -> DeliveryStatus:
    return DeliveryStatus(
        provider=TWILIO_PROVIDER,
        provider_message_id=sid[:256],
        status=(fields.get("MessageStatus") or fields.get("SmsStatus") or "unknown")[:32],
        recipient=_optional_phone(fields.get("To"), region),
        error_code=(fields.get("ErrorCode") or None),
        error_title=(fields.get("ErrorMessage") or None),
        at=received_at,
    )


def _twilio_attachments(fields: Mapping[str, str]) -> list[Attachment]:
    """MMS / WhatsApp media (``MediaUrl{n}``, ``MediaContentType{n}``), or a WhatsApp location."""
    attachments: list[Attachment] = []
    for index in range(min(_media_count(fields.get("NumMedia", "")), 10)):
        mime = fields.get(f"MediaContentType{index}") or None
        major = mime.split("/", 1)[0] if mime else ""
        kind = major if major in ("image", "audio", "video") else (fields.get("MessageType") or "document")
        attachments.append(Attachment(type=kind, media_id=fields.get(f"MediaUrl{index}") or None, mime_type=mime))
    if not attachments and (fields.get("MessageType") == "location" or fields.get("Latitude")):
        attachments.append(Attachment(type="location"))
    return attachments


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
    statuses: list[DeliveryStatus] | None = None,
) -> list[InboundMessage]:
    """Every participant message in a webhook POST (several entries and changes may be batched).

    Changes of other fields are ignored; delivery statuses are collected in ``statuses`` when
    given. With ``rejected`` given, a malformed message is collected there and the others are still
    returned (one bad message must not drop its whole batch); without it, the first one raises.
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
            if statuses is not None:
                statuses.extend(_meta_statuses(value.get("statuses"), received_at, default_region))
    return messages


def _meta_statuses(raw: Any, received_at: datetime, default_region: str) -> list[DeliveryStatus]:
    """Delivery statuses; optional information, so malformed entries are skipped."""
    found: list[DeliveryStatus] = []
    if not isinstance(raw, list):
        return found
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            continue
        errors = item.get("errors")
        first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
        code = first.get("code")
        found.append(
            DeliveryStatus(
                provider=META_PROVIDER,
                provider_message_id=item["id"][:256],
                status=str(item.get("status") or "unknown")[:32],
                recipient=_optional_phone(item.get("recipient_id"), default_region),
                error_code=str(code) if code is not None else None,
                error_title=str(first["title"])[:200] if isinstance(first.get("title"), str) else None,
                at=received_at,
            )
        )
    return found


def _meta_message(
    message: dict[str, Any],
    path: str,
    names: Mapping[str, str],
    received_at: datetime,
    default_region: str,
) -> InboundMessage:
    message_id = _str(message.get("id"), f"{path}.id")
    sender = message.get("from")
    if (not isinstance(sender, str) or not sender.strip()) and isinstance(message.get("from_user_id"), str):
        raise SenderWithoutPhone("sender has a business-scoped user id and no phone number", field=f"{path}.from")
    sender = _str(sender, f"{path}.from")
    kind = _str(message.get("type"), f"{path}.type")
    fields = _meta_content(message, kind, path, default_region)
    return _inbound(
        provider=META_PROVIDER,
        provider_message_id=message_id,
        from_phone=_sender_phone(sender, default_region),
        received_at=received_at,
        profile_name=names.get(sender),
        **fields,
    )


def _meta_content(message: dict[str, Any], kind: str, path: str, region: str) -> dict[str, Any]:
    """The fields of one message that depend on its type."""
    if kind == "text":
        text = _obj(message.get("text"), f"{path}.text")
        return {"body": _str(text.get("body"), f"{path}.text.body", allow_empty=True)}
    if kind == "interactive":
        interactive = _obj(message.get("interactive"), f"{path}.interactive")
        sub = interactive.get("type")
        if sub in ("button_reply", "list_reply"):
            reply = _obj(interactive.get(sub), f"{path}.interactive.{sub}")
            answer_id = _str(reply.get("id"), f"{path}.interactive.{sub}.id")
            title = _str(reply.get("title", ""), f"{path}.interactive.{sub}.title", allow_empty=True)
            return {"body": title, "answer_id": answer_id}
        return {"kind": InboundKind.UNSUPPORTED}
    if kind == "button":
        button = _obj(message.get("button"), f"{path}.button")
        payload = _str(button.get("payload", ""), f"{path}.button.payload", allow_empty=True)
        text = _str(button.get("text", ""), f"{path}.button.text", allow_empty=True)
        return {"body": text, "answer_id": payload or None}
    if kind in _META_MEDIA:
        media = message.get(kind) if isinstance(message.get(kind), dict) else {}
        caption = media.get("caption") if isinstance(media.get("caption"), str) else ""
        attachment = Attachment(
            type=kind,
            media_id=media.get("id") if isinstance(media.get("id"), str) else None,
            mime_type=media.get("mime_type") if isinstance(media.get("mime_type"), str) else None,
        )
        return {"kind": InboundKind.MEDIA, "body": caption, "attachments": [attachment]}
    if kind in ("location", "contacts"):
        return {"kind": InboundKind.MEDIA, "attachments": [Attachment(type=kind)]}
    if kind == "reaction":
        reaction = _obj(message.get("reaction"), f"{path}.reaction")
        emoji = reaction.get("emoji") if isinstance(reaction.get("emoji"), str) else ""
        target = reaction.get("message_id")
        return {"kind": InboundKind.REACTION, "body": emoji, "refers_to": target if isinstance(target, str) else None}
    if kind in ("edit", "revoke"):
        detail = message.get(kind) if isinstance(message.get(kind), dict) else {}
        target = detail.get("original_message_id")
        body = ""
        inner = detail.get("message")
        if isinstance(inner, dict) and isinstance(inner.get("text"), dict):
            body = inner["text"].get("body") if isinstance(inner["text"].get("body"), str) else ""
        return {
            "kind": InboundKind.EDIT if kind == "edit" else InboundKind.REVOKE,
            "body": body,
            "refers_to": target if isinstance(target, str) else None,
        }
    if kind == "system":
        system = _obj(message.get("system"), f"{path}.system")
        system_type = system.get("type") if isinstance(system.get("type"), str) else "unknown"
        new_phone = None
        if system_type in NUMBER_CHANGES:
            new_phone = _optional_phone(system.get("wa_id") or system.get("new_wa_id"), region)
        text = system.get("body") if isinstance(system.get("body"), str) else ""
        return {"kind": InboundKind.SYSTEM, "body": text, "system_type": system_type[:64], "new_phone": new_phone}
    return {"kind": InboundKind.UNSUPPORTED}


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
