"""Least privilege, derived from the code: each function's role allows exactly the AWS calls its code
makes, on exactly the resources (and DynamoDB partition-key prefixes) it makes them on.

How it works:

1. Every function's real handler runs under moto (``LocalEnvironment``: the handlers, the inbound
   queue drainer, the scheduler pump) through representative events: the enrollment API (enrol, list,
   read, history, state, update, pause, resume, override, delete with and without the transcript),
   the Twilio webhook (message, STOP, START, unknown sender with auto-enrol off and on), worker turns
   (greeting, intake with the scheduler tool, a model failure right after a scheduler call, a failed
   reply), the daily prompt (with a send that fails half-way and its retry), and every timer kind.
2. Each function runs with the settings its *synthesized* environment gives it (TABLE_NAME,
   INBOUND_QUEUE_URL, OPENAI_SECRET_NAME, ...; tokens resolved to the moto resources) and its
   application is built inside its first invocation, as a cold start builds it, so what it reads at
   start (secrets) counts too. Only the model (offline coach) and the messenger (local outbox) are not
   AWS.
3. Every botocore call made inside a handler is recorded for that function and mapped to what IAM
   checks (``needs``): the action (``TransactWriteItems`` needs the action of each item in it), the
   resource, and for items of the table the partition-key prefix (``dynamodb:LeadingKeys``).
4. That set, plus the few platform needs listed in ``PLATFORM`` / ``EXTRA`` / ``IMPLIED`` with their
   reasons, must equal what the function's synthesized role allows, in each deployment of
   ``DEPLOYMENTS`` (the webhook's rights depend on ``autoEnrollNewUsers``). A difference names the
   grants to add or remove in ``infra/access.py``.

Calls are recorded by wrapping ``BaseClient._make_api_call`` (where botocore emits ``before-call``):
every client is seen, including those built at import time or by Powertools, with no hook in the
adapters.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import import_module
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from botocore.client import BaseClient

from infra import constants as c
from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import LLMError, MessagingError
from promptpipe.flow.deps import IdGenerator
from promptpipe.local.demo import send_sms
from promptpipe.local.environment import (
    LOCAL_TWILIO_AUTH_TOKEN,
    LOCAL_WHATSAPP_APP_SECRET,
    LOCAL_WHATSAPP_VERIFY_TOKEN,
    SCHEDULED_PROMPT_ARN,
    TIMERS_ARN,
    LocalEnvironment,
    local_settings,
)
from promptpipe.local.lambda_runtime import FakeLambdaContext
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.messaging import InboundMessage, OutboundMessage, SendResult
from promptpipe.ports import LLM, Messenger
from promptpipe.settings import Settings, set_settings
from promptpipe.usecases.studies import load_study, with_study
from tests.infra.synth import PREFIX, Synth, as_list, render, statement_actions, synthesize
from tests.support.scheduler_faults import throttled_create_schedule

FUNCTIONS = tuple(spec.key for spec in c.ALL_FUNCTIONS)
# Deployments whose roles differ, by CDK context; each serves the events of its phases of the run
# (with auto-enrolment on, the webhook also handles everything the default deployment handles).
DEFAULT, AUTO_ENROL = "default", "autoEnrollNewUsers=true"
DEPLOYMENTS: dict[str, tuple[dict[str, str], set[str]]] = {
    DEFAULT: ({}, {DEFAULT}),
    AUTO_ENROL: ({"autoEnrollNewUsers": "true"}, {DEFAULT, AUTO_ENROL}),
}
TORONTO = ZoneInfo("America/Toronto")
MONDAY = date(2026, 3, 2)
SCHEDULER_ROLE_ARN = "arn:aws:iam::000000000000:role/promptpipe-scheduler"
SCHEDULER_DLQ_ARN = "arn:aws:sqs:us-east-1:000000000000:promptpipe-scheduler-dlq"
PUBLIC_BASE_URL = "https://localhost"  # what promptpipe.local.demo.send_sms signs for


@dataclass(frozen=True, order=True)
class Need:
    """One thing IAM checks: ``action`` on ``resource`` (a symbolic name, see ``Names``); for items
    of the table, ``key`` is the partition-key prefix (``PARTICIPANT#``), ``*`` for any item."""

    action: str
    resource: str
    key: str = ""

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}" + (f" [{self.key}]" if self.key else "")


# --- allowed beyond what the run derives, each with its reason --------------------------------------

