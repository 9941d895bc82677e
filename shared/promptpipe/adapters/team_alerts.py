"""The study team's alerts (docs/safety.md): an SNS topic deployed, a WARNING log line locally."""

from __future__ import annotations

import logging
from typing import Any

from promptpipe.models.safety import SafetyAlert

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


class SnsTeamAlerts:
    """Publishes to the stack's study-team topic (``SAFETY_ALERT_TOPIC_ARN``)."""

    def __init__(self, topic_arn: str, sns: Any) -> None:
        self._topic_arn = topic_arn
        self._sns = sns

    def safety_flag(self, alert: SafetyAlert) -> None:
        self._sns.publish(TopicArn=self._topic_arn, Subject=alert.subject()[:100], Message=alert.text())
        LogTeamAlerts().safety_flag(alert)
