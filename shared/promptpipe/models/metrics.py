"""A metric as a value: what the flow and the use cases observed, published by the application layer
(``usecases/outcome_metrics.py``) through ``promptpipe.observability``, never emitted from below it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

MetricUnit = Literal["Count", "Milliseconds"]


@dataclass(frozen=True)
class Metric:
    """One data point (namespace ``PromptPipe``); ``dimensions`` as (name, value) pairs."""

    name: str
    value: float = 1
    unit: MetricUnit = "Count"
    dimensions: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def metric(name: str, value: float = 1, unit: MetricUnit = "Count", **dimensions: str) -> Metric:
    return Metric(name, value, unit, tuple(dimensions.items()))
