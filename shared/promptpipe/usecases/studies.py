"""A study's record outside the events that decide (docs/studies.md): the definition read and
checked, the check-in's answer read, and the daily sweep (a decision's record filled in and paged
without the study engine: ``usecases/decisions.py``).

The daily sweep (``sweep_study``) is what makes every study day have its row: a participant paused
or opted out has no live schedule, so no daily prompt fires for them; the sweep records each of
their missing days as not available (with the reason), in a commit of their state, as the event
``study-sweep-{participant}-{day}``. It also closes the outcome window of each available decision
whose check-in was not answered in time (``none``), and ends the study for a participant past its
duration whose prompt no longer fires (a paused participant: recorded, nothing sent).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from promptpipe.errors import ParticipantNotFound, ValidationFailed
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.study import decide, end_study, in_study, read_check_in_answer, study_day, study_over
from promptpipe.models.decision import ProximalOutcomeValue, UnavailableReason
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.study import DecisionPoint, StudyDefinition
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)


# --- the definition -----------------------------------------------------------------------------
def parse_study(text: str) -> StudyDefinition:
    """A study definition from its JSON, validated; ``ValidationFailed`` names what is wrong."""
    try:
        return StudyDefinition.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ValidationFailed(f"not JSON: {exc}", field="study") from exc
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'study'}: {e['msg']}" for e in exc.errors())
        raise ValidationFailed(f"invalid study definition: {problems}", field="study") from exc


def load_study(directory: Path, study_id: str) -> StudyDefinition:
    """The bundled study ``<directory>/<study_id>.json``; its id must be its file's name."""
    path = directory / f"{study_id}.json"
    if not path.is_file():
        raise ValidationFailed(f"no study {study_id!r} in {directory}", field="study_id")
    study = parse_study(path.read_text(encoding="utf-8"))
    if study.id != study_id:
        raise ValidationFailed(f"{path.name} declares the study {study.id!r}", field="study_id")
    return study


# --- what is learnt after the decision (its record filled in: usecases/decisions.py) ------------------
def answer_check_in(
    app: AppContext, session: ConversationSession, text: str
) -> tuple[str, ProximalOutcomeValue] | None:
    """Inside a turn: the message's reading as the answer to the open check-in, if it is one."""
    study = in_study(app.deps.study, session.participant)
    return read_check_in_answer(study, session, text) if study is not None else None


# --- the daily sweep ------------------------------------------------------------------------------
@dataclass
class SweepReport:
    participants: int = 0
    unavailable_rows: int = 0
    outcomes_closed: int = 0
    ended: int = 0
    skipped_test: int = 0
    errors: list[str] = field(default_factory=list)


def _participants(app: AppContext) -> list[ConversationParticipant]:
    found: list[ConversationParticipant] = []
    token: str | None = None
    while True:
        page, token = app.repo.list(limit=100, next_token=token)
        found += page
        if token is None:
            return found


def sweep_study(app: AppContext) -> SweepReport:
    """Every enrolled participant: record their missing study days, close outcome windows, end the
    study past its duration. Idempotent: a second sweep the same day finds nothing to do."""
    report = SweepReport()
    study = app.deps.study
    if study is None:
        return report
    now = app.clock.now()
    for participant in _participants(app):
        if participant.test_participant:
            report.skipped_test += 1
            continue
        if participant.status is ParticipantStatus.WITHDRAWN:
            continue
        report.participants += 1
        try:
            _sweep_one(app, study, participant, now, report)
        except ParticipantNotFound:
            continue
    return report


def _sweep_one(
    app: AppContext, study: StudyDefinition, participant: ConversationParticipant, now: datetime, report: SweepReport
) -> None:
    log = app.decisions
    records = log.for_participant(participant.id)
    window = timedelta(hours=study.proximal_outcome.window_hours)
    for record in records:
        if record.available and record.outcome is None and record.decided_at + window <= now:
            log.update(record.model_copy(update={"outcome": ProximalOutcomeValue.NONE, "outcome_at": now}))
            report.outcomes_closed += 1
    today = study_day(participant, now)
    last_day = min(today - 1, study.duration_days)  # today's row is the daily prompt's to write
    have = {(r.decision_point, r.study_day) for r in records}
    missing = [
        (point, day)
        for point in study.decision_points
        for day in range(1, last_day + 1)
        if (point.name, day) not in have
    ]
    over = study_over(study, participant, now)
    if not missing and not over:
        return
    ended: list[bool] = []

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        # Active but no prompt fired that day (intake not finished); otherwise the availability rule says why.
        reason = UnavailableReason.NOT_SCHEDULED if session.participant.is_active else None
        for point, day in missing:
            session.apply("study_missing_day", _decide_day(study, point, day, reason))
        if over:
            ended.append(end_study(app.deps, study, session))

    outcome = run_once(app, participant.id, f"study-sweep-{participant.id}-{today}", work)
    if not outcome.replayed:
        report.unavailable_rows += len(outcome.decisions)
        report.ended += int(bool(ended and ended[0]))
    apply_effects(app, outcome)  # the closing message, the schedules stopped


def _decide_day(
    study: StudyDefinition, point: DecisionPoint, day: int, reason: UnavailableReason | None
) -> Callable[[OpContext], object]:
    return lambda op: decide(op, study, point, day=day, reason=reason)


def with_study(app: AppContext, study: StudyDefinition | None) -> AppContext:
    """The context with ``study`` active (tests, the local rehearsal)."""
    app.deps.study = study
    return app
