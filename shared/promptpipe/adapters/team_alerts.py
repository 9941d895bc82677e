"""The study team's alerts (docs/safety.md): an SNS topic deployed, a WARNING log line locally."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from promptpipe.models.safety import HOLD_WORDS

if TYPE_CHECKING:
    from promptpipe.models.alerts import HoldAlert, SafetyAlert

logger = logging.getLogger(__name__)


class LogTeamAlerts:
    """Locally (and wherever no topic is configured): one WARNING line, with the participant's id and
    the kind of signal; never their words or number."""

    def safety_flag(self, alert: SafetyAlert) -> None:
        logger.warning(
            "SAFETY ALERT: a participant needs a person now",
            extra={
                "participant_id": alert.participant_id,
                "category": alert.category,
                "language": alert.language,
                "region": alert.region,
                "opted_out": alert.opted_out,
            },
        )

    def hold_placed(self, alert: HoldAlert) -> None:
        # Locally the console's needs-a-person queue is the badge; this line is the record.
        logger.warning(
            "HOLD ALERT: a participant needs a person",
            extra={
                "participant_id": alert.participant_id,
                "reason": alert.reason.value,
                "why": HOLD_WORDS[alert.reason],
            },
        )


class SnsTeamAlerts:
    """Publishes to the stack's study-team topic (``SAFETY_ALERT_TOPIC_ARN``), each alert with a link
    to the participant's page when the console's address is set (``CONSOLE_URL``)."""

    def __init__(self, topic_arn: str, sns: Any, console_url: str | None = None) -> None:
        self._topic_arn = topic_arn
        self._sns = sns
        self._console_url = (console_url or "").rstrip("/")

    def safety_flag(self, alert: SafetyAlert) -> None:
        text = alert.text()
        if self._console_url:
            text += f"\nTheir page: {self._console_url}/participants/{alert.participant_id}"
        self._sns.publish(TopicArn=self._topic_arn, Subject=alert.subject()[:100], Message=text)
        LogTeamAlerts().safety_flag(alert)

    def hold_placed(self, alert: HoldAlert) -> None:
        alert = replace(alert, console_url=self._console_url)
        self._sns.publish(TopicArn=self._topic_arn, Subject=alert.subject()[:100], Message=alert.text())
        LogTeamAlerts().hold_placed(alert)
