"""The one HTTP client of the messengers (Twilio's REST API, Meta's Graph API).

``MessengerHttp`` posts to one provider URL with a lazily built, shared ``httpx.Client`` (or the one
given, which the caller closes) and turns every failure into a ``MessagingError``: a transport error
is retryable, a refusal carries the provider's code and its scrubbed text, retryable when throttled
or a 5xx, undeliverable when its code says the recipient will refuse it again. httpx is imported
lazily so that a function that never sends does not pay for it at cold start.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from promptpipe.errors import MessagingError
from promptpipe.rules.phone import mask_phone

if TYPE_CHECKING:
    import httpx

# (code, text) of a provider's error answer.
ErrorReader = Callable[["httpx.Response"], tuple[Any, str]]

_PHONE_LIKE = re.compile(r"\+?\d[\d\s().-]{6,}\d")
_ERROR_TEXT_LIMIT = 300
META_OUTSIDE_WINDOW = 131047  # "Re-engagement message"
TWILIO_OUTSIDE_WINDOW = 63016  # "Failed to send freeform message because you are outside the allowed window"

# Refusals that concern the recipient or the message itself, not our account or the provider's
# health: sending the same message again is refused again, so it is recorded as failed, not retried.
UNDELIVERABLE_CODES = frozenset(
    {
        "21211",  # Twilio: invalid 'To' number
        "21610",  # Twilio: the recipient replied STOP to this sender
        "21614",  # Twilio: 'To' is not a mobile number
        str(TWILIO_OUTSIDE_WINDOW),  # Twilio WhatsApp: outside the 24-hour window (no template configured)
        "131026",  # Meta: message undeliverable (not on WhatsApp, old app version)
        str(META_OUTSIDE_WINDOW),  # Meta: re-engagement message (no template configured)
    }
)


def refusal(provider: str, response: httpx.Response, code: Any, text: str) -> MessagingError:
    """A provider's refusal: its error code and (scrubbed) text; retryable when throttled or a 5xx;
    undeliverable when its code says the recipient will refuse it again (``UNDELIVERABLE_CODES``)."""
    retryable = response.status_code == 429 or response.status_code >= 500
    return MessagingError(
        f"{provider} refused the message (HTTP {response.status_code}, code {code}): {scrub(text)}",
        code=str(code) if code is not None else None,
        status=response.status_code,
        retryable=retryable,
        undeliverable=not retryable and str(code) in UNDELIVERABLE_CODES,
    )


def scrub(text: str) -> str:
    """Provider error texts may quote the recipient's number; mask it before it reaches logs."""
    text = _PHONE_LIKE.sub(lambda m: mask_phone(m.group(0)), text or "")
    return text[:_ERROR_TEXT_LIMIT]


class MessengerHttp:
    """POSTs to one provider URL; a 2xx answer comes back, anything else raises ``MessagingError``."""

    def __init__(
        self,
        url: str,
        *,
        provider: str,
        read_error: ErrorReader,
        failure: str,
        http_client: httpx.Client | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.url = url
        self._provider = provider  # as refusals name it ("Twilio", "WhatsApp Cloud API")
        self._read_error = read_error
        self._failure = failure  # what a transport error says ("Twilio send failed")
        self._client = http_client
        self._owns_client = http_client is None
        self._timeout = timeout
        self._lock = threading.Lock()

    def post(self, **request: Any) -> httpx.Response:
        """``request`` as ``httpx.Client.post`` takes it (``data``/``json``, ``auth``, ``headers``)."""
        import httpx

        try:
            response = self._get_client().post(self.url, **request)
        except httpx.HTTPError as exc:
            raise MessagingError(f"{self._failure}: {type(exc).__name__}") from exc
        if not 200 <= response.status_code < 300:
            raise refusal(self._provider, response, *self._read_error(response))
        return response

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _get_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout)
            return self._client
