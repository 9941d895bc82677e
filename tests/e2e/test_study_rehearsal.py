"""A study lived on the local stack (moto, the scheduler pump, the real handlers, the offline coach):
every participant-day has its decision row, the same seed draws the same arms, a redelivered
daily-prompt event makes no second row, and ``promptpipe simulate --study`` prints the shares."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import pytest

from promptpipe.cli.commands import main
from promptpipe.errors import ValidationFailed
from promptpipe.local.environment import SCHEDULED_PROMPT_ARN
from promptpipe.local.rehearsal_checks import Expected, check_export
from promptpipe.local.rehearsal_export import finish_rehearsal
from promptpipe.local.study_rehearsal import ReplyModel, StudyRun, parse_effects, run_study_rehearsal
from promptpipe.models.decision import DecisionDelivery
from promptpipe.usecases.studies import parse_study

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


def rehearse(seed: int, stack: Literal["moto", "memory"]) -> StudyRun:
    study = parse_study(EXAMPLE.read_text())
    return run_study_rehearsal(
        study, 4, 2, seed=seed, replies=ReplyModel(effects={"framing_a": 0.2}), stop_rate=0, stack=stack
    )


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["moto", "memory"])
def test_every_participant_day_has_one_row_and_the_same_seed_draws_the_same_arms(
    stack: Literal["moto", "memory"],
) -> None:
    run = rehearse(3, stack)
    try:
        rows = run.decisions
        first = [(r.participant_id, r.study_day, r.arm, r.available) for r in rows]
        # one row per participant and study day, none missing: the enrolment day is day 1, two more
        # UTC days are lived and swept (a participant east of UTC may already be on day 4)
        assert max(Counter((r.participant_id, r.study_day) for r in rows).values()) == 1
        days: dict[str, list[int]] = {}
        for row in rows:
            days.setdefault(row.participant_id, []).append(row.study_day)
        assert len(days) == 4
        assert all(found == list(range(1, len(found) + 1)) and len(found) in (3, 4) for found in days.values())
        for row in rows:
            assert abs(sum(row.probabilities.values()) - 1) < 1e-9
            if row.available and row.arm == "no_prompt":
                assert row.delivery is DecisionDelivery.NOT_SENT and row.sent_at is None
            elif row.available:
                assert row.delivery is DecisionDelivery.SENT and row.sent_at is not None
        # the check-in's answers filled the outcomes in; the rest closed as none by the sweep
        assert {r.outcome for r in rows if r.available and r.study_day < 3} <= {"done", "replied", "none"}
        assert any(r.outcome is not None for r in rows)

        # a redelivered daily-prompt event (the scheduler's retry: the same input) makes no second row
        dispatched: list[dict[str, Any]] = []
        handler = run.env._targets[SCHEDULED_PROMPT_ARN]

        def recording(event: dict[str, Any], ctx: Any) -> Any:
            dispatched.append(event)
            return handler(event, ctx)

        run.env._targets[SCHEDULED_PROMPT_ARN] = recording
        run.env.advance(timedelta(days=1))
        assert dispatched
        run.env._targets[SCHEDULED_PROMPT_ARN] = handler
        before = len(run.decisions)
        arms = [(r.decision_id, r.arm) for r in run.decisions]
        for event in list(dispatched):
            run.env._dispatch(SCHEDULED_PROMPT_ARN, event)
        assert len(run.decisions) == before
        assert [(r.decision_id, r.arm) for r in run.decisions] == arms  # the same arm, recorded once
    finally:
        run.close()
    again = rehearse(3, stack)
    try:
        assert [(r.participant_id, r.study_day, r.arm, r.available) for r in again.decisions] == first
    finally:
        again.close()


@pytest.mark.slow
def test_simulate_study_prints_the_shares(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--study", str(EXAMPLE), "--participants", "2", "--days", "1", "--seed", "5", "--quiet"])
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("study example-mrt: participants=2 days=1")
    count, available = out[1].split("; ")[:2]
    # two participants, study days 1 and 2 each (one east of UTC may be on day 3 already)
    assert count.split()[0] == "decisions" and int(count.split()[1]) in (4, 5, 6)
    assert available.startswith("available ")
    assert "no_prompt" in out[2] and "framing_a" in out[2] and "(p=0.35)" in out[2]


def test_effects_are_read_arm_by_arm() -> None:
    assert parse_effects("framing_a=0.1, framing_b=-0.05,") == {"framing_a": 0.1, "framing_b": -0.05}
    with pytest.raises(ValidationFailed, match="ARM=NUMBER"):
        parse_effects("framing_a")
    with pytest.raises(ValidationFailed, match="ARM=NUMBER"):
        parse_effects("framing_a=lots")
    model = ReplyModel(done_rate=0.3, reply_rate=0.5, effects={"a": 0.9})
    assert model.done_probability("a") == 1.0 and model.done_probability(None) == 0.3


@pytest.mark.slow
def test_the_done_when_checks_pass_on_a_small_rehearsals_export(tmp_path: Path) -> None:
    """The checks ``scripts/bench/study_rehearsal.py --check`` runs at 200 × 28, here at 12 × 3: the
    structural ones must pass at any size; the shares and the effects are computed (at this size
    their margins are too wide to be asserted)."""
    study = parse_study(EXAMPLE.read_text())
    effects = {"framing_a": 0.1, "framing_b": 0.05}
    run = run_study_rehearsal(study, 12, 3, seed=9, replies=ReplyModel(effects=effects), stop_rate=0.05)
    try:
        finish_rehearsal(run.env, run.study, run.decisions, tmp_path / "export")
        expected = Expected(12, 3, study.duration_days, effects, phones=run.phones, names=run.names)
    finally:
        run.close()
    checks = {check.name: check for check in check_export(tmp_path / "export", study, expected)}
    for name in ("one row per participant-day", "p_<arm> sum to 1", "no phone number, name or email"):
        assert checks[name].passed, checks[name].line()
    assert checks["every column in data_dictionary.json"].passed
    assert "no_prompt" in checks["arm shares within ±2.5 pp"].detail
    assert [name for name in checks if "planted effect" in name] == [
        "daily_prompt: framing_a vs no_prompt within 2 SE of the planted effect",
        "daily_prompt: framing_b vs no_prompt within 2 SE of the planted effect",
    ]
    assert len(set(run.names)) > 1 and all(phone.startswith("+1416555") for phone in run.phones)
