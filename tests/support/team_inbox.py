"""The study team's alert topic on moto, with a queue subscribed to read what it published."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from promptpipe.adapters.aws import aws_client
from promptpipe.settings import Settings

TOPIC_NAME = "promptpipe-safety-alerts"


@dataclass(frozen=True)
class TeamInbox:
    sns: Any
    sqs: Any
    topic_arn: str
    queue_url: str

    def received(self) -> list[dict[str, Any]]:
        """What the topic published since the last read (each SNS envelope, read once)."""
        messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
        for message in messages:
            self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return [json.loads(message["Body"]) for message in messages]


def team_inbox(settings: Settings) -> TeamInbox:
    """The topic (created, or found: its ARN is its name's) and a queue subscribed to it."""
    sns, sqs = aws_client("sns", settings), aws_client("sqs", settings)
    topic = sns.create_topic(Name=TOPIC_NAME)["TopicArn"]
    queue = sqs.create_queue(QueueName="team-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    return TeamInbox(sns, sqs, topic, queue)
