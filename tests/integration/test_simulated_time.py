"""``promptpipe serve``'s simulated clock: it follows real (monotonic) time from its anchor, never
runs backwards, and moving it re-anchors it. Real time is a fake monotonic clock here: nothing sleeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.local.server import SimulatedTime

START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def monotonic(monkeypatch: pytest.MonkeyPatch) -> FakeMonotonic:
    fake = FakeMonotonic()
    monkeypatch.setattr("promptpipe.local.server.time.monotonic", fake)
    return fake


def test_the_simulated_clock_follows_real_time_and_moving_it_re_anchors(
    local_env_factory: Any, monotonic: FakeMonotonic
) -> None:
    env = local_env_factory(start=START)
    sim = SimulatedTime(env)
    # When no real time has passed / Then a tick changes nothing
    assert sim.tick() == []
    assert env.clock.now() == START
    # When 90 real seconds pass / Then the simulated clock is 90 s later
    monotonic.now += 90
    assert sim.target() == START + timedelta(seconds=90)
    sim.tick()
    assert env.clock.now() == START + timedelta(seconds=90)
    # When it is moved a day ahead / Then it runs on from there
    sim.move_to(START + timedelta(days=1))
    assert env.clock.now() == START + timedelta(days=1)
    monotonic.now += 30
    sim.tick()
    assert env.clock.now() == START + timedelta(days=1, seconds=30)
    # When it is asked to go back / Then it stays where it is (a schedule never fires twice)
    sim.move_to(START)
    assert env.clock.now() == START + timedelta(days=1, seconds=30)
    assert sim.tick() == [] and env.clock.now() == START + timedelta(days=1, seconds=30)
