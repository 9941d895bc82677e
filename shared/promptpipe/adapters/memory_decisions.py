"""The study decisions in memory (``DecisionLog``): the records the in-memory store's commits wrote."""

from __future__ import annotations

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import ValidationFailed
from promptpipe.models.decision import DecisionRecord


def _order(record: DecisionRecord) -> tuple[str, int, str]:
    return record.participant_id, record.study_day, record.decision_point


class InMemoryDecisionLog:
    def __init__(self, store: InMemoryStore) -> None:
        self._store = store

    def get(self, decision_id: str) -> DecisionRecord | None:
        record = self._store.decisions.get(decision_id)
        return record.model_copy(deep=True) if record else None

    def for_participant(self, participant_id: str) -> list[DecisionRecord]:
        found = self._store.decisions.of_participant(participant_id)
        return [r.model_copy(deep=True) for r in sorted(found, key=_order)]

    def all(self, study_id: str) -> list[DecisionRecord]:
        found = [r for r in self._store.decisions.values() if r.study_id == study_id]
        return [r.model_copy(deep=True) for r in sorted(found, key=_order)]

    def update(self, record: DecisionRecord) -> None:
        """Only a record a commit wrote is updated (no record without its decision)."""
        if record.decision_id in self._store.decisions:
            self._store.decisions[record.decision_id] = record.model_copy(deep=True)

    def page(
        self, study_id: str, *, limit: int, next_token: str | None = None
    ) -> tuple[list[DecisionRecord], str | None]:
        """An offset into ``all`` as the token (the in-memory stack holds a rehearsal's records)."""
        if next_token is not None and not next_token.isdigit():
            raise ValidationFailed("invalid next_token", field="next_token")
        start = int(next_token or 0)
        found = self.all(study_id)
        return found[start : start + limit], (str(start + limit) if start + limit < len(found) else None)
