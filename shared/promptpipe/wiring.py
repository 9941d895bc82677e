"""The composition root: builds the application from settings, once per process (cold start).

Handlers call ``get_app()``; tests and local runs install their own with ``set_app()``.

Cold start (docs/benchmarks.md): ``get_app()`` builds only what every first event needs (the
DynamoDB client, the SQS client where the function enqueues). The Scheduler client, the messenger
(which may read a secret) and the model client are built on first use, and each adapter module is
imported by the code path that uses it, so a function pays for what it calls.
"""

from __future__ import annotations

import contextlib
import importlib
import random
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from promptpipe.collector import collector_paused
from promptpipe.config import CoreConfig
from promptpipe.errors import ConfigurationError
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.session import SessionFactory
from promptpipe.models.history import stored_history_messages
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.store import EventRecord, LoadedState, StateCommit, TranscriptEntry
from promptpipe.observability import tracer
from promptpipe.ports import LLM, AuditLog, Messenger, PhoneClaims, StateStore, TeamAlerts, Timers, TurnQueue
from promptpipe.rules.clock import Clock, SystemClock
from promptpipe.settings import Settings, get_settings
from promptpipe.usecases.context import AppContext

if TYPE_CHECKING:
    from promptpipe.controller.catalog import FlowCatalog
    from promptpipe.flow.prompts import PromptLibrary
    from promptpipe.models.events import TurnEvent
    from promptpipe.models.llm import ChatRequest, ChatResponse
    from promptpipe.models.study import StudyDefinition


Port = TypeVar("Port")


class Lazy(Generic[Port]):
    """A port built on first attribute access (thread-safe), then used directly."""

    def __init__(self, factory: Callable[[], Port]) -> None:
        self._factory = factory
        self._instance: Port | None = None
        self._lock = threading.Lock()

    def build(self) -> Port:
        """The port, built now if it was not yet (the name a port never has: ``Lazy`` forwards the rest)."""
        return self._built()

    def _built(self) -> Port:
        if self._instance is None:
            with self._lock:
                if self._instance is None:
                    self._instance = self._factory()
        return self._instance

    def __getattr__(self, name: str) -> Any:
        return getattr(self._built(), name)


def lazy(factory: Callable[[], Port]) -> Port:
    """``factory()`` deferred until the port is first used (typed as the port itself)."""
    return cast(Port, Lazy(factory))


class LazyLLM:
    """Builds the real model client on first use, so functions that never call it (webhook,
    enrollment) never import ``openai`` nor need a key."""

    def __init__(self, factory: Callable[[], LLM]) -> None:
        self._factory = factory
        self._llm: LLM | None = None
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        if self._llm is None:
            with self._lock:
                if self._llm is None:
                    self._llm = self._factory()
        with tracer.provider.in_subsegment("llm_call") as subsegment:
            subsegment.put_annotation("purpose", request.purpose)
            return self._llm.complete(request)


class TracedStateStore:
    """The state store with an X-Ray subsegment around the commit (the turn's one write)."""

    def __init__(self, inner: StateStore) -> None:
        self._inner = inner

    def load(self, participant_id: str) -> LoadedState:
        return self._inner.load(participant_id)

    def commit(self, commit: StateCommit) -> None:
        with tracer.provider.in_subsegment("state_commit") as subsegment:
            subsegment.put_annotation("version", commit.flow.version)
            self._inner.commit(commit)

    def list_transcript(
        self, participant_id: str, *, limit: int, next_token: str | None
    ) -> tuple[list[TranscriptEntry], str | None]:
        return self._inner.list_transcript(participant_id, limit=limit, next_token=next_token)

    def load_outbound(self, participant_id: str, record: EventRecord) -> list[OutboundMessage]:
        return self._inner.load_outbound(participant_id, record)


def _study_facts(settings: Settings, study: StudyDefinition | None) -> Any:
    """What the offline coach may say of the study: the deployment's settings, the study's own contact
    over them (docs/studies.md, "Per-study settings"), given to the coach when it is built."""
    from dataclasses import replace

    from promptpipe.adapters.offline_coach import StudyFacts
    from promptpipe.models.study import study_setting

    facts = StudyFacts.from_settings(settings)
    contact = study_setting(study, "contact", None)
    return replace(facts, contact=str(contact)) if contact else facts


