"""Phone canonicalisation (docs/behaviour.md#B-API-2) and masking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.rules.phone import (
    canonicalize_imported_phone,
    canonicalize_phone,
    canonicalize_whatsapp_sender,
    mask_phone,
)
from promptpipe.settings import Settings


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("+1 (415) 555-0100", "+14155550100"),
        ("+14155550100", "+14155550100"),
        ("whatsapp:+14155550100", "+14155550100"),
        ("WhatsApp:+1 415 555 0100", "+14155550100"),
        ("  +14155550100  ", "+14155550100"),
        ("14155550100", "+14155550100"),  # national with the trunk prefix 1
        ("(415) 555-0100", "+14155550100"),  # national, default region US
        ("5164845567", "+15164845567"),  # a US number whose digits also start like Peru's +51
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


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("5164845567", "US", "+15164845567"),  # not Peru (+51 64845567)
        ("2025550143", "US", "+12025550143"),  # not Egypt (+20 25550143)
        ("4155550100", "US", "+14155550100"),
        ("0612345678", "FR", "+33612345678"),
    ],
)
def test_api_input_without_plus_is_read_in_the_default_region(raw: str, region: str, expected: str) -> None:
    # Given a number typed without "+" / When canonicalised for the API / Then it is national first
    assert canonicalize_phone(raw, default_region=region) == expected


@pytest.mark.parametrize(
    ("raw", "suggested"),
    [("447911123456", "+447911123456"), ("33612345678", "+33612345678")],
)
def test_api_input_valid_only_as_international_is_refused_with_a_hint(raw: str, suggested: str) -> None:
    # Given digits that are no US number but would be one abroad with a "+"
    with pytest.raises(InvalidPhoneNumber) as caught:
        canonicalize_phone(raw, default_region="US")
    # Then the message suggests the "+" form instead of guessing a country
    assert f"write it as {suggested}" in str(caught.value)
    assert caught.value.field == "phone_number"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("14155550100", "+14155550100"),  # Meta wa_id: country code, no "+"
        ("447911123456", "+447911123456"),  # outside the default region
        ("5164845567", "+5164845567"),  # a WhatsApp id is always international
        ("4155550100", "+14155550100"),  # not valid as "+41 55550100": read in the default region
        ("+14155550100", "+14155550100"),
        ("whatsapp:+447911123456", "+447911123456"),
    ],
)
def test_whatsapp_sender_ids_are_read_as_international_first(raw: str, expected: str) -> None:
    assert canonicalize_whatsapp_sender(raw) == expected


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("12345678900", "US", "+12345678900"),  # the original's form of "+1-234-567-8900"
        ("447911123456", "US", "+447911123456"),  # refused by the API rule, a UK number here
        ("33612345678", "US", "+33612345678"),
        ("4165550102", "US", "+14165550102"),
        ("5164845567", "US", "+15164845567"),  # a national number: not +51 (Peru)
        ("0612345678", "FR", "+33612345678"),
        ("(416) 555-0102", "US", "+14165550102"),  # not the original's digits: read like typed input
        ("+44 7911 123456", "US", "+447911123456"),
    ],
)
def test_numbers_stored_by_the_original_are_read_in_the_region_first(raw: str, region: str, expected: str) -> None:
    assert canonicalize_imported_phone(raw, region) == expected


def test_unknown_default_region_is_refused_at_settings_load() -> None:
    with pytest.raises(ValueError, match="DEFAULT_PHONE_REGION") as caught:
        Settings(default_phone_region="XX")
    assert "XX" in str(caught.value)
    assert Settings(default_phone_region="fr").default_phone_region == "FR"


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
