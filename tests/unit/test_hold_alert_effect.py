"""The hold alert is an effect of the commit that placed the hold (usecases/hold_alerts.py): applied
after the commit, published by the redelivery when a crash (an exception, or the process killed)
came between the commit and the publish, and not again once published: the needs-a-person marker,
written in the hold's transaction, is its outbox."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from promptpipe.errors import EffectsPending, MessagingError
from promptpipe.models.alerts import HoldAlert, SafetyAlert
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import OutboundMessage, SendResult
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import StateData
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from tests.support import MemoryHarness, memory_harness

ASK = "can i talk to a real person please"


@dataclass
class FakeAlerts:
    """The team's topic: every alert that reached it; ``fail`` raises that many times first."""

    fail: int = 0
    published: list[HoldAlert] = field(default_factory=list)
    safety: list[SafetyAlert] = field(default_factory=list)

    def safety_flag(self, alert: SafetyAlert) -> None:
        self.safety.append(alert)

    def hold_placed(self, alert: HoldAlert) -> None:
        if self.fail:
            self.fail -= 1
            raise ConnectionError("SNS unreachable")
        self.published.append(alert)


class FailingOnce:
    """A messenger whose first send fails as a retry may cure; the rest reach the outbox."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.failed = inner, False

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        if not self.failed:
            self.failed = True
            raise MessagingError("provider down", retryable=True)
        result: SendResult = self.inner.send(message, before_part=before_part)
        return result


def _ask(h: MemoryHarness, alerts: FakeAlerts, **ports: Any) -> tuple[str, TurnEvent]:
    h.app = replace(h.app, alerts=alerts, **ports)
    participant = h.enroll(name="Rosa")
    inbound = h.message(participant, ASK, msg_id="SMask")
    event = TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id="SMask",
        message=inbound,
        enqueued_at=h.clock.now(),
    )
    return participant.id, event


def _deliver(h: MemoryHarness, event: TurnEvent) -> EventOutcome:
    """One delivery of ``event`` to the worker: the turn, then its effects after the commit."""
    outcome = process_turn(h.app, event)
    apply_effects(h.app, outcome)
    return outcome


def _replies(h: MemoryHarness, pid: str) -> list[str]:
    return [m.body_text for m in h.outbox.messages() if m.participant_id == pid]


def test_a_crash_between_the_commit_and_the_publish_publishes_on_the_redelivery() -> None:
    h = memory_harness()
    alerts = FakeAlerts(fail=1)  # the fault lands after the commit, at the publish
    pid, event = _ask(h, alerts)
    with pytest.raises(ConnectionError):
        _deliver(h, event)
    assert StateData(h.data(pid)).hold() is not None  # the hold committed
    assert alerts.published == []
    replies = _replies(h, pid)
    assert len(replies) == 1  # the reply went before the publish

    again = _deliver(h, event)  # the redelivery

    assert again.replayed
    assert [(a.participant_id, a.reason) for a in alerts.published] == [(pid, HoldReason.ASKED)]
    assert _replies(h, pid) == replies  # the reply is not sent twice
    _deliver(h, event)  # a third copy, after the publish: nothing more
    assert len(alerts.published) == 1 and _replies(h, pid) == replies


def test_a_send_that_fails_after_the_commit_leaves_the_alert_to_the_redelivery() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid, event = _ask(h, alerts, messenger=FailingOnce(h.outbox))
    with pytest.raises(MessagingError):
        _deliver(h, event)
    assert alerts.published == [] and _replies(h, pid) == []

    _deliver(h, event)

    assert len(_replies(h, pid)) == 1
    [alert] = alerts.published
    assert alert.reason is HoldReason.ASKED and alert.since == StateData(h.data(pid)).hold().since  # type: ignore[union-attr]


def test_a_failure_after_the_publish_does_not_publish_it_again() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid, event = _ask(h, alerts)
    first = process_turn(h.app, event)
    assert first.hold_alert is not None and h.store.needs_person[pid].alert_pending
    # A schedule change after the publish fails (the Scheduler is down): the event is redelivered.
    first.schedules = {f"{pid}-reminder": None}
    h.app.deps.timers = _FailingTimers()  # type: ignore[assignment]
    with pytest.raises(EffectsPending):
        apply_effects(h.app, first)
    assert len(alerts.published) == 1
    assert h.store.needs_person[pid].alert_pending is False  # the marker says it went

    h.app.deps.timers = h.timers
    _deliver(h, event)

    assert len(alerts.published) == 1  # not published twice
    assert len(_replies(h, pid)) == 1


def test_a_process_killed_between_the_commit_and_the_publish_publishes_on_the_redelivery() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid, event = _ask(h, alerts)
    process_turn(h.app, event)  # committed; then the process is killed: no effect applied, nothing recorded
    assert alerts.published == [] and h.store.needs_person[pid].alert_pending

    again = _deliver(h, event)  # the queue redelivers it after its visibility timeout

    assert again.replayed
    assert [(a.participant_id, a.reason) for a in alerts.published] == [(pid, HoldReason.ASKED)]
    _deliver(h, event)
    assert len(alerts.published) == 1


def test_a_finished_event_redelivered_publishes_nothing_and_later_messages_none() -> None:
    h = memory_harness()
    alerts = FakeAlerts()
    pid, event = _ask(h, alerts)
    _deliver(h, event)
    _deliver(h, event)  # a duplicate of a finished event: no sent record, nothing again
    participant = h.store.get(pid)
    later = h.message(participant, "hello??", msg_id="SMlater")
    _deliver(
        h,
        TurnEvent(
            kind=TurnKind.MESSAGE, participant_id=pid, event_id="SMlater", message=later, enqueued_at=h.clock.now()
        ),
    )
    assert len(alerts.published) == 1


def test_a_crisis_killed_between_the_commit_and_the_alerts_reaches_the_team_on_the_redelivery() -> None:
    # A crisis always reaches a person: its own safety alert is published after the commit at most
    # once, so the safety hold is announced too, through the marker's outbox, like any other hold.
    h = memory_harness()
    alerts = FakeAlerts()
    h.app = replace(h.app, alerts=alerts)
    participant = h.enroll(name="Ana")
    inbound = h.message(participant, "i want to kill myself", msg_id="SMcrisis")
    event = TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id="SMcrisis",
        message=inbound,
        enqueued_at=h.clock.now(),
    )
    process_turn(h.app, event)  # the safety hold committed; then the process is killed
    hold = StateData(h.data(participant.id)).hold()
    assert hold is not None and hold.reason is HoldReason.SAFETY
    assert alerts.published == [] and h.store.needs_person[participant.id].alert_pending

    _deliver(h, event)  # the redelivery

    assert [(a.participant_id, a.reason) for a in alerts.published] == [(participant.id, HoldReason.SAFETY)]
    assert "safety" in alerts.published[0].text()
    _deliver(h, event)  # a later copy: nothing more
    assert len(alerts.published) == 1


def test_staff_holds_are_not_announced_and_safety_holds_are() -> None:
    from datetime import UTC, datetime

    from promptpipe.models.safety import ConversationHold
    from promptpipe.usecases.hold_alerts import new_hold_alert

    at = datetime(2026, 3, 2, tzinfo=UTC)
    staff = ConversationHold(reason=HoldReason.STAFF, since=at, set_by="x", event_id="e1")
    assert new_hold_alert("p_1", "e1", staff) is None
    safety = ConversationHold(reason=HoldReason.SAFETY, since=at, set_by="x", event_id="e1")
    assert new_hold_alert("p_1", "e1", safety) == HoldAlert(participant_id="p_1", reason=HoldReason.SAFETY, since=at)
    assert new_hold_alert("p_1", "", ConversationHold(reason=HoldReason.ASKED, since=at, set_by="x")) is None
    alert = new_hold_alert("p_1", "e1", ConversationHold(reason=HoldReason.ASKED, since=at, set_by="x", event_id="e1"))
    assert alert is not None and alert.reference == "p_1@2026-03-02T00:00:00Z"
    assert "Hold reference: p_1@2026-03-02T00:00:00Z" in alert.text()
    assert HoldAlert(participant_id="p_2", reason=HoldReason.ASKED).reference == "p_2@unknown"


class _FailingTimers:
    def __getattr__(self, name: str) -> Any:
        from promptpipe.errors import TimerError

        def fail(*_args: Any, **_kwargs: Any) -> Any:
            raise TimerError("scheduler down")

        return fail


@pytest.mark.logs_errors
def test_a_publish_whose_mark_fails_is_published_again_with_the_same_reference() -> None:
    from promptpipe.errors import StoreError

    h = memory_harness()
    alerts = FakeAlerts()
    pid, event = _ask(h, alerts)
    store = h.store

    class Refusing:
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def hold_alerted(self, *_args: Any) -> None:
            raise StoreError("table unavailable", operation="UpdateItem", code="ServiceUnavailable")

    h.app = replace(h.app, repo=Refusing())
    _deliver(h, event)  # published; the mark is logged as failed, the event is done
    assert store.needs_person[pid].alert_pending
    h.app = replace(h.app, repo=store)
    _deliver(h, event)  # a copy of the event: at least once

    first, second = alerts.published
    assert first.reference == second.reference == f"{pid}@{first.since:%Y-%m-%dT%H:%M:%SZ}"
    assert store.needs_person[pid].alert_pending is False
