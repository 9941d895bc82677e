"""An in-memory ``FlowDefinitionStore`` (unit tests and wiring without DynamoDB)."""

from __future__ import annotations

import threading

from promptpipe.controller.ports import FlowVersionConflict, FlowVersionInfo, StoredFlow


class InMemoryFlowDefinitionStore:
    def __init__(self) -> None:
        self._flows: dict[str, dict[int, StoredFlow]] = {}
        self._lock = threading.Lock()
        self.reads = 0  # how many reads reached the store (the cache tests count them)

    def latest(self, flow_id: str) -> StoredFlow | None:
        with self._lock:
            self.reads += 1
            versions = self._flows.get(flow_id)
            return versions[max(versions)] if versions else None

    def get(self, flow_id: str, version: int) -> StoredFlow | None:
        with self._lock:
            self.reads += 1
            return self._flows.get(flow_id, {}).get(version)

    def put(self, stored: StoredFlow) -> None:
        definition = stored.definition
        with self._lock:
            versions = self._flows.setdefault(definition.id, {})
            expected = max(versions, default=0) + 1
            if definition.version != expected:
                raise FlowVersionConflict(f"{definition.id}: version {definition.version}, expected {expected}")
            versions[definition.version] = stored

    def versions(self, flow_id: str) -> list[FlowVersionInfo]:
        with self._lock:
            return [
                FlowVersionInfo(version=v, created_at=s.created_at, created_by=s.created_by)
                for v, s in sorted(self._flows.get(flow_id, {}).items())
            ]
