"""Twilio webhook signatures, checked with the ``twilio`` package's own validator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from twilio.request_validator import RequestValidator


class _MultiParams:
    """Repeated form keys as Twilio signs them (the validator asks for ``getall``)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._values: dict[str, list[str]] = {}
        for key, value in pairs:
            self._values.setdefault(key, []).append(value)

    def __iter__(self) -> Any:
        return iter(self._values)

    def getall(self, key: str) -> list[str]:
        return self._values[key]


def verify_twilio_signature(
    url: str,
    params: list[tuple[str, str]] | Mapping[str, str],
    signature: str | None,
    auth_token: str,
) -> bool:
    """Whether ``X-Twilio-Signature`` matches. ``url`` must be exactly the URL Twilio called and
    ``params`` every form field, blank ones included (``parse_qsl(body, keep_blank_values=True)``)."""
    if not signature or not auth_token:
        return False
    signed: Any = _MultiParams(params) if isinstance(params, list) else dict(params)
    try:
        return bool(RequestValidator(auth_token).validate(url, signed, signature))
    except (TypeError, ValueError, AttributeError):
        return False