def build_llm(settings: Settings, secrets: dict[str, str], study: StudyDefinition | None = None) -> LLM:
    api_key = settings.openai_api_key or secrets.get("openai_api_key")
    if api_key:
        from promptpipe.adapters.openai_llm import OpenAILLM
        from promptpipe.adapters.secrets import endpoint_key_reader

        return OpenAILLM.from_settings(settings, api_key=api_key, endpoint_key=endpoint_key_reader(settings))
    if settings.offline_coach:
        from promptpipe.adapters.offline_coach import OfflineCoach

        return OfflineCoach(study=_study_facts(settings, study))
    raise ConfigurationError("no OpenAI API key: set OPENAI_API_KEY (or OPENAI_SECRET_NAME), or OFFLINE_COACH=true")


def _spend_capped(settings: Settings, model: LLM, study: StudyDefinition | None = None) -> LLM:
    """The model behind the study's daily spend cap: the offline coach answers while it is reached."""
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.spend_cap import SpendCappedLLM, spend_cap_switch

    def offline() -> LLM:
        from promptpipe.adapters.offline_coach import OfflineCoach

        return OfflineCoach(study=_study_facts(settings, study))

    assert settings.spend_cap_parameter is not None
    switch = spend_cap_switch(
        settings.spend_cap_parameter, lambda: aws_client("ssm", settings), max_age=settings.spend_cap_cache_seconds
    )
    return SpendCappedLLM(model, switch, offline)


def _eventbridge_timers(settings: Settings) -> Timers:
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.eventbridge_timers import EventBridgeTimers

    return EventBridgeTimers.from_settings(settings, aws_client("scheduler", settings))


def _messenger(settings: Settings, clock: Clock, secrets: dict[str, str]) -> Messenger:
    from promptpipe.adapters.messengers import build_messenger

    return build_messenger(settings, clock=clock, secrets=secrets)


def _prompt_library(settings: Settings) -> PromptLibrary:
    from promptpipe.adapters.prompt_store import prompt_store_from_settings
    from promptpipe.flow.prompts import PromptLibrary

    return PromptLibrary.from_settings(settings, store=prompt_store_from_settings(settings))


def _flow_catalog(settings: Settings, dynamodb: Any, clock: Clock) -> FlowCatalog:
    from promptpipe.adapters.dynamodb_flows import DynamoFlowDefinitionStore
    from promptpipe.controller.catalog import FlowCatalog
    from promptpipe.flow.flow_files import load_flow_files

    return FlowCatalog(
        DynamoFlowDefinitionStore(settings.table_name, dynamodb),
        clock,
        bundled=load_flow_files(settings.flows_dir),
        ttl_seconds=settings.flow_cache_seconds,
    )


def _phone_claims(settings: Settings, dynamodb: Any) -> PhoneClaims:
    from promptpipe.adapters.phone_claims import DynamoPhoneClaims

    return DynamoPhoneClaims(settings.table_name, dynamodb)


class NoQueue:
    """The ``TurnQueue`` of a function deployed without the inbound queue (the worker, the scheduled
    prompt, the timers): nothing of theirs enqueues; a call that did would be a wiring mistake."""

    def enqueue(self, event: TurnEvent) -> None:
        raise ConfigurationError(f"no inbound queue configured (INBOUND_QUEUE_URL) for a {event.kind.value} event")


class NoDeadLetters:
    """The ``DeadLetters`` of a function deployed without the inbound dead-letter queue (all but the
    worker, and the local stack, where a failed turn is retried in process): nothing waits."""

    def waiting(self) -> int:
        return 0

    def redrive(self, limit: int) -> int:
        return 0


