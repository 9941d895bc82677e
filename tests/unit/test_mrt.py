"""The weighted and centred least-squares estimate of rules/mrt.py: a case small enough to compute by
hand, planted effects recovered across seeds, a no-effect case, and weights that undo a
randomisation probability that varied with a covariate of the outcome."""

from __future__ import annotations

import random

import pytest

from promptpipe.rules.mrt import Z_95, NotEstimable, Observation, invert, proximal_effects

ARMS = ("no_prompt", "framing_a", "framing_b")
PROBABILITIES = {"no_prompt": 0.3, "framing_a": 0.35, "framing_b": 0.35}


def _two_arm(cluster: str, arm: str, outcome: float) -> Observation:
    return Observation(cluster, arm, {"off": 0.5, "on": 0.5}, outcome)


def test_a_small_case_computed_by_hand() -> None:
    # P1: on->1, off->0; P2: on->1, off->1. Means: on 1, off 0.5 -> b = 0.5, a = 0.75.
    # x = ±0.5 (centred by q = 0.5), residuals: P1 (0, -0.5), P2 (0, +0.5); scores P1 +0.25, P2 -0.25;
    # sum x^2 = 1; Var = 2/(2-1) * (0.25^2 + 0.25^2) / 1^2 = 0.25 -> SE 0.5.
    data = [_two_arm("p1", "on", 1), _two_arm("p1", "off", 0), _two_arm("p2", "on", 1), _two_arm("p2", "off", 1)]
    (effect,) = proximal_effects(data, ("off", "on"), "off")
    assert effect.arm == "on" and effect.reference == "off" and effect.decisions == 2
    assert effect.estimate == pytest.approx(0.5)
    assert effect.standard_error == pytest.approx(0.5)
    assert (effect.low, effect.high) == pytest.approx((0.5 - Z_95 * 0.5, 0.5 + Z_95 * 0.5))


def test_with_constant_probabilities_the_estimate_is_the_difference_in_means() -> None:
    rng = random.Random(3)
    data = []
    for person in range(12):
        for _ in range(9):
            arm = rng.choices(ARMS, weights=[0.3, 0.35, 0.35])[0]
            data.append(Observation(f"p{person}", arm, PROBABILITIES, float(rng.random() < 0.5)))

    def mean(arm: str) -> float:
        ys = [o.outcome for o in data if o.arm == arm]
        return sum(ys) / len(ys)

    effects = proximal_effects(data, ARMS, "no_prompt", reference_probabilities=PROBABILITIES)
    assert [e.arm for e in effects] == ["framing_a", "framing_b"]
    for effect in effects:
        assert effect.estimate == pytest.approx(mean(effect.arm) - mean("no_prompt"))


def _study(seed: int, effects: dict[str, float], participants: int = 60, days: int = 28) -> list[Observation]:
    """Participants with their own base rate (so decisions of one person are correlated), a planted
    risk difference per arm."""
    rng = random.Random(seed)
    data = []
    for person in range(participants):
        base = rng.uniform(0.15, 0.45)
        for _ in range(days):
            arm = rng.choices(ARMS, weights=[PROBABILITIES[a] for a in ARMS])[0]
            data.append(Observation(f"p{person}", arm, PROBABILITIES, float(rng.random() < base + effects[arm])))
    return data


def test_planted_effects_lie_within_two_standard_errors_across_seeds() -> None:
    planted = {"no_prompt": 0.0, "framing_a": 0.1, "framing_b": 0.2}
    within, checks = 0, 0
    for seed in range(30):
        for effect in proximal_effects(_study(seed, planted), ARMS, "no_prompt"):
            checks += 1
            assert abs(effect.estimate - planted[effect.arm]) < 4 * effect.standard_error  # never far off
            within += abs(effect.estimate - planted[effect.arm]) <= 2 * effect.standard_error
    # 2 SE is a 95 % interval: about 57 of 60 checks land inside; a biased estimate or an SE too
    # small by a third would leave far fewer.
    assert within >= 0.9 * checks


def test_no_effect_intervals_cover_zero() -> None:
    none = {arm: 0.0 for arm in ARMS}
    covered, checks = 0, 0
    for seed in range(30):
        for effect in proximal_effects(_study(100 + seed, none), ARMS, "no_prompt"):
            checks += 1
            covered += effect.low <= 0.0 <= effect.high
    assert covered >= 0.9 * checks


def test_weights_undo_probabilities_that_vary_with_a_covariate() -> None:
    # Stratum "busy" (base 0.1) gets the prompt with 0.8, stratum "free" (base 0.6) with 0.2: a plain
    # difference in means mixes the strata; the weighted estimate recovers the planted +0.15.
    rng = random.Random(7)
    data = []
    for person in range(300):
        busy = person % 2 == 0
        probabilities = {"off": 0.2, "on": 0.8} if busy else {"off": 0.8, "on": 0.2}
        base = 0.1 if busy else 0.6
        for _ in range(20):
            arm = "on" if rng.random() < probabilities["on"] else "off"
            effect = 0.15 if arm == "on" else 0.0
            data.append(Observation(f"p{person}", arm, probabilities, float(rng.random() < base + effect)))
    (weighted,) = proximal_effects(data, ("off", "on"), "off")
    on = [o.outcome for o in data if o.arm == "on"]
    off = [o.outcome for o in data if o.arm == "off"]
    naive = sum(on) / len(on) - sum(off) / len(off)
    assert abs(naive - 0.15) > 0.2  # the naive contrast is badly biased here
    assert abs(weighted.estimate - 0.15) <= 2 * weighted.standard_error


def test_what_cannot_be_estimated_says_why() -> None:
    one_person = [_two_arm("p1", "on", 1), _two_arm("p1", "off", 0)]
    with pytest.raises(NotEstimable, match="two participants"):
        proximal_effects(one_person, ("off", "on"), "off")
    with pytest.raises(NotEstimable, match="never drawn"):
        proximal_effects([_two_arm("p1", "on", 1), _two_arm("p2", "on", 0)], ("off", "on"), "off")
    with pytest.raises(NotEstimable, match="no available decision"):
        proximal_effects([], ("off", "on"), "off")
    with pytest.raises(NotEstimable, match="reference arm"):
        proximal_effects(one_person, ("off", "on"), "none")
    with pytest.raises(NotEstimable, match="singular"):
        invert([[1.0, 2.0], [2.0, 4.0]])


def test_invert_returns_the_inverse() -> None:
    matrix = [[4.0, 7.0, 2.0], [3.0, 6.0, 1.0], [2.0, 5.0, 3.0]]
    inverse = invert(matrix)
    for r in range(3):
        for c in range(3):
            assert sum(matrix[r][k] * inverse[k][c] for k in range(3)) == pytest.approx(1.0 if r == c else 0.0)
