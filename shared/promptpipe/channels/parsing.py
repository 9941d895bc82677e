"""The providers' webhooks (Twilio and Meta) parsed into ``InboundMessage``, once their signature
passed (``promptpipe.channels.signatures``).

Pure functions of the request; the handler decides what a failure means (400 for
``ValidationFailed``). Parsing never raises anything but ``ValidationFailed`` (including
its subclass ``InvalidPhoneNumber``). Nothing here logs, so message bodies never reach the logs.

Every message keeps what it is (``InboundMessage.kind``): text; media (image, audio, video,
document, sticker, location, contacts: the caption is the body, the attachment's type and provider
id are kept, never its content); a reaction, edit or deletion (with the id of the message it refers
to); a platform notice (``system``: a number or identity change, with the new number); or a type the
provider does not pass on. What each one does is decided by the use case ``promptpipe.usecases.receive_inbound``.

Twilio posts its status callbacks to the same URL when so configured: they parse to a
``DeliveryStatus``, as do Meta's ``statuses``. A sender known only by a business-scoped user id
(no phone number) raises ``SenderWithoutPhone``: the handler answers 200 and drops it (see
docs/architecture.md, "Inbound traffic that is not text").

The payloads' shapes are pydantic models (``promptpipe.models.meta_webhook``,
``promptpipe.models.twilio_form``), imported at the first payload of their provider so that a
function's cold start pays for neither. Their errors come out as ``ValidationFailed`` naming the part
(``entry[0].changes[0].value.messages[1].text.body must be a string``). Meta's envelope is read
whole before any message; then each message on its own, so that with ``rejected`` a bad one is
reported there and the rest of its batch still goes through.

Text that is not valid Unicode (a lone UTF-16 surrogate, which JSON's ``"\\ud83d"`` escape gives and
no UTF-8 encoder writes) is repaired where it stands, each one to U+FFFD, before any model reads it
(``promptpipe.rules.http_body.repair_unicode``): the message is kept, and nothing downstream (the
queue, the table, the logs) meets a string it cannot encode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.models.messaging import Attachment, DeliveryStatus, InboundKind, InboundMessage
from promptpipe.models.provider_payload import BLANK, SENDER_WITHOUT_PHONE, WRONG_OBJECT, object_or_empty
from promptpipe.rules.http_body import repair_unicode, valid_unicode
from promptpipe.rules.phone import canonicalize_phone, canonicalize_whatsapp_sender

if TYPE_CHECKING:
    from promptpipe.models.meta_webhook import MetaStatus
    from promptpipe.models.twilio_form import TwilioForm
TWILIO_PROVIDER = "twilio"
META_PROVIDER = "whatsapp_cloud"
_META_MEDIA = ("image", "audio", "video", "document", "sticker")
# Number changes: Meta's current name and the older ones still seen on older API versions.
NUMBER_CHANGES = frozenset({"user_changed_number", "customer_changed_number"})
# A business-scoped user id in place of a number: Twilio "whatsapp:US.1349…", Meta "US.1349…".
_USER_ID = re.compile(r"^[A-Z]{2}\.[0-9A-Za-z]+$")
_P = TypeVar("_P", bound=BaseModel)


class SenderWithoutPhone(ValidationFailed):
    """A well-formed message from a sender known only by a business-scoped user id."""


def _read_phone(raw: str, default_region: str, *, whatsapp_id: bool) -> str:
    """A provider's number as E.164. Meta's WhatsApp ids (``whatsapp_id``: a sender's ``from``, a
    ``wa_id``, a status's ``recipient_id``) are digits with the country code included, read as
    international first; Twilio's numbers are E.164 already, read like numbers people type (digits
    without ``+`` in ``default_region``)."""
    if whatsapp_id:
        return canonicalize_whatsapp_sender(raw, default_region)
    return canonicalize_phone(raw, default_region)


def _sender_phone(raw: str, default_region: str, *, whatsapp_id: bool = False) -> str:
    address = raw.strip().removeprefix("whatsapp:")
    if _USER_ID.match(address):
        raise SenderWithoutPhone("sender has a business-scoped user id and no phone number", field="From")
    return _read_phone(raw, default_region, whatsapp_id=whatsapp_id)


def _optional_phone(raw: Any, default_region: str, *, whatsapp_id: bool = False) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return _read_phone(raw, default_region, whatsapp_id=whatsapp_id)
    except InvalidPhoneNumber:
        return None


# --- Twilio ------------------------------------------------------------------------------------


def parse_twilio_form(body: str, received_at: datetime, default_region: str) -> InboundMessage | DeliveryStatus:
    """An inbound SMS or WhatsApp message from Twilio's form post (``application/x-www-form-
    urlencoded``, already base64-decoded), or a status callback posted to the same URL."""
    if not isinstance(body, str):
        raise ValidationFailed("Twilio webhook body must be form-encoded text")
    from promptpipe.models.twilio_form import TwilioForm  # only where Twilio posts (cold start)

    fields: dict[str, str] = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(valid_unicode(key), valid_unicode(value))  # the first of repeated fields counts
    form = _validate(TwilioForm, fields, "form")
    if not form.sid:
        raise ValidationFailed("Twilio webhook has no MessageSid", field="MessageSid")
    if form.is_status_callback:
        return _twilio_status(form, received_at, default_region)
    if not form.sender.strip():
        raise ValidationFailed("Twilio webhook has no From", field="From")
    text = form.body or form.button_text
    attachments = _twilio_attachments(form)
    return _inbound(
        provider=TWILIO_PROVIDER,
        provider_message_id=form.sid,
        # Twilio sends E.164 ("+1…", "whatsapp:+1…"); anything else is read like typed input.
        from_phone=_sender_phone(form.sender, default_region),
        body=text,
        answer_id=form.button_payload or form.list_id or None,
        received_at=received_at,
        profile_name=form.profile_name or None,
        kind=InboundKind.TEXT if text.strip() or not attachments else InboundKind.MEDIA,
        attachments=attachments,
        provider_keyword=form.opt_out_type.strip().upper()[:16] or None,
    )


def _twilio_status(form: TwilioForm, received_at: datetime, region: str) -> DeliveryStatus:
    return DeliveryStatus(
        provider=TWILIO_PROVIDER,
        provider_message_id=form.sid[:256],
        status=(form.message_status or form.sms_status or "unknown")[:32],
        recipient=_optional_phone(form.to, region),
        error_code=form.error_code or None,
        error_title=form.error_message or None,
        at=received_at,
    )


def _twilio_attachments(form: TwilioForm) -> list[Attachment]:
    """MMS / WhatsApp media (``MediaUrl{n}``, ``MediaContentType{n}``), or a WhatsApp location."""
    attachments: list[Attachment] = []
    for media in form.media:
        major = media.content_type.split("/", 1)[0] if media.content_type else ""
        kind = major if major in ("image", "audio", "video") else (form.message_type or "document")
        attachments.append(Attachment(type=kind, media_id=media.url, mime_type=media.content_type))
    if not attachments and (form.message_type == "location" or form.latitude):
        attachments.append(Attachment(type="location"))
    return attachments


# --- Meta WhatsApp Cloud API -------------------------------------------------------------------


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
    from promptpipe.models.meta_webhook import MetaWebhook  # only where Meta posts (cold start)

    # Lone surrogates (a JSON "\ud83d") repaired to U+FFFD field by field, before anything reads them.
    payload = repair_unicode(payload)
    webhook = _validate(MetaWebhook, payload, "")
    messages: list[InboundMessage] = []
    for path, value in webhook.message_changes():
        names = value.profile_names()
        for k, raw in enumerate(value.messages):
            try:
                messages.append(_meta_message(raw, f"{path}.messages[{k}]", names, received_at, default_region))
            except ValidationFailed as exc:
                if rejected is None:
                    raise
                rejected.append(exc)
        if statuses is not None:
            statuses.extend(_meta_status(status, received_at, default_region) for status in value.delivery_statuses())
    return messages


def _meta_status(status: MetaStatus, received_at: datetime, default_region: str) -> DeliveryStatus:
    error = status.errors
    return DeliveryStatus(
        provider=META_PROVIDER,
        provider_message_id=status.id[:256],
        status=str(status.status or "unknown")[:32],
        recipient=_optional_phone(status.recipient_id, default_region, whatsapp_id=True),
        error_code=str(error.code) if error is not None and error.code is not None else None,
        error_title=error.title[:200] if error is not None and error.title is not None else None,
        at=received_at,
    )


def _meta_message(
    raw: Any,
    path: str,
    names: Mapping[str, str],
    received_at: datetime,
    default_region: str,
) -> InboundMessage:
    from promptpipe.models.meta_webhook import MetaMessage

    message = _validate(MetaMessage, raw, path)
    fields = _meta_content(raw, message.type, path, default_region)
    return _inbound(
        provider=META_PROVIDER,
        provider_message_id=message.id,
        # A WhatsApp id: country code included, no "+" (not a number a person typed).
        from_phone=_sender_phone(message.sender, default_region, whatsapp_id=True),
        received_at=received_at,
        profile_name=names.get(message.sender),
        **fields,
    )


def _meta_content(raw: dict[str, Any], kind: str, path: str, region: str) -> dict[str, Any]:
    """The fields of one message that depend on its type, from the part the type names."""
    from promptpipe.models import meta_webhook as meta

    if kind == "text":
        return {"body": _validate(meta.MetaText, raw.get(kind), f"{path}.{kind}").body}
    if kind == "interactive":
        interactive = _validate(meta.MetaInteractive, raw.get(kind), f"{path}.{kind}")
        sub = interactive.type
        if sub in ("button_reply", "list_reply"):
            reply = _validate(meta.MetaReply, getattr(interactive, sub), f"{path}.{kind}.{sub}")
            return {"body": reply.title, "answer_id": reply.id}
        return {"kind": InboundKind.UNSUPPORTED}
    if kind == "button":
        button = _validate(meta.MetaButton, raw.get(kind), f"{path}.{kind}")
        return {"body": button.text, "answer_id": button.payload or None}
    if kind in _META_MEDIA:
        media = _validate(meta.MetaMedia, object_or_empty(raw.get(kind)), f"{path}.{kind}")
        attachment = Attachment(type=kind, media_id=media.id, mime_type=media.mime_type)
        return {"kind": InboundKind.MEDIA, "body": media.caption, "attachments": [attachment]}
    if kind in ("location", "contacts"):
        return {"kind": InboundKind.MEDIA, "attachments": [Attachment(type=kind)]}
    if kind == "reaction":
        reaction = _validate(meta.MetaReaction, raw.get(kind), f"{path}.{kind}")
        return {"kind": InboundKind.REACTION, "body": reaction.emoji, "refers_to": reaction.message_id}
    if kind in ("edit", "revoke"):
        edit = _validate(meta.MetaEdit, object_or_empty(raw.get(kind)), f"{path}.{kind}")
        kind_of = InboundKind.EDIT if kind == "edit" else InboundKind.REVOKE
        return {"kind": kind_of, "body": edit.body, "refers_to": edit.original_message_id}
    if kind == "system":
        system = _validate(meta.MetaSystem, raw.get(kind), f"{path}.{kind}")
        new_phone = None
        if system.type in NUMBER_CHANGES:
            new_phone = _optional_phone(system.wa_id or system.new_wa_id, region, whatsapp_id=True)
        notice = system.body
        return {"kind": InboundKind.SYSTEM, "body": notice, "system_type": system.type[:64], "new_phone": new_phone}
    return {"kind": InboundKind.UNSUPPORTED}


# --- helpers -------------------------------------------------------------------------------------

# What a payload's error type says, after the path of the offending part.
_SAYS = {
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
    "list_type": "must be a list",
    "string_type": "must be a string",
    "string_too_short": "must not be empty",
    BLANK: "must not be empty",
}


def _validate(model: type[_P], raw: Any, path: str) -> _P:
    """``raw`` read as ``model``; the first error becomes a ``ValidationFailed`` naming its path
    (``entry[0].changes[1].value.messages[2].text.body``; the payload itself is ``payload``)."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise _failure(exc.errors(include_url=False)[0], path) from exc


def _failure(error: ErrorDetails, path: str) -> ValidationFailed:
    where = path
    for part in error["loc"]:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    if error["type"] == SENDER_WITHOUT_PHONE:
        return SenderWithoutPhone(error["msg"], field=where)
    if error["type"] == WRONG_OBJECT:
        return ValidationFailed(error["msg"], field="object")
    return ValidationFailed(f"{where or 'payload'} {_SAYS.get(error['type'], error['msg'])}", field=where or "payload")


def _inbound(**fields: Any) -> InboundMessage:
    try:
        return InboundMessage(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise ValidationFailed(f"inbound message {where}: {first.get('msg')}", field=where) from exc
