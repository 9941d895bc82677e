"""Telling the study team of each new hold (docs/safety.md, "Asking for a person"): an effect of the
commit that placed the hold, applied after it, at least once and never lost.

The needs-a-person marker is the alert's outbox (docs/console.md, "Nobody missed"): the commit that
places an announced hold writes the marker with ``alert_pending`` in the same transaction. The event's
outcome carries the alert (``usecases/write_once.py``): on its first run, and on a redelivery while
the marker it loads still says the alert is pending — a crash anywhere between the commit and the
publish, an exception or the process killed, leaves it pending. ``apply_effects``
(``usecases/sending.py``) publishes it after the event's messages and before its schedules; a failed
publish raises (the event is redelivered: SQS, the scheduler's retries, the dead-letter redrive);
once published, the marker says so (one ``UpdateItem``), and a later copy of the event publishes
nothing.

At least once: SNS standard topics (email and SMS subscriptions) do not deduplicate, and a publish
whose answer was lost, or whose marker update failed, is published again by the redelivery; every
alert carries the hold's reference (``HoldAlert.reference``), the same on each copy. A safety hold is
announced too, besides the safety flag's own alert (``usecases/safety_alerts.py``, at most once): a
crisis always reaches a person, whatever crash lands after its commit. A staff hold is placed by the
team itself and is not announced (``ANNOUNCED_HOLDS``).

An event that is never redelivered (its dead-letter queue expires unredriven) would leave its alert
pending for ever: the periodic sweep (``sweep_hold_alerts``, the timers function's 15-minute sweep)
reads the markers still pending ``HOLD_ALERT_SWEEP_AFTER`` after their hold began (one Query of the
index's needs-a-person partition) and publishes each the same way, at least once: a failed publish is
left pending for the next run, a published one is marked and the next run finds nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from promptpipe.errors import StoreError
from promptpipe.models.safety import ANNOUNCED_HOLDS, ConversationHold, NeedsPerson
from promptpipe.usecases.context import AppContext

if TYPE_CHECKING:
    from promptpipe.models.alerts import HoldAlert

logger = logging.getLogger(__name__)


def new_hold_alert(participant_id: str, event_id: str, hold: ConversationHold | None) -> HoldAlert | None:
    """The alert of ``hold`` when this event placed it (a staff hold excepted)."""
    if hold is None or not event_id or hold.event_id != event_id or hold.reason not in ANNOUNCED_HOLDS:
        return None
    from promptpipe.models.alerts import HoldAlert  # here: only an event that placed a hold (cold start)

    return HoldAlert(participant_id=participant_id, reason=hold.reason, detail=hold.detail, since=hold.since)


def still_pending(alert: HoldAlert | None, marker: NeedsPerson | None) -> HoldAlert | None:
    """For a redelivered event: its alert, when the marker it loaded says it was not published."""
    if alert is None or marker is None or not marker.alert_pending or marker.since != alert.since:
        return None
    return alert


def publish_hold_alert(app: AppContext, alert: HoldAlert) -> None:
    """Publish (a failure raises: the event is redelivered), then mark the hold's alert as published.
    A failed mark is logged: a redelivery would publish it again, the same reference."""
    app.alerts.hold_placed(alert)
    if alert.since is None:
        return
    try:
        app.repo.hold_alerted(alert.participant_id, alert.since)
    except StoreError:
        logger.exception("hold alert published but not marked", extra={"participant_id": alert.participant_id})


def sweep_hold_alerts(app: AppContext) -> list[str]:
    """Publish every hold alert still pending ``hold_alert_sweep_after`` after its hold began; returns
    the ids of the participants whose alert went out. A failed publish is logged and left pending
    (the next run tries again), so one failure does not hold back the others."""
    from promptpipe.models.alerts import HoldAlert

    started_before = app.clock.now() - app.config.hold_alert_sweep_after
    published: list[str] = []
    for marker in app.repo.pending_hold_alerts(started_before):  # pending: owed, whatever its reason now
        alert = HoldAlert(
            participant_id=marker.participant_id, reason=marker.reason, detail=marker.detail, since=marker.since
        )
        try:
            publish_hold_alert(app, alert)
        except Exception:  # the topic unreachable: still pending, the next run publishes it
            logger.exception("hold alert not published by the sweep", extra={"participant_id": marker.participant_id})
            continue
        published.append(marker.participant_id)
    return published
