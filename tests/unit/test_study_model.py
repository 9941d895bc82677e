"""The study definition's validation (docs/studies.md)."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from promptpipe.models.decision import DecisionRecord, decision_id
from promptpipe.models.study import StudyDefinition

EXAMPLE = Path(__file__).resolve().parents[2] / "prompts" / "studies" / "example-mrt.json"


def _example() -> dict:
    return json.loads(EXAMPLE.read_text())


def test_the_example_study_validates_with_its_three_arms() -> None:
    study = StudyDefinition.model_validate(_example())
    (point,) = study.decision_points
    assert [(arm.name, arm.probability) for arm in point.arms] == [
        ("no_prompt", 0.3),
        ("framing_a", 0.35),
        ("framing_b", 0.35),
    ]
    assert [arm.framing is None for arm in point.arms] == [True, False, False]  # a no-prompt arm


def test_probabilities_that_do_not_sum_to_one_are_refused() -> None:
    data = _example()
    data["decision_points"][0]["arms"][0]["probability"] = 0.4
    with pytest.raises(ValidationError, match="sum to"):
        StudyDefinition.model_validate(data)


def test_repeated_arm_names_are_refused() -> None:
    data = _example()
    data["decision_points"][0]["arms"][1]["name"] = "no_prompt"
    with pytest.raises(ValidationError, match="repeat"):
        StudyDefinition.model_validate(data)


def test_a_stratum_must_name_every_arm() -> None:
    data = _example()
    data["decision_points"][0]["strata"] = [{"field": "group", "value": "x", "probabilities": {"no_prompt": 1.0}}]
    with pytest.raises(ValidationError, match="every arm"):
        StudyDefinition.model_validate(data)


def test_a_record_gives_the_drawn_arms_probability() -> None:
    record = DecisionRecord.model_validate(
        {
            "decision_id": decision_id("p1", "daily_prompt", 3),
            "study_id": "example-mrt",
            "participant_id": "p1",
            "decision_point": "daily_prompt",
            "study_day": 3,
            "decided_at": "2026-01-03T14:00:00Z",
            "decided_at_local": "2026-01-03T09:00:00-05:00",
            "available": True,
            "probabilities": {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35},
            "arm": "framing_b",
        }
    )
    assert record.decision_id == "p1#daily_prompt#3"
    assert record.probability == 0.35
