"""The server's randomisation at a study's decision point (docs/studies.md#declaring-a-study).

Pure: the draw is a function of the study, the participant, the decision point and the study day,
so a redelivered event (or a replayed operation) draws the same arm. The generator is
``random.Random`` seeded with the first 64 bits of a SHA-256 of those four values; the arms are
laid end to end on [0, 1) in the order the study declares them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar


class ArmLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def probability(self) -> float: ...


class StratumLike(Protocol):
    @property
    def field(self) -> str: ...

    @property
    def value(self) -> str: ...

    @property
    def probabilities(self) -> Mapping[str, float]: ...


Arm_co = TypeVar("Arm_co", bound=ArmLike, covariant=True)


class PointLike(Protocol[Arm_co]):
    """A decision point as ``models/study.py`` declares it (rules import no model)."""

    @property
    def name(self) -> str: ...

    @property
    def arms(self) -> Sequence[Arm_co]: ...

    @property
    def strata(self) -> Sequence[StratumLike]: ...


def decision_rng(study_id: str, participant_id: str, decision_point: str, study_day: int) -> random.Random:
    """The generator of one decision: the same four values always give the same sequence."""
    seed = "|".join((study_id, participant_id, decision_point, str(study_day)))
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


def probabilities(point: PointLike[Arm_co], profile: Mapping[str, object] | None = None) -> dict[str, float]:
    """Each arm's probability for a participant: the first stratum whose field the profile holds
    with that value (compared as text, case-insensitively), else the decision point's own."""
    values = {str(k): str(v).strip().casefold() for k, v in (profile or {}).items() if v is not None}
    for stratum in point.strata:
        if values.get(stratum.field) == stratum.value.strip().casefold():
            return {arm.name: float(stratum.probabilities[arm.name]) for arm in point.arms}
    return {arm.name: arm.probability for arm in point.arms}


def draw_arm(rng: random.Random, point: PointLike[Arm_co], chances: Mapping[str, float]) -> Arm_co:
    """One arm, drawn with ``chances`` (an arm of probability 0 is never drawn)."""
    roll = rng.random()
    total = 0.0
    drawable = [arm for arm in point.arms if chances[arm.name] > 0]
    for arm in drawable:
        total += chances[arm.name]
        if roll < total:
            return arm
    return drawable[-1]  # the sum is 1 within rounding: a roll in the last sliver belongs to the last arm


def draw(
    study_id: str,
    participant_id: str,
    point: PointLike[Arm_co],
    study_day: int,
    profile: Mapping[str, object] | None = None,
) -> tuple[Arm_co, dict[str, float]]:
    """The arm drawn at this decision, and every arm's probability at it."""
    chances = probabilities(point, profile)
    return draw_arm(decision_rng(study_id, participant_id, point.name, study_day), point, chances), chances
