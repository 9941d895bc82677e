"""The daily study sweep inside the timers function's 30 seconds (usecases/studies.sweep_study): given
the time left (an injected clock), it stops before the deadline, hands its cursor to a one-shot
continuation, and the chain of runs reaches every participant exactly once the same day; a second
chain the same day writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.sweeps import StudySweepCursor, StudySweepRequest
from promptpipe.usecases import studies
from promptpipe.usecases.participants import delete_participant, update_participant
from promptpipe.usecases.schedules import reconcile_all
from promptpipe.usecases.studies import STUDY_SWEEP_CONTINUE_AFTER, SweepReport, sweep_study, with_study
from tests.support import MemoryHarness, memory_harness
from tests.unit.test_study_engine import study

START = datetime(2026, 3, 2, 12, 0)  # the harness's clock


@dataclass
class Budget:
    """The Lambda context's remaining time as a clock: each reading finds ``step`` less left (each
    participant's sweep takes about that long)."""

    left: timedelta = timedelta(seconds=30)
    step: timedelta = timedelta(seconds=7)
    readings: int = 0

    def __call__(self) -> timedelta:
        self.readings += 1
        return self.left - self.step * self.readings


def _paused_participants(h: MemoryHarness, n: int) -> list[str]:
    """``n`` participants paused at once: no prompt fires for them, the sweep writes each day's row."""
    ids = []
    for i in range(n):
        p = h.enroll(phone=f"+1415555{i:04d}", name=f"P{i}")
        update_participant(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.PAUSED))
        ids.append(p.id)
    return ids


def _continuation(h: MemoryHarness) -> tuple[datetime, StudySweepRequest] | None:
    if not h.timers.sweeps:
        return None
    name, (at, request) = next(iter(h.timers.sweeps.items()))
    del h.timers.sweeps[name]  # a one-shot: deleted once it ran
    return at, request


def _chain(h: MemoryHarness, budget: type[Budget] | None = Budget) -> list[SweepReport]:
    """The daily run, then each continuation when it comes due, until one reaches the end."""
    reports = [sweep_study(h.app, time_left=budget() if budget else None)]
    while (due := _continuation(h)) is not None:
        at, request = due
        assert at == h.clock.now() + STUDY_SWEEP_CONTINUE_AFTER
        h.clock.set(at)
        reports.append(sweep_study(h.app, time_left=budget() if budget else None, cursor=request.cursor))
    return reports


def _rows(h: MemoryHarness, pid: str) -> list[int]:
    assert h.app.decisions is not None
    return [r.study_day for r in h.app.decisions.for_participant(pid)]


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(studies, "_PAGE", 4)  # the cursor crosses pages


@pytest.mark.usefixtures("small_pages")
def test_a_budget_that_runs_out_continues_from_the_cursor_and_reaches_everyone_once() -> None:
    h = memory_harness()
    with_study(h.app, study(0.0))
    ids = _paused_participants(h, 10)
    h.clock.advance(timedelta(days=3))  # study days 1-3 are past for everyone

    reports = _chain(h)

    # three participants a run (the fourth reading finds under the reserve), so four runs
    assert [r.participants for r in reports] == [3, 3, 3, 1]
    assert [r.cursor is not None for r in reports] == [True, True, True, False]
    assert sum(r.participants for r in reports) == len(ids)  # nobody twice
    assert all(_rows(h, pid) == [1, 2, 3] for pid in ids)  # everyone reached
    assert sum(r.unavailable_rows for r in reports) == 3 * len(ids)

    again = _chain(h)  # a second daily run the same day: the same chain, nothing written
    assert sum(r.unavailable_rows for r in again) == 0
    assert all(_rows(h, pid) == [1, 2, 3] for pid in ids)


def test_a_run_with_time_to_spare_reaches_the_end_without_a_continuation() -> None:
    h = memory_harness()
    with_study(h.app, study(0.0))
    ids = _paused_participants(h, 5)
    h.clock.advance(timedelta(days=2))
    [report] = _chain(h, budget=lambda: Budget(step=timedelta(0)))  # type: ignore[arg-type,return-value]
    assert report.participants == len(ids) and report.cursor is None and not h.timers.sweeps


def test_a_budget_too_short_for_anyone_still_sweeps_one_participant_a_run() -> None:
    h = memory_harness()
    with_study(h.app, study(0.0))
    ids = _paused_participants(h, 3)
    h.clock.advance(timedelta(days=2))
    reports = _chain(h, budget=lambda: Budget(left=timedelta(seconds=1)))  # type: ignore[arg-type,return-value]
    assert [r.participants for r in reports] == [1, 1, 1]
    assert all(_rows(h, pid) == [1, 2] for pid in ids)


@pytest.mark.usefixtures("small_pages")
def test_the_last_swept_deleted_before_the_continuation_resumes_with_its_whole_page() -> None:
    h = memory_harness()
    with_study(h.app, study(0.0))
    ids = _paused_participants(h, 6)
    h.clock.advance(timedelta(days=2))
    first = sweep_study(h.app, time_left=Budget())
    assert first.cursor is not None and first.cursor.after is not None
    delete_participant(h.app, first.cursor.after)
    due = _continuation(h)
    assert due is not None
    h.clock.set(due[0])
    rest = sweep_study(h.app, cursor=due[1].cursor)  # no deadline: to the end
    assert rest.cursor is None
    assert all(_rows(h, pid) == [1, 2] for pid in ids if pid != first.cursor.after)
    assert rest.unavailable_rows == 2 * (len(ids) - first.participants)  # the page again wrote nothing twice


def test_the_continuation_is_named_from_its_cursor_and_reconcile_leaves_it() -> None:
    h = memory_harness()
    cursor = StudySweepCursor(page="4", after="p_abc")
    name = studies.continue_study_sweep(h.app, cursor)
    assert studies.continue_study_sweep(h.app, cursor) == name  # a retried run: replaced, not a second chain
    assert name.startswith("sweep-study-") and len(h.timers.sweeps) == 1
    at, request = h.timers.sweeps[name]
    assert at == h.clock.now() + STUDY_SWEEP_CONTINUE_AFTER
    assert request == StudySweepRequest(sweep="study", cursor=cursor)
    assert h.timers.list_names("") == [name]  # in the participants' group, as deployed
    reconcile_all(h.app)  # an operator's reconcile of every participant: not one of theirs
    assert name in h.timers.sweeps and name not in h.timers.cancelled


def test_the_continuations_input_is_a_study_sweep_request() -> None:
    from promptpipe.adapters.eventbridge_timers import schedule_input

    request = StudySweepRequest(sweep="study", cursor=StudySweepCursor(page=None, after="p_1"))
    assert StudySweepRequest.model_validate_json(schedule_input(request)) == request
