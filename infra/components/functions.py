"""The five Lambda functions, each with its own role and log group.

Each role gets exactly what ``infra/access.py`` lists for its function (checked against a run of the
code by ``tests/infra/test_iam_derived.py``): no CDK ``grant_*`` helper, which would add actions the
code never calls."""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.access import access_for
from infra.bundling import FUNCTION_EXTRAS, function_code
from infra.components import acknowledge, retention, wildcard_resource_finding
from infra.components.queues import Queues
from infra.components.scheduler import Scheduler
from infra.components.secrets import Secrets
from infra.components.storage import Storage

_RUNTIME = lambda_.Runtime.PYTHON_3_12
_L1_REASON = (
    "Pinned to python3.12: the bundled wheels are built for cp312 and SnapStart for Python is "
    "validated on 3.12; moving to a newer runtime is a deliberate, tested change."
)
_XRAY_REASON = (
    "X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions "
    "(statement added by CDK for active tracing)."
)
_LIST_REASON = " scheduler:ListSchedules (reconciling a participant's schedules) has none either."


def _pascal(key: str) -> str:
    return "".join(part.capitalize() for part in key.split("-"))


class Functions(Construct):
    """``enrollment``, ``webhook``, ``worker``, ``scheduled_prompt``, ``timers`` (plus ``roles``,
    ``log_groups``, and the ``live`` aliases ``worker_alias`` and ``scheduled_prompt_alias``)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: c.Config,
        code: lambda_.Code | None,
        storage: Storage,
        queues: Queues,
        secrets: Secrets,
        scheduler: Scheduler,
        spend_cap_parameter: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._spend_cap = spend_cap_parameter  # the spend-cap alarm's state (docs/safety.md#budgets)
        self._access = access_for(config)
        self._code = code
        self._bundles: dict[tuple[str, ...], lambda_.Code] = {}
        self._storage = storage
        self._queues = queues
        self._secrets = secrets
        self._scheduler = scheduler
        self.roles: dict[str, iam.Role] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        self.functions: dict[str, lambda_.Function] = {}

        self.enrollment = self._build_enrollment()
        self.webhook = self._build_webhook()
        self.worker, self.worker_alias = self._build_worker()
        self.scheduled_prompt, self.scheduled_prompt_alias = self._build_scheduled_prompt()
        self.timers = self._build_timers()
        self._acknowledge_common_findings()

    # --- one method per function: environment and grants ---------------------------------

    def _build_enrollment(self) -> lambda_.Function:
        # The routes allow-list too: a participant's model route is checked when it is set.
        environment = {"INBOUND_QUEUE_URL": self._queues.inbound.queue_url, **self._model_endpoints_environment()}
        fn = self._build_function(c.ENROLLMENT, environment)
        self._grant(c.ENROLLMENT)
        return fn

    def _build_webhook(self) -> lambda_.Function:
        # Light on purpose: no LLM; the worker does the work.
        # PUBLIC_WEBHOOK_BASE_URL is added by the stack once the API exists.
        fn = self._build_function(c.WEBHOOK, {"INBOUND_QUEUE_URL": self._queues.inbound.queue_url})
        self._grant(c.WEBHOOK)
        return fn

    def _build_worker(self) -> tuple[lambda_.Function, lambda_.Alias]:
        environment = {
            **self._llm_environment(),
            # the unanswered-turns sweep: from the dead-letter queue back to the inbound queue
            "INBOUND_QUEUE_URL": self._queues.inbound.queue_url,
            "INBOUND_DLQ_URL": self._queues.inbound_dlq.queue_url,
        }
        fn = self._build_function(c.WORKER, environment)
        self._grant(c.WORKER)
        alias = lambda_.Alias(self, "WorkerLive", alias_name=c.LIVE_ALIAS, version=fn.current_version)
        # Through the alias, so that messages are handled by the SnapStart snapshot of a version. A
        # plain mapping rather than SqsEventSource, which would also grant ChangeMessageVisibility
        # and GetQueueUrl: the poller needs only what infra/access.py lists.
        mapping = alias.add_event_source_mapping(
            "InboundQueue",
            event_source_arn=self._queues.inbound.queue_arn,
            batch_size=c.WORKER_BATCH_SIZE,
            report_batch_item_failures=True,
            # docs/safety.md#limits-at-the-edge: a burst waits in the queue rather than being received
            # by invocations Lambda then throttles (each such receive counts towards the DLQ).
            max_concurrency=self._config.worker_max_concurrency,
        )
        # Lambda checks the role's queue rights when it creates the mapping.
        mapping.node.add_dependency(self.roles[c.WORKER.key])
        return fn, alias

    def _build_scheduled_prompt(self) -> tuple[lambda_.Function, lambda_.Alias]:
        fn = self._build_function(
            c.SCHEDULED_PROMPT, self._llm_environment(), dead_letter_queue=self._queues.scheduler_dlq
        )
        self._grant(c.SCHEDULED_PROMPT)
        alias = lambda_.Alias(
            self,
            "ScheduledPromptLive",
            alias_name=c.LIVE_ALIAS,
            version=fn.current_version,
            # The scheduler invokes asynchronously; the alias has its own async settings.
            retry_attempts=c.ASYNC_RETRY_ATTEMPTS,
            max_event_age=cdk.Duration.hours(c.ASYNC_MAX_EVENT_AGE_HOURS),
        )
        return fn, alias

    def _build_timers(self) -> lambda_.Function:
        # No SnapStart: it never calls the LLM (no openai import), only the messenger.
        fn = self._build_function(c.TIMERS, {}, dead_letter_queue=self._queues.scheduler_dlq)
        self._grant(c.TIMERS)
        return fn

    # --- shared pieces --------------------------------------------------------------------

    def _model_endpoints_environment(self) -> dict[str, str]:
        """``LLM_ENDPOINTS`` and ``GENAI_ALLOWED_MODELS`` as the settings read them (JSON), when set."""
        env: dict[str, str] = {}
        endpoints = self._config.endpoints()
        if endpoints:
            env["LLM_ENDPOINTS"] = json.dumps({name: e.model_dump(mode="json") for name, e in endpoints.items()})
        if self._config.allowed_models():
            env["GENAI_ALLOWED_MODELS"] = json.dumps(self._config.allowed_models())
        return env

    def _llm_environment(self) -> dict[str, str]:
        env = {"OPENAI_SECRET_NAME": self._secrets.openai_name, **self._model_endpoints_environment()}
        if self._config.prompt_store == "ssm":
            env.update(PROMPT_STORE="ssm", PROMPT_STORE_PREFIX=self._config.prompt_store_prefix)
        if self._spend_cap is not None:
            env["SPEND_CAP_PARAMETER"] = self._spend_cap
        return env

    def _grant(self, spec: c.FunctionSpec) -> None:
        """The role's statements, from ``infra/access.py``."""
        access = self._access[spec.key]
        role = self.roles[spec.key]
        table = self._storage.table
        by_prefixes: dict[tuple[str, ...], list[str]] = {}
        for action, prefixes in access.table.items():
            by_prefixes.setdefault(tuple(sorted(prefixes)), []).append(action)
        for prefixes, actions in sorted(by_prefixes.items()):
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=sorted(actions),
                    resources=[table.table_arn],
                    conditions={
                        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{prefix}*" for prefix in prefixes]}
                    },
                )
            )
        if access.participants_index:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=list(access.participants_index),
                    resources=[f"{table.table_arn}/index/{c.PARTICIPANTS_INDEX}"],
                )
            )
        if access.inbound_queue:
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=list(access.inbound_queue), resources=[self._queues.inbound.queue_arn])
            )
        if access.inbound_dead_letters:
            statement = iam.PolicyStatement(
                actions=list(access.inbound_dead_letters), resources=[self._queues.inbound_dlq.queue_arn]
            )
            role.add_to_principal_policy(statement)
        secrets = {"openai": self._secrets.openai, "channel": self._secrets.channel}
        if access.secrets:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["secretsmanager:GetSecretValue"],
                    resources=[secrets[name].secret_arn for name in access.secrets],
                )
            )
        if access.endpoint_secrets:
            self._grant_endpoint_secrets(role)
        if access.schedules:
            self._scheduler.grant_manage_schedules(role, access.schedules, pass_role=access.pass_scheduler_role)
        if access.prompt_parameters:
            prefix = self._config.prompt_store_prefix.strip("/")
            parameters = cdk.Stack.of(self).format_arn(service="ssm", resource="parameter", resource_name=f"{prefix}/*")
            statement = iam.PolicyStatement(actions=list(access.prompt_parameters), resources=[parameters])
            role.add_to_principal_policy(statement)
            acknowledge(
                role,
                (
                    wildcard_resource_finding(self, parameters),
                    "The prompt library reads <prefix>/<prompt name> for each of its prompts; the wildcard "
                    "is confined to the configured prompt prefix (promptStorePrefix).",
                ),
            )
        if access.list_schedules:
            role.add_to_principal_policy(iam.PolicyStatement(actions=["scheduler:ListSchedules"], resources=["*"]))
        if access.spend_cap_parameter and self._spend_cap is not None:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=list(access.spend_cap_parameter),
                    resources=[
                        cdk.Stack.of(self).format_arn(
                            service="ssm", resource="parameter", resource_name=self._spend_cap.lstrip("/")
                        )
                    ],
                )
            )

    def _grant_endpoint_secrets(self, role: iam.Role) -> None:
        """``GetSecretValue`` on exactly the secrets ``llmEndpoints`` names (by name: Secrets Manager
        appends six random characters to a secret's ARN, matched by ``-??????``)."""
        stack = cdk.Stack.of(self)
        arns = [
            stack.format_arn(
                service="secretsmanager",
                resource="secret",
                resource_name=f"{endpoint.secret_name}-??????",
                arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
            )
            for endpoint in self._config.endpoints().values()
        ]
        if not arns:
            return
        role.add_to_principal_policy(iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=arns))
        for arn in arns:
            acknowledge(
                role,
                (
                    wildcard_resource_finding(self, arn),
                    "One model endpoint's key secret, named in llmEndpoints: the wildcard is the six "
                    "characters Secrets Manager appends to every secret's ARN.",
                ),
            )

    def _common_environment(self) -> dict[str, str]:
        cfg = self._config
        env = {
            "TABLE_NAME": self._storage.table.table_name,
            "PARTICIPANTS_INDEX_NAME": c.PARTICIPANTS_INDEX,
            "GENAI_MODEL": cfg.genai_model,
            "CHANNEL_SECRET_NAME": self._secrets.channel_name,
            "MESSAGING_PROVIDER": cfg.messaging_provider,
            "TWILIO_CHANNEL": cfg.twilio_channel,
            "TWILIO_FROM_NUMBER": cfg.twilio_from_number,
            "TWILIO_MESSAGING_SERVICE_SID": cfg.twilio_messaging_service_sid,
            "WHATSAPP_PHONE_NUMBER_ID": cfg.whatsapp_phone_number_id,
            "WHATSAPP_TEMPLATE_NAME": cfg.whatsapp_template_name,
            "WHATSAPP_REENGAGEMENT_TEMPLATE_NAME": cfg.whatsapp_reengagement_template_name,
            "WHATSAPP_TEMPLATE_LANGUAGE": cfg.whatsapp_template_language,
            "WHATSAPP_TEMPLATE_QUICK_REPLIES": str(cfg.whatsapp_template_quick_replies).lower(),
            "TWILIO_TEMPLATE_CONTENT_SID": cfg.twilio_template_content_sid,
            "TWILIO_REENGAGEMENT_CONTENT_SID": cfg.twilio_reengagement_content_sid,
            "WHATSAPP_GREETING_TEMPLATE_NAME": cfg.whatsapp_greeting_template_name,
            "WHATSAPP_REMINDER_TEMPLATE_NAME": cfg.whatsapp_reminder_template_name,
            "WHATSAPP_FEEDBACK_TEMPLATE_NAME": cfg.whatsapp_feedback_template_name,
            "TWILIO_GREETING_CONTENT_SID": cfg.twilio_greeting_content_sid,
            "TWILIO_REMINDER_CONTENT_SID": cfg.twilio_reminder_content_sid,
            "TWILIO_FEEDBACK_CONTENT_SID": cfg.twilio_feedback_content_sid,
            "WHATSAPP_STAFF_TEMPLATE_NAME": cfg.whatsapp_staff_template_name,
            "TWILIO_STAFF_CONTENT_SID": cfg.twilio_staff_content_sid,
            "SCHEDULE_GROUP_NAME": cfg.schedule_group_name,
            "TIMERS_FUNCTION_ARN": self._scheduler.timers_function_arn,
            "SCHEDULED_PROMPT_FUNCTION_ARN": self._scheduler.scheduled_prompt_alias_arn,
            "SCHEDULER_ROLE_ARN": self._scheduler.role.role_arn,
            "SCHEDULER_DLQ_ARN": self._queues.scheduler_dlq.queue_arn,
            "DEFAULT_PHONE_REGION": cfg.default_phone_region,
            "AUTO_ENROLL_NEW_USERS": str(cfg.auto_enroll_new_users).lower(),
            "FEEDBACK_TIMERS_ENABLED": str(cfg.feedback_timers_enabled).lower(),
            "POWERTOOLS_SERVICE_NAME": c.SERVICE_NAME,
            "POWERTOOLS_METRICS_NAMESPACE": c.METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": cfg.log_level,
            # No pydantic plugin is used; without this pydantic scans every installed distribution's
            # entry points (importlib.metadata) when it builds its first model (docs/benchmarks.md).
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
        }
        # Unset optional settings stay unset (None in Settings), not empty strings.
        return {key: value for key, value in env.items() if value != ""}

    def _reserved_concurrency(self, spec: c.FunctionSpec) -> int | None:
        """Reserved concurrency from context (docs/scale.md); None leaves the function unreserved."""
        reserved = {
            c.WEBHOOK.key: self._config.webhook_reserved_concurrency,
            c.SCHEDULED_PROMPT.key: self._config.scheduled_prompt_max_concurrency,
        }.get(spec.key, 0)
        return reserved or None

    def _code_for(self, spec: c.FunctionSpec) -> lambda_.Code:
        """The code given (tests), else the function's own bundle, one asset per distinct closure."""
        if self._code is not None:
            return self._code
        closure = FUNCTION_EXTRAS[spec.key]
        if closure not in self._bundles:
            self._bundles[closure] = function_code(spec.key)
        return self._bundles[closure]

    def _build_function(
        self,
        spec: c.FunctionSpec,
        environment: dict[str, str],
        *,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> lambda_.Function:
        cid = _pascal(spec.key)
        name = self._config.function_name(spec)
        role = iam.Role(
            self,
            f"{cid}Role",
            description=f"Execution role of {name}",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        )
        log_group = logs.LogGroup(
            self,
            f"{cid}Logs",
            log_group_name=f"/aws/lambda/{name}",
            retention=retention(self._config.log_retention_days),
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        # Instead of AWSLambdaBasicExecutionRole: write to this group only, never create groups.
        log_group.grant_write(role)
        # Async settings belong to what the scheduler invokes: the function itself, or the alias
        # of a SnapStart function (set there).
        # (None leaves a property unset, as omitting it would.)
        async_here = dead_letter_queue is not None and not spec.snap_start
        fn = lambda_.Function(
            self,
            cid,
            function_name=name,
            description=spec.description,
            runtime=_RUNTIME,
            architecture=lambda_.Architecture.X86_64,
            handler=spec.handler,
            code=self._code_for(spec),
            memory_size=spec.memory_mb,
            timeout=cdk.Duration.seconds(spec.timeout_s),
            role=role,
            environment={**self._common_environment(), **environment},
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if spec.snap_start else None,
            reserved_concurrent_executions=self._reserved_concurrency(spec),
            dead_letter_queue=dead_letter_queue,
            retry_attempts=c.ASYNC_RETRY_ATTEMPTS if async_here else None,
            max_event_age=cdk.Duration.hours(c.ASYNC_MAX_EVENT_AGE_HOURS) if async_here else None,
        )
        if spec.snap_start:
            acknowledge(
                fn,
                (
                    "Annotation::@aws-cdk/aws-lambda:snapStartRequirePublish",
                    "A version is published (current_version) and the live alias points to it.",
                ),
            )
        self.roles[spec.key] = role
        self.log_groups[spec.key] = log_group
        self.functions[spec.key] = fn
        return fn

    def _acknowledge_common_findings(self) -> None:
        for spec in c.ALL_FUNCTIONS:
            acknowledge(self.functions[spec.key], ("AwsSolutions-L1", _L1_REASON))
            reason = _XRAY_REASON + (_LIST_REASON if self._access[spec.key].list_schedules else "")
            acknowledge(self.roles[spec.key], ("AwsSolutions-IAM5[Resource::*]", reason))