PLATFORM: dict[Need, str] = {
    Need("logs:CreateLogStream", "log-group"): "the Lambda runtime writes the function's own log group",
    Need("logs:PutLogEvents", "log-group"): "the Lambda runtime writes the function's own log group",
    Need("xray:PutTraceSegments", "*"): "active tracing; X-Ray has no resource-level permissions",
    Need("xray:PutTelemetryRecords", "*"): "active tracing; X-Ray has no resource-level permissions",
}
_ASYNC_DLQ = (
    "Lambda sends an asynchronous invocation that failed every retry to the function's dead-letter "
    "queue, with the function's role"
)
_POLLER = "the SQS event source mapping polls, deletes and inspects the queue with the function's role"
# Publishing to the KMS-encrypted safety alert topic: SNS encrypts the message with the topic's key,
# with the publisher's rights (moto does not call KMS, so the run cannot record it).
_ALERT_KEY = {
    Need("kms:GenerateDataKey", "safety-alert-key"): "SNS encrypts a published message with the topic's key",
    Need("kms:Decrypt", "safety-alert-key"): "SNS encrypts a published message with the topic's key (data key)",
}
EXTRA: dict[str, dict[Need, str]] = {
    c.WEBHOOK.key: {
        **_ALERT_KEY,
        Need("sns:Publish", "safety-alert-topic"): (
            "a crisis inside an opt-out alerts the team from the webhook (docs/safety.md); no participant "
            "of the run writes a crisis inside an opt-out, so the run cannot reach it"
        ),
    },
    c.WORKER.key: {
        **_ALERT_KEY,
        Need("sqs:ReceiveMessage", "inbound-queue"): _POLLER,
        Need("sqs:DeleteMessage", "inbound-queue"): _POLLER,
        Need("sqs:GetQueueAttributes", "inbound-queue"): _POLLER,
    },
    c.SCHEDULED_PROMPT.key: {
        **_ALERT_KEY,
        Need("sqs:SendMessage", "scheduler-dlq"): _ASYNC_DLQ,
        Need("sns:Publish", "safety-alert-topic"): (
            "the alert of an announced hold a daily firing places goes out after its commit (docs/safety.md); "
            "no daily firing of the run places one (tests/integration/test_scheduled_prompt_alerts.py does)"
        ),
    },
    c.TIMERS.key: {
        **_ALERT_KEY,
        Need("sqs:SendMessage", "scheduler-dlq"): _ASYNC_DLQ,
        # Its own one-shot the scheduler deletes; the run's transition fires after the auto-feedback
        # (both cases: tests/unit/test_transition_tool.py, "a transition firing deletes …")
        Need("scheduler:DeleteSchedule", "schedule-group"): (
            "a delayed transition that fires while an auto-feedback one-shot is armed deletes that one"
        ),
    },
}
# A function that creates schedules may have to replace one: the adapter creates, and on a
# ConflictException (a schedule of that name exists: a retried event whose first attempt created it)
# updates. The run drives that path for the worker; elsewhere it is a retry after a partial failure.
IMPLIED: dict[Need, tuple[Need, str]] = {
    Need("scheduler:CreateSchedule", "schedule-group"): (
        Need("scheduler:UpdateSchedule", "schedule-group"),
        "create-or-update by name: UpdateSchedule when a schedule of that name already exists",
    ),
}


def expected(key: str, derived: set[Need]) -> set[Need]:
    implied = {need for trigger, (need, _) in IMPLIED.items() if trigger in derived}
    return set(derived) | set(PLATFORM) | set(EXTRA.get(key, {})) | implied


# --- from a botocore call to what IAM checks ---------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """Maps run-time resource names to the symbolic names shared with the template side."""

    table: str
    queue_url: str
    group: str
    role_arn: str
    dlq_arn: str
    inbound_dlq_url: str = ""
    alert_topic: str = ""

    def table_resource(self, name: str, index: str | None = None) -> str:
        base = "table" if name == self.table else f"table:{name}"
        return f"{base}/index/{index}" if index else base

    def queue(self, url: str) -> str:
        if url and url == self.inbound_dlq_url:
            return "inbound-dlq"
        return "inbound-queue" if url == self.queue_url else f"queue:{url}"

    def schedules(self, group: str | None) -> str:
        return "schedule-group" if group == self.group else f"schedule-group:{group or 'default'}"

    def role(self, arn: str) -> str:
        return "scheduler-role" if arn == self.role_arn else f"role:{arn}"


_TRANSACT = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
_PK_CONDITION = re.compile(r"(?:^|[\s(])(#?\w+)\s*=\s*(:\w+)")
_IAM_PREFIX = {"dynamodb": "dynamodb", "sqs": "sqs", "scheduler": "scheduler", "secretsmanager": "secretsmanager"}
_UNSCOPED_SCHEDULER = {"ListSchedules", "ListScheduleGroups", "ListTagsForResource"}


def key_prefix(value: str) -> str:
    """``PARTICIPANT#p-1`` -> ``PARTICIPANT#``; a key without ``#`` stands for itself."""
    return value.split("#", 1)[0] + "#" if "#" in value else value


def _item_need(action: str, table: str, key: dict[str, Any] | None, names: Names) -> Need:
    pk = (key or {}).get("pk", {}).get("S")
    return Need(f"dynamodb:{action}", names.table_resource(table), key_prefix(pk) if pk else "*")


def _query_key(params: dict[str, Any]) -> str:
    aliases = params.get("ExpressionAttributeNames", {})
    for name, placeholder in _PK_CONDITION.findall(params.get("KeyConditionExpression", "")):
        if aliases.get(name, name) == "pk":
            return key_prefix(params["ExpressionAttributeValues"][placeholder]["S"])
    return "*"


