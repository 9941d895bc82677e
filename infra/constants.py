"""Names, sizes and deployment settings of the stack, in one place.

Deployment settings come from CDK context (``cdk.json`` or ``cdk synth -c key=value``); every key has
a default so that ``cdk synth`` works on a fresh checkout. See ``Config.from_context``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from promptpipe.adapters import dynamodb_table
from promptpipe.models.llm_routes import LLMEndpoint

# --- fixed names -------------------------------------------------------------------------
STACK_ID = "PromptPipe"
SERVICE_NAME = "promptpipe"  # the single Powertools `service` dimension value
METRICS_NAMESPACE = "PromptPipe"
LIVE_ALIAS = "live"
# The table's shape is stated once, in promptpipe.adapters.dynamodb_table (the stack builds it from there).
PARTICIPANTS_INDEX = dynamodb_table.PARTICIPANTS_INDEX.name
INBOUND_MAX_RECEIVE_COUNT = 3
# Visibility must outlast every retry of a batch in flight (AWS guidance: 6x the function timeout).
VISIBILITY_TIMEOUT_FACTOR = 6
DLQ_RETENTION_DAYS = 14
SCHEDULER_SERVICE = "scheduler.amazonaws.com"

# --- functions -------------------------------------------------------------------------
LAMBDA_PYTHON_VERSION = "3.12"  # runtime and the wheels bundled for it must agree
WORKER_BATCH_SIZE = 10  # the FIFO maximum


@dataclass(frozen=True)
class FunctionSpec:
    """Size and entry point of one Lambda function."""

    key: str  # construct id and function name suffix
    handler: str
    description: str
    memory_mb: int
    timeout_s: int
    snap_start: bool = False  # the functions that import openai (docs/architecture.md#cold-start)


ENROLLMENT = FunctionSpec(
    "enrollment",
    "functions.enrollment.handler.handler",
    "Participants API (enrol, list, read, update, delete, history, state)",
    memory_mb=512,
    timeout_s=15,
)
WEBHOOK = FunctionSpec(
    "webhook",
    "functions.inbound.webhook.handler",
    "Twilio / WhatsApp webhooks: verify, dedupe, enqueue",
    memory_mb=256,
    timeout_s=10,
)
WORKER = FunctionSpec(
    "worker",
    "functions.inbound.worker.handler",
    "One conversation turn per inbound message (SQS FIFO consumer)",
    memory_mb=1024,
    timeout_s=60,
    snap_start=True,
)
SCHEDULED_PROMPT = FunctionSpec(
    "scheduled-prompt",
    "functions.scheduled_prompt.handler.handler",
    "Daily habit prompt (EventBridge Scheduler recurring target)",
    memory_mb=1024,
    timeout_s=60,
    snap_start=True,
)
TIMERS = FunctionSpec(
    "timers",
    "functions.timers.handler.handler",
    "Reminders, auto-feedback, delayed transitions (EventBridge Scheduler one-shot target)",
    memory_mb=512,
    timeout_s=30,
)
ALL_FUNCTIONS = (ENROLLMENT, WEBHOOK, WORKER, SCHEDULED_PROMPT, TIMERS)

# The pending-effects sweep (docs/architecture.md, "Effects that failed"): how often EventBridge
# Scheduler invokes the timers function with ``{"sweep": "pending_effects"}``.
PENDING_EFFECTS_SWEEP_MINUTES = 15
PENDING_EFFECTS_SWEEP_INPUT = '{"sweep": "pending_effects"}'
# The unanswered-turns sweep (docs/reliability.md, "The record under faults"): how often EventBridge
# Scheduler invokes the worker with ``{"sweep": "unanswered"}`` to redrive the turns the model could
# not answer from the inbound dead-letter queue, once it answers again.
UNANSWERED_SWEEP_MINUTES = 15
UNANSWERED_SWEEP_INPUT = '{"sweep": "unanswered"}'
# The daily study sweep (docs/studies.md, "Every day has its row"): once a day EventBridge Scheduler
# invokes the timers function with ``{"sweep": "study"}``. It records the days before each
# participant's local today, so any hour works; a second run the same day finds nothing to do.
STUDY_SWEEP_CRON = "cron(30 6 * * ? *)"  # 06:30 UTC
STUDY_SWEEP_INPUT = '{"sweep": "study"}'

# Async invocations (the scheduler's) of the two scheduler targets.
ASYNC_RETRY_ATTEMPTS = 2
ASYNC_MAX_EVENT_AGE_HOURS = 6

# --- API -------------------------------------------------------------------------------
PARTICIPANTS_PATH = "/conversation/participants"
FLOWS_PATH = "/conversation/flows"
RECONCILE_PATH = "/conversation/reconcile"
PARTICIPANT_ROWS_PATH = "/conversation/participant-rows"  # the console's list (docs/console.md)
STUDIES_PATH = "/conversation/studies"  # a study's decision records (docs/studies.md)
AUDIT_PATH = "/conversation/audit"  # the coordinators' audit records (docs/console.md)
ENROLMENT_CHECKS_PATH = "/conversation/enrolment-checks"  # a cohort checked first (docs/console.md)
TWILIO_WEBHOOK_PATH = "/webhooks/twilio"
WHATSAPP_WEBHOOK_PATH = "/webhooks/whatsapp"

# --- metrics (Powertools EMF, namespace METRICS_NAMESPACE) ------------------------------
METRIC_TURNS = "TurnsProcessed"  # dim module
METRIC_TOOL_CALLS = "ToolCalls"  # dims tool, outcome
METRIC_LLM_CALLS = "LLMCalls"
METRIC_LLM_LATENCY = "LLMLatencyMs"
METRIC_LLM_PROMPT_TOKENS = "LLMPromptTokens"
METRIC_LLM_COMPLETION_TOKENS = "LLMCompletionTokens"
METRIC_DAILY_PROMPTS = "DailyPromptsDelivered"
METRIC_REMINDERS = "RemindersSent"
METRIC_AUTO_FEEDBACK = "AutoFeedbackTransitions"
METRIC_STATE_TRANSITIONS = "StateTransitions"  # dim target
METRIC_FEEDBACK_NUDGES = "FeedbackNudgesSent"
METRIC_OPT_OUTS = "OptOuts"
METRIC_WEBHOOK_REJECTED = "WebhookRejected"  # dim reason
METRIC_ERRORS = "Errors"  # dim function
METRIC_STATE_SAVE_FAILURES = "StateSaveFailures"

# --- deployment settings (CDK context) -----------------------------------------------------
_NAME = re.compile(r"^[0-9a-zA-Z\-_.]{1,64}$")
_PREFIX = re.compile(r"^[a-z][a-z0-9-]{1,30}$")
_META_TEMPLATE = re.compile(r"^[a-z0-9_]{1,512}$")
_CONTENT_SID = re.compile(r"^HX[0-9a-fA-F]{32}$")
_META_TEMPLATE_FIELDS = (
    "whatsapp_template_name",
    "whatsapp_reengagement_template_name",
    "whatsapp_greeting_template_name",
    "whatsapp_reminder_template_name",
    "whatsapp_feedback_template_name",
    "whatsapp_staff_template_name",
)
_CONTENT_SID_FIELDS = (
    "twilio_greeting_content_sid",
    "twilio_reminder_content_sid",
    "twilio_feedback_content_sid",
    "twilio_staff_content_sid",
)
_SNS_ARN = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
# The values CloudWatch Logs accepts (infra.components.retention maps them to the CDK enum).
_LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1827, 3653)


class _ContextSource(Protocol):
    def try_get_context(self, key: str) -> Any: ...


@dataclass(frozen=True)
class Config:
    """Deployment settings. Context keys are the field names in camelCase (``genaiModel`` ...)."""

    resource_prefix: str = "promptpipe"
    schedule_group_name: str = "promptpipe"
    genai_model: str = "gpt-4o-mini"
    messaging_provider: str = "twilio"
    twilio_channel: str = "sms"
    twilio_from_number: str = ""
    twilio_messaging_service_sid: str = ""
    whatsapp_phone_number_id: str = ""
    # WhatsApp outside the 24-hour window (docs/architecture.md): Cloud API template names and
    # language, or Twilio Content SIDs; empty: no template (a refused message fails as before).
    whatsapp_template_name: str = ""
    whatsapp_reengagement_template_name: str = ""
    whatsapp_template_language: str = "en_US"
    whatsapp_template_quick_replies: bool = False
    twilio_template_content_sid: str = ""
    twilio_reengagement_content_sid: str = ""
    # One template per kind (greeting, reminder, feedback follow-up); empty: that kind is not sent
    # outside the window (recorded as skipped).
    whatsapp_greeting_template_name: str = ""
    whatsapp_reminder_template_name: str = ""
    whatsapp_feedback_template_name: str = ""
    twilio_greeting_content_sid: str = ""
    twilio_reminder_content_sid: str = ""
    twilio_feedback_content_sid: str = ""
    # A staff message from the console outside the window (docs/console.md); empty: the console says
    # it cannot be sent.
    whatsapp_staff_template_name: str = ""
    twilio_staff_content_sid: str = ""
    public_webhook_base_url: str = ""  # empty: the API's own endpoint
    default_phone_region: str = "US"
    auto_enroll_new_users: bool = False
    feedback_timers_enabled: bool = False
    log_level: str = "INFO"
    log_retention_days: int = 30
    api_rate_limit: int = 50  # requests per second, whole stage
    api_burst_limit: int = 100
    alarm_topic_arn: str = ""  # empty: the stack creates its own alarm topic
    alarm_email: str = ""  # empty: no e-mail subscription (subscribe to the AlarmTopicArn output)
    # Concurrency for large deployments (docs/scale.md); 0 = the account's unreserved pool (AWS
    # refuses reservations that leave fewer than 100 unreserved, so they are off by default).
    # System prompts from SSM Parameter Store (<promptStorePrefix>/<name>, String parameters) instead
    # of the bundled files: the model-calling functions then read them (docs/pipeline.md).
    prompt_store: str = "file"
    prompt_store_prefix: str = "/promptpipe/prompts"
    # Model endpoints besides the default (docs/architecture.md#model-endpoints): JSON
    # {"name": {"base_url", "models", "secret_name"}}; the model-calling functions may read exactly
    # those secrets. Models allowed on the default endpoint besides genaiModel: comma-separated.
    llm_endpoints: str = ""
    genai_allowed_models: str = ""
    webhook_reserved_concurrency: int = 0  # kept for the webhook whatever else bursts
    scheduled_prompt_max_concurrency: int = 0  # caps the morning burst (async: excess waits, retried)
    # Limits at the edge (docs/safety.md#limits-at-the-edge). Each webhook route has its own throttle,
    # apart from the participants API's (apiRateLimit / apiBurstLimit), so junk posts to a webhook
    # cannot get the coordinators' calls answered 429, nor the other webhook's deliveries.
    webhook_rate_limit: int = 25  # requests per second, per webhook route
    webhook_burst_limit: int = 50
    # How many worker invocations the inbound queue's event source may run at once (2-1000): a burst
    # waits in the queue instead of using up its receives on throttled invocations (and filling the
    # dead-letter queue).
    worker_max_concurrency: int = 5
    # The study's daily model spend cap in whole USD, estimated from tokens (ModelCostUSD); past it the
    # offline coach answers and an alarm fires (docs/safety.md#budgets). 0: no cap.
    study_daily_spend_cap_usd: int = 25
    # The console's address as the study team opens it (https://…): each alert on the study-team
    # topic links the participant's page there (CONSOLE_URL, docs/safety.md). Empty: no link.
    console_url: str = ""

    @classmethod
    def from_context(cls, node: _ContextSource) -> Config:
        """Read every field from context, falling back to the defaults above; validate."""
        values: dict[str, Any] = {}
        for name, default in cls().__dict__.items():
            raw = node.try_get_context(_camel(name))
            if raw is None:
                continue
            values[name] = _coerce(name, raw, type(default))
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        """Fail the synth early, with the context key to fix, rather than at deploy or run time."""
        checks = {
            "resourcePrefix": bool(_PREFIX.match(self.resource_prefix)),
            "scheduleGroupName": bool(_NAME.match(self.schedule_group_name)),
            "messagingProvider": self.messaging_provider in ("twilio", "whatsapp_cloud"),
            "twilioChannel": self.twilio_channel in ("sms", "whatsapp"),
            "whatsappTemplateLanguage": bool(
                re.match(r"^[a-z]{2,3}(_[A-Za-z]{2,4})?$", self.whatsapp_template_language)
            ),
            "twilioTemplateContentSid": not self.twilio_template_content_sid
            or bool(re.match(r"^HX[0-9a-fA-F]{32}$", self.twilio_template_content_sid)),
            "twilioReengagementContentSid": not self.twilio_reengagement_content_sid
            or bool(re.match(r"^HX[0-9a-fA-F]{32}$", self.twilio_reengagement_content_sid)),
            **{
                _camel(name): not getattr(self, name) or bool(_META_TEMPLATE.match(getattr(self, name)))
                for name in _META_TEMPLATE_FIELDS
            },
            **{
                _camel(name): not getattr(self, name) or bool(_CONTENT_SID.match(getattr(self, name)))
                for name in _CONTENT_SID_FIELDS
            },
            "defaultPhoneRegion": bool(re.match(r"^[A-Z]{2}$", self.default_phone_region)),
            "logLevel": self.log_level in ("DEBUG", "INFO", "WARNING", "ERROR"),
            "logRetentionDays": self.log_retention_days in _LOG_RETENTION_DAYS,
            "apiRateLimit": self.api_rate_limit > 0,
            "apiBurstLimit": self.api_burst_limit > 0,
            "genaiModel": bool(self.genai_model),
            "publicWebhookBaseUrl": not self.public_webhook_base_url
            or self.public_webhook_base_url.startswith("https://"),
            "alarmTopicArn": not self.alarm_topic_arn or bool(_SNS_ARN.match(self.alarm_topic_arn)),
            "alarmEmail": not self.alarm_email or bool(_EMAIL.match(self.alarm_email)),
            "promptStore": self.prompt_store in ("file", "ssm"),
            "promptStorePrefix": bool(re.match(r"^/[\w./-]+$", self.prompt_store_prefix)),
            "llmEndpoints": self._endpoints_valid(),
            "webhookReservedConcurrency": self.webhook_reserved_concurrency >= 0,
            "scheduledPromptMaxConcurrency": self.scheduled_prompt_max_concurrency >= 0,
            "webhookRateLimit": self.webhook_rate_limit > 0,
            "webhookBurstLimit": self.webhook_burst_limit > 0,
            "workerMaxConcurrency": 2 <= self.worker_max_concurrency <= 1000,
            "studyDailySpendCapUsd": self.study_daily_spend_cap_usd >= 0,
            "consoleUrl": not self.console_url or bool(re.match(r"^https?://[^\s]+$", self.console_url)),
        }
        bad = [key for key, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid CDK context value(s): {', '.join(bad)} (see infra/constants.py)")

    def endpoints(self) -> dict[str, LLMEndpoint]:
        """``llmEndpoints`` parsed (empty when unset)."""
        if not self.llm_endpoints:
            return {}
        raw = json.loads(self.llm_endpoints)
        if not isinstance(raw, dict):
            raise ValueError("llmEndpoints must be a JSON object")
        return {str(name): LLMEndpoint.model_validate(value) for name, value in raw.items()}

    def _endpoints_valid(self) -> bool:
        try:
            self.endpoints()
        except ValueError:  # JSON and pydantic errors alike
            return False
        return True

    def allowed_models(self) -> list[str]:
        return [name.strip() for name in self.genai_allowed_models.split(",") if name.strip()]

    def function_name(self, spec: FunctionSpec) -> str:
        return f"{self.resource_prefix}-{spec.key}"


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


def _coerce(name: str, raw: Any, kind: type) -> Any:
    """Context from ``-c`` is always a string; from cdk.json it may be typed."""
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(f"context {_camel(name)} must be true or false, got {raw!r}")
    if kind is int:
        try:
            return int(raw)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"context {_camel(name)} must be an integer, got {raw!r}") from exc
    if isinstance(raw, dict):  # a JSON value in cdk.json (llmEndpoints)
        return json.dumps(raw)
    if isinstance(raw, list):  # a list in cdk.json (genaiAllowedModels)
        return ",".join(str(item) for item in raw)
    return str(raw).strip()
