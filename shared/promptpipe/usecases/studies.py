"""A study's record outside the events that decide (docs/studies.md): the definition read and
checked, the check-in's answer read, and the daily sweep (a decision's record filled in and paged
without the study engine: ``usecases/decisions.py``).

The daily sweep (``sweep_study``) is what makes every study day have its row: a participant paused
or opted out has no live schedule, so no daily prompt fires for them; the sweep records each of
their missing days as not available (with the reason), in a commit of their state, as the event
``study-sweep-{participant}-{day}``. It also closes the outcome window of each available decision
whose check-in was not answered in time (``none``), and ends the study for a participant past its
duration whose prompt no longer fires (a paused participant: recorded, nothing sent).

It runs inside the timers function's 30 seconds. Given the time left (``time_left``: the Lambda
context's), it stops before the deadline (``STUDY_SWEEP_RESERVE`` left) and hands on a cursor — the
list's page and the last participant swept — in a one-shot schedule of the timers function a minute
later (``Timers.schedule_sweep``), which resumes after that participant: every participant is reached
the same day, whatever the study's size, and each run makes progress (at least one participant).
"""

from __future__ import annotations

import hashlib
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
from promptpipe.flow.timer_names import SWEEP_SCHEDULE_PREFIX
from promptpipe.models.decision import ProximalOutcomeValue, UnavailableReason
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.study import DecisionPoint, StudyDefinition
from promptpipe.models.sweeps import StudySweepCursor, StudySweepRequest
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
# The time a run keeps when it stops: one participant's sweep (a decisions Query, a commit, a closing
# message and its schedules stopped, each retried) and the continuation's CreateSchedule fit in it.
STUDY_SWEEP_RESERVE = timedelta(seconds=10)
STUDY_SWEEP_CONTINUE_AFTER = timedelta(minutes=1)
_PAGE = 100


@dataclass
class SweepReport:
    participants: int = 0
    unavailable_rows: int = 0
    outcomes_closed: int = 0
    ended: int = 0
    skipped_test: int = 0
    errors: list[str] = field(default_factory=list)
    # Where the run stopped before its deadline (its continuation's input); None: it reached the end.
    cursor: StudySweepCursor | None = None


def sweep_study(
    app: AppContext,
    *,
    time_left: Callable[[], timedelta] | None = None,
    cursor: StudySweepCursor | None = None,
) -> SweepReport:
    """Every enrolled participant (from ``cursor`` on): record their missing study days, close outcome
    windows, end the study past its duration. Idempotent: a second sweep the same day finds nothing
    to do. With ``time_left``, stops while ``STUDY_SWEEP_RESERVE`` is left and schedules its
    continuation (``report.cursor``)."""
    report = SweepReport()
    study = app.deps.study
    if study is None:
        return report
    now = app.clock.now()
    token = cursor.page if cursor else None
    after = cursor.after if cursor else None
    swept_one = False
    while True:
        page, next_token = app.repo.list(limit=_PAGE, next_token=token)
        ids = [p.id for p in page]
        # Resume after the last one swept; gone from the page (deleted meanwhile): the whole page
        # again, which writes nothing twice.
        start = ids.index(after) + 1 if after in ids else 0
        for participant in page[start:]:
            if swept_one and time_left is not None and time_left() < STUDY_SWEEP_RESERVE:
                report.cursor = StudySweepCursor(page=token, after=after)
                continue_study_sweep(app, report.cursor)
                return report
            swept_one = True
            after = participant.id
            _sweep_participant(app, study, participant, now, report)
        if next_token is None:
            return report
        token, after = next_token, None


def continue_study_sweep(app: AppContext, cursor: StudySweepCursor) -> str:
    """The continuation: a one-shot of the timers function with the cursor, named from it (a retried
    run that stopped at the same place replaces it instead of starting a second chain)."""
    digest = hashlib.sha256(cursor.model_dump_json().encode()).hexdigest()[:24]
    name = f"{SWEEP_SCHEDULE_PREFIX}study-{digest}"
    at = app.clock.now() + STUDY_SWEEP_CONTINUE_AFTER
    logger.info("study sweep continues", extra={"schedule": name, "at": at.isoformat()})
    return app.timers.schedule_sweep(name=name, at=at, payload=StudySweepRequest(sweep="study", cursor=cursor))


def _sweep_participant(
    app: AppContext, study: StudyDefinition, participant: ConversationParticipant, now: datetime, report: SweepReport
) -> None:
    if participant.test_participant:
        report.skipped_test += 1
        return
    if participant.status is ParticipantStatus.WITHDRAWN:
        return
    report.participants += 1
    try:
        _sweep_one(app, study, participant, now, report)
    except ParticipantNotFound:
        return


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
