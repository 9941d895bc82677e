"""Outbound and inbound messages, independent of the provider."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class Channel(StrEnum):
    SMS = "sms"
    WHATSAPP = "whatsapp"
    LOCAL = "local"


class QuestionOption(BaseModel):
    id: str = Field(pattern=r"^[a-z0-9_]{1,64}$")  # canonical answer id, e.g. "done"
    title: str = Field(min_length=1, max_length=20)  # WhatsApp reply-button title limit


class Question(BaseModel):
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


class OutboundMessage(BaseModel):
    participant_id: str
    to: str  # E.164
    body: str
    kind: OutboundKind = OutboundKind.REPLY
    question: Question | None = None
    # Stable id of this message: the provider call is keyed by it where the provider allows.
    message_id: str = ""


class SendResult(BaseModel):
    provider_message_id: str = ""
    provider: str = ""


class InboundMessage(BaseModel):
    """One message from a participant, normalised from Twilio or Meta."""

    provider: str  # "twilio" | "whatsapp_cloud" | "local"
    provider_message_id: str = Field(min_length=1, max_length=256)
    from_phone: str  # E.164
    body: str = ""
    # Canonical answer id when the participant pressed a reply button or list item.
    answer_id: str | None = None
    received_at: datetime
    profile_name: str | None = None
