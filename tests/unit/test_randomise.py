"""The server's draw at a decision point (rules/randomise.py): reproducible, with the declared shares."""

from collections import Counter

import pytest

from promptpipe.models.study import Arm, DecisionPoint, Stratum
from promptpipe.rules.randomise import decision_rng, draw, probabilities

POINT = DecisionPoint(
    name="daily_prompt",
    arms=(
        Arm(name="no_prompt", probability=0.3),
        Arm(name="framing_a", probability=0.35, framing="benefit"),
        Arm(name="framing_b", probability=0.35, framing="next step"),
    ),
    strata=(
        Stratum(field="gender", value="Female", probabilities={"no_prompt": 0.5, "framing_a": 0.5, "framing_b": 0.0}),
    ),
)


def test_the_same_decision_draws_the_same_arm_every_time() -> None:
    first = [draw("s", f"p_{i}", POINT, day)[0].name for i in range(50) for day in range(1, 8)]
    again = [draw("s", f"p_{i}", POINT, day)[0].name for i in range(50) for day in range(1, 8)]
    assert first == again
    assert decision_rng("s", "p", "d", 1).random() == decision_rng("s", "p", "d", 1).random()


def test_each_part_of_the_seed_changes_the_sequence() -> None:
    base = decision_rng("s", "p", "d", 1).random()
    assert (
        len(
            {
                base,
                *(
                    decision_rng(*args).random()
                    for args in (("t", "p", "d", 1), ("s", "q", "d", 1), ("s", "p", "e", 1), ("s", "p", "d", 2))
                ),
            }
        )
        == 5
    )


def test_over_many_draws_each_arm_gets_its_share() -> None:
    n = 20_000
    counts = Counter(draw("study", f"p_{i % 400}", POINT, 1 + i // 400)[0].name for i in range(n))
    for arm in POINT.arms:
        # 4 standard errors of a proportion near 0.35 over 20,000 draws is 1.35 points
        assert abs(counts[arm.name] / n - arm.probability) < 0.0135, counts


def test_a_stratum_draws_with_its_own_probabilities_and_never_an_arm_it_gives_zero() -> None:
    profile = {"gender": " female "}
    assert probabilities(POINT, profile) == {"no_prompt": 0.5, "framing_a": 0.5, "framing_b": 0.0}
    arms = Counter(draw("s", f"p_{i}", POINT, 1, profile)[0].name for i in range(4000))
    assert arms["framing_b"] == 0
    assert abs(arms["no_prompt"] / 4000 - 0.5) < 0.04
    arm, chances = draw("s", "p_1", POINT, 1, {"gender": "male"})
    assert chances == {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}
    assert arm.name in chances


@pytest.mark.parametrize("profile", [None, {}, {"gender": None}])
def test_no_profile_uses_the_decision_points_own_probabilities(profile: dict | None) -> None:
    assert probabilities(POINT, profile) == {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}
