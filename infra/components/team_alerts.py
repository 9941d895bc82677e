"""The study team's alert topic (docs/safety.md): a safety flag publishes here at once.

KMS-encrypted with a key of its own and TLS only, like the alarm topic. The functions the access
table names (``infra/access.py``, ``team_alerts``: the worker, the webhook for a crisis inside an
opt-out, the scheduled-prompt function for a hold a daily firing places, the timers function for the
hold alerts its sweep publishes) may publish to it and use its
key for that, nothing else; they find it in ``SAFETY_ALERT_TOPIC_ARN``. Subscribe the study team to
the ``SafetyAlertTopicArn`` output (the stack subscribes nobody: who answers a crisis is the study's
decision). The ``SafetyFlag`` alarm (monitoring, on the alarm topic) is the second way a flag reaches
someone.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct

from infra import constants as c
from infra.access import access_for
from infra.components.functions import Functions

TOPIC_ENVIRONMENT = "SAFETY_ALERT_TOPIC_ARN"
CONSOLE_URL_ENVIRONMENT = "CONSOLE_URL"


class TeamAlerts(Construct):
    """``topic`` and its ``key``; grants and environment on the functions that alert."""

    def __init__(self, scope: Construct, construct_id: str, *, config: c.Config, functions: Functions) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "SafetyAlertTopicKey",
            description=f"Encrypts the {config.resource_prefix} safety alert topic",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.DESTROY,  # protects transient notifications only
            pending_window=cdk.Duration.days(7),
        )
        self.topic = sns.Topic(
            self,
            "SafetyAlertTopic",
            topic_name=f"{config.resource_prefix}-safety-alerts",
            display_name="PromptPipe safety alerts",
            master_key=self.key,
            enforce_ssl=True,
        )
        for key, access in access_for(config).items():
            if not access.team_alerts:
                continue
            role = functions.roles[key]
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=list(access.team_alerts), resources=[self.topic.topic_arn])
            )
            # Publishing to an encrypted topic encrypts the message with the topic's key.
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["kms:GenerateDataKey", "kms:Decrypt"], resources=[self.key.key_arn])
            )
            functions.functions[key].add_environment(TOPIC_ENVIRONMENT, self.topic.topic_arn)
            if config.console_url:  # each alert links the participant's page (docs/safety.md)
                functions.functions[key].add_environment(CONSOLE_URL_ENVIRONMENT, config.console_url)
