"""The one PromptPipe stack: it only composes the constructs and states the outputs."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra import constants as c
from infra.components.api import Api
from infra.components.functions import Functions
from infra.components.monitoring import Monitoring
from infra.components.queues import Queues
from infra.components.scheduler import Scheduler
from infra.components.secrets import Secrets
from infra.components.spend_cap import SpendCap
from infra.components.storage import Storage
from infra.components.team_alerts import TeamAlerts


class PromptPipeStack(cdk.Stack):
    """Storage, queues, secrets, scheduler, the five functions, the HTTP API and monitoring."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: c.Config,
        code: lambda_.Code | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.storage = Storage(self, "Storage")
        self.queues = Queues(self, "Queues", prefix=config.resource_prefix)
        self.secrets = Secrets(self, "Secrets", prefix=config.resource_prefix)
        self.scheduler = Scheduler(self, "Scheduler", config=config, dead_letter_queue=self.queues.scheduler_dlq)
        self.spend_cap = SpendCap(self, "SpendCap", config=config) if config.study_daily_spend_cap_usd else None
        self.functions = Functions(
            self,
            "Functions",
            config=config,
            code=code,  # None: each function's own bundle
            storage=self.storage,
            queues=self.queues,
            secrets=self.secrets,
            scheduler=self.scheduler,
            spend_cap_parameter=self.spend_cap.parameter_name if self.spend_cap else None,
        )
        self.api = Api(
            self,
            "Api",
            config=config,
            enrollment=self.functions.enrollment,
            webhook=self.functions.webhook,
        )
        # Twilio signs the exact URL it calls: this API's endpoint unless a custom domain is set.
        self.webhook_base_url = config.public_webhook_base_url or self.api.endpoint
        self.functions.webhook.add_environment("PUBLIC_WEBHOOK_BASE_URL", self.webhook_base_url)
        self.team_alerts = TeamAlerts(self, "TeamAlerts", config=config, functions=self.functions)
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            config=config,
            functions=self.functions.functions,
            dead_letter_queues=dict(self.queues.dead_letter_queues),
            inbound_queue=self.queues.inbound,
        )
        if self.spend_cap is not None:  # notifies like every other alarm, when it fires and clears
            action = cw_actions.SnsAction(self.monitoring.alarm_topic)
            self.spend_cap.alarm.add_alarm_action(action)
            self.spend_cap.alarm.add_ok_action(action)
        self._add_outputs()

    def _add_outputs(self) -> None:
        webhook_base = self.webhook_base_url
        outputs = {
            "ApiUrl": (self.api.endpoint, "HTTP API endpoint (participant routes need SigV4 / IAM)"),
            "TwilioWebhookUrl": (f"{webhook_base}{c.TWILIO_WEBHOOK_PATH}", "Twilio messaging webhook"),
            "WhatsAppWebhookUrl": (
                f"{webhook_base}{c.WHATSAPP_WEBHOOK_PATH}",
                "Meta WhatsApp Cloud API callback URL",
            ),
            "OpenAiSecretName": (self.secrets.openai_name, "Put the OpenAI key here"),
            "ChannelSecretName": (self.secrets.channel_name, "Put Twilio / WhatsApp credentials"),
            "TableName": (self.storage.table.table_name, "Single table"),
            "ScheduleGroupName": (self.config.schedule_group_name, "EventBridge Scheduler group"),
            "DashboardName": (self.monitoring.dashboard.dashboard_name, "CloudWatch dashboard"),
            "AlarmTopicArn": (self.monitoring.alarm_topic.topic_arn, "Every alarm notifies this SNS topic"),
            "SafetyAlertTopicArn": (self.team_alerts.topic.topic_arn, "Safety flags: subscribe the study team"),
        }
        for output_id, (value, description) in outputs.items():
            cdk.CfnOutput(self, output_id, value=value, description=description)
