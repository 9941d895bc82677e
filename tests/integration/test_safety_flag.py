"""The safety net's edges on the local stack (docs/safety.md): a crisis inside an opt-out, the study
team's alert through SNS (moto), and a publish that fails."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.team_alerts import LogTeamAlerts, SnsTeamAlerts
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION
from promptpipe.models.alerts import SafetyAlert
from promptpipe.models.messaging import InboundMessage
from promptpipe.usecases import receive_text
from promptpipe.usecases.safety_alerts import alert_team
from tests.support import enroll_over_api
from tests.support.logs import Captured

PHONE = "+12125550149"
ALERT = SafetyAlert(participant_id="p_1", category="suicide", language="en", region="US")


def test_a_crisis_inside_an_opt_out_is_honoured_as_an_opt_out_and_still_alerts_the_team(
    local_env_factory: Any, logged: Captured
) -> None:
    env = local_env_factory()
    pid = enroll_over_api(env, PHONE)
    sent_before = len(env.messages(pid))
    message = InboundMessage(
        provider="twilio",
        provider_message_id="SMstopcrisis",
        from_phone=PHONE,
        body="STOP. i want to end it all",
        received_at=datetime(2026, 3, 2, 13, 5, tzinfo=UTC),
    )
    # The opt-out reader takes a first sentence that is an opt-out word as an opt-out (rules/opt_out.py)
    decision = receive_text.receive_text(env.app, message)
    assert decision.action == "opted_out"
    participant = env.api("GET", f"/conversation/participants/{pid}").body["result"]
    assert participant["status"] == "paused" and participant["opted_out"] is True
    # Only the opt-out's confirmation goes out (no safety reply after a STOP)
    [confirmation] = env.messages(pid)[sent_before:]
    assert confirmation.body_text == OPT_OUT_CONFIRMATION
    # The team is told, and the participant is listed as needing a person
    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["hold"]["reason"] == "safety" and state["hold"]["detail"] == "suicide"
    alerts = [r for r in logged.records if "SAFETY ALERT" in r.getMessage()]
    assert [getattr(r, "opted_out", None) for r in alerts] == [True]
    # The message is in the transcript
    history = env.api("GET", f"/conversation/participants/{pid}/history").body["result"]["messages"]
    assert "STOP. i want to end it all" in [m["content"] for m in history]


def test_the_sns_adapter_publishes_the_alert_without_the_participants_words(local_env_factory: Any) -> None:
    env = local_env_factory()
    sns, sqs = aws_client("sns", env.settings), aws_client("sqs", env.settings)
    topic = sns.create_topic(Name="promptpipe-safety-alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="team-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    SnsTeamAlerts(topic, sns).safety_flag(ALERT)
    [received] = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(received["Body"])
    assert body["Subject"] == "Safety flag: participant p_1 (suicide)"
    assert "participant p_1" in body["Message"] and "Kind of signal: suicide" in body["Message"]


@pytest.mark.logs_errors
def test_a_failed_publish_is_logged_and_does_not_raise(local_env_factory: Any, logged: Captured) -> None:
    env = local_env_factory()

    class Broken:
        def safety_flag(self, alert: SafetyAlert) -> None:
            raise RuntimeError("SNS is down")

    alert_team(replace(env.app, alerts=Broken()), ALERT)
    assert any(r.getMessage() == "safety alert not published" for r in logged.records)
    alert_team(env.app, None)  # nothing flagged: nothing said


def test_the_log_adapter_says_who_and_what_kind_never_the_words(logged: Captured) -> None:
    LogTeamAlerts().safety_flag(replace(ALERT, opted_out=True))
    [record] = [r for r in logged.records if "SAFETY ALERT" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert (getattr(record, "participant_id", None), getattr(record, "category", None)) == ("p_1", "suicide")
    assert "opt-out" in replace(ALERT, opted_out=True).text() and "safety reply" in ALERT.text()
