"""Messenger adapters: Twilio (SMS and WhatsApp), Meta WhatsApp Cloud API, and a local outbox.

Fixed-answer questions go out as reply buttons on WhatsApp Cloud and as numbered text elsewhere
(``questions.render_text``); replies are parsed back by ``questions.parse_answer``. The Twilio and
HTTP client libraries are imported lazily so that a function that never sends does not pay for them
at cold start.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from promptpipe.clock import Clock
from promptpipe.errors import ConfigurationError, MessagingError
from promptpipe.models.messaging import OutboundKind, OutboundMessage, Question, SendResult
from promptpipe.phone import mask_phone
from promptpipe.ports import Messenger
from promptpipe.questions import button_id, render_text
from promptpipe.settings import MessagingProvider, Settings

if TYPE_CHECKING:
    import httpx

TwilioChannel = Literal["sms", "whatsapp"]
TwilioClientFactory = Callable[[str, str], Any]
_PHONE_LIKE = re.compile(r"\+?\d[\d\s().-]{6,}\d")
_ERROR_TEXT_LIMIT = 300


def with_question_text(body: str, question: Question | None) -> str:
    """The message text for channels without buttons: the question on its own paragraph."""
    if question is None:
        return body
    rendered = render_text(question)
    return f"{body.rstrip()}\n\n{rendered}" if body.strip() else rendered


def _scrub(text: str) -> str:
    """Provider error texts may quote the recipient's number; mask it before it reaches logs."""
    text = _PHONE_LIKE.sub(lambda m: mask_phone(m.group(0)), text or "")
    return text[:_ERROR_TEXT_LIMIT]


# --- Twilio -------------------------------------------------------------------------------------


