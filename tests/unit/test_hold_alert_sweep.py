"""The sweep of the hold alerts left pending (usecases/hold_alerts.sweep_hold_alerts): an event whose
alert never went out and which is never redelivered (its dead-letter queue expired unredriven) still
reaches the team, once the hold has waited ``hold_alert_sweep_after``; each crash point of the sweep
leaves the alert pending for the next run, and a run after the publish publishes nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from promptpipe.errors import StoreError
from promptpipe.models.api import StateOverride
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import StateData
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.hold_alerts import sweep_hold_alerts
from promptpipe.usecases.participants import override_state
from tests.support import MemoryHarness, memory_harness
from tests.unit.test_hold_alert_effect import ASK, FakeAlerts, _ask, _deliver

AFTER = timedelta(minutes=15)  # the setting's default


def _placed_and_killed(h: MemoryHarness, alerts: FakeAlerts) -> str:
    """A hold committed, then the process killed before the publish, and the event never redelivered."""
    pid, event = _ask(h, alerts)
    process_turn(h.app, event)
    assert alerts.published == [] and h.store.needs_person[pid].alert_pending
    return pid


def test_the_default_wait_is_fifteen_minutes() -> None:
    assert memory_harness().app.config.hold_alert_sweep_after == AFTER


def test_an_alert_never_redelivered_is_published_once_its_hold_has_waited() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid = _placed_and_killed(h, alerts)

    h.clock.advance(AFTER - timedelta(seconds=1))
    assert sweep_hold_alerts(h.app) == []  # not yet: the event's own redelivery may still come
    assert alerts.published == []

    h.clock.advance(timedelta(seconds=2))
    assert sweep_hold_alerts(h.app) == [pid]

    [alert] = alerts.published
    hold = StateData(h.data(pid)).hold()
    assert hold is not None
    assert (alert.participant_id, alert.reason, alert.since) == (pid, HoldReason.ASKED, hold.since)
    assert f"Hold reference: {alert.reference}" in alert.text()  # the same as the event's own would carry
    assert h.store.needs_person[pid].alert_pending is False
    assert sweep_hold_alerts(h.app) == [] and len(alerts.published) == 1  # a second run: nothing


@pytest.mark.logs_errors
def test_a_publish_that_fails_in_the_sweep_is_left_pending_for_the_next_run() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid = _placed_and_killed(h, alerts)
    h.clock.advance(AFTER + timedelta(minutes=1))
    alerts.fail = 1

    assert sweep_hold_alerts(h.app) == []  # logged, not raised: the other markers still go

    assert alerts.published == [] and h.store.needs_person[pid].alert_pending
    assert sweep_hold_alerts(h.app) == [pid]
    assert len(alerts.published) == 1 and not h.store.needs_person[pid].alert_pending


@pytest.mark.logs_errors
def test_one_failed_publish_does_not_hold_back_the_others() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    first = _placed_and_killed(h, alerts)
    h.clock.advance(timedelta(minutes=1))
    other = h.enroll(phone="+14155550177", name="Lee")
    inbound = h.message(other, ASK, msg_id="SMother")
    process_turn(
        h.app,
        TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=other.id,
            event_id="SMother",
            message=inbound,
            enqueued_at=h.clock.now(),
        ),
    )
    h.clock.advance(AFTER + timedelta(seconds=1))
    alerts.fail = 1  # the first (the longest wait) fails

    assert sweep_hold_alerts(h.app) == [other.id]
    assert sweep_hold_alerts(h.app) == [first]
    assert sorted(a.participant_id for a in alerts.published) == sorted([first, other.id])


@pytest.mark.logs_errors
def test_a_mark_that_fails_after_the_publish_publishes_it_again_at_least_once() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid = _placed_and_killed(h, alerts)
    h.clock.advance(AFTER + timedelta(minutes=1))
    marked = h.store.hold_alerted

    def failing_mark(participant_id: str, since: object) -> None:
        raise StoreError("DynamoDB unreachable", operation="UpdateItem", code="InternalServerError")

    h.store.hold_alerted = failing_mark  # type: ignore[method-assign,assignment]
    assert sweep_hold_alerts(h.app) == [pid]  # published; the mark failed (logged)
    assert h.store.needs_person[pid].alert_pending

    h.store.hold_alerted = marked  # type: ignore[method-assign]
    assert sweep_hold_alerts(h.app) == [pid]  # twice, never none: the same reference on both
    assert [a.reference for a in alerts.published] == [alerts.published[0].reference] * 2
    assert sweep_hold_alerts(h.app) == [] and len(alerts.published) == 2


def test_an_alert_the_event_published_is_not_published_by_the_sweep() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    _pid, event = _ask(h, alerts)
    _deliver(h, event)
    h.clock.advance(AFTER * 4)
    assert sweep_hold_alerts(h.app) == [] and len(alerts.published) == 1


def test_a_hold_released_before_the_sweep_is_not_announced() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid = _placed_and_killed(h, alerts)
    override_state(h.app, pid, StateOverride(release_hold=True, reason="called them"))
    assert pid not in h.store.needs_person
    h.clock.advance(AFTER * 2)
    assert sweep_hold_alerts(h.app) == [] and alerts.published == []


@pytest.mark.parametrize("wait", [timedelta(minutes=5), timedelta(minutes=60)])
def test_the_wait_is_the_setting(wait: timedelta) -> None:
    h = memory_harness()
    h.app.deps.config = replace(h.app.config, hold_alert_sweep_after=wait)
    alerts = FakeAlerts()
    pid = _placed_and_killed(h, alerts)
    h.clock.advance(wait - timedelta(seconds=1))
    assert sweep_hold_alerts(h.app) == []
    h.clock.advance(timedelta(seconds=2))
    assert sweep_hold_alerts(h.app) == [pid]
