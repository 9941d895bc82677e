"""What ``usecases.schedules.reconcile`` reports for a participant (the API's ``ReconcileResult``).
Apart from the event outcomes (``usecases/outcomes.py``): no first event reconciles, so no function
defines these classes at cold start (docs/benchmarks.md, section 2)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class DriftedSchedule:
    """A live schedule whose specification differed from what the state asks for (written under older
    settings), and the fields that differed (``LiveSchedule`` field names)."""

    name: str
    fields: list[str]


@dataclass
class ReconcileReport:
    """What ``reconcile`` found and repaired for one participant."""

    participant_id: str
    desired: int = 0
    live: int = 0
    deleted_orphans: list[str] = field(default_factory=list)
    created_missing: list[str] = field(default_factory=list)
    skipped_past: list[str] = field(default_factory=list)
    updated_drifted: list[DriftedSchedule] = field(default_factory=list)

    @property
    def repairs(self) -> int:
        return len(self.deleted_orphans) + len(self.created_missing) + len(self.updated_drifted)

    def to_json_dict(self) -> dict[str, Any]:
        """The API's form (``ReconcileResult``): the fields and the count of repairs."""
        return {**asdict(self), "repairs": self.repairs}
