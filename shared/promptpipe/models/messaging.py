"""Outbound and inbound messages, independent of the provider."""

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import Field

from promptpipe.lazy_model import LazyModel


class Channel(StrEnum):
    SMS = "sms"
    WHATSAPP = "whatsapp"
    LOCAL = "local"


class QuestionOption(LazyModel):
    id: str = Field(pattern=r"^[a-z0-9_]{1,64}$")  # canonical answer id, e.g. "done"
    title: str = Field(min_length=1, max_length=20)  # WhatsApp reply-button title limit


class Question(LazyModel):
    """A question with fixed answers: reply buttons on WhatsApp Cloud, numbered text elsewhere."""

    id: str  # "done" | "intensity"
    text: str
    options: list[QuestionOption] = Field(min_length=1, max_length=3)


class OutboundKind(StrEnum):
    REPLY = "reply"
    GREETING = "greeting"
    DAILY_PROMPT = "daily_prompt"
    REMINDER = "reminder"
    INTENSITY_POLL = "intensity_poll"
    FEEDBACK_NUDGE = "feedback_nudge"
    DEBUG = "debug"
    NOTICE = "notice"
    STAFF = "staff"  # a person of the study team, in the conversation (docs/console.md)


class OutboundMessage(LazyModel):
    participant_id: str
    to: str  # E.164
    body: str
    kind: OutboundKind = OutboundKind.REPLY
    question: Question | None = None
    # A second question after the first, on channels without buttons only (SMS: the day's
    # intensity poll inside the daily prompt's message).
    follow_up: Question | None = None
    # Stable id of this message: the provider call is keyed by it where the provider allows.
    message_id: str = ""
    # When the participant last wrote to us (WhatsApp's 24-hour window): ``None`` when the caller
    # does not say (the messenger sends free-form and falls back to a template if refused);
    # ``NEVER_WROTE`` for a participant who never wrote.
    last_inbound_at: datetime | None = None
    # The participant's tone allows emoji (the ``emojis_ok`` tag); on SMS they are dropped otherwise.
    allow_emoji: bool = False
    # A redelivery of a split SMS: the provider ids of the parts already accepted, in order (the
    # messenger sends only the parts after them). Set at send time, never stored.
    parts_accepted: list[str] = Field(default_factory=list)


NEVER_WROTE = datetime(1970, 1, 1, tzinfo=UTC)


class SendResult(LazyModel):
    provider_message_id: str = ""
    provider: str = ""
    # SMS only: the segments billed (all parts of a body split over 1,600 characters), else 0.
    segments: int = 0
    # Provider messages this send took (a long SMS is split; a long WhatsApp text goes before its buttons).
    parts: int = 1
    # WhatsApp outside the 24-hour window: the template (name or Content SID) that was sent instead.
    template: str = ""
    # Why nothing was sent (e.g. "outside_window" for an intensity poll); empty when sent.
    skipped: str = ""
    # The provider id of each part, in order (a split SMS: every part, the earlier accepted ones too).
    part_ids: list[str] = Field(default_factory=list)
    # Why the parts after ``part_ids`` were not sent (the send rule, asked before each part: the
    # participant opted out, was paused or deleted meanwhile); empty when every part went.
    stopped: str = ""


class InboundKind(StrEnum):
    TEXT = "text"  # text, a button or list reply; an MMS with text (its attachments kept)
    MEDIA = "media"  # image, audio, video, document, sticker, location, contacts (a caption is the body)
    REACTION = "reaction"  # an emoji on one of our messages; an empty body removes it
    EDIT = "edit"  # the participant edited an earlier message (body: the new text)
    REVOKE = "revoke"  # the participant deleted an earlier message
    SYSTEM = "system"  # the platform's notice: a number or identity change
    UNSUPPORTED = "unsupported"  # a message type the provider itself does not pass on


class Attachment(LazyModel):
    """What a participant attached: its kind and the provider's id for it (never the content)."""

    type: str  # image | audio | video | document | sticker | location | contacts | media
    media_id: str | None = None  # Meta media id, or Twilio's media URL
    mime_type: str | None = None


class InboundMessage(LazyModel):
    """One message from a participant, normalised from Twilio or Meta."""

    provider: str  # "twilio" | "whatsapp_cloud" | "local"
    provider_message_id: str = Field(min_length=1, max_length=256)
    from_phone: str  # E.164
    body: str = ""
    # Canonical answer id when the participant pressed a reply button or list item.
    answer_id: str | None = None
    received_at: datetime
    profile_name: str | None = None
    kind: InboundKind = InboundKind.TEXT
    attachments: list[Attachment] = Field(default_factory=list)
    # Reaction, edit, revoke: the provider id of the message it refers to.
    refers_to: str | None = None
    # System messages: what happened (e.g. "user_changed_number") and, for a number change, the new
    # number (E.164).
    system_type: str | None = None
    new_phone: str | None = None
    # The provider answered the message as one of its keywords itself (Twilio's ``OptOutType``:
    # STOP, HELP or START): docs/compliance.md.
    provider_keyword: str | None = None
    # The webhook has read it for an opt-out, HELP or START with the deployment's keyword lists and
    # found none (usecases/receive_text.py): the worker does not read it again (docs/safety.md).
    opt_out_read: bool = False


class DeliveryStatus(LazyModel):
    """A provider's report on a message we sent (Twilio status callback, Meta ``statuses``)."""

    provider: str
    provider_message_id: str
    status: str  # queued | sent | delivered | read | failed | undelivered | ...
    recipient: str | None = None  # E.164 when the provider names a phone number
    error_code: str | None = None
    error_title: str | None = None
    at: datetime

    @property
    def failed(self) -> bool:
        return self.status in ("failed", "undelivered")
