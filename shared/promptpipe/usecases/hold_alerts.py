"""Telling the study team of each new hold (docs/safety.md, "Nobody missed"), once the turn that
placed it has committed, and once per hold: the alert goes with the event that placed the hold (the
hold names it, ``ConversationHold.event_id``) and never with a replay of it. A safety flag has its
own alert (``usecases/safety_alerts.py``). A failed publish is logged; the console's needs-a-person
queue still lists the participant."""

from __future__ import annotations

import logging

from promptpipe.models.safety import ConversationHold, HoldAlert, HoldReason
from promptpipe.usecases.context import AppContext

logger = logging.getLogger(__name__)


def new_hold_alert(participant_id: str, event_id: str, hold: ConversationHold | None) -> HoldAlert | None:
    """The alert of ``hold`` when this event placed it (a safety flag excepted: it has its own)."""
    if hold is None or hold.event_id != event_id or hold.reason is HoldReason.SAFETY:
        return None
    return HoldAlert(participant_id=participant_id, reason=hold.reason, detail=hold.detail)


def alert_new_hold(app: AppContext, alert: HoldAlert | None) -> None:
    if alert is None:
        return
    try:
        app.alerts.hold_placed(alert)
    except Exception:  # the queue in the console still lists them; the turn's reply must still go out
        logger.exception("hold alert not published", extra={"participant_id": alert.participant_id})