def _dynamodb(operation: str, params: dict[str, Any], names: Names) -> list[Need]:
    if operation in ("TransactWriteItems", "TransactGetItems"):
        found = []
        for entry in params["TransactItems"]:
            ((kind, request),) = entry.items()
            found.append(
                _item_need(_TRANSACT[kind], request["TableName"], request.get("Key") or request.get("Item"), names)
            )
        return found
    if operation == "BatchWriteItem":
        return [
            _item_need(operation, table, body.get("Key") or body.get("Item"), names)
            for table, requests in params["RequestItems"].items()
            for request in requests
            for body in request.values()
        ]
    if operation == "BatchGetItem":
        return [
            _item_need(operation, table, key, names)
            for table, spec in params["RequestItems"].items()
            for key in spec["Keys"]
        ]
    table = params.get("TableName", "")
    if operation == "Query" and params.get("IndexName"):
        return [Need("dynamodb:Query", names.table_resource(table, params["IndexName"]))]
    if operation == "Query":
        return [Need("dynamodb:Query", names.table_resource(table), _query_key(params))]
    if "Key" in params or "Item" in params:
        return [_item_need(operation, table, params.get("Key") or params.get("Item"), names)]
    return [Need(f"dynamodb:{operation}", names.table_resource(table), "*")]


def needs(service: str, operation: str, params: dict[str, Any], names: Names) -> list[Need]:
    """What IAM checks for one API call."""
    if service == "dynamodb":
        return _dynamodb(operation, params, names)
    prefix = _IAM_PREFIX.get(service, service)
    if service == "sqs":
        return [Need(f"sqs:{operation}", names.queue(params.get("QueueUrl", "")))]
    if service == "scheduler":
        if operation in _UNSCOPED_SCHEDULER:
            return [Need(f"scheduler:{operation}", "*")]
        found = [Need(f"scheduler:{operation}", names.schedules(params.get("GroupName")))]
        if operation in ("CreateSchedule", "UpdateSchedule"):
            found.append(Need("iam:PassRole", names.role(params["Target"]["RoleArn"])))
        return found
    if service == "secretsmanager":
        return [Need(f"secretsmanager:{operation}", f"secret:{params.get('SecretId', '')}")]
    if service == "ssm" and "Name" in params:  # the spend cap's state (docs/safety.md#budgets)
        return [Need(f"ssm:{operation}", f"parameter:{params['Name']}")]
    if service == "sns":
        arn = params.get("TopicArn", "")
        return [Need(f"sns:{operation}", "safety-alert-topic" if arn == names.alert_topic else f"topic:{arn}")]
    return [Need(f"{prefix}:{operation}", "*")]


# --- from a synthesized role to the same terms ---------------------------------------------------------


def granted(synth: Synth, key: str) -> set[Need]:
    """What the function's role allows, in ``Need`` terms (table statements per LeadingKeys prefix)."""
    symbols = _symbols(synth, key)
    found: set[Need] = set()
    for statement in synth.statements(synth.role_id(key)):
        assert statement["Effect"] == "Allow", statement
        condition = statement.get("Condition", {})
        leading = condition.get("ForAllValues:StringLike", {}).get("dynamodb:LeadingKeys")
        keys = [k.removesuffix("*") for k in as_list(leading)] if leading else ["*"]
        for resource in as_list(statement["Resource"]):
            symbol = _symbol(render(resource), symbols)
            for action in statement_actions(statement):
                if symbol == "table":
                    found |= {Need(action, symbol, k) for k in keys}
                else:
                    found.add(Need(action, symbol))
    return found


