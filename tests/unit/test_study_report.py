"""The study report (coordinator/study_report.py): shares among available decisions, the share
available, and what it says when an effect cannot be estimated."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptpipe.coordinator.study_report import outcome_value, report_lines, study_report
from promptpipe.models.decision import DecisionRecord, ProximalOutcomeValue, UnavailableReason
from promptpipe.models.study import StudyDefinition

STUDY = StudyDefinition.model_validate_json(Path("prompts/studies/example-mrt.json").read_text(encoding="utf-8"))
PROBABILITIES = {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}
AT = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def _record(pid: str, day: int, arm: str | None, outcome: ProximalOutcomeValue | None) -> DecisionRecord:
    return DecisionRecord(
        decision_id=f"{pid}#daily_prompt#{day}",
        study_id=STUDY.id,
        participant_id=pid,
        decision_point="daily_prompt",
        study_day=day,
        decided_at=AT,
        decided_at_local=AT,
        available=arm is not None,
        unavailable_reason=None if arm else UnavailableReason.ON_HOLD,
        probabilities=PROBABILITIES,
        arm=arm,
        outcome=outcome,
    )


def test_shares_are_of_available_decisions_and_unknown_outcomes_are_left_out() -> None:
    done, none = ProximalOutcomeValue.DONE, ProximalOutcomeValue.NONE
    records = [
        _record("p1", 1, "no_prompt", none),
        _record("p1", 2, "framing_a", done),
        _record("p1", 3, None, None),
        _record("p2", 1, "framing_b", done),
        _record("p2", 2, "framing_a", None),  # window still open
        _record("p2", 3, "no_prompt", ProximalOutcomeValue.REPLIED),
        _record("p3", 1, "no_prompt", done),  # another study's: ignored
    ]
    records[-1] = records[-1].model_copy(update={"study_id": "other"})
    [point] = study_report(STUDY, records).points
    assert (point.decisions, point.available, point.with_outcome) == (6, 5, 4)
    assert point.available_share == pytest.approx(5 / 6)
    assert [(a.arm, a.drawn, a.share) for a in point.arms] == [
        ("no_prompt", 2, 0.4),
        ("framing_a", 2, 0.4),
        ("framing_b", 1, 0.2),
    ]
    [a, b] = point.effects
    assert a.estimate == pytest.approx(1.0) and b.estimate == pytest.approx(1.0)  # done vs 0/2 done
    lines = report_lines(study_report(STUDY, records))
    assert lines[1] == "decision point daily_prompt: 6 decisions, available 5 (83.3 %), outcome known for 4"
    assert "no_prompt 40.0 % (declared 30.0 %)" in lines[2]
    assert outcome_value(records[5]) == 0.0 and outcome_value(records[4]) is None


def test_a_report_says_why_there_is_no_effect() -> None:
    lines = report_lines(study_report(STUDY, [_record("p1", 1, "no_prompt", ProximalOutcomeValue.DONE)]))
    assert lines[-1].startswith("  effects: not estimable (arm(s) never drawn: framing_a, framing_b")
    empty = report_lines(study_report(STUDY, []))
    assert "0 decisions, available 0 (—)" in empty[1] and "no_prompt — (declared" in empty[2]
    no_reference = STUDY.model_copy(
        update={
            "decision_points": (
                STUDY.decision_points[0].model_copy(
                    update={"arms": tuple(a.model_copy(update={"framing": "x"}) for a in STUDY.decision_points[0].arms)}
                ),
            )
        }
    )
    assert (
        report_lines(study_report(no_reference, []))[-1]
        == "  effects: not estimable (no no-prompt arm to compare with)"
    )
