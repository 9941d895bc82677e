"""SqsTurnQueue and the local inbound queue/schedule group against moto (docs/architecture.md#timers)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from promptpipe.adapters.aws import AwsClient, LocalResources, aws_client, create_local_resources
from promptpipe.adapters.sqs_queue import QueueError, SqsTurnQueue
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from promptpipe.settings import Settings

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
P1 = "p_" + "1" * 32
P2 = "p_" + "2" * 32


def turn(participant_id: str, event_id: str, body: str = "hello") -> TurnEvent:
    return TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant_id,
        event_id=event_id,
        message=InboundMessage(
            provider="twilio",
            provider_message_id=event_id,
            from_phone="+15551230001",
            body=body,
            received_at=T0,
        ),
        enqueued_at=T0,
    )


class Env:
    def __init__(self, settings: Settings, resources: LocalResources, sqs: AwsClient) -> None:
        self.settings = settings
        self.resources = resources
        self.sqs = sqs
        self.queue = SqsTurnQueue(resources.inbound_queue_url, sqs)

    def receive_all(self) -> list[dict[str, Any]]:
        """Drain the queue, deleting as we go (a FIFO group delivers its next message only then)."""
        received: list[dict[str, Any]] = []
        while True:
            messages = self.sqs.receive_message(
                QueueUrl=self.resources.inbound_queue_url,
                MaxNumberOfMessages=10,
                AttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not messages:
                return received
            for message in messages:
                received.append(message)
                self.sqs.delete_message(
                    QueueUrl=self.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"]
                )


@pytest.fixture
def env(aws: None) -> Iterator[Env]:
    settings = Settings(schedule_group_name="pp-test", aws_endpoint_url=None)
    sqs = aws_client("sqs", settings)
    yield Env(settings, create_local_resources(settings, sqs=sqs), sqs)


def test_enqueue_sends_the_event_in_the_participants_group(env: Env) -> None:
    # Given a turn
    event = turn(P1, "SM123")

    # When it is enqueued
    env.queue.enqueue(event)

    # Then one message carries it, grouped by participant and deduplicated by event id
    (message,) = env.receive_all()
    assert TurnEvent.model_validate_json(message["Body"]) == event
    assert message["Attributes"]["MessageGroupId"] == P1
    assert message["Attributes"]["MessageDeduplicationId"] == hashlib.sha256(b"SM123").hexdigest()


# SQS takes only these characters in a message body (moto does not check; AWS answers
# InvalidMessageContents, which would be a 5xx at the webhook).
SQS_BODY_CHARACTERS = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


@pytest.mark.parametrize("body", ["\ufffe", "a\uffffb", "\x00\x0b\x1f", "ok \U0010ffff \ud7ff \ue000 \ufffd"])
def test_a_body_with_characters_sqs_refuses_is_escaped_and_round_trips(env: Env, body: str) -> None:
    # Given a message whose text holds characters SQS does not take raw (U+FFFE, U+FFFF, controls)
    event = turn(P1, f"SM-{body.encode().hex()}", body)
    # When it is enqueued / Then the SQS body is made of allowed characters only, and reads back the same
    env.queue.enqueue(event)
    (message,) = env.receive_all()
    assert SQS_BODY_CHARACTERS.fullmatch(message["Body"])
    assert TurnEvent.model_validate_json(message["Body"]) == event


def test_same_event_twice_is_delivered_once(env: Env) -> None:
    # Given a provider that retried its webhook
    env.queue.enqueue(turn(P1, "SM1", "first"))
    env.queue.enqueue(turn(P1, "SM1", "first (retry)"))

    # Then one message is delivered
    bodies = [TurnEvent.model_validate_json(m["Body"]).message for m in env.receive_all()]
    assert [m.body for m in bodies if m] == ["first"]


def test_turns_of_one_participant_stay_in_order(env: Env) -> None:
    for i in range(5):
        env.queue.enqueue(turn(P1, f"SM{i}", f"m{i}"))
    env.queue.enqueue(turn(P2, "WA1", "other"))
    received = [TurnEvent.model_validate_json(m["Body"]) for m in env.receive_all()]
    assert [e.event_id for e in received if e.participant_id == P1] == [f"SM{i}" for i in range(5)]
    assert [e.event_id for e in received if e.participant_id == P2] == ["WA1"]


def test_queue_failures_are_queue_errors(env: Env) -> None:
    missing = SqsTurnQueue(env.resources.inbound_queue_url.replace("inbound", "nowhere"), env.sqs)
    with pytest.raises(QueueError, match="SM1"):
        missing.enqueue(turn(P1, "SM1"))


# --- local resources and clients ------------------------------------------------------------------------
def test_local_queue_dlq_and_schedule_group_are_created_once(env: Env) -> None:
    # When the resources are created again
    again = create_local_resources(env.settings, sqs=env.sqs)

    # Then the same queue, DLQ and group come back
    assert again == env.resources
    assert env.resources.inbound_queue_url.endswith("/promptpipe-inbound.fifo")
    attributes = env.sqs.get_queue_attributes(QueueUrl=env.resources.inbound_queue_url, AttributeNames=["All"])[
        "Attributes"
    ]
    assert attributes["FifoQueue"] == "true"
    assert attributes["ContentBasedDeduplication"] == "false"
    redrive = json.loads(attributes["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == env.resources.inbound_dlq_arn
    assert int(redrive["maxReceiveCount"]) == 3
    dlq = env.sqs.get_queue_attributes(QueueUrl=env.resources.inbound_dlq_url, AttributeNames=["FifoQueue"])
    assert dlq["Attributes"]["FifoQueue"] == "true"
    group = aws_client("scheduler", env.settings).get_schedule_group(Name="pp-test")
    assert group["Arn"] == env.resources.schedule_group_arn
    assert env.resources.schedule_group_name == "pp-test"


def test_aws_client_uses_settings_region_endpoint_and_retry_config(aws: None) -> None:
    settings = Settings(aws_region="eu-west-1", aws_endpoint_url="http://127.0.0.1:5055")
    client = aws_client("sqs", settings)
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.endpoint_url == "http://127.0.0.1:5055"
    config = client.meta.config
    # botocore's max_attempts=5 counts retries: six attempts in all
    assert config.retries == {"mode": "standard", "total_max_attempts": 6}
    assert (config.connect_timeout, config.read_timeout) == (2, 10)


def test_a_turn_redriven_three_times_stays_in_the_dead_letter_queue(local_env_factory) -> None:
    # Given a turn in the inbound dead-letter queue that was redriven three times already
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.sqs_queue import MAX_REDRIVES, REDRIVES, SqsDeadLetters

    env = local_env_factory()
    sqs = aws_client("sqs", env.settings)
    dlq, queue = env.resources.inbound_dlq_url, env.resources.inbound_queue_url
    for n, redrives in enumerate((MAX_REDRIVES, 0)):
        sqs.send_message(
            QueueUrl=dlq,
            MessageBody=f"turn {n}",
            MessageGroupId=f"p{n}",
            MessageDeduplicationId=f"d{n}",
            MessageAttributes={REDRIVES: {"DataType": "Number", "StringValue": str(redrives)}},
        )
    dead_letters = SqsDeadLetters(dlq, queue, sqs)
    assert dead_letters.waiting() == 2
    # When the sweep redrives: only the other one goes back, counted once more
    assert dead_letters.redrive(10) == 1
    [back] = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=["All"])["Messages"]
    assert back["Body"] == "turn 1" and back["MessageAttributes"][REDRIVES]["StringValue"] == "1"
