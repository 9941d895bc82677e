"""Sign webhook requests the way Twilio and Meta do (local server, demo and tests)."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlencode

from promptpipe.channels.signatures import twilio_signature as _twilio_signature


def twilio_signature(url: str, params: dict[str, str], auth_token: str) -> str:
    return _twilio_signature(url, params, auth_token)


def twilio_form(params: dict[str, str]) -> str:
    return urlencode(params)


def meta_signature(raw_body: bytes, app_secret: str) -> str:
    return "sha256=" + hmac.new(app_secret.encode(), raw_body, hashlib.sha256).hexdigest()
