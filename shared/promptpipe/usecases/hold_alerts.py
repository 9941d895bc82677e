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
"""

from __future__ import annotations

import logging

from promptpipe.errors import StoreError
from promptpipe.models.safety import ANNOUNCED_HOLDS, ConversationHold, HoldAlert, NeedsPerson
from promptpipe.usecases.context import AppContext

logger = logging.getLogger(__name__)


def new_hold_alert(participant_id: str, event_id: str, hold: ConversationHold | None) -> HoldAlert | None:
    """The alert of ``hold`` when this event placed it (a staff hold excepted)."""
    if hold is None or not event_id or hold.event_id != event_id or hold.reason not in ANNOUNCED_HOLDS:
        return None
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