class TwilioMessenger:
    """SMS or WhatsApp through Twilio's Programmable Messaging REST API."""

    def __init__(
        self,
        account_sid: str,
        auth_token: str,
        *,
        from_number: str | None = None,
        messaging_service_sid: str | None = None,
        channel: TwilioChannel = "sms",
        client_factory: TwilioClientFactory | None = None,
        timeout: float = 10.0,
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
        self._factory = client_factory or self._default_client
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        from twilio.base.exceptions import TwilioException, TwilioRestException, TwilioServiceException

        params: dict[str, Any] = {
            "to": self._address(message.to),
            "body": with_question_text(message.body, message.question),
        }
        if self._service_sid:
            params["messaging_service_sid"] = self._service_sid
        else:
            params["from_"] = self._address(self._from or "")
        try:
            created = self._get_client().messages.create(**params)
        except TwilioRestException as exc:
            raise MessagingError(
                f"Twilio refused the message (HTTP {exc.status}, code {exc.code}): {_scrub(exc.msg)}"
            ) from exc
        except TwilioServiceException as exc:
            raise MessagingError(
                f"Twilio refused the message (HTTP {exc.status}, code {exc.code}): {_scrub(exc.detail or exc.title)}"
            ) from exc
        except TwilioException as exc:
            # Not str(exc): Twilio's exceptions colour their text for terminals.
            raise MessagingError(f"Twilio send failed: {_scrub(str(exc.args[0]) if exc.args else '')}") from exc
        except OSError as exc:  # requests' errors are OSErrors: connection, timeout
            raise MessagingError(f"Twilio send failed: {type(exc).__name__}") from exc
        return SendResult(provider_message_id=str(getattr(created, "sid", "") or ""), provider="twilio")

    def _address(self, number: str) -> str:
        if self._channel == "whatsapp" and not number.startswith("whatsapp:"):
            return f"whatsapp:{number}"
        return number

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._factory(self._account_sid, self._auth_token)
            return self._client

    def _default_client(self, account_sid: str, auth_token: str) -> Any:
        from twilio.http.http_client import TwilioHttpClient
        from twilio.rest import Client

        return Client(account_sid, auth_token, http_client=TwilioHttpClient(timeout=self._timeout))


# --- Meta WhatsApp Cloud API --------------------------------------------------------------------


class WhatsAppCloudMessenger:
    """WhatsApp through Meta's Cloud API (Graph API ``/{phone_number_id}/messages``)."""

    def __init__(
        self,
        access_token: str,
        phone_number_id: str,
        *,
        api_version: str = "v21.0",
        base_url: str = "https://graph.facebook.com",
        http_client: httpx.Client | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not access_token or not phone_number_id:
            raise ConfigurationError("WhatsApp Cloud needs WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID")
        self._url = f"{base_url.rstrip('/')}/{api_version}/{phone_number_id}/messages"
        self._headers = {"Authorization": f"Bearer {access_token}"}
        self._client = http_client
        self._owns_client = http_client is None
        self._timeout = timeout
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        """One API call per message: text, or an interactive reply-button message whose body carries
        the text and the question. Only a body too long for an interactive message (1,024
        characters) goes as text first, then the buttons. Returns the id of the last message sent,
        the one a button reply refers to."""
        to = message.to.removeprefix("whatsapp:").lstrip("+")
        question = message.question
        if question is None:
            return self._result(self._post(text_payload(to, message.body)))
        combined = f"{message.body.strip()}\n\n{question.text}" if message.body.strip() else question.text
        if len(combined) <= INTERACTIVE_BODY_LIMIT:
            return self._result(self._post(buttons_payload(to, question, body=combined)))
        self._post(text_payload(to, message.body))
        return self._result(self._post(buttons_payload(to, question)))

    @staticmethod
    def _result(provider_id: str) -> SendResult:
        return SendResult(provider_message_id=provider_id, provider="whatsapp_cloud")

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _post(self, payload: dict[str, Any]) -> str:
        import httpx

        try:
            response = self._get_client().post(self._url, json=payload, headers=self._headers)
        except httpx.HTTPError as exc:
            raise MessagingError(f"WhatsApp Cloud API request failed: {type(exc).__name__}") from exc
        if not 200 <= response.status_code < 300:
            code, text = _meta_error(response)
            raise MessagingError(
                f"WhatsApp Cloud API refused the message (HTTP {response.status_code}, code {code}): {_scrub(text)}"
            )
        try:
            data = response.json()
            return str(data["messages"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError):
            return ""

    def _get_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout)
            return self._client


def text_payload(to: str, body: str) -> dict[str, Any]:
    """A plain text message; ``to`` in digits without ``+``."""
    return {"messaging_product": "whatsapp", "to": to, "type": "text", "text": {"body": body}}


INTERACTIVE_BODY_LIMIT = 1024  # Meta's limit on an interactive message's body text


def buttons_payload(to: str, question: Question, *, body: str | None = None) -> dict[str, Any]:
    """An interactive reply-button message (body: the question, or ``body``); button ids as in
    ``questions.button_id``."""
    buttons = [
        {"type": "reply", "reply": {"id": button_id(question, option), "title": option.title}}
        for option in question.options
    ]
    return {
        "messaging_product": "whatsapp",
        "to": to,
        "type": "interactive",
        "interactive": {
            "type": "button",
            "body": {"text": body or question.text},
            "action": {"buttons": buttons},
        },
    }


def _meta_error(response: httpx.Response) -> tuple[Any, str]:
    try:
        error = response.json().get("error") or {}
        return error.get("code"), str(error.get("message") or response.reason_phrase)
    except (ValueError, AttributeError):
        return None, response.reason_phrase


# --- local outbox -------------------------------------------------------------------------------


class OutboxRecord(BaseModel):
    """One message "sent" to the local outbox."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    to: str
    body: str
    # What a participant on a text channel would read: body plus the numbered question.
    body_text: str
    kind: OutboundKind
    question: Question | None
    message_id: str
    sent_at: datetime
    provider_message_id: str


class LocalOutbox:
    """An in-memory Messenger for local runs and tests. Thread-safe.

    Like a provider keyed by ``message_id``, a repeated ``message_id`` is not recorded twice: the
    first result is returned again.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._records: list[OutboxRecord] = []
        self._by_message_id: dict[str, SendResult] = {}
        self._failures: list[Exception] = []
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        with self._lock:
            if message.message_id and message.message_id in self._by_message_id:
                return self._by_message_id[message.message_id]
            if self._failures:
                raise self._failures.pop(0)
            result = SendResult(provider_message_id=f"local-{len(self._records) + 1}", provider="local")
            self._records.append(
                OutboxRecord(
                    participant_id=message.participant_id,
                    to=message.to,
                    body=message.body,
                    body_text=with_question_text(message.body, message.question),
                    kind=message.kind,
                    question=message.question,
                    message_id=message.message_id,
                    sent_at=self._clock.now(),
                    provider_message_id=result.provider_message_id,
                )
            )
            if message.message_id:
                self._by_message_id[message.message_id] = result
            return result

    def fail_next(self, n: int = 1, error: Exception | str = "injected send failure") -> None:
        """Make the next ``n`` sends raise (``MessagingError`` unless an exception is given)."""
        with self._lock:
            for _ in range(n):
                self._failures.append(error if isinstance(error, Exception) else MessagingError(error))

    def messages(self, participant_id: str | None = None) -> list[OutboxRecord]:
        with self._lock:
            return [r for r in self._records if participant_id is None or r.participant_id == participant_id]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._by_message_id.clear()
            self._failures.clear()


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
        )
    return WhatsAppCloudMessenger(
        lookup.required("whatsapp_access_token"),
        lookup.required("whatsapp_phone_number_id"),
        api_version=settings.whatsapp_graph_api_version,
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
