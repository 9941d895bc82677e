"""Phone numbers: one canonical form (E.164) everywhere, and a masked form for logs.

The original only stripped non-digits; we canonicalise with ``phonenumbers`` (docs/behaviour.md#B-API-2) so
that "+1 (415) 555-0100", "whatsapp:+14155550100" and Meta's digit-only "14155550100" all name the same
participant, and impossible numbers are refused with a clear message.
"""

from __future__ import annotations

import re

import phonenumbers

from promptpipe.errors import InvalidPhoneNumber

_PREFIXES = ("whatsapp:", "tel:", "sms:")
_DIGITS_ONLY = re.compile(r"^\d{10,}$")
_FIELD = "phone_number"
# Longer input is never a phone number; also keeps error messages short.
_MAX_INPUT_CHARS = 64


def canonicalize_phone(raw: str, default_region: str = "US") -> str:
    """Return ``raw`` as E.164 (``+14155550100``) or raise ``InvalidPhoneNumber``.

    Accepts international numbers with ``+``, ``whatsapp:``/``tel:`` prefixes, Meta WhatsApp ids
    (10 or more digits without ``+``: read as international first, then in ``default_region``) and
    national numbers of ``default_region``.
    """
    text = (raw or "").strip()
    for prefix in _PREFIXES:
        if text.lower().startswith(prefix):
            text = text[len(prefix) :].strip()
            break
    if not text:
        raise InvalidPhoneNumber("phone number is required", field=_FIELD)
    shown = _shown(text)
    if len(text) > _MAX_INPUT_CHARS:
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number (too long)", field=_FIELD)
    if not any(ch.isdigit() for ch in text):
        raise InvalidPhoneNumber(f"{shown} is not a phone number: it has no digits", field=_FIELD)

    if _DIGITS_ONLY.match(text):
        # Meta sends ids such as "14155550100": country code included, no "+".
        international = _valid_e164(f"+{text}", None)
        if international is not None:
            return international
    region = None if text.startswith("+") else default_region.upper()
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException as exc:
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number: {_parse_reason(exc)}", field=_FIELD) from exc
    if not phonenumbers.is_possible_number(number) or not phonenumbers.is_valid_number(number):
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number", field=_FIELD)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def mask_phone(e164: str) -> str:
    """``+14155550100`` -> ``+*******0100``: for logs. Keeps at most the last 4 digits, and never
    more than half of them, so short inputs are not revealed."""
    digits = sum(ch.isdigit() for ch in e164)
    keep = min(4, digits // 2)
    masked_upto = digits - keep
    out: list[str] = []
    seen = 0
    for ch in e164:
        if ch.isdigit():
            seen += 1
            out.append("*" if seen <= masked_upto else ch)
        else:
            out.append(ch)
    return "".join(out)


def _valid_e164(text: str, region: str | None) -> str | None:
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if phonenumbers.is_valid_number(number):
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:24] + "…")


def _parse_reason(exc: phonenumbers.NumberParseException) -> str:
    error = phonenumbers.NumberParseException
    reasons = {
        error.INVALID_COUNTRY_CODE: "unknown country code (write it with + and the country code)",
        error.NOT_A_NUMBER: "not a number",
        error.TOO_SHORT_AFTER_IDD: "too short",
        error.TOO_SHORT_NSN: "too short",
        error.TOO_LONG: "too long",
    }
    return reasons.get(exc.error_type, "cannot be parsed")
