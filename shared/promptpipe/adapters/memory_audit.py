"""An in-memory ``AuditLog`` (unit tests): the same contract as ``dynamodb_audit``."""

from __future__ import annotations

import threading

from promptpipe.models.audit import AuditRecord


class MemoryAuditLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[AuditRecord] = []

    def append(self, record: AuditRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self, participant_id: str | None = None) -> list[AuditRecord]:
        with self._lock:
            kept = [r for r in self._records if participant_id is None or r.participant_id == participant_id]
        return sorted(kept, key=lambda r: (r.participant_id, r.at, r.record_id))

    def redact(self, participant_id: str) -> None:
        with self._lock:
            self._records = [
                r.model_copy(update={"reason": "", "redacted": True}) if r.participant_id == participant_id else r
                for r in self._records
            ]
