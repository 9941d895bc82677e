"""The proximal effect of each arm of a micro-randomised decision point against its reference arm
(the no-prompt arm): the weighted and centred least-squares estimate (WCLS; Boruvka, Almirall,
Witkiewitz and Murphy, "Assessing time-varying causal effect moderation in mobile health", JASA
2018), with a sandwich standard error clustered by participant (docs/studies.md, "Analysing
decisions").

Among the available decisions ``t`` of participant ``i``, with arms ``0`` (the reference) and
``1..K``, the drawn arm ``A_it`` with probability ``p_it(A_it)`` and the proximal outcome
``Y_it`` (1 done, 0 not), fit by least squares

    Y_it ~ a + sum_k b_k (1[A_it = k] - q_k),    weights W_it = q(A_it) / p_it(A_it)

where ``q_k`` is a fixed reference probability of arm ``k`` (by default the mean of ``p_it(k)``
over the decisions; with the probabilities constant, every weight is 1). The centring makes ``b_k``
the marginal risk difference of arm ``k`` against arm 0 on the proximal outcome, robust to a
misspecified intercept; the weights undo a probability that varied between decisions (strata).
With ``X_it = (1, 1[A_it=1]-q_1, ..., 1[A_it=K]-q_K)`` and ``e_it = Y_it - X_it'beta``:

    beta = B^-1 sum_it W_it X_it Y_it,    B = sum_it W_it X_it X_it'
    Var(beta) = G/(G-1) * B^-1 M B^-1,     M = sum_i (sum_t W_it X_it e_it)(sum_t W_it X_it e_it)'

(``G`` participants; the factor ``G/(G-1)`` is the usual small-sample correction of a clustered
sandwich). The 95 % interval is ``b_k ± 1.96 SE``. Pure Python: the matrices are (K+1) square.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from promptpipe.errors import PromptPipeError

Z_95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054


class NotEstimable(PromptPipeError, ValueError):
    """The data cannot give the estimate (too few participants, an arm never drawn)."""


@dataclass(frozen=True)
class Observation:
    """One available decision: who (the cluster), the arm drawn, each arm's probability at the
    decision, and the proximal outcome (1.0 done, 0.0 not)."""

    cluster: str
    arm: str
    probabilities: Mapping[str, float]
    outcome: float


@dataclass(frozen=True)
class ArmEffect:
    """Arm ``arm`` against ``reference``: the risk difference on the proximal outcome."""

    arm: str
    reference: str
    estimate: float
    standard_error: float
    decisions: int  # available decisions with this arm drawn

    @property
    def low(self) -> float:
        return self.estimate - Z_95 * self.standard_error

    @property
    def high(self) -> float:
        return self.estimate + Z_95 * self.standard_error


def proximal_effects(
    observations: Iterable[Observation],
    arms: Sequence[str],
    reference: str,
    *,
    reference_probabilities: Mapping[str, float] | None = None,
) -> list[ArmEffect]:
    """The effect of every arm of ``arms`` but ``reference`` against ``reference``, in ``arms`` order.

    Raises ``NotEstimable`` with fewer than two participants, no decisions, or an arm never drawn."""
    data = list(observations)
    if reference not in arms:
        raise NotEstimable(f"the reference arm {reference!r} is not one of {list(arms)}")
    treated = [arm for arm in arms if arm != reference]
    if not data:
        raise NotEstimable("no available decision with a known outcome")
    drawn = {obs.arm for obs in data}
    missing = [arm for arm in arms if arm not in drawn]
    if missing:
        raise NotEstimable(f"arm(s) never drawn: {', '.join(missing)}")
    clusters = sorted({obs.cluster for obs in data})
    if len(clusters) < 2:
        raise NotEstimable("a clustered standard error needs at least two participants")
    q = dict(reference_probabilities) if reference_probabilities else _mean_probabilities(data, arms)

    size = len(treated) + 1
    bread = [[0.0] * size for _ in range(size)]
    cross = [0.0] * size
    rows: list[tuple[str, float, list[float], float]] = []
    for obs in data:
        weight = q[obs.arm] / obs.probabilities[obs.arm]
        x = [1.0, *((1.0 if obs.arm == arm else 0.0) - q[arm] for arm in treated)]
        rows.append((obs.cluster, weight, x, obs.outcome))
        for r in range(size):
            cross[r] += weight * x[r] * obs.outcome
            for c in range(size):
                bread[r][c] += weight * x[r] * x[c]
    inverse = invert(bread)
    beta = [sum(inverse[r][c] * cross[c] for c in range(size)) for r in range(size)]

    scores: dict[str, list[float]] = {cluster: [0.0] * size for cluster in clusters}
    for cluster, weight, x, y in rows:
        residual = y - sum(x[c] * beta[c] for c in range(size))
        score = scores[cluster]
        for r in range(size):
            score[r] += weight * x[r] * residual
    meat = [[sum(s[r] * s[c] for s in scores.values()) for c in range(size)] for r in range(size)]
    groups = len(clusters)
    variance = _matmul(_matmul(inverse, meat), inverse)
    correction = groups / (groups - 1)
    counts = {arm: sum(1 for obs in data if obs.arm == arm) for arm in treated}
    return [
        ArmEffect(
            arm=arm,
            reference=reference,
            estimate=beta[k + 1],
            standard_error=max(correction * variance[k + 1][k + 1], 0.0) ** 0.5,
            decisions=counts[arm],
        )
        for k, arm in enumerate(treated)
    ]


def _mean_probabilities(data: Sequence[Observation], arms: Sequence[str]) -> dict[str, float]:
    return {arm: sum(obs.probabilities.get(arm, 0.0) for obs in data) / len(data) for arm in arms}


def _matmul(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[sum(a[r][k] * b[k][c] for k in range(len(b))) for c in range(len(b[0]))] for r in range(len(a))]


def invert(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of a small square matrix (Gauss-Jordan with partial pivoting)."""
    size = len(matrix)
    work = [[float(v) for v in row] + [1.0 if r == c else 0.0 for c in range(size)] for r, row in enumerate(matrix)]
    scale = max((abs(v) for row in matrix for v in row), default=0.0) or 1.0
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(work[r][col]))
        if abs(work[pivot][col]) <= 1e-12 * scale:
            raise NotEstimable("the design is singular (an arm's indicator is constant)")
        work[col], work[pivot] = work[pivot], work[col]
        lead = work[col][col]
        work[col] = [v / lead for v in work[col]]
        for r in range(size):
            if r != col and work[r][col] != 0.0:
                factor = work[r][col]
                work[r] = [v - factor * p for v, p in zip(work[r], work[col], strict=True)]
    return [row[size:] for row in work]