def _symbols(synth: Synth, key: str) -> dict[str, str]:
    (table,) = synth.of_type("AWS::DynamoDB::GlobalTable")
    (scheduler_role,) = [
        k
        for k, v in synth.of_type("AWS::IAM::Role").items()
        if v["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "scheduler.amazonaws.com"}
    ]
    log_group = synth.function(key)["LoggingConfig"]["LogGroup"]["Ref"]
    group = synth.stack.config.schedule_group_name
    symbols = {
        f"<{table}.Arn>": "table",
        f"<{synth.queue_id(f'{PREFIX}-inbound.fifo')}.Arn>": "inbound-queue",
        f"<{synth.queue_id(f'{PREFIX}-scheduler-dlq')}.Arn>": "scheduler-dlq",
        f"<{synth.queue_id(f'{PREFIX}-inbound-dlq.fifo')}.Arn>": "inbound-dlq",
        f"<{scheduler_role}.Arn>": "scheduler-role",
        f"<{log_group}.Arn>": "log-group",
        f"arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/{group}/*": "schedule-group",
    }
    for logical_id, secret in synth.of_type("AWS::SecretsManager::Secret").items():
        symbols[f"<{logical_id}>"] = f"secret:{secret['Properties']['Name']}"
    for parameter in synth.of_type("AWS::SSM::Parameter").values():
        name = parameter["Properties"]["Name"]
        symbols[f"arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter{name}"] = f"parameter:{name}"
    for logical_id, topic in synth.of_type("AWS::SNS::Topic").items():
        if topic["Properties"]["TopicName"] == f"{PREFIX}-safety-alerts":
            symbols[f"<{logical_id}>"] = "safety-alert-topic"
            symbols[f"<{topic['Properties']['KmsMasterKeyId']['Fn::GetAtt'][0]}.Arn>"] = "safety-alert-key"
    return symbols


def _symbol(rendered: str, symbols: dict[str, str]) -> str:
    if rendered in symbols:
        return symbols[rendered]
    for text, symbol in symbols.items():
        if rendered.startswith(text + "/"):
            return symbol + rendered[len(text) :]
    return rendered


# --- the run -------------------------------------------------------------------------------------------


class CallRecorder:
    """Every botocore call made while a function's handler runs, as that function's ``needs`` in the
    current phase (the deployment the run is in)."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.phase = DEFAULT
        self.needs: dict[str, dict[str, set[Need]]] = defaultdict(lambda: defaultdict(set))
        self.operations: dict[str, set[str]] = defaultdict(set)
        self._current: list[str] = []

    @contextmanager
    def running(self, key: str) -> Iterator[None]:
        self._current.append(key)
        try:
            yield
        finally:
            self._current.pop()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = BaseClient._make_api_call
        recorder = self

        def recording(client: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
            if recorder._current:
                key = recorder._current[-1]
                service = client.meta.service_model.service_name
                recorder.operations[key].add(f"{service}:{operation_name}")
                recorder.needs[recorder.phase][key].update(needs(service, operation_name, api_params, recorder.names))
            return original(client, operation_name, api_params)

        monkeypatch.setattr(BaseClient, "_make_api_call", recording)


class FailAfterTool:
    """The model (the offline coach): when ``armed``, it fails once on the round right after ``tool``
    ran (the turn is then retried); steps given to ``script`` are played first."""

    def __init__(self, inner: LLM, tool: str) -> None:
        self._inner, self._tool = inner, tool
        self.armed = False
        self.failures = 0
        self.script = ScriptedLLM()

    def complete(self, request: ChatRequest) -> ChatResponse:
        if self.armed and _answers(request, self._tool):
            self.armed = False
            self.failures += 1
            raise LLMError("injected model failure after a tool call", retryable=True)
        if self.script.remaining:
            return self.script.complete(request)
        return self._inner.complete(request)


def _answers(request: ChatRequest, tool: str) -> bool:
    # The round right after the tool ran: its result is the last message (a flow-controller note, a
    # system message, may follow it).
    messages = [m for m in request.messages if m.role != "system"]
    if not messages or messages[-1].role != "tool":
        return False
    assistant = next(m for m in reversed(request.messages) if m.role == "assistant")
    return any(call.name == tool for call in assistant.tool_calls)


class FlakyMessenger:
    """The local outbox; ``fail_send(n)`` makes the n-th send from now raise once."""

    def __init__(self, inner: Messenger) -> None:
        self._inner = inner
        self._countdown = 0
        self.failures = 0

    def fail_send(self, nth: int = 1) -> None:
        self._countdown = nth

    def send(self, message: OutboundMessage, before_part: Any = None) -> SendResult:
        if self._countdown:
            self._countdown -= 1
            if self._countdown == 0:
                self.failures += 1
                raise MessagingError("injected send failure")
        return self._inner.send(message, before_part)


@dataclass
class Deployment:
    """The five functions as deployed: handler, settings from the synthesized environment of the
    current deployment, and an application built on the first invocation after each (re)deploy."""

    env: LocalEnvironment
    recorder: CallRecorder
    settings_by_deployment: dict[str, dict[str, Settings]]
    llm: FailAfterTool
    messenger: FlakyMessenger
    overrides: dict[str, Any] = field(default_factory=dict)
    apps: dict[str, Any] = field(default_factory=dict)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    ids: IdGenerator = field(default_factory=lambda: IdGenerator(random.Random(5)))

    settings: dict[str, Settings] = field(default_factory=dict)

    def deploy(self, name: str, **overrides: Any) -> None:
        """Switch to the deployment ``name`` (settings ``overrides`` on top): every function
        cold-starts again, and what follows is recorded for that phase."""
        self.settings = self.settings_by_deployment[name]
        self.recorder.phase = name
        self.overrides = overrides
        self.apps.clear()

    def wrap(self, key: str, handler: Callable[[dict[str, Any], Any], Any]) -> Callable[[dict[str, Any], Any], Any]:
        def invoke(event: dict[str, Any], context: Any) -> Any:
            from aws_lambda_powertools.utilities import parameters

            from promptpipe.wiring import build_app, set_app

            self.events[key].append(event)
            with self.recorder.running(key):
                settings = self.settings[key].model_copy(update=self.overrides)
                set_settings(settings)
                parameters.clear_caches()  # each invocation may find its secret cache expired
                try:
                    if key not in self.apps:
                        self.apps[key] = build_app(
                            settings,
                            clock=self.env.clock,
                            llm=self.llm,
                            rng=random.Random(7),
                            ids=self.ids,  # one id source: two functions never mint the same id
                            sleep=None,
                        )
                    set_app(self.apps[key])
                    return handler(event, context)
                finally:
                    set_app(self.env.app)
                    set_settings(self.env.settings)

        return invoke

    def again(self, key: str) -> Any:
        """The function's last event once more, as a retry delivers it."""
        from promptpipe.local.lambda_runtime import FakeLambdaContext

        module, attribute = _handler_path(key)
        return getattr(import_module(module), attribute)(self.events[key][-1], FakeLambdaContext())


def _handler_path(key: str) -> tuple[str, str]:
    (spec,) = [s for s in c.ALL_FUNCTIONS if s.key == key]
    module, attribute = spec.handler.rsplit(".", 1)
    return module, attribute


def function_settings(environment: dict[str, Any], local: dict[str, str]) -> Settings:
    """The settings a function reads from its synthesized environment, tokens replaced by ``local``."""
    values: dict[str, Any] = {}
    for name, value in environment.items():
        if not isinstance(value, str):
            assert name in local, f"{name} is a deploy-time token: give it a local value in tests/infra"
        values[name.lower()] = value if isinstance(value, str) else local[name]
    return Settings(**values)


def at_local(day: date, hhmm: str) -> datetime:
    hour, minute = (int(x) for x in hhmm.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=TORONTO).astimezone(UTC)


@dataclass
class Run:
    needs: dict[str, dict[str, set[Need]]]  # phase -> function -> needs
    operations: dict[str, set[str]]
    timer_kinds: set[str]

    def derived(self, phases: set[str], key: str) -> set[Need]:
        return set().union(*(self.needs[phase][key] for phase in phases))


@pytest.fixture(scope="module")
def synths(synth: Synth, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Synth]:
    """Every deployment in ``DEPLOYMENTS``, synthesized (the default one is shared)."""
    return {
        name: synth if not context else synthesize(tmp_path_factory.mktemp("cdk.out"), context)
        for name, (context, _) in DEPLOYMENTS.items()
    }


@pytest.fixture(scope="module")
def run(synths: dict[str, Synth]) -> Iterator[Run]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        env = LocalEnvironment(
            start=at_local(MONDAY, "08:00"),
            settings=local_settings(offline_coach=True, openai_api_key=None),
        )
        try:
            yield _drive(env, synths, monkeypatch)
        finally:
            env.close()


def _drive(env: LocalEnvironment, synths: dict[str, Synth], monkeypatch: pytest.MonkeyPatch) -> Run:
    from promptpipe.adapters import messengers
    from promptpipe.adapters.aws import aws_client

    alert_topic = aws_client("sns", env.settings).create_topic(Name=f"{PREFIX}-safety-alerts")["TopicArn"]
    names = Names(
        table=env.settings.table_name,
        queue_url=env.resources.inbound_queue_url,
        inbound_dlq_url=env.resources.inbound_dlq_url,
        group=env.settings.schedule_group_name,
        role_arn=SCHEDULER_ROLE_ARN,
        dlq_arn=SCHEDULER_DLQ_ARN,
        alert_topic=alert_topic,
    )
    local = {
        "TABLE_NAME": names.table,
        "INBOUND_QUEUE_URL": names.queue_url,
        "INBOUND_DLQ_URL": env.resources.inbound_dlq_url,
        "TIMERS_FUNCTION_ARN": TIMERS_ARN,
        "SCHEDULED_PROMPT_FUNCTION_ARN": SCHEDULED_PROMPT_ARN,
        "SCHEDULER_ROLE_ARN": SCHEDULER_ROLE_ARN,
        "SCHEDULER_DLQ_ARN": SCHEDULER_DLQ_ARN,
        "PUBLIC_WEBHOOK_BASE_URL": PUBLIC_BASE_URL,
        "SAFETY_ALERT_TOPIC_ARN": alert_topic,
    }
    settings = {
        name: {key: function_settings(synth.function(key)["Environment"]["Variables"], local) for key in FUNCTIONS}
        for name, synth in synths.items()
    }
    secrets = aws_client("secretsmanager", env.settings)
    secrets.create_secret(
        Name=f"{PREFIX}/channel",
        SecretString=json.dumps(
            {
                "TWILIO_ACCOUNT_SID": "AClocal",
                "TWILIO_AUTH_TOKEN": LOCAL_TWILIO_AUTH_TOKEN,
                "WHATSAPP_APP_SECRET": LOCAL_WHATSAPP_APP_SECRET,
                "WHATSAPP_VERIFY_TOKEN": LOCAL_WHATSAPP_VERIFY_TOKEN,
            }
        ),
    )
    secrets.create_secret(Name=f"{PREFIX}/openai", SecretString=json.dumps({"OPENAI_API_KEY": "sk-test"}))

    recorder = CallRecorder(names)
    recorder.install(monkeypatch)
    messenger = FlakyMessenger(env.outbox)
    # The real messenger would call Twilio (not AWS); the secrets it is built from are still read.
    monkeypatch.setattr(messengers, "build_messenger", lambda *_args, **_kwargs: messenger)
    deployment = Deployment(
        env=env,
        recorder=recorder,
        settings_by_deployment=settings,
        llm=FailAfterTool(OfflineCoach(), "scheduler"),
        messenger=messenger,
    )
    # Feedback timers are off by default: on here, so that their code paths run too. Quiet hours are
    # off: the scenario times its nudges by the clock (quiet hours have their own tests).
    deployment.deploy(DEFAULT, feedback_timers_enabled=True, quiet_hours_enabled=False)
    for key in FUNCTIONS:
        module, attribute = _handler_path(key)
        original = getattr(import_module(module), attribute)
        monkeypatch.setattr(import_module(module), attribute, deployment.wrap(key, original))
        for arn, target in list(env._targets.items()):
            if target is original:
                env._targets[arn] = getattr(import_module(module), attribute)

    timer_kinds = _scenario(env, deployment)
    return Run(needs=recorder.needs, operations=dict(recorder.operations), timer_kinds=timer_kinds)


def _scenario(env: LocalEnvironment, deployment: Deployment) -> set[str]:
    """The representative events, each checked for its effect (a scenario that silently did nothing
    would shrink the derived set)."""
    base = "/conversation/participants"
    sids = iter(range(1, 1000))

    def say(phone: str, text: str) -> int:
        return send_sms(env, phone, text, f"SM{next(sids):08d}")

    def enrol(phone: str) -> dict[str, Any]:
        response = env.api(
            "POST", base, json_body={"phone_number": phone, "name": "Sam", "timezone": "America/Toronto"}
        )
        assert response.status == 201, response.body
        return response.body["result"]

    def state(pid: str) -> dict[str, Any]:
        response = env.api("GET", f"{base}/{pid}/state")
        assert response.status == 200, response.body
        return response.body["result"]

    # Enrollment, greeting (worker), and an intake whose scheduler call is followed by a model failure
    # (the turn is retried: the schedule it created exists already).
    sam, kim = enrol("+14165550142"), enrol("+14165550143")
    deployment.llm.armed = True
    for text in (
        "Hi! I'd like to exercise more.",
        "I want to feel more energetic during the day.",
        "Around 7:30am works for me.",
        "After my morning coffee.",
        "Yes, please.",  # the yes to the proposed daily time: the schedule is made on it
    ):
        assert say(sam["phone_number"], text) == 200
    assert deployment.llm.failures == 1
    assert state(sam["id"])["sub_state"] == "FEEDBACK" and len(state(sam["id"])["schedules"]) == 1

    # The rest of the participants API. Reconcile reads each live schedule (GetSchedule) to compare it.
    reconciled = env.api("POST", f"{base}/{sam['id']}/reconcile")
    assert reconciled.status == 200 and reconciled.body["result"]["live"] == 1, reconciled.body
    assert env.api("GET", base).status == 200
    rows = env.api("GET", "/conversation/participant-rows", query={"status": "active"})  # + a page's flow states
    assert rows.status == 200 and rows.body["result"]["total"] == 2, rows.body
    decisions = env.api("GET", "/conversation/studies/example-mrt/decisions")  # a Query of the index
    assert decisions.status == 200 and decisions.body["result"]["decisions"] == [], decisions.body
    assert env.api("GET", f"{base}/{sam['id']}").status == 200
    assert env.api("GET", f"{base}/{sam['id']}/history").status == 200
    assert env.api("PUT", f"{base}/{sam['id']}", json_body={"name": "Samantha"}).status == 200
    assert env.api("PUT", f"{base}/{sam['id']}", json_body={"status": "paused"}).status == 200
    assert state(sam["id"])["status"] == "paused"
    assert env.api("PUT", f"{base}/{sam['id']}", json_body={"status": "active"}).status == 200
    assert state(sam["id"])["status"] == "active"
    # A pause, then a resume while CreateSchedule is throttled (every attempt of one call): the
    # resume is stored and answered 202 with the marker; the periodic sweep (timers) re-applies it.
    assert env.api("PUT", f"{base}/{sam['id']}", json_body={"status": "paused"}).status == 200
    with throttled_create_schedule():
        assert env.api("PUT", f"{base}/{sam['id']}", json_body={"status": "active"}).status == 202
    assert state(sam["id"])["effects_pending"] is True
    timers_module, timers_attribute = _handler_path(c.TIMERS.key)
    sweep = getattr(import_module(timers_module), timers_attribute)
    assert sweep({"sweep": "pending_effects"}, FakeLambdaContext()) == {"repaired": 1, "hold_alerts": 0}
    assert state(sam["id"])["effects_pending"] is False
    # The daily study sweep (docs/studies.md) with a study active: lists the participants, reads each
    # one's decisions, writes each missing day's row in a commit of their state.
    studies = Path(__file__).parents[2] / "prompts" / "studies"
    with_study(deployment.apps[c.TIMERS.key], load_study(studies, "example-mrt"))
    try:
        swept = sweep({"sweep": "study"}, FakeLambdaContext())
        assert swept["participants"] >= 1, swept
    finally:
        with_study(deployment.apps[c.TIMERS.key], None)
    # A turn dead-lettered during a model outage; the worker's unanswered-turns sweep finds the model
    # answering again and puts it back on the queue, where the worker answers it.
    env._sqs.send_message(
        QueueUrl=env.resources.inbound_dlq_url,
        MessageBody=TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=sam["id"],
            event_id="SM-dead-lettered",
            message=InboundMessage(
                provider="twilio",
                provider_message_id="SM-dead-lettered",
                from_phone=sam["phone_number"],
                body="Are you there?",
                received_at=env.clock.now(),
            ),
            enqueued_at=env.clock.now(),
        ).model_dump_json(),
        MessageGroupId=sam["id"],
        MessageDeduplicationId="SM-dead-lettered",
    )
    worker_module, worker_attribute = _handler_path(c.WORKER.key)
    redriven = getattr(import_module(worker_module), worker_attribute)({"sweep": "unanswered"}, FakeLambdaContext())
    assert redriven == {"waiting": 1, "model_answers": True, "redriven": 1}
    env.drain()

    # STOP and START through the webhook; a STOP confirmation that fails to send is retried by
    # the provider (the same message id) and resumed.
    deployment.messenger.fail_send(1)
    try:
        status: int | None = say(sam["phone_number"], "STOP")
    except MessagingError:
        status = None  # unhandled in the handler: API Gateway answers 5xx, the provider retries
    assert status != 200 and deployment.messenger.failures == 1
    assert state(sam["id"])["status"] == "paused"
    assert deployment.again(c.WEBHOOK.key)["statusCode"] == 200
    assert say(sam["phone_number"], "START") == 200
    assert state(sam["id"])["status"] == "active"

    # An unknown sender: dropped with auto-enrol off, enrolled with it on.
    listed = len(env.api("GET", base).body["result"]["participants"])
    assert say("+14165550199", "hello?") == 200
    assert len(env.api("GET", base).body["result"]["participants"]) == listed
    deployment.deploy(AUTO_ENROL, feedback_timers_enabled=True, quiet_hours_enabled=False)
    assert say("+14165550199", "hello?") == 200
    assert len(env.api("GET", base).body["result"]["participants"]) == listed + 1
    deployment.deploy(DEFAULT, feedback_timers_enabled=True, quiet_hours_enabled=False)

    # Tuesday's daily prompt (on SMS one message, the poll inside it) fails to send; the retry sends it.
    # (07:20 plus the deployed 5-minute flexible window: fired by 07:25.)
    deployment.messenger.fail_send(1)
    env.advance_to(at_local(MONDAY + timedelta(days=1), "07:26"))
    assert deployment.messenger.failures == 2
    deployment.again(c.SCHEDULED_PROMPT.key)
    # Every timer kind: auto-feedback, feedback timeout and follow-up (its reply fails once, then
    # the retry resumes), a reminder, and a delayed state transition armed through the operator API.
    env.advance_to(at_local(MONDAY + timedelta(days=1), "10:00"))
    deployment.messenger.fail_send(1)
    env.advance_to(at_local(MONDAY + timedelta(days=1), "10:40"))
    assert deployment.messenger.failures == 3
    deployment.again(c.TIMERS.key)
    env.advance_to(at_local(MONDAY + timedelta(days=1), "12:30"))
    # The model arms a delayed state transition (worker); it fires 30 minutes later (timers).
    deployment.llm.script.add(
        ScriptedLLM.tool_call("transition_state", {"target_state": "INTAKE", "delay_minutes": 30}),
        ScriptedLLM.text("Sure, let's pick this up in half an hour."),
    )
    assert say(sam["phone_number"], "Can we talk about this again in half an hour?") == 200
    assert deployment.llm.script.remaining == 0
    assert "stateTransitionTimerID" in state(sam["id"])["pending_timers"]
    env.advance_to(at_local(MONDAY + timedelta(days=1), "13:30"))
    # Wednesday's prompt, and a reply soon after it: the worker cancels the reminder it armed. The
    # coach's answer fails to send once; SQS redelivers the turn, which resumes the send.
    env.advance_to(at_local(MONDAY + timedelta(days=2), "07:26"))
    reminder = state(sam["id"])["pending_timers"].get("dailyPromptReminderTimerID")
    assert reminder, state(sam["id"])["pending_timers"]
    deployment.messenger.fail_send(1)
    sent = len(env.messages(sam["id"]))
    assert say(sam["phone_number"], "Done, it went well") == 200
    assert deployment.messenger.failures == 4 and len(env.messages(sam["id"])) > sent
    assert "dailyPromptReminderTimerID" not in state(sam["id"])["pending_timers"]
    # An operator override.
    response = env.api("POST", f"{base}/{sam['id']}/state", json_body={"sub_state": "INTAKE", "reason": "derive"})
    assert response.status == 200, response.body
    # The flows API: read the stored intake flow, validate it, push it as a new version, list versions.
    flow = env.api("GET", "/conversation/flows/intake")
    assert flow.status == 200, flow.body
    definition = json.loads((Path(__file__).parents[2] / "prompts" / "flows" / "intake.json").read_text())
    assert env.api("POST", "/conversation/flows/validate", json_body=definition).status == 200
    pushed = env.api("PUT", "/conversation/flows/intake", json_body=definition)
    assert pushed.status == 200, pushed.body
    assert len(env.api("GET", "/conversation/flows/intake/versions").body["result"]["versions"]) >= 2

    # A crisis message (docs/safety.md): the worker holds the participant and alerts the team (SNS).
    ana = enrol("+12125550148")
    assert say(ana["phone_number"], "i want to end it all") == 200
    assert state(ana["id"])["hold"]["reason"] == "safety"
    # Its hold alert left pending (the event died before the publish and was never redelivered): the
    # timers function's periodic sweep publishes it (docs/safety.md, "Asking for a person").
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.dynamodb_items import needs_person_key

    aws_client("dynamodb", env.settings).update_item(
        TableName=env.settings.table_name,
        Key=needs_person_key(ana["id"]),
        UpdateExpression="SET alert_pending = :t",
        ExpressionAttributeValues={":t": {"BOOL": True}},
    )
    env.clock.advance(timedelta(minutes=20))
    timers_module, timers_attribute = _handler_path(c.TIMERS.key)
    sweep = getattr(import_module(timers_module), timers_attribute)
    assert sweep({"sweep": "pending_effects"}, FakeLambdaContext())["hold_alerts"] == 1

    # Deleting: one participant keeps the transcript (default), the other has it erased.
    assert env.api("DELETE", f"{base}/{sam['id']}").status == 200
    assert env.api("DELETE", f"{base}/{kim['id']}", query={"keep_transcript": "false"}).status == 200
    assert env.api("GET", f"{base}/{kim['id']}/history").status == 404
    # An orphan firing: a daily schedule of the deleted participant (created by a turn that committed
    # just before the delete) removes itself, and the random delivery it may fire through, at once.
    module, attribute = _handler_path(c.SCHEDULED_PROMPT.key)
    orphan = {"participant_id": sam["id"], "schedule_id": "sched_0000000000000000", "execution_id": "exec-orphan"}
    assert getattr(import_module(module), attribute)(orphan, FakeLambdaContext())["messages"] == 0
    return {str(e.get("kind")) for e in deployment.events[c.TIMERS.key]}


