"""Meta's WhatsApp Cloud API notification (``object: whatsapp_business_account``), as
``promptpipe.channels.parsing.parse_meta_payload`` reads it.

How strictly each part is read:

- the envelope (``entry`` → ``changes`` → ``value``) is required: a malformed one rejects the whole
  POST; only ``messages`` changes are read;
- each message is validated on its own (``MetaMessage``, then the part its ``type`` names:
  ``MetaText`` for ``text``, ``MetaInteractive`` then ``MetaReply``, ``MetaButton``, ``MetaMedia``,
  ``MetaReaction``, ``MetaEdit``, ``MetaSystem``), so one bad message is reported and the rest of
  its batch still goes through;
- optional information (contacts' profile names, delivery statuses, a media object, a reaction's
  emoji, an edit) is read leniently: a malformed entry or value is skipped, never an error.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    StrictStr,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from promptpipe.models.provider_payload import (
    SENDER_WITHOUT_PHONE,
    WRONG_OBJECT,
    LenientStr,
    LenientText,
    NonBlank,
    Payload,
    list_or_empty,
    required,
)

META_OBJECT = "whatsapp_business_account"
MESSAGES_FIELD = "messages"

_M = TypeVar("_M", bound=BaseModel)


def _skip_invalid(value: Any, handler: Any) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return None


def _kept(items: list[_M | None]) -> list[_M]:
    return [item for item in items if item is not None]


def _profile_name(value: Any) -> Any:
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


class MetaContact(Payload):
    """A sender's WhatsApp id and the name of its profile (``profile.name``)."""

    wa_id: StrictStr
    name: Annotated[str | None, BeforeValidator(_profile_name)] = Field(default=None, alias="profile")


class MetaStatusError(Payload):
    code: Any = None
    title: LenientStr = None


def _first_object(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else None


class MetaStatus(Payload):
    """A delivery status of a message we sent; ``id`` is our message's provider id."""

    id: Annotated[StrictStr, Field(min_length=1)]
    status: Any = None
    recipient_id: Any = None
    # Only the first error is kept; a malformed list reads as none.
    errors: Annotated[MetaStatusError | None, BeforeValidator(_first_object)] = None


class MetaValue(Payload):
    """A ``messages`` change: the messages (each validated on its own, see ``MetaMessage``), the
    senders' profiles and the delivery statuses (malformed ones skipped)."""

    messages: list[Any] = Field(default_factory=list)
    contacts: Annotated[
        list[Annotated[MetaContact | None, WrapValidator(_skip_invalid)]], BeforeValidator(list_or_empty)
    ] = Field(default_factory=list)
    statuses: Annotated[
        list[Annotated[MetaStatus | None, WrapValidator(_skip_invalid)]], BeforeValidator(list_or_empty)
    ] = Field(default_factory=list)

    def profile_names(self) -> dict[str, str]:
        """wa_id -> profile name (the last non-empty one where an id comes twice)."""
        return {contact.wa_id: contact.name for contact in _kept(self.contacts) if contact.name}

    def delivery_statuses(self) -> list[MetaStatus]:
        return _kept(self.statuses)


class MetaChange(Payload):
    """One change; only ``messages`` changes are read (their ``value`` is then required)."""

    field: Any = MESSAGES_FIELD
    value: MetaValue = required()

    @model_validator(mode="before")
    @classmethod
    def _other_fields_unread(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("field", MESSAGES_FIELD) != MESSAGES_FIELD:
            return {"field": data["field"], "value": {}}
        return data

    @property
    def is_messages(self) -> bool:
        return bool(self.field == MESSAGES_FIELD)


class MetaEntry(Payload):
    changes: list[MetaChange] = Field(default_factory=list)


def _meta_object(value: Any) -> Any:
    if value != META_OBJECT:
        raise PydanticCustomError(WRONG_OBJECT, f"payload.object must be {META_OBJECT!r}")
    return value


class MetaWebhook(Payload):
    """A WhatsApp Business Account notification; several entries and changes may be batched."""

    object: Annotated[Any, AfterValidator(_meta_object)] = required()
    entry: list[MetaEntry] = required()

    def message_changes(self) -> list[tuple[str, MetaValue]]:
        """(path, value) of every ``messages`` change, in order; the path names it in errors."""
        return [
            (f"entry[{i}].changes[{j}].value", change.value)
            for i, entry in enumerate(self.entry)
            for j, change in enumerate(entry.changes)
            if change.is_messages
        ]


class MetaMessage(Payload):
    """What every message has: its id, its sender and its type (``id``, ``from``, ``type``).

    A sender known only by a business-scoped user id (``from_user_id``, no ``from``) fails with the
    ``sender_without_phone`` error type."""

    id: NonBlank = required()
    from_user_id: LenientStr = None  # before ``sender``: its validator reads it
    sender: NonBlank = Field(alias="from")
    type: NonBlank = required()

    @model_validator(mode="before")
    @classmethod
    def _missing_sender_as_null(cls, data: Any) -> Any:
        # An error names the field by its alias ("from") only when the input has it.
        if isinstance(data, dict) and "from" not in data:
            return {**data, "from": None}
        return data

    @field_validator("sender", mode="before")
    @classmethod
    def _user_id_only(cls, value: Any, info: ValidationInfo) -> Any:
        if (not isinstance(value, str) or not value.strip()) and info.data.get("from_user_id") is not None:
            raise PydanticCustomError(SENDER_WITHOUT_PHONE, "sender has a business-scoped user id and no phone number")
        return value


class MetaText(Payload):
    body: StrictStr = required()


class MetaInteractive(Payload):
    """``type`` names the reply (``button_reply`` / ``list_reply``, a ``MetaReply``); only that one is read."""

    type: Any = None
    button_reply: Any = None
    list_reply: Any = None


class MetaReply(Payload):
    """The chosen button or list row of an interactive message."""

    id: NonBlank = required()
    title: StrictStr = ""


class MetaButton(Payload):
    """A quick-reply button of a template message."""

    payload: StrictStr = ""
    text: StrictStr = ""


class MetaMedia(Payload):
    """An attachment (image, audio, video, document, sticker): its provider id and type, and a
    caption; never its content. Read leniently."""

    id: LenientStr = None
    mime_type: LenientStr = None
    caption: LenientText = ""


class MetaReaction(Payload):
    emoji: LenientText = ""
    message_id: LenientStr = None


def _edited_text(value: Any) -> Any:
    text = value.get("text") if isinstance(value, dict) else None
    body = text.get("body") if isinstance(text, dict) else None
    return body if isinstance(body, str) else ""


class MetaEdit(Payload):
    """An edit or a deletion (``revoke``) of an earlier message; an edit carries the new text
    (``message.text.body``). Read leniently."""

    original_message_id: LenientStr = None
    body: Annotated[str, BeforeValidator(_edited_text)] = Field(default="", alias="message")


def _system_type(value: Any) -> Any:
    return value if isinstance(value, str) else "unknown"


class MetaSystem(Payload):
    """A platform notice (e.g. the participant changed number: ``wa_id`` / ``new_wa_id``)."""

    type: Annotated[str, BeforeValidator(_system_type)] = "unknown"
    body: LenientText = ""
    wa_id: Any = None
    new_wa_id: Any = None
