"""The controller's storage port: versioned flow definitions (one partition per flow)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from promptpipe.controller.definition import FlowDefinition
from promptpipe.errors import PromptPipeError
from promptpipe.lazy_model import LazyModel


class StoredFlow(LazyModel):
    definition: FlowDefinition
    created_at: datetime
    created_by: str = ""


class FlowVersionInfo(LazyModel):
    version: int
    created_at: datetime
    created_by: str = ""


class FlowVersionConflict(PromptPipeError):
    """Another writer stored the same version first (re-read the latest and retry)."""


class FlowDefinitionStore(Protocol):
    def latest(self, flow_id: str) -> StoredFlow | None:
        """The newest version, or None when the flow was never stored."""
        ...

    def get(self, flow_id: str, version: int) -> StoredFlow | None: ...

    def put(self, stored: StoredFlow) -> None:
        """Store ``stored.definition`` as a new version and make it the latest. The version must
        be exactly one above the current latest (1 for a new flow), else ``FlowVersionConflict``."""
        ...

    def versions(self, flow_id: str) -> list[FlowVersionInfo]:
        """Every stored version, oldest first."""
        ...