# --- the checks ------------------------------------------------------------------------------------------


def test_the_run_reached_every_function_and_timer_kind(run: Run) -> None:
    assert set(run.needs[DEFAULT]) == set(FUNCTIONS)
    assert c.WEBHOOK.key in run.needs[AUTO_ENROL]
    assert run.timer_kinds >= {
        "daily_prompt_reminder",
        "auto_feedback",
        "state_transition",
        "feedback_timeout",
        "feedback_followup",
    }


@pytest.mark.parametrize("key", FUNCTIONS)
@pytest.mark.parametrize("deployment", DEPLOYMENTS)
def test_role_allows_exactly_what_the_code_calls(run: Run, synths: dict[str, Synth], deployment: str, key: str) -> None:
    # Given what the function's code called in the phases this deployment serves, plus the listed
    # platform needs
    want = expected(key, run.derived(DEPLOYMENTS[deployment][1], key))
    # When reading the function's role in this deployment's synthesized template
    have = granted(synths[deployment], key)
    # Then they are the same: nothing missing (AccessDenied in AWS), nothing unused
    missing, unused = sorted(want - have), sorted(have - want)
    assert not missing and not unused, (
        f"{key} ({deployment}): change infra/access.py\n  missing: {[str(n) for n in missing]}\n"
        f"  unused: {[str(n) for n in unused]}\n  calls: {sorted(run.operations[key])}"
    )


