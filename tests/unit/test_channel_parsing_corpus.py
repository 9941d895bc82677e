"""Parsing real published webhook payloads (tests/data/inbound_payloads.json names each source)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from promptpipe.channels import parsing as inbound
from promptpipe.channels.parsing import parse_meta_payload, parse_twilio_form
from promptpipe.errors import ValidationFailed
from promptpipe.models.messaging import DeliveryStatus, InboundMessage

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
CORPUS = json.loads((Path(__file__).parent.parent / "data" / "inbound_payloads.json").read_text())


def _check(parsed: InboundMessage, expect: dict[str, Any]) -> None:
    for field, value in expect.items():
        actual = getattr(parsed, field)
        if field == "attachments":
            actual = [a.model_dump() for a in actual]
        elif field == "kind":
            actual = actual.value
        assert actual == value, field


def _check_status(status: DeliveryStatus, expect: dict[str, Any]) -> None:
    assert {field: getattr(status, field) for field in expect} == expect


@pytest.mark.parametrize("name", sorted(CORPUS["meta"]))
def test_meta_corpus(name: str) -> None:
    case = CORPUS["meta"][name]
    assert case["source"]
    statuses: list[DeliveryStatus] = []
    rejected: list[ValidationFailed] = []
    messages = parse_meta_payload(case["payload"], NOW, "US", rejected=rejected, statuses=statuses)
    if "expect_rejected" in case:
        assert messages == [] and statuses == []
        assert [type(r) for r in rejected] == [getattr(inbound, case["expect_rejected"])]
    elif "expect_status" in case:
        assert messages == [] and rejected == []
        (status,) = statuses
        _check_status(status, case["expect_status"])
    else:
        assert rejected == [] and statuses == []
        (message,) = messages
        _check(message, case["expect"])


@pytest.mark.parametrize("name", sorted(CORPUS["twilio"]))
def test_twilio_corpus(name: str) -> None:
    case = CORPUS["twilio"][name]
    assert case["source"]
    if "expect_rejected" in case:
        with pytest.raises(getattr(inbound, case["expect_rejected"])):
            parse_twilio_form(case["form"], NOW, "US")
        return
    parsed = parse_twilio_form(case["form"], NOW, "US")
    if "expect_status" in case:
        assert isinstance(parsed, DeliveryStatus)
        _check_status(parsed, case["expect_status"])
    else:
        assert isinstance(parsed, InboundMessage)
        _check(parsed, case["expect"])


def test_a_failed_status_is_a_failure_and_a_delivered_one_is_not() -> None:
    failed = parse_twilio_form(CORPUS["twilio"]["status_failed_63016"]["form"], NOW, "US")
    delivered = parse_twilio_form(CORPUS["twilio"]["status_delivered"]["form"], NOW, "US")
    assert isinstance(failed, DeliveryStatus) and failed.failed
    assert isinstance(delivered, DeliveryStatus) and not delivered.failed