def build_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    llm: LLM | None = None,
    messenger: Messenger | None = None,
    timers: Timers | None = None,
    queue: TurnQueue | None = None,
    rng: random.Random | None = None,
    ids: IdGenerator | None = None,
    sleep: Callable[[float], None] | None = time.sleep,
) -> AppContext:
    """The AWS wiring (DynamoDB, SQS, EventBridge Scheduler, Secrets Manager); any port can be
    replaced, which is how local runs swap in the outbox, the offline coach and the manual clock."""
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
    from promptpipe.adapters.secrets import load_secrets

    settings = settings or get_settings()
    clock = clock or SystemClock()
    secrets: dict[str, str] | None = None

    def get_secrets() -> dict[str, str]:
        nonlocal secrets
        if secrets is None:
            secrets = load_secrets(settings)
        return secrets

    dynamodb = aws_client("dynamodb", settings)
    retention = settings.retention_days_after_delete
    repo = DynamoParticipantRepo(
        settings.table_name,
        dynamodb,
        index_name=settings.participants_index_name,
        retention=timedelta(days=retention) if retention else None,
        now=clock.now,
    )
    store = TracedStateStore(DynamoStateStore(settings.table_name, dynamodb))
    if timers is None:
        timers = lazy(lambda: _eventbridge_timers(settings))
    # The functions given the inbound queue (the webhook, the enrollment API) send a carrier
    # opt-out's schedule changes through it: the webhook holds no Scheduler rights.
    via_queue = bool(settings.inbound_queue_url)
    if queue is None and settings.inbound_queue_url:
        from promptpipe.adapters.sqs_queue import SqsTurnQueue

        queue = SqsTurnQueue(settings.inbound_queue_url, aws_client("sqs", settings))
    if messenger is None:
        messenger = lazy(lambda: _messenger(settings, clock, get_secrets()))
    rng = rng or random.Random()
    study = _study(settings)
    model: LLM = llm or LazyLLM(lambda: build_llm(settings, get_secrets(), study))
    if settings.spend_cap_parameter:  # docs/safety.md#budgets
        model = _spend_capped(settings, model, study)
    deps = FlowDeps(
        config=CoreConfig.from_settings(settings, schedule_changes_via_queue=via_queue),
        llm=model,
        timers=timers,
        clock=clock,
        # Read from disk (and the table) at first use: the webhook never uses them, the enrollment API
        # only in its flows routes.
        prompts=lazy(lambda: _prompt_library(settings)),
        ids=ids or IdGenerator(None),
        flows=lazy(lambda: _flow_catalog(settings, dynamodb, clock)),
        study=study,
    )
    from promptpipe.adapters.after_commit import DynamoDeliveryLog, DynamoPendingEffects, new_token
    from promptpipe.adapters.dynamodb_decisions import DynamoDecisionLog
    from promptpipe.adapters.inbound_log import DynamoInboundLog
    from promptpipe.adapters.sent_ledger import DynamoSentLedger

    return AppContext(
        deps=deps,
        repo=repo,
        store=store,
        messenger=messenger,
        queue=queue or NoQueue(),
        sessions=SessionFactory(
            store,
            clock,
            rng=rng,
            sleep=sleep,
            prep_minutes=settings.scheduler_prep_time_minutes,
            # The history is stored as far as the model's window reaches (docs/behaviour.md#B-HIST-1).
            history_messages=stored_history_messages(deps.config.chat_history_limit),
        ),
        ledger=DynamoSentLedger(settings.table_name, dynamodb),
        phone_claims=lazy(lambda: _phone_claims(settings, dynamodb)),
        pending_effects=DynamoPendingEffects(
            settings.table_name, dynamodb, index_name=settings.participants_index_name, now=clock.now, token=new_token
        ),
        deliveries=DynamoDeliveryLog(settings.table_name, dynamodb),
        inbound=DynamoInboundLog(settings.table_name, dynamodb),
        dead_letters=_dead_letters(settings),
        alerts=_team_alerts(settings),
        decisions=DynamoDecisionLog(settings.table_name, dynamodb, index_name=settings.participants_index_name),
        # Written by the coordinators' actions only (the enrollment API's staff routes, the console):
        # the event functions never load it.
        audit=lazy(lambda: _audit_log(settings, dynamodb)),
    )


def _study(settings: Settings) -> StudyDefinition | None:
    """The active study: ``<STUDIES_DIR>/<STUDY_ID>.json`` when it exists, read and checked at cold
    start (a definition that does not validate fails the start rather than randomise wrongly). A
    STUDY_ID without a definition names model routes only (docs/pipeline.md): no decisions."""
    if not settings.study_id or not (settings.studies_dir / f"{settings.study_id}.json").is_file():
        return None
    from promptpipe.usecases.studies import load_study

    return load_study(settings.studies_dir, settings.study_id)


def _audit_log(settings: Settings, dynamodb: Any) -> AuditLog:
    from promptpipe.adapters.dynamodb_audit import DynamoAuditLog

    return DynamoAuditLog(settings.table_name, dynamodb)


