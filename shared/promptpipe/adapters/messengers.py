"""Messenger adapters: Twilio (SMS and WhatsApp) and Meta WhatsApp Cloud API (the local outbox: ``local_outbox``).

Both providers are called through one HTTP client, ``messenger_http.MessengerHttp`` (plain httpx;
Twilio's REST API: ``Messages.json`` with basic auth; Meta's Graph API: ``/{phone_number_id}/messages``
with a bearer token). Fixed-answer questions go
out as reply buttons on WhatsApp Cloud and as numbered text elsewhere (``questions.render_text``);
replies are parsed back by ``questions.parse_answer``.

SMS (Twilio, ``sms`` channel): the body is normalised to GSM-7 where the meaning allows and split
over 1,600 characters (``promptpipe.rules.sms``); the segments billed come back in ``SendResult``, each
part's provider id in ``part_ids``; a retry sends only the parts after ``parts_accepted``. Before
each part after the first it sends, a messenger asks the caller's ``before_part`` (the send rule
against the committed state, ``usecases/sending.py``) and stops there when it gives a reason
(``SendResult.stopped``): a STOP committed between two parts stops the rest.

WhatsApp (Cloud API, or Twilio's ``whatsapp`` channel): a business-initiated message more than 24
hours after the participant last wrote (``OutboundMessage.last_inbound_at``) is sent as the
template of its kind, or skipped when its kind has none (``whatsapp_templates``). When the caller
does not know that time, the message goes free-form and a window refusal (Meta 131047, Twilio
63016) switches to the template and retries once.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from promptpipe.adapters.local_outbox import LocalOutbox, OutboxRecord
from promptpipe.adapters.messenger_http import META_OUTSIDE_WINDOW, TWILIO_OUTSIDE_WINDOW, MessengerHttp
from promptpipe.adapters.whatsapp_payloads import (
    INTERACTIVE_BODY_LIMIT,
    buttons_payload,
    template_payload,
    text_payload,
)
from promptpipe.adapters.whatsapp_templates import TemplateChoice, WhatsAppTemplates
from promptpipe.errors import ConfigurationError, MessagingError
from promptpipe.flow.questions import with_question_text
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.ports import Messenger, PartCheck
from promptpipe.rules.clock import Clock, SystemClock
from promptpipe.rules.sms import prepare_sms, split_body
from promptpipe.settings import MessagingProvider, Settings

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    import httpx

    class HttpMessengerOptions(TypedDict, total=False):
        """What every HTTP messenger takes beside its credentials (``_HttpMessenger``)."""

        http_client: httpx.Client | None
        timeout: float
        templates: WhatsAppTemplates | None
        clock: Clock | None
        publish: bool


# Re-exported: callers name the messengers' parts from here.
__all__ = [
    "INTERACTIVE_BODY_LIMIT",
    "LocalOutbox",
    "OutboxRecord",
    "TwilioMessenger",
    "WhatsAppCloudMessenger",
    "WhatsAppTemplates",
    "build_messenger",
    "buttons_payload",
    "outside_window",
    "template_payload",
    "text_payload",
    "with_question_text",
]

TwilioChannel = Literal["sms", "whatsapp"]
TWILIO_API_BASE = "https://api.twilio.com"

# WhatsApp's customer-service window, and the margin we keep before it closes.
WHATSAPP_WINDOW = timedelta(hours=24)
WINDOW_MARGIN = timedelta(minutes=10)


def _publish(result: SendResult, message: OutboundMessage) -> None:
    """Segments and template sends as metrics (namespace ``PromptPipe``)."""
    from promptpipe.observability import count

    if result.segments:
        count("SmsSegments", result.segments)
    if result.template:
        count("WhatsAppTemplateSends", kind=message.kind.value)


# --- WhatsApp's window and templates -------------------------------------------------------------


def outside_window(message: OutboundMessage, now: datetime) -> bool:
    """Whether ``message`` must go as a template: a business-initiated message when the participant
    last wrote 24 hours ago or more (less a margin). A reply answers a message just received."""
    if message.kind is OutboundKind.REPLY or message.last_inbound_at is None:
        return False
    return now - message.last_inbound_at >= WHATSAPP_WINDOW - WINDOW_MARGIN


class _HttpMessenger(ABC):
    """What both providers share: one HTTP client, the WhatsApp templates with the clock that tells
    whether the window is open, and the send metrics (unless ``publish`` is off). A provider names
    itself in its errors (``_PROVIDER``, ``_FAILURE``) and reads its error bodies (``_read_error``)."""

    _PROVIDER: str
    _FAILURE: str

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.Client | None = None,
        timeout: float = 10.0,
        templates: WhatsAppTemplates | None = None,
        clock: Clock | None = None,
        publish: bool = True,
    ) -> None:
        self._http = MessengerHttp(
            url,
            provider=self._PROVIDER,
            read_error=self._read_error,
            failure=self._FAILURE,
            http_client=http_client,
            timeout=timeout,
        )
        self._templates = templates or WhatsAppTemplates()
        self._clock = clock or SystemClock()
        self._publish = publish

    def send(self, message: OutboundMessage, before_part: PartCheck | None = None) -> SendResult:
        result = self._send(message, before_part)
        if self._publish:
            _publish(result, message)
        return result

    def close(self) -> None:
        self._http.close()

    @abstractmethod
    def _send(self, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        """The provider's own delivery of one message."""

    @staticmethod
    @abstractmethod
    def _read_error(response: httpx.Response) -> tuple[Any, str]:
        """(code, text) of the provider's error body."""


