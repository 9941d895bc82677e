"""Phone numbers: one canonical form (E.164) everywhere, and a masked form for logs.

We canonicalise with ``phonenumbers`` (docs/behaviour.md#B-API-2; the original only stripped
non-digits) so that "+1 (415) 555-0100", "whatsapp:+14155550100" and Meta's digit-only sender id
"14155550100" all name the same participant, and impossible numbers are refused with a clear
message. Numbers people type (the API) and sender ids providers give us (WhatsApp) are read by
different rules: see ``canonicalize_phone`` and ``canonicalize_whatsapp_sender``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from promptpipe.errors import InvalidPhoneNumber

# ``phonenumbers`` is imported by each function that parses a number, not here: its package imports
# every submodule (formatter, matcher, short numbers) at about 0.06x the stack's cold-start floor,
# which a function that only masks numbers for its logs never needs (docs/benchmarks.md, section 2).
if TYPE_CHECKING:
    import phonenumbers

_PREFIXES = ("whatsapp:", "tel:", "sms:")
_DIGITS_ONLY = re.compile(r"^\d{10,}$")
_SEPARATORS = re.compile(r"[\s().-]")
_FIELD = "phone_number"
# Longer input is never a phone number; also keeps error messages short.
_MAX_INPUT_CHARS = 64


def canonicalize_phone(raw: str, default_region: str = "US") -> str:
    """Return a number typed by a person (the participants API) as E.164 (``+14155550100``) or raise
    ``InvalidPhoneNumber``.

    Accepts international numbers with ``+`` (or an international dialling prefix such as ``011``),
    ``whatsapp:``/``tel:`` prefixes and national numbers of ``default_region``. Digits without ``+``
    are always read in ``default_region`` (``5164845567`` in the US is ``+15164845567``, not a number
    in Peru); when that reading is invalid but the digits would be valid with a ``+``, the error
    suggests the ``+`` form rather than guessing a country.
    """
    text = _strip(raw)
    try:
        return _parse(text, default_region)
    except InvalidPhoneNumber:
        digits = _SEPARATORS.sub("", text)
        if digits.isdigit() and len(digits) >= 8:
            international = _valid_e164(f"+{digits}", None)
            if international is not None:
                raise InvalidPhoneNumber(
                    f"{_shown(text)} is not a valid phone number in region {default_region.upper()}; if it "
                    f"includes a country code, write it as {international}",
                    field=_FIELD,
                ) from None
        raise


def canonicalize_whatsapp_sender(raw: str, default_region: str = "US") -> str:
    """Return a WhatsApp sender id as E.164: Meta's ids (``wa_id``, the ``from`` of a message) are the
    full international number without ``+`` (``14155550100``), so digits only are read as
    international first, and in ``default_region`` only when that reading is not a valid number.
    Only for sender ids a provider gives us, never for numbers people type."""
    return _international_first(raw, default_region)


def canonicalize_imported_phone(raw: str, default_region: str = "US") -> str:
    """Return a number stored by the original as E.164. Digits only are read in ``default_region``
    first (``5164845567`` with region US is ``+15164845567``, not a number in Peru), and as
    international (the original also kept ``+1-234-567-8900`` as ``12345678900``: country code
    included, no ``+``) only when the national reading is not a valid number; any other form is read
    like typed input."""
    text = _strip(raw)
    if _DIGITS_ONLY.match(text):
        national = _valid_e164(text, default_region.upper())
        if national is not None:
            return national
        international = _valid_e164(f"+{text}", None)
        if international is not None:
            return international
    return _parse(text, default_region)


def region_of(e164: str) -> str:
    """The region (``US``, ``GB``…) a canonical number belongs to; ``""`` when unknown."""
    import phonenumbers

    try:
        return phonenumbers.region_code_for_number(phonenumbers.parse(e164, None)) or ""
    except phonenumbers.NumberParseException:
        return ""


def _international_first(raw: str, default_region: str) -> str:
    text = _strip(raw)
    if _DIGITS_ONLY.match(text):
        international = _valid_e164(f"+{text}", None)
        if international is not None:
            return international
    return _parse(text, default_region)


def _strip(raw: str) -> str:
    text = (raw or "").strip()
    for prefix in _PREFIXES:
        if text.lower().startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def _parse(text: str, default_region: str) -> str:
    import phonenumbers

    if not text:
        raise InvalidPhoneNumber("phone number is required", field=_FIELD)
    shown = _shown(text)
    if len(text) > _MAX_INPUT_CHARS:
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number (too long)", field=_FIELD)
    if not any(ch.isdigit() for ch in text):
        raise InvalidPhoneNumber(f"{shown} is not a phone number: it has no digits", field=_FIELD)
    region = None if text.startswith("+") else default_region.upper()
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException as exc:
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number: {_parse_reason(exc)}", field=_FIELD) from exc
    if not phonenumbers.is_possible_number(number) or not phonenumbers.is_valid_number(number):
        raise InvalidPhoneNumber(f"{shown} is not a valid phone number", field=_FIELD)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def is_known_region(region: str) -> bool:
    """Whether ``region`` is a region code ``phonenumbers`` knows (``US``, ``FR``…; any case)."""
    import phonenumbers

    return isinstance(region, str) and region.upper() in phonenumbers.SUPPORTED_REGIONS


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
    import phonenumbers

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
    import phonenumbers

    error = phonenumbers.NumberParseException
    reasons = {
        error.INVALID_COUNTRY_CODE: "unknown country code (write it with + and the country code)",
        error.NOT_A_NUMBER: "not a number",
        error.TOO_SHORT_AFTER_IDD: "too short",
        error.TOO_SHORT_NSN: "too short",
        error.TOO_LONG: "too long",
    }
    return reasons.get(exc.error_type, "cannot be parsed")
