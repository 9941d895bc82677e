"""Both providers' webhook signature checks, and Meta's verification handshake. Pure: the handler
passes the secret (``promptpipe.wiring.channel_credential``) and answers 403 on a mismatch. A check
never raises, and compares in constant time.

Meta (``X-Hub-Signature-256``): ``sha256=`` and the hex HMAC-SHA256 of the raw body with the app
secret. Its subscription handshake echoes ``hub.challenge`` when ``hub.verify_token`` is ours.

Twilio (``X-Twilio-Signature``, HMAC-SHA1 with the account Auth Token): the algorithm Twilio
documents and its own ``twilio.request_validator.RequestValidator`` implements: the URL Twilio
called, then every form field name followed by its value, names sorted and, for a repeated name, its
distinct values sorted; HMAC-SHA1 of that with the Auth Token, base64. The URL is tried without and
with the default port (Twilio signs either). Kept here instead of importing the ``twilio`` package,
which would bring the whole SDK (and its HTTP stack) into the webhook's bundle for one HMAC;
tests/unit/test_channel_signatures.py checks it against the SDK's validator.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from urllib.parse import ParseResult, urlparse

_SIGNATURE_PREFIX = "sha256="


def _distinct_values(params: Iterable[tuple[str, str]] | Mapping[str, str]) -> dict[str, set[str]]:
    pairs = params.items() if isinstance(params, Mapping) else params
    values: dict[str, set[str]] = {}
    for key, value in pairs:
        values.setdefault(key, set()).add(value)
    return values


def twilio_signature(url: str, params: Iterable[tuple[str, str]] | Mapping[str, str], auth_token: str) -> str:
    """The signature Twilio sends for a POST of ``params`` to exactly ``url``."""
    signed = url
    for name, values in sorted(_distinct_values(params).items()):
        for value in sorted(values):
            signed += name + value
    digest = hmac.new(auth_token.encode("utf-8"), signed.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def _without_port(uri: ParseResult) -> str:
    if not uri.port:
        return uri.geturl()
    return uri._replace(netloc=uri.netloc.split(":")[0]).geturl()


def _with_port(uri: ParseResult) -> str:
    if uri.port:
        return uri.geturl()
    port = 443 if uri.scheme == "https" else 80
    return uri._replace(netloc=f"{uri.netloc}:{port}").geturl()


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
    try:
        parsed = urlparse(url)
        candidates = {_without_port(parsed), _with_port(parsed)}
        expected = signature.encode("utf-8")
        return any(
            hmac.compare_digest(twilio_signature(candidate, params, auth_token).encode("ascii"), expected)
            for candidate in candidates
        )
    except (TypeError, ValueError, AttributeError):  # a bad port, a non-string value
        return False


def verify_meta_handshake(query: Mapping[str, str], verify_token: str) -> str | None:
    """The ``hub.challenge`` to echo when the subscription request carries our verify token;
    ``None`` otherwise (answer 403)."""
    if not verify_token:
        return None
    mode = query.get("hub.mode")
    token = query.get("hub.verify_token")
    challenge = query.get("hub.challenge")
    if mode != "subscribe" or not isinstance(token, str) or not isinstance(challenge, str):
        return None
    if not hmac.compare_digest(token.encode("utf-8"), verify_token.encode("utf-8")):
        return None
    return challenge or None


def verify_meta_signature(raw_body: bytes, header: str | None, app_secret: str) -> bool:
    """Whether ``X-Hub-Signature-256`` (``sha256=<hex>``) is the HMAC-SHA256 of the raw body."""
    if not header or not app_secret or not isinstance(raw_body, bytes | bytearray):
        return False
    header = header.strip()
    if not header.lower().startswith(_SIGNATURE_PREFIX):
        return False
    given = header[len(_SIGNATURE_PREFIX) :].strip().lower()
    expected = hmac.new(app_secret.encode("utf-8"), bytes(raw_body), hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode("ascii", "replace"), expected.encode("ascii"))
