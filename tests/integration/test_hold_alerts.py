"""Nobody missed (docs/safety.md, "Asking for a person"), on the local stack: a participant who asks
for a person is held before any model reads the message and told a person will follow up; the study
team is told of each new hold once, after the commit, with a link to the console (SNS on moto)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.team_alerts import LogTeamAlerts, SnsTeamAlerts
from promptpipe.models.alerts import HoldAlert, SafetyAlert
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.usecases import receive_text
from promptpipe.usecases.hold_alerts import new_hold_alert
from tests.support import enroll_over_api, hand_off_a_new_participant
from tests.support.logs import Captured

PHONE = "+12125550163"


@dataclass
class RecordingAlerts:
    holds: list[HoldAlert] = field(default_factory=list)
    safety: list[SafetyAlert] = field(default_factory=list)

    def safety_flag(self, alert: SafetyAlert) -> None:
        self.safety.append(alert)

    def hold_placed(self, alert: HoldAlert) -> None:
        self.holds.append(alert)


def _text(env: Any, body: str, sid: str, minute: int) -> None:
    message = InboundMessage(
        provider="twilio",
        provider_message_id=sid,
        from_phone=PHONE,
        body=body,
        received_at=datetime(2026, 3, 2, 13, minute, tzinfo=UTC),
    )
    receive_text.receive_text(env.app, message)
    env.drain()


def test_asking_for_a_person_holds_replies_once_and_alerts_the_team_once(local_env_factory: Any) -> None:
    env = local_env_factory()
    alerts = RecordingAlerts()
    env.use_ports(alerts=alerts)
    pid = enroll_over_api(env, PHONE, name="Rosa")
    sent_before = len(env.messages(pid))

    _text(env, "ok thanks. ¿puedo hablar con una persona?", "SMask1", 5)

    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["hold"]["reason"] == "asked"
    [reply] = env.messages(pid)[sent_before:]
    assert "Una persona de nuestro equipo" in reply.body_text  # the hold's reply, in their language
    assert [(a.participant_id, a.reason) for a in alerts.holds] == [(pid, HoldReason.ASKED)]
    # A second message while held: recorded, no second reply today, no second alert
    _text(env, "hello??", "SMask2", 9)
    assert len(env.messages(pid)) == sent_before + 1
    assert len(alerts.holds) == 1 and alerts.safety == []


def test_a_hand_off_from_repeated_failure_alerts_the_team_once(local_env_factory: Any) -> None:
    env = local_env_factory()
    alerts = RecordingAlerts()
    env.use_ports(alerts=alerts)
    pid = hand_off_a_new_participant(env, "+14165550199")
    env.drain()
    assert [(a.participant_id, a.reason) for a in alerts.holds] == [(pid, HoldReason.HANDOFF)]


def test_only_the_event_that_placed_a_hold_alerts() -> None:
    hold = ConversationHold(reason=HoldReason.ASKED, since=datetime(2026, 3, 2, tzinfo=UTC), set_by="x", event_id="e1")
    assert new_hold_alert("p_1", "e1", hold) == HoldAlert(
        participant_id="p_1", reason=HoldReason.ASKED, since=hold.since
    )
    assert new_hold_alert("p_1", "e2", hold) is None  # an older hold: told already
    assert new_hold_alert("p_1", "e1", None) is None
    assert new_hold_alert("p_1", "e1", hold.model_copy(update={"reason": HoldReason.STAFF})) is None


def test_the_sns_alert_links_the_participants_page(local_env_factory: Any) -> None:
    env = local_env_factory()
    sns, sqs = aws_client("sns", env.settings), aws_client("sqs", env.settings)
    topic = sns.create_topic(Name="promptpipe-safety-alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="team-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    alerts = SnsTeamAlerts(topic, sns, "https://console.example.org/")
    alerts.hold_placed(HoldAlert(participant_id="p_1", reason=HoldReason.ASKED))
    alerts.safety_flag(SafetyAlert(participant_id="p_2", category="suicide", language="en", region="US"))
    bodies = [json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]]
    by_subject = {b["Subject"]: b["Message"] for b in bodies}
    asked = by_subject["Needs a person: participant p_1 (asked for a person)"]
    assert "Their page: https://console.example.org/participants/p_1" in asked
    assert "https://console.example.org/participants/p_2" in by_subject["Safety flag: participant p_2 (suicide)"]


def test_the_log_adapter_names_the_reason(logged: Captured) -> None:
    alert = HoldAlert(participant_id="p_1", reason=HoldReason.HANDOFF)
    LogTeamAlerts().hold_placed(alert)
    [record] = [r for r in logged.records if "HOLD ALERT" in r.getMessage()]
    assert getattr(record, "why", None) == "repeated failure"
    assert "Read the transcript in the console" in alert.text()


def test_the_coachs_tool_holds_for_a_request_in_other_words(local_env_factory: Any) -> None:
    from promptpipe.adapters.scripted_llm import ScriptedLLM
    from promptpipe.controller.tool_table import ASK_PERSON

    llm = ScriptedLLM(
        [
            ScriptedLLM.text("Hi Rosa, I'm your habit coach!"),
            ScriptedLLM.tool_call(ASK_PERSON.name, {}),
            ScriptedLLM.text("Of course: a member of the study team will follow up with you."),
        ]
    )
    env = local_env_factory(llm=llm)
    alerts = RecordingAlerts()
    env.use_ports(alerts=alerts)
    pid = enroll_over_api(env, PHONE, name="Rosa")
    env.drain()
    sent_before = len(env.messages(pid))

    _text(env, "whoever runs this study, i have questions for them", "SMtool1", 5)

    state = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["hold"]["reason"] == "asked" and state["hold"]["set_by"] == "coach"
    # The placing turn's own reply goes out; then the coach is held
    assert [m.body_text for m in env.messages(pid)[sent_before:]] == [
        "Of course: a member of the study team will follow up with you."
    ]
    assert [(a.participant_id, a.reason) for a in alerts.holds] == [(pid, HoldReason.ASKED)]


class FlakySns:
    """The SNS client with one fault: before the publish reaches the topic (``lost=False``), or
    after it did, its answer lost (``lost=True``)."""

    def __init__(self, sns: Any, *, lost: bool) -> None:
        self._sns, self._lost, self.faults = sns, lost, 1

    def publish(self, **request: Any) -> Any:
        if self.faults and not self._lost:
            self.faults -= 1
            raise ConnectionError("SNS endpoint unreachable")
        answer = self._sns.publish(**request)
        if self.faults:
            self.faults -= 1
            raise ConnectionError("read timeout: the answer was lost")
        return answer


def _team_topic(env: Any, *, lost: bool) -> Any:
    """The study team's topic on moto, with a queue subscribed to read what it published."""
    sns, sqs = aws_client("sns", env.settings), aws_client("sqs", env.settings)
    topic = sns.create_topic(Name="promptpipe-safety-alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="team-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    env.use_ports(alerts=SnsTeamAlerts(topic, FlakySns(sns, lost=lost), "https://console.example.org"))

    def published() -> list[dict[str, Any]]:
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
        return [json.loads(m["Body"]) for m in got]

    return published


@pytest.mark.logs_errors
def test_a_crash_before_the_publish_is_published_once_by_the_redelivery(local_env_factory: Any) -> None:
    env = local_env_factory()
    published = _team_topic(env, lost=False)
    pid = enroll_over_api(env, PHONE, name="Rosa")
    sent_before = len(env.messages(pid))

    _text(env, "can i talk to someone from the study", "SMcrash1", 5)  # the worker fails once, SQS redelivers

    [message] = published()
    assert message["Subject"] == f"Needs a person: participant {pid} (asked for a person)"
    assert f"Their page: https://console.example.org/participants/{pid}" in message["Message"]
    assert len(env.messages(pid)) == sent_before + 1  # the hold's reply went once


@pytest.mark.logs_errors
def test_a_lost_answer_publishes_again_with_the_same_reference(local_env_factory: Any) -> None:
    # SNS standard topics do not deduplicate: at least once, and the reference tells it is one hold.
    env = local_env_factory()
    published = _team_topic(env, lost=True)
    pid = enroll_over_api(env, PHONE, name="Rosa")

    _text(env, "can i talk to someone from the study", "SMcrash2", 5)

    copies = published()
    assert len(copies) == 2
    references = {line for m in copies for line in m["Message"].splitlines() if line.startswith("Hold reference:")}
    assert len(references) == 1 and pid in references.pop()
