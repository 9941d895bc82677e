"""Phone canonicalisation (docs/behaviour.md#B-API-2) and masking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.phone import canonicalize_phone, mask_phone


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("+1 (415) 555-0100", "+14155550100"),
        ("+14155550100", "+14155550100"),
        ("whatsapp:+14155550100", "+14155550100"),
        ("WhatsApp:+1 415 555 0100", "+14155550100"),
        ("  +14155550100  ", "+14155550100"),
        ("14155550100", "+14155550100"),  # Meta wa_id: country code, no "+"
        ("447911123456", "+447911123456"),  # Meta wa_id outside the default region
        ("(415) 555-0100", "+14155550100"),  # national, default region US
        ("415.555.0100", "+14155550100"),
        ("011 44 7911 123456", "+447911123456"),  # US international dialling prefix
        ("+44 7911 123456", "+447911123456"),
    ],
)
def test_accepted_forms_become_e164(raw: str, expected: str) -> None:
    # Given a number in any accepted form / When canonicalised / Then it is E.164
    assert canonicalize_phone(raw) == expected


def test_default_region_is_used_for_national_numbers() -> None:
    assert canonicalize_phone("06 12 34 56 78", default_region="FR") == "+33612345678"
    assert canonicalize_phone("06 12 34 56 78", default_region="fr") == "+33612345678"


def test_digit_only_id_falls_back_to_the_default_region() -> None:
    # "4155550100" is not valid as "+41 55550100" (Switzerland), so it is read as a US number.
    assert canonicalize_phone("4155550100") == "+14155550100"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "phone number is required"),
        ("   ", "phone number is required"),
        ("whatsapp:", "phone number is required"),
        ("abc-def-ghij", "has no digits"),  # docs/behaviour.md#M4: rejected there too
        ("12345", "is not a valid phone number"),  # docs/behaviour.md#M4: too short there too
        ("123-45", "is not a valid phone number"),
        # docs/behaviour.md#M4 accepted these (digits only, >= 6); they are not real numbers, so we refuse them.
        ("123456", "is not a valid phone number"),
        ("(123) 456-7890", "is not a valid phone number"),  # NANP area codes never start with 1
        ("123.456 7890", "is not a valid phone number"),
        ("+1234567890", "is not a valid phone number"),  # case A1's number (docs/behaviour.md#A1): 9 digits after +1
        ("+999 1234567", "is not a valid phone number"),
        ("+1 415 555 0100 99999999", "is not a valid phone number"),
        ("1" * 80, "too long"),
    ],
)
def test_rejected_inputs_have_a_clear_message(raw: str, message: str) -> None:
    with pytest.raises(InvalidPhoneNumber) as caught:
        canonicalize_phone(raw)
    assert message in str(caught.value)
    assert caught.value.field == "phone_number"


def test_m4_valid_number_keeps_its_country_code() -> None:
    # docs/behaviour.md#M4: "+1-234-567-8900" -> "12345678900" in the original; we keep the "+" (E.164).
    assert canonicalize_phone("+1-234-567-8900") == "+12345678900"


def test_invalid_phone_number_is_a_validation_failure() -> None:
    # The API maps ValidationFailed to 400 (docs/behaviour.md#B-API-2: impossible numbers are a 400).
    assert issubclass(InvalidPhoneNumber, ValidationFailed)


@pytest.mark.parametrize(
    ("e164", "masked"),
    [
        ("+14155550100", "+*******0100"),
        ("+447911123456", "+********3456"),
        ("+123456", "+***456"),
        ("+12", "+*2"),
        ("", ""),
    ],
)
def test_mask_phone(e164: str, masked: str) -> None:
    assert mask_phone(e164) == masked


@settings(deadline=None, derandomize=True)
@given(st.text(max_size=40))
def test_canonicalize_raises_only_invalid_phone_number(raw: str) -> None:
    try:
        result = canonicalize_phone(raw)
    except InvalidPhoneNumber:
        return
    assert result.startswith("+")
    assert result[1:].isdigit()
    assert canonicalize_phone(result) == result  # idempotent


@settings(deadline=None, derandomize=True)
@given(st.from_regex(r"\+?[0-9 ()-]{0,20}", fullmatch=True))
def test_mask_phone_never_shows_more_than_four_digits(raw: str) -> None:
    masked = mask_phone(raw)
    assert len(masked) == len(raw)
    assert sum(ch.isdigit() for ch in masked) <= 4
