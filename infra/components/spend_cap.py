"""The study's daily model spend cap (docs/safety.md#budgets).

An alarm on the application's ``ModelCostUSD`` metric (every model call's estimated cost, published
with the event's other metrics) summed over a day; an EventBridge rule copies each of its state
changes into one SSM parameter (an Express Step Functions state machine calling ``ssm:PutParameter``:
no function of our own); the model-calling functions read that parameter through their cached
settings reader and let the offline coach answer while it says ``ALARM``. Nothing is written per
model call: the metric is emitted with the event's others, the parameter only when the alarm moves.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_logs as logs
from aws_cdk import aws_ssm as ssm
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra import constants as c
from infra.components import acknowledge, retention

COST_METRIC = "ModelCostUSD"


class SpendCap(Construct):
    """``parameter`` / ``parameter_name`` (the alarm's state, read by the functions), ``alarm`` and
    ``state_machine``."""

    def __init__(self, scope: Construct, construct_id: str, *, config: c.Config) -> None:
        super().__init__(scope, construct_id)
        self.parameter_name = f"/{config.resource_prefix}/spend-cap/state"  # a literal: the functions' environment
        self.parameter = ssm.StringParameter(
            self,
            "State",
            parameter_name=self.parameter_name,
            string_value="OK",
            description="The study's daily spend-cap alarm state (ALARM: the offline coach answers)",
        )
        self.alarm = cw.Alarm(
            self,
            "StudyDailySpendCap",
            alarm_description=(
                f"The study's estimated model spend today passed its cap (USD {config.study_daily_spend_cap_usd}): "
                "the offline coach answers until it clears"
            ),
            metric=cw.Metric(
                namespace=c.METRICS_NAMESPACE,
                metric_name=COST_METRIC,
                dimensions_map={"service": c.SERVICE_NAME},
                statistic="Sum",
                period=cdk.Duration.days(1),
            ),
            threshold=config.study_daily_spend_cap_usd,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        self.state_machine = self._build_copier(config)
        events.Rule(
            self,
            "OnAlarmChange",
            description="Copies the spend-cap alarm's state into its parameter",
            event_pattern=events.EventPattern(
                source=["aws.cloudwatch"],
                detail_type=["CloudWatch Alarm State Change"],
                resources=[self.alarm.alarm_arn],
            ),
            targets=[targets.SfnStateMachine(self.state_machine)],
        )

    def _build_copier(self, config: c.Config) -> sfn.StateMachine:
        copy = tasks.CallAwsService(
            self,
            "CopyState",
            service="ssm",
            action="putParameter",
            parameters={
                "Name": self.parameter_name,
                "Value": sfn.JsonPath.string_at("$.detail.state.value"),
                "Type": "String",
                "Overwrite": True,
            },
            iam_resources=[self.parameter.parameter_arn],
        )
        log_group = logs.LogGroup(
            self,
            "CopierLogs",
            retention=retention(config.log_retention_days),
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        machine = sfn.StateMachine(
            self,
            "Copier",
            state_machine_type=sfn.StateMachineType.EXPRESS,
            definition_body=sfn.DefinitionBody.from_chainable(copy),
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL),
            tracing_enabled=True,
            timeout=cdk.Duration.minutes(1),
        )
        acknowledge(
            machine.role,
            (
                "AwsSolutions-IAM5[Resource::*]",
                "Step Functions' log delivery (logs:*LogDelivery*, DescribeLogGroups, resource policies) and "
                "X-Ray tracing support no resource-level permissions; the one SSM write names its parameter.",
            ),
        )
        return machine
