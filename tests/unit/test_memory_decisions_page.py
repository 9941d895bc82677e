"""The in-memory decision log's pages (``DecisionLog.page``): the local stack's decisions route."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptpipe.adapters.memory_decisions import InMemoryDecisionLog
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.errors import ValidationFailed
from promptpipe.models.decision import DecisionRecord, decision_id

T0 = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)


def _record(pid: str, day: int, study: str = "example-mrt") -> DecisionRecord:
    return DecisionRecord(
        decision_id=decision_id(pid, "daily_prompt", day),
        study_id=study,
        participant_id=pid,
        decision_point="daily_prompt",
        study_day=day,
        decided_at=T0,
        decided_at_local=T0,
        available=True,
        probabilities={"no_prompt": 0.5, "framing_a": 0.5},
        arm="framing_a",
    )


def test_pages_walk_a_study_in_order_and_a_bad_token_is_refused() -> None:
    store = InMemoryStore()
    for record in (_record("p_b", 1), _record("p_a", 2), _record("p_a", 1), _record("p_c", 1, "other")):
        store.decisions[record.decision_id] = record
    log = InMemoryDecisionLog(store)
    first, token = log.page("example-mrt", limit=2)
    assert [(r.participant_id, r.study_day) for r in first] == [("p_a", 1), ("p_a", 2)] and token
    rest, end = log.page("example-mrt", limit=2, next_token=token)
    assert [(r.participant_id, r.study_day) for r in rest] == [("p_b", 1)] and end is None
    assert log.page("example-mrt", limit=3) == (log.all("example-mrt"), None)
    assert log.page("none-such", limit=3) == ([], None)
    with pytest.raises(ValidationFailed):
        log.page("example-mrt", limit=2, next_token="x")
