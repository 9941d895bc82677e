"""Telling the study team of each new hold (docs/safety.md, "Nobody missed"): an effect of the commit
that placed the hold, applied after it, at least once and never lost.

The alert is derived from the committed state, not decided anew: an event whose committed state
holds a hold it placed (``ConversationHold.event_id``) carries the hold's alert on its outcome
(``usecases/write_once.py``, on the first run and on every replay alike). ``apply_effects``
(``usecases/sending.py``) publishes it after the event's messages and before its schedules, under an
effect id of its own (``{event id}#hold-alert``), which the sent record keeps with the ids of the
messages that went out when a later effect fails: a redelivery publishes it when that record does
not name it (a crash before or during the publish), and not when it does or when there is no record
(the earlier delivery finished). A failed publish raises, so the event is redelivered.

SNS standard topics (email and SMS subscriptions) do not deduplicate: a publish whose answer was lost
is published again by the redelivery, so the team may read one hold twice; every alert carries the
hold's reference (``HoldAlert.reference``), the same on each copy. A safety flag has its own alert
(``usecases/safety_alerts.py``); a staff hold is placed by the team itself and is not announced.
"""

from __future__ import annotations

from promptpipe.models.safety import ConversationHold, HoldAlert, HoldReason

# Holds the team is not told of here: a safety flag (its own alert) and a staff hold (the team's own).
_NOT_ANNOUNCED = (HoldReason.SAFETY, HoldReason.STAFF)


def new_hold_alert(participant_id: str, event_id: str, hold: ConversationHold | None) -> HoldAlert | None:
    """The alert of ``hold`` when this event placed it (a safety flag and a staff hold excepted)."""
    if hold is None or not event_id or hold.event_id != event_id or hold.reason in _NOT_ANNOUNCED:
        return None
    return HoldAlert(participant_id=participant_id, reason=hold.reason, detail=hold.detail, since=hold.since)


def hold_alert_id(event_id: str) -> str:
    """The alert's effect id in the event's sent record, beside its messages' ids (``{event id}#{n}``)."""
    return f"{event_id}#hold-alert"