def _dead_letters(settings: Settings) -> Any:
    """The inbound dead-letter queue, for the worker's unanswered-turns sweep (none waits when unset)."""
    if not (settings.inbound_dlq_url and settings.inbound_queue_url):
        return NoDeadLetters()
    from promptpipe.adapters.aws import aws_client
    from promptpipe.adapters.sqs_queue import SqsDeadLetters

    return SqsDeadLetters(settings.inbound_dlq_url, settings.inbound_queue_url, aws_client("sqs", settings))


def _team_alerts(settings: Settings) -> TeamAlerts:
    from promptpipe.adapters.team_alerts import LogTeamAlerts, SnsTeamAlerts

    topic = settings.safety_alert_topic_arn
    if not topic:
        return LogTeamAlerts()
    from promptpipe.adapters.aws import aws_client

    return lazy(lambda: SnsTeamAlerts(topic, aws_client("sns", settings), settings.console_url))


_app: AppContext | None = None
_app_lock = threading.Lock()


def channel_credential(name: str) -> str | None:
    """A channel credential (a signing secret, the verify token): the environment (local) or the
    channel secret (AWS). The webhook checks signatures with it; secrets are read here, in the
    composition root, so that no handler imports an adapter."""
    from promptpipe.adapters.secrets import load_secrets

    settings = get_settings()
    return getattr(settings, name, None) or load_secrets(settings).get(name)


def get_app() -> AppContext:
    global _app
    if _app is None:
        with _app_lock:
            if _app is None:
                with collector_paused():  # cold start: docs/benchmarks.md, section 2
                    _app = build_app()
    return _app


def set_app(app: AppContext | None) -> None:
    """Install an application (tests, local server) or clear it (``None``)."""
    global _app
    _app = app


# What the first event of each event function builds besides ``get_app()`` (the Scheduler client:
# any event may arm or cancel a schedule; the prompt library: the generator and the turn's modules;
# the flow catalog and the conversation engine: a turn).
FIRST_EVENT_NEEDS = {
    "worker": ("conversation", "prompts", "flows", "timers"),
    "scheduled_prompt": ("prompts", "timers"),
    "timers": ("timers",),
}
# Modules the first event reads that the function's own flow does not import: a timer's message goes
# out through the messenger, which splits it by the SMS rules and words a question by its texts (the
# daily prompt's and the turn's flows import both themselves; the messenger's own module is loaded by
# the first send, in every function).
FIRST_EVENT_MODULES = {"timers": ("promptpipe.rules.sms", "promptpipe.flow.questions")}


def warm_for_events(app: AppContext | None = None, *, function: str = "worker") -> None:
    """Build now what the first event of ``function`` (worker, scheduled_prompt, timers) needs
    (``FIRST_EVENT_NEEDS``, ``FIRST_EVENT_MODULES``), from disk and memory only: no network call."""
    app = app or get_app()
    needs = FIRST_EVENT_NEEDS[function]
    if "conversation" in needs:
        from promptpipe.usecases.events import conversation_flow

        conversation_flow(app)  # imports and builds the conversation engine
    for module in FIRST_EVENT_MODULES.get(function, ()):
        importlib.import_module(module)
    for name in needs:
        port = getattr(app.deps, name, None)
        if isinstance(port, Lazy):
            port.build()


def prime_for_snapshot() -> None:
    """What a SnapStart snapshot should already hold, with no network call and no secret read:
    the application, what its events need (``warm_for_events``), the X-Ray SDK where tracing is on,
    and the modules of the model and messaging clients (``openai`` is the largest single import).
    The model client itself needs the API key from Secrets Manager, so it is still built at the
    first model call, after restore."""
    from promptpipe.adapters.messengers import build_messenger  # noqa: F401  (imported to be snapshotted)
    from promptpipe.adapters.openai_llm import OpenAILLM  # noqa: F401

    warm_for_events(get_app(), function="worker")  # everything an event function may need
    tracer.prime()
    with contextlib.suppress(ImportError):  # a bundle without the model client (no SnapStart there)
        import openai  # noqa: F401


def _register_priming() -> None:
    from promptpipe.adapters.snapstart import register_before_snapshot

    register_before_snapshot(prime_for_snapshot)


_register_priming()
