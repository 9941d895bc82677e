"""Twilio's form post (``application/x-www-form-urlencoded``): an inbound SMS / WhatsApp message, or
a status callback posted to the same URL. ``promptpipe.channels.parsing.parse_twilio_form`` reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from promptpipe.models.provider_payload import Payload

# Twilio sends at most 10 media per message.
TWILIO_MAX_MEDIA = 10


class TwilioMedia(Payload):
    url: str | None = None
    content_type: str | None = None


def _media_count(value: Any) -> int:
    """``NumMedia`` as a count; anything but a number (digits, spaces around) reads as none."""
    if not isinstance(value, str) or not value.strip().isdigit():
        return 0
    try:
        return int(value)
    except ValueError:  # digits int() does not read, e.g. superscripts
        return 0


class TwilioForm(Payload):
    """The form's fields (the first of repeated ones). Every value is text as posted; an empty one
    reads like a missing one, except ``Body``, whose presence tells a message from a status callback."""

    message_sid: str = Field(default="", alias="MessageSid")
    sms_message_sid: str = Field(default="", alias="SmsMessageSid")
    sms_sid: str = Field(default="", alias="SmsSid")
    sender: str = Field(default="", alias="From")
    to: str = Field(default="", alias="To")
    body: str | None = Field(default=None, alias="Body")
    button_text: str = Field(default="", alias="ButtonText")
    button_payload: str = Field(default="", alias="ButtonPayload")
    list_id: str = Field(default="", alias="ListId")
    profile_name: str = Field(default="", alias="ProfileName")
    sms_status: str = Field(default="", alias="SmsStatus")
    message_status: str = Field(default="", alias="MessageStatus")
    error_code: str = Field(default="", alias="ErrorCode")
    error_message: str = Field(default="", alias="ErrorMessage")
    message_type: str = Field(default="", alias="MessageType")
    latitude: str = Field(default="", alias="Latitude")
    # STOP / HELP / START when Twilio's own keyword handling answered the message (docs/compliance.md).
    opt_out_type: str = Field(default="", alias="OptOutType")
    # MediaUrl{n} / MediaContentType{n} for n < NumMedia (at most TWILIO_MAX_MEDIA)
    media: list[TwilioMedia] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _collect_media(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        media = [
            {"url": data.get(f"MediaUrl{n}") or None, "content_type": data.get(f"MediaContentType{n}") or None}
            for n in range(min(_media_count(data.get("NumMedia")), TWILIO_MAX_MEDIA))
        ]
        return {**data, "media": media}

    @property
    def sid(self) -> str:
        return (self.message_sid or self.sms_message_sid or self.sms_sid).strip()

    @property
    def is_status_callback(self) -> bool:
        """``MessageStatus`` without a ``Body``, or an ``SmsStatus`` other than ``received``
        (inbound messages carry ``SmsStatus=received``)."""
        if self.sms_status and self.sms_status != "received":
            return True
        return bool(self.message_status) and self.body is None
