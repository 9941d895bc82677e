"""botocore's standard-mode retry backoff, recorded instead of slept (docs/reliability.md, "How faults
are injected"): a test of retries then runs at once, and can still assert how many delays there were."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """botocore's standard-mode backoff delays, recorded instead of slept."""
    from botocore.retries import standard

    delays: list[float] = []
    original = standard.ExponentialBackoff.delay_amount

    def record(self: Any, context: Any) -> float:
        delays.append(original(self, context))
        return 0.0

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", record)
    return delays
