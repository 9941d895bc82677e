"""What a study's decisions say (docs/studies.md, "Analysing decisions"): per decision point, the
share of decisions at which the participant was available, each arm's share among the available
decisions against its declared probability, and each arm's proximal effect against the no-prompt
arm (``rules.mrt``: the weighted and centred least-squares risk difference on "done", its
participant-clustered standard error and 95 % interval). Printed by ``promptpipe simulate --study
FILE`` and drawn by the console's study view."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from promptpipe.models.decision import DecisionRecord, ProximalOutcomeValue
from promptpipe.models.study import DecisionPoint, StudyDefinition
from promptpipe.rules.mrt import ArmEffect, NotEstimable, Observation, proximal_effects


@dataclass(frozen=True)
class ArmShare:
    arm: str
    declared: float  # the decision point's probability
    drawn: int  # available decisions with this arm drawn
    share: float | None  # drawn / available; None with no available decision


@dataclass(frozen=True)
class DecisionPointReport:
    name: str
    decisions: int
    available: int
    with_outcome: int  # available decisions whose proximal outcome is known
    arms: list[ArmShare]
    reference: str | None  # the no-prompt arm, if the point has one
    effects: list[ArmEffect] = field(default_factory=list)
    not_estimable: str = ""  # why there are no effects

    @property
    def available_share(self) -> float | None:
        return self.available / self.decisions if self.decisions else None


@dataclass(frozen=True)
class StudyReport:
    study_id: str
    points: list[DecisionPointReport]


def outcome_value(record: DecisionRecord) -> float | None:
    """The proximal outcome as the estimate reads it: 1 done, 0 replied-not-done or no reply, None
    while the window is open."""
    if record.outcome is None:
        return None
    return 1.0 if record.outcome is ProximalOutcomeValue.DONE else 0.0


def _point_report(point: DecisionPoint, records: Sequence[DecisionRecord]) -> DecisionPointReport:
    available = [r for r in records if r.available and r.arm is not None]
    arms = [
        ArmShare(
            arm=arm.name,
            declared=arm.probability,
            drawn=sum(1 for r in available if r.arm == arm.name),
            share=(sum(1 for r in available if r.arm == arm.name) / len(available)) if available else None,
        )
        for arm in point.arms
    ]
    reference = next((arm.name for arm in point.arms if arm.framing is None), None)
    observations = [
        Observation(r.participant_id, r.arm, r.probabilities, value)
        for r in available
        if r.arm is not None and (value := outcome_value(r)) is not None
    ]
    effects: list[ArmEffect] = []
    reason = ""
    if reference is None:
        reason = "no no-prompt arm to compare with"
    else:
        try:
            effects = proximal_effects(observations, [arm.name for arm in point.arms], reference)
        except NotEstimable as exc:
            reason = str(exc)
    return DecisionPointReport(
        name=point.name,
        decisions=len(records),
        available=len(available),
        with_outcome=len(observations),
        arms=arms,
        reference=reference,
        effects=effects,
        not_estimable=reason,
    )


def study_report(study: StudyDefinition, records: Iterable[DecisionRecord]) -> StudyReport:
    """The report of every decision point of ``study`` from its records (other studies' are ignored)."""
    mine = [r for r in records if r.study_id == study.id]
    return StudyReport(
        study_id=study.id,
        points=[
            _point_report(point, [r for r in mine if r.decision_point == point.name]) for point in study.decision_points
        ],
    )


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def report_lines(report: StudyReport) -> list[str]:
    """The report as ``promptpipe simulate --study`` prints it."""
    lines = [f"study {report.study_id}"]
    for point in report.points:
        lines.append(
            f"decision point {point.name}: {point.decisions} decisions, available {point.available} "
            f"({_percent(point.available_share)}), outcome known for {point.with_outcome}"
        )
        lines.append(
            "  arm shares among available decisions: "
            + ", ".join(f"{a.arm} {_percent(a.share)} (declared {100 * a.declared:.1f} %)" for a in point.arms)
        )
        if not point.effects:
            lines.append(f"  effects: not estimable ({point.not_estimable})")
        for effect in point.effects:
            lines.append(
                f"  {effect.arm} vs {effect.reference}: risk difference {effect.estimate:+.3f} on done, "
                f"SE {effect.standard_error:.3f}, 95 % CI [{effect.low:+.3f}, {effect.high:+.3f}] "
                f"(n={effect.decisions})"
            )
    return lines
