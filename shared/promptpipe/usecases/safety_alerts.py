"""Telling the study team about a safety flag, once the turn that decided it has committed
(docs/safety.md). The metric ``SafetyFlag`` and its alarm are the second way the flag reaches a
person: a failed publish is logged, and the alarm still fires."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from promptpipe.usecases.context import AppContext

if TYPE_CHECKING:
    from promptpipe.models.alerts import SafetyAlert

logger = logging.getLogger(__name__)


def alert_team(app: AppContext, alert: SafetyAlert | None) -> None:
    if alert is None:
        return
    try:
        app.alerts.safety_flag(alert)
    except Exception:  # the SafetyFlag alarm still fires; the turn's reply must still go out
        logger.exception("safety alert not published", extra={"participant_id": alert.participant_id})
