"""The flow catalog: versioned definitions through the store port, behind a small TTL cache.

No I/O of its own: the store and the clock are injected. The latest version of a flow is cached for
``ttl_seconds`` (a push through this catalog invalidates it at once; other processes see it within
the TTL); a pinned version never changes, so it is cached until evicted (bounded).

Bundled definitions (``prompts/flows/*.json``) are version 1 of their flow. Reading never writes:
while nothing is stored, a read answers the bundled definition as version 1 from memory (the worker
only reads: it has no right to write flows). The flows API stores it, as version 1, before the first
push and when its versions are listed (``seed``), so a pushed definition is always version 2 or later
and version 1 always means the bundled one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import timedelta
from typing import Any

from promptpipe.controller.definition import FlowDefinition, validate
from promptpipe.controller.ports import FlowDefinitionStore, FlowVersionConflict, FlowVersionInfo, StoredFlow
from promptpipe.controller.problems import DefinitionInvalid, Problem
from promptpipe.errors import FlowNotFound, FlowPushConflict
from promptpipe.rules.clock import Clock

DEFAULT_TTL_SECONDS = 60.0
MAX_PINNED = 64
_PUT_RETRIES = 3


class FlowCatalog:
    def __init__(
        self,
        store: FlowDefinitionStore,
        clock: Clock,
        *,
        bundled: dict[str, FlowDefinition] | None = None,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
    ) -> None:
        self.store = store
        self._clock = clock
        self._bundled = bundled or {}
        self._ttl = timedelta(seconds=ttl_seconds)
        self._latest: dict[str, tuple[Any, FlowDefinition]] = {}
        self._pinned: OrderedDict[tuple[str, int], FlowDefinition] = OrderedDict()
        self._lock = threading.Lock()
        self._loading = threading.Lock()

    # -- reads ----------------------------------------------------------------------------------
    def latest(self, flow_id: str) -> FlowDefinition:
        now = self._clock.now()
        with self._lock:
            cached = self._latest.get(flow_id)
            if cached is not None and cached[0] > now:
                return cached[1]
        with self._loading:  # one load at a time: concurrent misses wait and then hit the cache
            with self._lock:
                cached = self._latest.get(flow_id)
                if cached is not None and cached[0] > now:
                    return cached[1]
            stored = self.store.latest(flow_id)
            definition = stored.definition if stored is not None else self._bundled_v1(flow_id)
            with self._lock:
                self._latest[flow_id] = (now + self._ttl, definition)
                self._remember(definition)
        return definition

    def get(self, flow_id: str, version: int) -> FlowDefinition:
        with self._lock:
            cached = self._pinned.get((flow_id, version))
            if cached is not None:
                self._pinned.move_to_end((flow_id, version))
                return cached
        stored = self.store.get(flow_id, version)
        if stored is not None:
            definition = stored.definition
        elif version == 1 and flow_id in self._bundled and self.store.latest(flow_id) is None:
            definition = self._bundled_v1(flow_id)
        else:
            raise FlowNotFound(f"{flow_id} version {version}")
        with self._lock:
            self._remember(definition)
        return definition

    def versions(self, flow_id: str) -> list[FlowVersionInfo]:
        versions = self.store.versions(flow_id)
        if not versions and flow_id in self._bundled:
            self.seed(flow_id)
            versions = self.store.versions(flow_id)
        if not versions:
            raise FlowNotFound(flow_id)
        return versions

    # -- writes ---------------------------------------------------------------------------------
    @staticmethod
    def validate(raw: Any, *, flow_id: str | None = None) -> tuple[FlowDefinition | None, list[Problem]]:
        if isinstance(raw, dict) and flow_id is not None:
            body_id = raw.get("id")
            if body_id is None:
                raw = {**raw, "id": flow_id}
            elif body_id != flow_id:
                return None, [
                    Problem(path="$.id", message=f"{body_id!r} does not match the flow in the path ({flow_id!r})")
                ]
        return validate(raw)

    def push(self, raw: Any, *, flow_id: str | None = None, created_by: str = "") -> FlowDefinition:
        """Validate, then store as the next version (the body's ``version`` is ignored: versions
        are assigned here, one above the latest). Invalid: ``DefinitionInvalid``, nothing stored.
        A version taken by a concurrent push is retried with the next number; when every attempt
        loses, ``FlowPushConflict`` names the version that won (the API's 409)."""
        definition, problems = self.validate(raw, flow_id=flow_id)
        if definition is None:
            raise DefinitionInvalid(problems)
        if definition.id in self._bundled:
            self.seed(definition.id)  # version 1 is the bundled definition, never a pushed one
        for _attempt in range(_PUT_RETRIES):
            current = self.store.latest(definition.id)
            version = (current.definition.version + 1) if current else 1
            candidate = definition.model_copy(update={"version": version})
            try:
                self.store.put(StoredFlow(definition=candidate, created_at=self._clock.now(), created_by=created_by))
            except FlowVersionConflict:
                continue
            with self._lock:
                self._latest.pop(definition.id, None)
                self._remember(candidate)
            return candidate
        # Every attempt lost to another push: say which version won rather than retry without end.
        winner = self.store.latest(definition.id)
        with self._lock:
            self._latest.pop(definition.id, None)  # a newer version exists: the cached one is stale
        raise FlowPushConflict(definition.id, winner.definition.version if winner else 0)

    def seed(self, flow_id: str) -> StoredFlow:
        """Store the bundled definition as version 1 unless a version is stored (the flows API's
        write right; a reader never calls it)."""
        existing = self.store.latest(flow_id)
        if existing is not None:
            return existing
        stored = StoredFlow(definition=self._bundled_v1(flow_id), created_at=self._clock.now(), created_by="seed")
        try:
            self.store.put(stored)
        except FlowVersionConflict:
            existing = self.store.latest(flow_id)  # another process seeded it first
            if existing is None:
                raise
            return existing
        return stored

    # -- internals ------------------------------------------------------------------------------
    def _bundled_v1(self, flow_id: str) -> FlowDefinition:
        bundled = self._bundled.get(flow_id)
        if bundled is None:
            raise FlowNotFound(flow_id)
        return bundled.model_copy(update={"version": 1})

    def _remember(self, definition: FlowDefinition) -> None:
        key = (definition.id, definition.version)
        self._pinned[key] = definition
        self._pinned.move_to_end(key)
        while len(self._pinned) > MAX_PINNED:
            self._pinned.popitem(last=False)