def _reason_to_stop(before_part: PartCheck | None, sent_now: int) -> str:
    """Why the next part must not go: the send rule asked again once this call sent a part (the
    caller checked it before the first)."""
    if before_part is None or sent_now == 0:
        return ""
    return before_part() or ""


# --- Twilio -------------------------------------------------------------------------------------


class TwilioMessenger(_HttpMessenger):
    """SMS or WhatsApp through Twilio's Programmable Messaging REST API (httpx, no SDK)."""

    _PROVIDER = "Twilio"
    _FAILURE = "Twilio send failed"

    def __init__(
        self,
        account_sid: str,
        auth_token: str,
        *,
        from_number: str | None = None,
        messaging_service_sid: str | None = None,
        channel: TwilioChannel = "sms",
        base_url: str = TWILIO_API_BASE,
        **options: Unpack[HttpMessengerOptions],
    ) -> None:
        if not account_sid or not auth_token:
            raise ConfigurationError("Twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
        if not from_number and not messaging_service_sid:
            raise ConfigurationError("Twilio needs TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID")
        if channel not in ("sms", "whatsapp"):
            raise ConfigurationError(f"TWILIO_CHANNEL must be sms or whatsapp, not {channel!r}")
        self._account_sid = account_sid
        self._auth_token = auth_token
        self._from = from_number
        self._service_sid = messaging_service_sid
        self._channel = channel
        url = f"{base_url.rstrip('/')}/2010-04-01/Accounts/{account_sid}/Messages.json"
        super().__init__(url, **options)

    def _send(self, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        if self._channel == "sms":
            return self._send_sms(message, before_part)
        return self._send_whatsapp(message, before_part)

    def _send_sms(self, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        text = with_question_text(message.body, message.question, message.follow_up)
        prepared = prepare_sms(text, allow_emoji=message.allow_emoji)
        parts = prepared.parts or [""]
        accepted, stopped = self._send_parts(message, parts, before_part)
        result = SendResult(provider_message_id=accepted[-1], provider="twilio", segments=prepared.segments)
        return result.model_copy(update={"parts": len(parts), "part_ids": accepted, "stopped": stopped})

    def _send_whatsapp(self, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        if self._templates.configured and outside_window(message, self._clock.now()):
            return self._send_template(message)
        parts = split_body(with_question_text(message.body, message.question)) or [""]
        try:
            accepted, stopped = self._send_parts(message, parts, before_part)
        except MessagingError as exc:
            # The window refused the first part (none accepted): the one retry, as a template.
            refused = not exc.accepted_parts and exc.code == str(TWILIO_OUTSIDE_WINDOW)
            if not refused or not self._templates.configured:
                raise
            return self._send_template(message)
        result = SendResult(provider_message_id=accepted[-1], provider="twilio", parts=len(parts))
        if stopped:
            return result.model_copy(update={"part_ids": accepted, "stopped": stopped})
        return result.model_copy(update={"part_ids": accepted}) if len(parts) > 1 else result

    def _send_parts(
        self, message: OutboundMessage, parts: list[str], before_part: PartCheck | None
    ) -> tuple[list[str], str]:
        """Post each part not accepted yet (a redelivery resumes after those: none is sent twice),
        asking ``before_part`` before each after the first; (the ids of the parts accepted, why the
        rest was not sent). A refused part raises with the parts accepted before it."""
        accepted = list(message.parts_accepted[: len(parts)])
        resumed_at = len(accepted)
        for index in range(resumed_at, len(parts)):
            if stopped := _reason_to_stop(before_part, index - resumed_at):
                return accepted, stopped
            try:
                accepted.append(self._post({**self._route(message), "Body": parts[index]}))
            except MessagingError as exc:
                exc.accepted_parts = accepted
                raise
        return accepted, ""

    def _send_template(self, message: OutboundMessage) -> SendResult:
        choice = self._templates.for_message(message)
        if not isinstance(choice, TemplateChoice):
            return SendResult(provider="twilio", parts=0, skipped=choice)
        params: dict[str, str] = {**self._route(message), "ContentSid": choice.name}
        if choice.parameter is not None:
            params["ContentVariables"] = json.dumps({"1": choice.parameter}, ensure_ascii=False)
        sid = self._post(params)
        return SendResult(provider_message_id=sid, provider="twilio", template=choice.name)

    def _route(self, message: OutboundMessage) -> dict[str, str]:
        route = {"To": self._address(message.to)}
        if self._service_sid:
            route["MessagingServiceSid"] = self._service_sid
        else:
            route["From"] = self._address(self._from or "")
        return route

    def _post(self, params: dict[str, str]) -> str:
        response = self._http.post(data=params, auth=(self._account_sid, self._auth_token))
        try:
            return str(response.json().get("sid") or "")
        except (ValueError, AttributeError):
            return ""

    def _address(self, number: str) -> str:
        if self._channel == "whatsapp" and not number.startswith("whatsapp:"):
            return f"whatsapp:{number}"
        return number

    @staticmethod
    def _read_error(response: httpx.Response) -> tuple[Any, str]:
        """(code, text) of a Twilio error body: the classic ``{code, message, more_info, status}`` or
        RFC 9457 problem details ``{type, title, status, code, detail}``."""
        try:
            data = response.json()
        except ValueError:
            return None, response.reason_phrase
        if not isinstance(data, dict):
            return None, response.reason_phrase
        text = data.get("message") or data.get("detail") or data.get("title") or response.reason_phrase
        return data.get("code"), str(text)


# --- Meta WhatsApp Cloud API --------------------------------------------------------------------


class WhatsAppCloudMessenger(_HttpMessenger):
    """WhatsApp through Meta's Cloud API (Graph API ``/{phone_number_id}/messages``)."""

    _PROVIDER = "WhatsApp Cloud API"
    _FAILURE = "WhatsApp Cloud API request failed"

    def __init__(
        self,
        access_token: str,
        phone_number_id: str,
        *,
        api_version: str = "v21.0",
        base_url: str = "https://graph.facebook.com",
        **options: Unpack[HttpMessengerOptions],
    ) -> None:
        if not access_token or not phone_number_id:
            raise ConfigurationError("WhatsApp Cloud needs WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID")
        self._url = f"{base_url.rstrip('/')}/{api_version}/{phone_number_id}/messages"
        self._headers = {"Authorization": f"Bearer {access_token}"}
        super().__init__(self._url, **options)

    def _send(self, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        """Inside the window: one API call per message, text or an interactive reply-button message
        whose body carries the text and the question (only a body too long for an interactive
        message, 1,024 characters, goes as text first, then the buttons). Outside the window: the
        template. Returns the id of the last message sent, the one a button reply refers to."""
        to = message.to.removeprefix("whatsapp:").lstrip("+")
        if self._templates.configured and outside_window(message, self._clock.now()):
            return self._outside_window(to, message)
        try:
            return self._free_form(to, message, before_part)
        except MessagingError as exc:
            if exc.code == str(META_OUTSIDE_WINDOW) and self._templates.configured:
                return self._outside_window(to, message)  # the one retry, as a template
            raise

    def _free_form(self, to: str, message: OutboundMessage, before_part: PartCheck | None) -> SendResult:
        question = message.question
        if question is None:
            return self._result(self._post(text_payload(to, message.body)))
        combined = f"{message.body.strip()}\n\n{question.text}" if message.body.strip() else question.text
        if len(combined) <= INTERACTIVE_BODY_LIMIT:
            return self._result(self._post(buttons_payload(to, question, body=combined)))
        # Two parts, the text then the buttons: a redelivery resumes after the text once accepted.
        resumed = bool(message.parts_accepted)
        accepted = list(message.parts_accepted[:1]) or [self._post(text_payload(to, message.body))]
        if stopped := _reason_to_stop(before_part, 0 if resumed else 1):
            return self._result(accepted[-1], parts=2).model_copy(update={"part_ids": accepted, "stopped": stopped})
        try:
            accepted.append(self._post(buttons_payload(to, question)))
        except MessagingError as exc:
            exc.accepted_parts = accepted
            raise
        return self._result(accepted[-1], parts=2).model_copy(update={"part_ids": accepted})

    def _outside_window(self, to: str, message: OutboundMessage) -> SendResult:
        choice = self._templates.for_message(message)
        if not isinstance(choice, TemplateChoice):
            return SendResult(provider="whatsapp_cloud", parts=0, skipped=choice)
        buttons = self._templates.quick_replies and message.kind is OutboundKind.DAILY_PROMPT
        question = message.question if buttons and choice.name == self._templates.prompt else None
        payload = template_payload(to, choice.name, self._templates.language, choice.parameter, question)
        return SendResult(provider_message_id=self._post(payload), provider="whatsapp_cloud", template=choice.name)

    @staticmethod
    def _result(provider_id: str, parts: int = 1) -> SendResult:
        return SendResult(provider_message_id=provider_id, provider="whatsapp_cloud", parts=parts)

    def _post(self, payload: dict[str, Any]) -> str:
        response = self._http.post(json=payload, headers=self._headers)
        try:
            data = response.json()
            return str(data["messages"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError):
            return ""

    @staticmethod
    def _read_error(response: httpx.Response) -> tuple[Any, str]:
        try:
            error = response.json().get("error") or {}
            return error.get("code"), str(error.get("message") or response.reason_phrase)
        except (ValueError, AttributeError):
            return None, response.reason_phrase


# --- composition ----------------------------------------------------------------------------------


def build_messenger(
    settings: Settings,
    *,
    clock: Clock,
    outbox: LocalOutbox | None = None,
    secrets: Mapping[str, str] | None = None,
) -> Messenger:
    """The Messenger for ``settings.messaging_provider``. Credentials come from ``secrets`` (the
    channel secret, already fetched; keys are the setting names, any case) or else from settings."""
    provider = settings.messaging_provider
    if provider == MessagingProvider.LOCAL:
        return outbox if outbox is not None else LocalOutbox(clock)
    lookup = _Credentials(settings, secrets or {}, provider)
    if provider == MessagingProvider.TWILIO:
        channel = settings.twilio_channel
        if channel not in ("sms", "whatsapp"):
            raise ConfigurationError(f"TWILIO_CHANNEL must be sms or whatsapp, not {channel!r}")
        from_number = lookup.optional("twilio_from_number")
        service_sid = lookup.optional("twilio_messaging_service_sid")
        if not from_number and not service_sid:
            raise ConfigurationError(
                "TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID is required when MESSAGING_PROVIDER=twilio"
            )
        return TwilioMessenger(
            lookup.required("twilio_account_sid"),
            lookup.required("twilio_auth_token"),
            from_number=from_number,
            messaging_service_sid=service_sid,
            channel="whatsapp" if channel == "whatsapp" else "sms",
            templates=_templates(settings, twilio=True),
            clock=clock,
        )
    return WhatsAppCloudMessenger(
        lookup.required("whatsapp_access_token"),
        lookup.required("whatsapp_phone_number_id"),
        api_version=settings.whatsapp_graph_api_version,
        templates=_templates(settings, twilio=False),
        clock=clock,
    )


def _templates(settings: Settings, *, twilio: bool) -> WhatsAppTemplates:
    """Each business-initiated kind's approved template: a Twilio Content SID, or a Cloud API template
    name (the language and the quick replies are the Cloud API's alone; Twilio's messenger reads
    neither). One line a kind, both providers side by side: no kind is set up for one and missed for
    the other."""
    s = settings
    return WhatsAppTemplates(
        prompt=s.twilio_template_content_sid if twilio else s.whatsapp_template_name,
        reengagement=s.twilio_reengagement_content_sid if twilio else s.whatsapp_reengagement_template_name,
        greeting=s.twilio_greeting_content_sid if twilio else s.whatsapp_greeting_template_name,
        reminder=s.twilio_reminder_content_sid if twilio else s.whatsapp_reminder_template_name,
        feedback=s.twilio_feedback_content_sid if twilio else s.whatsapp_feedback_template_name,
        staff=s.twilio_staff_content_sid if twilio else s.whatsapp_staff_template_name,
        language=s.whatsapp_template_language,
        quick_replies=s.whatsapp_template_quick_replies,
    )


class _Credentials:
    def __init__(self, settings: Settings, secrets: Mapping[str, str], provider: str) -> None:
        self._settings = settings
        self._secrets = {str(k).lower(): v for k, v in secrets.items()}
        self._provider = provider

    def optional(self, name: str) -> str | None:
        value = self._secrets.get(name) or getattr(self._settings, name, None)
        return (str(value).strip() or None) if value else None

    def required(self, name: str) -> str:
        value = self.optional(name)
        if not value:
            raise ConfigurationError(
                f"{name.upper()} is required when MESSAGING_PROVIDER={self._provider} "
                "(in the channel secret or the environment)"
            )
        return value
