"""CloudWatch alarms (every dead-letter queue, every function's errors), where they go, and the dashboard.

Every alarm notifies one SNS topic when it fires and when it recovers: the stack's own topic
(KMS-encrypted, TLS only; an e-mail subscription when the ``alarmEmail`` context is set), or the
topic named by ``alarmTopicArn``.

Application metrics are Powertools EMF in namespace ``PromptPipe`` with the ``service`` dimension
set to ``promptpipe`` on every function. Metrics with extra dimensions (module, tool/outcome,
target, reason, function) are graphed with SEARCH expressions, so new dimension values show up
without a redeploy.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c

_FIVE_MINUTES = cdk.Duration.minutes(5)
_ONE_DAY = cdk.Duration.days(1)
_WIDTH = 12  # two graphs per row (dashboard grid is 24 wide)


def _app_metric(name: str, statistic: str = "Sum", period: cdk.Duration = _FIVE_MINUTES) -> cw.Metric:
    return cw.Metric(
        namespace=c.METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": c.SERVICE_NAME},
        statistic=statistic,
        period=period,
        label=name,
    )


def _by_dimension(name: str, *dimensions: str, statistic: str = "Sum") -> cw.MathExpression:
    schema = ",".join((c.METRICS_NAMESPACE, "service", *dimensions))
    seconds = int(_FIVE_MINUTES.to_seconds())
    query = f'{{{schema}}} MetricName="{name}" service="{c.SERVICE_NAME}"'
    return cw.MathExpression(
        expression=f"SEARCH('{query}', '{statistic}', {seconds})",
        using_metrics={},
        label="",
        period=_FIVE_MINUTES,
    )


class Monitoring(Construct):
    """``alarms`` (by name), ``alarm_topic`` (every alarm's action) and ``dashboard``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: c.Config,
        functions: dict[str, lambda_.Function],
        dead_letter_queues: dict[str, sqs.IQueue],
        inbound_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self._functions = functions
        self._dead_letter_queues = dead_letter_queues
        self._inbound_queue = inbound_queue
        self.alarms: dict[str, cw.Alarm] = {}
        self._build_dlq_alarms()
        self._build_function_alarms()
        self._build_controller_alarm()
        self._build_webhook_alarm()
        self._build_delivery_alarm()
        self.alarm_topic = self._build_alarm_topic(config)
        action = cw_actions.SnsAction(self.alarm_topic)
        for alarm in self.alarms.values():
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)  # the all-clear, so nobody keeps chasing a recovered alarm
        self.dashboard = self._build_dashboard(config)

    # --- alarms ---------------------------------------------------------------------------

    def _build_alarm_topic(self, config: c.Config) -> sns.ITopic:
        if config.alarm_topic_arn:
            topic: sns.ITopic = sns.Topic.from_topic_arn(self, "AlarmTopic", config.alarm_topic_arn)
        else:
            topic = self._build_own_topic(config)
        if config.alarm_email:
            # AWS mails a confirmation link first: nothing is delivered until it is followed.
            topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        return topic

    def _build_own_topic(self, config: c.Config) -> sns.Topic:
        stack = cdk.Stack.of(self)
        cloudwatch = iam.ServicePrincipal("cloudwatch.amazonaws.com")
        # CloudWatch cannot publish to a topic under the AWS managed key (aws/sns): its key policy
        # cannot name CloudWatch. A key of the stack's own, which lets CloudWatch use it, then.
        key = kms.Key(
            self,
            "AlarmTopicKey",
            description=f"Encrypts the {config.resource_prefix} alarm topic",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.DESTROY,  # protects transient notifications only
            pending_window=cdk.Duration.days(7),
        )
        key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[cloudwatch],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            )
        )
        topic = sns.Topic(
            self,
            "AlarmTopic",
            topic_name=f"{config.resource_prefix}-alarms",
            display_name="PromptPipe alarms",
            master_key=key,
            enforce_ssl=True,
        )
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[cloudwatch],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": stack.format_arn(
                            service="cloudwatch",
                            resource="alarm",
                            resource_name="*",
                            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                        )
                    },
                },
            )
        )
        return topic

    def _build_dlq_alarms(self) -> None:
        for name, queue in self._dead_letter_queues.items():
            # Anything in a dead-letter queue is a lost turn, prompt or timer until redriven.
            self.alarms[name] = cw.Alarm(
                self,
                f"{name}NotEmpty",
                alarm_description=f"{name}: messages waiting (failed deliveries to inspect/redrive)",
                metric=queue.metric_approximate_number_of_messages_visible(
                    period=cdk.Duration.minutes(1), statistic="Maximum"
                ),
                threshold=0,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )

    def _build_function_alarms(self) -> None:
        for key, fn in self._functions.items():
            name = f"{''.join(p.capitalize() for p in key.split('-'))}Errors"
            self.alarms[name] = cw.Alarm(
                self,
                name,
                alarm_description=f"Lambda {key}: invocation errors",
                metric=fn.metric_errors(period=_FIVE_MINUTES, statistic="Sum"),
                threshold=0,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )

    def _build_controller_alarm(self) -> None:
        # The flow controller put a participant on hold (HANDOFF or DEADLOCK): a person should look
        # (GET …/participants/{id}/state shows why; a state override resumes). docs/controller.md
        self._app_alarm("NeedsPerson", "A participant's intake needs a person (flow controller handoff or deadlock)")
        # The safety screen flagged a message (docs/safety.md): the participant is held; call them.
        self._app_alarm(
            "SafetyFlag", "The safety screen flagged a participant's message: a person must contact them now"
        )

    def _build_delivery_alarm(self) -> None:
        # A message that stays failed: refused for good by the provider, or reported undelivered
        # later (docs/reliability.md, "The record under faults"); the transcript shows which.
        self._app_alarm("MessagesNotDelivered", "A message to a participant stayed undelivered (failed for good)")

    def _build_webhook_alarm(self) -> None:
        # A webhook without its signing secret (missing, or the channel secret unreadable) answers
        # every provider post 503: the providers retry, then give up, and no message gets in.
        self._app_alarm(
            "WebhookMisconfigured", "A webhook has no readable signing secret: every provider post is refused (503)"
        )

    def _app_alarm(self, name: str, description: str) -> None:
        """An alarm on one of the application's own metrics: any count in five minutes."""
        self.alarms[name] = cw.Alarm(
            self,
            name,
            alarm_description=description,
            metric=_app_metric(name),
            threshold=0,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )

    # --- dashboard ------------------------------------------------------------------------

    def _build_dashboard(self, config: c.Config) -> cw.Dashboard:
        dashboard = cw.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"{config.resource_prefix}-overview",
            default_interval=cdk.Duration.days(7),
        )
        dashboard.add_widgets(
            cw.TextWidget(
                markdown="# PromptPipe\nConversation turns, LLM usage, daily prompts, reminders, "
                "errors and dead-letter queues. Application metrics: Powertools EMF, namespace "
                f"`{c.METRICS_NAMESPACE}`, service `{c.SERVICE_NAME}`.",
                width=24,
                height=2,
            )
        )
        for row in (
            self._conversation_row(),
            self._llm_row(),
            self._programme_row(),
            self._errors_row(),
            self._queues_row(),
        ):
            dashboard.add_widgets(*row)
        dashboard.add_widgets(cw.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms.values()), width=24))
        return dashboard

    def _conversation_row(self) -> list[cw.IWidget]:
        return [
            cw.GraphWidget(
                title="Turns processed (by module)",
                left=[_by_dimension(c.METRIC_TURNS, "module")],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Tool calls (by tool, outcome)",
                left=[_by_dimension(c.METRIC_TOOL_CALLS, "outcome", "tool")],
                width=_WIDTH,
            ),
        ]

    def _llm_row(self) -> list[cw.IWidget]:
        return [
            cw.GraphWidget(
                title="LLM calls and latency",
                left=[_app_metric(c.METRIC_LLM_CALLS)],
                right=[
                    _app_metric(c.METRIC_LLM_LATENCY, "Average"),
                    _app_metric(c.METRIC_LLM_LATENCY, "p95").with_(label="LLMLatencyMs p95"),
                ],
                right_y_axis=cw.YAxisProps(label="ms", show_units=False),
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="LLM tokens",
                left=[_app_metric(c.METRIC_LLM_PROMPT_TOKENS), _app_metric(c.METRIC_LLM_COMPLETION_TOKENS)],
                stacked=True,
                width=_WIDTH,
            ),
        ]

    def _programme_row(self) -> list[cw.IWidget]:
        return [
            cw.GraphWidget(
                title="Daily prompts delivered (per day)",
                left=[_app_metric(c.METRIC_DAILY_PROMPTS, period=_ONE_DAY)],
                view=cw.GraphWidgetView.BAR,
                width=8,
            ),
            cw.GraphWidget(
                title="Reminders, auto-feedback, feedback nudges, opt-outs",
                left=[
                    _app_metric(c.METRIC_REMINDERS),
                    _app_metric(c.METRIC_AUTO_FEEDBACK),
                    _app_metric(c.METRIC_FEEDBACK_NUDGES),
                    _app_metric(c.METRIC_OPT_OUTS),
                ],
                width=8,
            ),
            cw.GraphWidget(
                title="State transitions (by target)",
                left=[_by_dimension(c.METRIC_STATE_TRANSITIONS, "target")],
                width=8,
            ),
        ]

    def _errors_row(self) -> list[cw.IWidget]:
        return [
            cw.GraphWidget(
                title="Application errors (by function), state save failures",
                left=[_by_dimension(c.METRIC_ERRORS, "function")],
                right=[_app_metric(c.METRIC_STATE_SAVE_FAILURES)],
                width=8,
            ),
            cw.GraphWidget(
                title="Lambda errors",
                left=[
                    fn.metric_errors(period=_FIVE_MINUTES, statistic="Sum", label=key)
                    for key, fn in self._functions.items()
                ],
                width=8,
            ),
            cw.GraphWidget(
                title="Webhooks rejected (by reason)",
                left=[_by_dimension(c.METRIC_WEBHOOK_REJECTED, "reason")],
                width=8,
            ),
        ]

    def _queues_row(self) -> list[cw.IWidget]:
        return [
            cw.GraphWidget(
                title="Dead-letter queue depth",
                left=[
                    queue.metric_approximate_number_of_messages_visible(
                        period=cdk.Duration.minutes(1), statistic="Maximum", label=name
                    )
                    for name, queue in self._dead_letter_queues.items()
                ],
                width=_WIDTH,
            ),
            cw.GraphWidget(
                title="Inbound queue: backlog and oldest message age",
                left=[
                    self._inbound_queue.metric_approximate_number_of_messages_visible(
                        period=cdk.Duration.minutes(1), statistic="Maximum", label="visible"
                    )
                ],
                right=[
                    self._inbound_queue.metric_approximate_age_of_oldest_message(
                        period=cdk.Duration.minutes(1), statistic="Maximum", label="oldest (s)"
                    )
                ],
                width=_WIDTH,
            ),
        ]