def test_every_allowance_has_a_reason() -> None:
    reasons = [*PLATFORM.values(), *(r for extra in EXTRA.values() for r in extra.values())]
    reasons += [reason for _, reason in IMPLIED.values()]
    assert all(len(reason) >= 30 for reason in reasons)


@pytest.mark.parametrize(
    ("service", "operation", "params", "want"),
    [
        (
            "dynamodb",
            "TransactWriteItems",
            {
                "TransactItems": [
                    {"Put": {"TableName": "t", "Item": {"pk": {"S": "PARTICIPANT#p1"}}}},
                    {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "PARTICIPANT#p1"}}}},
                    {"Delete": {"TableName": "t", "Key": {"pk": {"S": "PHONE#+1415"}}}},
                ]
            },
            {
                Need("dynamodb:PutItem", "table", "PARTICIPANT#"),
                Need("dynamodb:ConditionCheckItem", "table", "PARTICIPANT#"),
                Need("dynamodb:DeleteItem", "table", "PHONE#"),
            },
        ),
        (
            "dynamodb",
            "Query",
            {
                "TableName": "t",
                "KeyConditionExpression": "pk = :pk AND begins_with(sk, :m)",
                "ExpressionAttributeValues": {":pk": {"S": "PARTICIPANT#p1"}, ":m": {"S": "MSG#"}},
            },
            {Need("dynamodb:Query", "table", "PARTICIPANT#")},
        ),
        ("dynamodb", "Query", {"TableName": "t", "IndexName": "gsi1"}, {Need("dynamodb:Query", "table/index/gsi1")}),
        ("dynamodb", "Scan", {"TableName": "t"}, {Need("dynamodb:Scan", "table", "*")}),
        (
            "dynamodb",
            "BatchWriteItem",
            {"RequestItems": {"t": [{"PutRequest": {"Item": {"pk": {"S": "PARTICIPANT#p"}, "sk": {"S": "SENT#m"}}}}]}},
            {Need("dynamodb:BatchWriteItem", "table", "PARTICIPANT#")},
        ),
        (
            "scheduler",
            "CreateSchedule",
            {"Name": "n", "GroupName": "g", "Target": {"RoleArn": "r"}},
            {Need("scheduler:CreateSchedule", "schedule-group"), Need("iam:PassRole", "scheduler-role")},
        ),
        ("scheduler", "ListSchedules", {"GroupName": "g"}, {Need("scheduler:ListSchedules", "*")}),
        ("sqs", "SendMessage", {"QueueUrl": "q"}, {Need("sqs:SendMessage", "inbound-queue")}),
        ("secretsmanager", "GetSecretValue", {"SecretId": "s"}, {Need("secretsmanager:GetSecretValue", "secret:s")}),
    ],
)
def test_calls_map_to_what_iam_checks(service: str, operation: str, params: dict[str, Any], want: set[Need]) -> None:
    names = Names(table="t", queue_url="q", group="g", role_arn="r", dlq_arn="d")
    assert set(needs(service, operation, params, names)) == want
