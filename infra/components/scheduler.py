"""EventBridge Scheduler: the schedule group and the role the scheduler assumes (docs/architecture.md#timers).

Schedules themselves are created at run time by the functions (one per participant and timer). The
two target ARNs are computed from the fixed function names rather than taken from the function
constructs: the functions that create schedules need them in their environment, and the scheduled
prompt function creates schedules that target itself, which would otherwise be a cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.components import acknowledge, wildcard_resource_finding


class Scheduler(Construct):
    """``group``, ``role`` (invoke the two targets, send to the DLQ) and the target ARNs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: c.Config,
        dead_letter_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.group = scheduler.ScheduleGroup(self, "Group", schedule_group_name=config.schedule_group_name)
        self.timers_function_arn = _function_arn(stack, config.function_name(c.TIMERS))
        scheduled_prompt = config.function_name(c.SCHEDULED_PROMPT)
        self.scheduled_prompt_function_arn = _function_arn(stack, scheduled_prompt)
        # SnapStart snapshots exist only for published versions: schedules target the alias.
        self.scheduled_prompt_alias_arn = _function_arn(stack, f"{scheduled_prompt}:{c.LIVE_ALIAS}")
        self.schedules_arn = stack.format_arn(
            service="scheduler",
            resource="schedule",
            resource_name=f"{config.schedule_group_name}/*",
        )
        # The unanswered-turns sweep targets the worker, through its alias (its SnapStart version).
        self.worker_alias_arn = _function_arn(stack, f"{config.function_name(c.WORKER)}:{c.LIVE_ALIAS}")
        self.role = self._build_role(stack, dead_letter_queue)
        # The stack's own recurring schedules, in the account's default group (the participants'
        # group is listed and reconciled by participant id, and these belong to none of them).
        self._prefix, self._dead_letters = config.resource_prefix, dead_letter_queue
        # The pending-effects sweep (docs/architecture.md, "Effects that failed").
        self.sweep = self._periodic(
            ("PendingEffectsSweep", "pending-effects-sweep"),
            "Re-applies schedule changes that failed after their state was committed",
            f"rate({c.PENDING_EFFECTS_SWEEP_MINUTES} minutes)",
            (self.timers_function_arn, c.PENDING_EFFECTS_SWEEP_INPUT),
        )
        # The unanswered-turns sweep: the worker redrives the inbound dead-letter queue once the model
        # answers again (docs/reliability.md, "The record under faults").
        self.unanswered_sweep = self._periodic(
            ("UnansweredTurnsSweep", "unanswered-turns-sweep"),
            "Redrives the turns the model could not answer, once it answers again",
            f"rate({c.UNANSWERED_SWEEP_MINUTES} minutes)",
            (self.worker_alias_arn, c.UNANSWERED_SWEEP_INPUT),
        )
        # The daily study sweep (docs/studies.md): every study day gets its row, available or not.
        self.study_sweep = self._periodic(
            ("StudySweep", "study-sweep"),
            "Records each study day a participant had no decision, closes outcome windows",
            c.STUDY_SWEEP_CRON,
            (self.timers_function_arn, c.STUDY_SWEEP_INPUT),
        )

    def _build_role(self, stack: cdk.Stack, dead_letter_queue: sqs.IQueue) -> iam.Role:
        role = iam.Role(
            self,
            "Role",
            description="Assumed by EventBridge Scheduler to invoke the timers and scheduled prompt",
            assumed_by=iam.ServicePrincipal(
                c.SCHEDULER_SERVICE,
                # Confused-deputy guard: only schedules of this account may use the role.
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            ),
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"],
                resources=[
                    self.timers_function_arn,
                    self.scheduled_prompt_function_arn,
                    self.scheduled_prompt_alias_arn,
                    self.worker_alias_arn,
                ],
            )
        )
        role.add_to_policy(iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[dead_letter_queue.queue_arn]))
        return role

    def _periodic(
        self, ids: tuple[str, str], description: str, expression: str, target: tuple[str, str]
    ) -> scheduler.CfnSchedule:
        """A recurring sweep: ``ids`` its construct id and name (after the stack's prefix), ``target``
        the function ARN and its input. The next run redoes what a run missed (each sweep is
        idempotent), so no retries; a failed run goes to the dead-letter queue."""
        (construct_id, name), (target_arn, payload) = ids, target
        return scheduler.CfnSchedule(
            self,
            construct_id,
            name=f"{self._prefix}-{name}",
            description=description,
            schedule_expression=expression,
            flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"),
            target=scheduler.CfnSchedule.TargetProperty(
                arn=target_arn,
                role_arn=self.role.role_arn,
                input=payload,
                retry_policy=scheduler.CfnSchedule.RetryPolicyProperty(maximum_retry_attempts=0),
                dead_letter_config=scheduler.CfnSchedule.DeadLetterConfigProperty(arn=self._dead_letters.queue_arn),
            ),
        )

    def grant_manage_schedules(self, grantee: iam.IRole, actions: Sequence[str], *, pass_role: bool) -> None:
        """``actions`` on the schedules of this group; ``pass_role``: hand the scheduler its role
        (CreateSchedule / UpdateSchedule), and only that role, only to the scheduler."""
        grantee.add_to_principal_policy(iam.PolicyStatement(actions=list(actions), resources=[self.schedules_arn]))
        if pass_role:
            grantee.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["iam:PassRole"],
                    resources=[self.role.role_arn],
                    conditions={"StringEquals": {"iam:PassedToService": c.SCHEDULER_SERVICE}},
                )
            )
        acknowledge(
            grantee,
            (
                wildcard_resource_finding(self, self.schedules_arn),
                "Schedules are created at run time, one per participant and timer, with names "
                "unknown at deploy time; the wildcard is confined to this stack's schedule group.",
            ),
        )


def _function_arn(stack: cdk.Stack, name: str) -> str:
    return stack.format_arn(
        service="lambda",
        resource="function",
        resource_name=name,
        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
    )
