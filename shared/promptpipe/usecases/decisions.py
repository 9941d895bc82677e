"""A study's decision records, read and filled in (docs/studies.md#the-decision-record): what the
turns and the API do with the records once a decision is made, without the study engine.

The enrollment API pages the records and a turn fills in a proximal outcome; neither needs the study
definition or the randomisation (``usecases.studies``), so they do not load them (cold start:
docs/benchmarks.md, section 2).
"""

from __future__ import annotations

from datetime import datetime

from promptpipe.models.decision import DecisionRecord, ProximalOutcomeValue
from promptpipe.usecases.context import AppContext


def record_outcome(app: AppContext, decision: str, value: ProximalOutcomeValue, at: datetime) -> None:
    """Fill in a decision's proximal outcome, once (a later answer does not overwrite it)."""
    log = app.decisions
    record = log.get(decision)
    if record is None or record.outcome is not None:
        return
    log.update(record.model_copy(update={"outcome": value, "outcome_at": at}))


def decision_page(
    app: AppContext, study_id: str, *, limit: int, next_token: str | None = None
) -> tuple[list[DecisionRecord], str | None]:
    """A page of a study's decision records, for the API (``GET /conversation/studies/{id}/decisions``);
    a study with none on record (or none by that id) has an empty first page."""
    return app.decisions.page(study_id, limit=limit, next_token=next_token)
