"""The audit log's contract, the same for DynamoDB (moto) and memory: records kept apart from the
participant's items, read back by participant oldest first or all, and an erasure's redaction."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from promptpipe.adapters.dynamodb_audit import DynamoAuditLog
from promptpipe.adapters.dynamodb_table import TABLE
from promptpipe.adapters.memory_audit import MemoryAuditLog
from promptpipe.models.audit import Actor, AuditAction, AuditRecord
from promptpipe.ports import AuditLog

AT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _dynamo() -> AuditLog:
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(**TABLE.create_table_request("audit-test"))
    return DynamoAuditLog("audit-test", client)


@pytest.fixture(params=["dynamodb", "memory"])
def log(request: pytest.FixtureRequest, aws: None) -> AuditLog:
    builders: dict[str, Callable[[], Any]] = {"dynamodb": _dynamo, "memory": MemoryAuditLog}
    return builders[request.param]()


def _record(pid: str, action: AuditAction, minutes: int, record_id: str, reason: str = "") -> AuditRecord:
    at = AT + timedelta(minutes=minutes, microseconds=minutes * 7)
    return AuditRecord(record_id=record_id, at=at, action=action, participant_id=pid, by="Ana", reason=reason)


def test_records_are_read_by_participant_oldest_first_and_all_together(log: AuditLog) -> None:
    # Given records of two participants and the study's export, written out of order
    log.append(_record("p_b", AuditAction.PAUSE, 2, "2", "holiday"))
    log.append(_record("p_a", AuditAction.EDIT, 3, "3"))
    log.append(_record("p_a", AuditAction.ENROL, 0, "1"))
    log.append(_record("", AuditAction.EXPORT, 5, "5"))
    # Then a participant's come back oldest first, and all of them by participant (the study's first)
    assert [r.action for r in log.records("p_a")] == [AuditAction.ENROL, AuditAction.EDIT]
    assert [r.record_id for r in log.records()] == ["5", "1", "3", "2"]
    assert log.records("p_c") == []


def test_a_redaction_blanks_the_reasons_and_keeps_the_records(log: AuditLog) -> None:
    log.append(_record("p_a", AuditAction.PAUSE, 0, "1", "Sam's sister is ill"))
    log.append(_record("p_b", AuditAction.PAUSE, 1, "2", "holiday"))
    log.redact("p_a")
    log.redact("p_a")  # twice: the same
    (kept,) = log.records("p_a")
    assert (kept.action, kept.by, kept.reason, kept.redacted) == (AuditAction.PAUSE, "Ana", "", True)
    assert log.records("p_b")[0].reason == "holiday"


def test_an_actor_is_the_signing_principal_and_the_named_coordinator_only_a_note() -> None:
    assert Actor.of("  Ana ", "arn:aws:iam::1:user/ops") == Actor(principal="arn:aws:iam::1:user/ops", named="Ana")
    assert Actor.of(None, "arn:aws:iam::1:user/ops") == Actor(principal="arn:aws:iam::1:user/ops")
    # No principal (a local, unsigned call): a clear value, never the caller's claim
    assert Actor.of("Ana", None) == Actor(principal="unsigned local caller", named="Ana")
    assert Actor.of("", "").principal == "unsigned local caller"
