"""Everything on one machine (docs/architecture.md#local-runs): moto for AWS, the real handlers, a scheduler pump that
fires due schedules against a controllable clock, and a drainer for the inbound FIFO queue.

Only adapters and the clock differ from AWS: the same events reach the same handler functions.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from promptpipe.adapters.local_outbox import LocalOutbox, OutboxRecord
from promptpipe.flow.deps import IdGenerator
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, response_json, sqs_record
from promptpipe.local.pump import Firing, SchedulerPump
from promptpipe.models.effects import LiveSchedule, ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload
from promptpipe.models.sweeps import StudySweepRequest
from promptpipe.ports import LLM, Timers
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import MessagingProvider, Settings, set_settings
from promptpipe.usecases.context import AppContext

logger = logging.getLogger(__name__)

LOCAL_TWILIO_AUTH_TOKEN = "local-twilio-auth-token"
LOCAL_WHATSAPP_APP_SECRET = "local-whatsapp-app-secret"
LOCAL_WHATSAPP_VERIFY_TOKEN = "local-verify-token"
LOCAL_ACCOUNT = "000000000000"
TIMERS_ARN = f"arn:aws:lambda:us-east-1:{LOCAL_ACCOUNT}:function:promptpipe-timers"
SCHEDULED_PROMPT_ARN = f"arn:aws:lambda:us-east-1:{LOCAL_ACCOUNT}:function:promptpipe-scheduled-prompt"
SCHEDULER_ROLE_ARN = f"arn:aws:iam::{LOCAL_ACCOUNT}:role/promptpipe-scheduler"
SCHEDULER_ARN_PREFIX = f"arn:aws:scheduler:us-east-1:{LOCAL_ACCOUNT}"
# The in-memory stack's inbound queue (it has no URL; the setting only says the queue is there).
MEMORY_QUEUE_URL = "memory://promptpipe-inbound.fifo"
MEMORY_QUEUE_ARN = f"arn:aws:sqs:us-east-1:{LOCAL_ACCOUNT}:promptpipe-inbound.fifo"


class InboundLine(Protocol):
    """The receive side of the inbound FIFO queue, as the local drainer reads it (SQS shapes)."""

    def receive(self, limit: int) -> list[dict[str, Any]]: ...

    def delete(self, receipt_handle: str) -> None: ...

    def release(self, receipt_handle: str) -> None:
        """Visible again at once."""
        ...


class SqsInboundLine:
    """``InboundLine`` over the SQS queue (moto)."""

    def __init__(self, client: Any, queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    def receive(self, limit: int) -> list[dict[str, Any]]:
        received = self._client.receive_message(
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=limit,
            AttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
            VisibilityTimeout=30,
        )
        return list(received.get("Messages", []))

    def delete(self, receipt_handle: str) -> None:
        self._client.delete_message(QueueUrl=self._queue_url, ReceiptHandle=receipt_handle)

    def release(self, receipt_handle: str) -> None:
        self._client.change_message_visibility(
            QueueUrl=self._queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=0
        )


@dataclass
class ApiResponse:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class TimelineEntry:
    at: datetime
    actor: str  # "participant" | "coach" | "timer" | "system"
    text: str
    participant_id: str | None = None
    kind: str = ""


def model_label(env: LocalEnvironment) -> str:
    """Which coach model a local run talks to, for the first line of the demo, chat and server."""
    if env.settings.openai_api_key:
        return f"OpenAI {env.settings.genai_model}" + (
            f" at {env.settings.openai_base_url}" if env.settings.openai_base_url else ""
        )
    return "offline coach (rule-based, deterministic; no LLM; set OPENAI_API_KEY to use OpenAI)"


def local_settings(**overrides: Any) -> Settings:
    """Settings of a local run: environment values, then local defaults, then ``overrides``."""
    env = Settings()
    defaults: dict[str, Any] = {
        "table_name": "promptpipe-local",
        "messaging_provider": MessagingProvider.LOCAL,
        "offline_coach": not env.openai_api_key,
        "twilio_auth_token": env.twilio_auth_token or LOCAL_TWILIO_AUTH_TOKEN,
        "whatsapp_app_secret": env.whatsapp_app_secret or LOCAL_WHATSAPP_APP_SECRET,
        "whatsapp_verify_token": env.whatsapp_verify_token or LOCAL_WHATSAPP_VERIFY_TOKEN,
        "timers_function_arn": TIMERS_ARN,
        "scheduled_prompt_function_arn": SCHEDULED_PROMPT_ARN,
        "scheduler_role_arn": SCHEDULER_ROLE_ARN,
        # Exact times locally (the demo's story, the tests' clock) unless the environment sets a window.
        "daily_prompt_flexible_window_minutes": (
            env.daily_prompt_flexible_window_minutes
            if "daily_prompt_flexible_window_minutes" in env.model_fields_set
            else 0
        ),
        "openai_secret_name": None,
        "channel_secret_name": None,
        "aws_endpoint_url": None,
    }
    return env.model_copy(update={**defaults, **overrides})


class NotifyingTimers:
    """A ``Timers`` that reports every schedule name it changes (see ``SchedulerPump.watch``)."""

    def __init__(self, inner: Timers, changed: Callable[[str], None]) -> None:
        self._inner = inner
        self._changed = changed

    def schedule_timer(self, *, name: str, at: datetime, payload: TimerPayload) -> str:
        result = self._inner.schedule_timer(name=name, at=at, payload=payload)
        self._changed(name)
        return result

    def schedule_daily_prompt(
        self, *, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload
    ) -> str:
        result = self._inner.schedule_daily_prompt(
            name=name, hour=hour, minute=minute, timezone=timezone, payload=payload
        )
        self._changed(name)
        return result

    def schedule_prompt_at(self, *, name: str, at: datetime, payload: ScheduledPromptPayload) -> str:
        result = self._inner.schedule_prompt_at(name=name, at=at, payload=payload)
        self._changed(name)
        return result

    def schedule_sweep(self, *, name: str, at: datetime, payload: StudySweepRequest) -> str:
        result = self._inner.schedule_sweep(name=name, at=at, payload=payload)
        self._changed(name)
        return result

    def cancel(self, name: str) -> None:
        self._inner.cancel(name)
        self._changed(name)

    def list_names(self, prefix: str) -> list[str]:
        return self._inner.list_names(prefix)

    def describe(self, name: str) -> LiveSchedule | None:
        return self._inner.describe(name)

    def planned(self, spec: ScheduleSpec) -> LiveSchedule:
        return self._inner.planned(spec)


class LocalEnvironment:
    """Start with ``LocalEnvironment(start=...)``; use ``api``, ``advance``, ``outbox``; ``close``."""

    def __init__(
        self,
        *,
        start: datetime,
        llm: LLM | None = None,
        seed: int = 0,
        settings: Settings | None = None,
        mock_aws: bool = True,
        notified_pump: bool = False,
        stack: Literal["moto", "memory"] = "moto",
        keep_timeline: bool = True,
    ) -> None:
        """``stack="memory"``: the in-memory adapters instead of moto (``local/memory_stack.py``),
        no AWS emulated at all. ``keep_timeline=False``: the timeline and the outbox are not kept (a
        long rehearsal: they would grow with every message)."""
        self.lock = threading.RLock()
        self.settings = settings or local_settings()
        self.clock = ManualClock(start)
        self.timeline: list[TimelineEntry] = []
        self._seen_outbox = 0
        self._keep_timeline = keep_timeline
        self.stack = stack
        self._mock: Any = None
        if stack == "memory":
            self._start_in_memory(llm=llm, seed=seed)
        else:
            self._start_on_moto(llm=llm, seed=seed, mock_aws=mock_aws)
        # Imported only now: the handlers' idempotency layers read the settings at import.
        from functions.enrollment import handler as enrollment
        from functions.inbound import webhook, worker
        from functions.scheduled_prompt import handler as scheduled_prompt
        from functions.timers import handler as timers

        self._enrollment, self._webhook, self._worker = enrollment, webhook, worker
        self._targets = {TIMERS_ARN: timers.handler, SCHEDULED_PROMPT_ARN: scheduled_prompt.handler}
        if notified_pump:
            # Large simulations: the timers adapter reports each schedule it touches to the pump
            # instead of the pump listing the whole group before every firing.
            self.app.deps.timers = NotifyingTimers(self.app.deps.timers, self.pump.watch())

    def _start_in_memory(self, *, llm: LLM | None, seed: int) -> None:
        from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT
        from promptpipe.adapters.memory_queue import InMemoryTurnQueue
        from promptpipe.adapters.memory_timers import InMemoryTimers
        from promptpipe.local.memory_stack import MemoryScheduleSource, build_memory_app
        from promptpipe.wiring import set_app

        self.settings = self.settings.model_copy(update={"inbound_queue_url": MEMORY_QUEUE_URL})
        set_settings(self.settings)
        self.outbox = LocalOutbox(self.clock)
        queue = InMemoryTurnQueue(self.clock.now, max_receives=INBOUND_MAX_RECEIVE_COUNT)
        self._line: InboundLine = queue
        self.memory_timers = InMemoryTimers(
            timers_arn=TIMERS_ARN,
            scheduled_prompt_arn=SCHEDULED_PROMPT_ARN,
            role_arn=SCHEDULER_ROLE_ARN,
            # the window as the EventBridge adapter applies it: never beyond the prep time
            daily_window_minutes=min(
                self.settings.daily_prompt_flexible_window_minutes, self.settings.scheduler_prep_time_minutes
            ),
        )
        self.app: AppContext = build_memory_app(
            self.settings,
            clock=self.clock,
            llm=llm,
            messenger=self.outbox,
            timers=self.memory_timers,
            queue=queue,
            rng=random.Random(seed),
            ids=IdGenerator(random.Random(seed)),
        )
        set_app(self.app)
        source = MemoryScheduleSource(
            self.memory_timers, group_name=self.settings.schedule_group_name, arn_prefix=SCHEDULER_ARN_PREFIX
        )
        self.pump = SchedulerPump(
            None,
            group_name=self.settings.schedule_group_name,
            clock=self.clock,
            dispatch=self._dispatch,
            seed=seed,
            source=source,
        )

    def _start_on_moto(self, *, llm: LLM | None, seed: int, mock_aws: bool) -> None:
        from moto import mock_aws as moto_mock_aws

        self._mock = moto_mock_aws() if mock_aws else None
        if self._mock is not None:
            self._mock.start()

        from promptpipe.adapters.aws import aws_client, create_local_resources

        self.resources = create_local_resources(self.settings)
        self.settings = self.settings.model_copy(
            update={
                "inbound_queue_url": self.resources.inbound_queue_url,
                "inbound_dlq_url": self.resources.inbound_dlq_url,
            }
        )
        set_settings(self.settings)
        self.outbox = LocalOutbox(self.clock)
        self._sqs = aws_client("sqs", self.settings)
        self._line = SqsInboundLine(self._sqs, self.resources.inbound_queue_url)

        from promptpipe.wiring import build_app, set_app

        self.app = build_app(
            self.settings,
            clock=self.clock,
            llm=llm,
            messenger=self.outbox,
            rng=random.Random(seed),
            ids=IdGenerator(random.Random(seed)),  # reproducible ids (and schedule names) per seed
            sleep=None,
        )
        set_app(self.app)
        self.pump = SchedulerPump(
            aws_client("scheduler", self.settings),
            group_name=self.settings.schedule_group_name,
            clock=self.clock,
            dispatch=self._dispatch,
            seed=seed,
        )

    def use_ports(self, **ports: Any) -> AppContext:
        """Swap ports of the running stack (tests: a recording messenger, a provider double): the
        context is frozen, so a new one, installed for the handlers."""
        from promptpipe.wiring import set_app

        self.app = replace(self.app, **ports)
        set_app(self.app)
        return self.app

    def close(self) -> None:
        from promptpipe.wiring import set_app

        set_app(None)
        set_settings(None)
        if self._mock is not None:
            with contextlib.suppress(RuntimeError):
                self._mock.stop()
            self._mock = None

    def __enter__(self) -> LocalEnvironment:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- HTTP routes (the same events API Gateway would send) --------------------------------
    def api(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        body: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        base64_body: bool = False,
        iam: dict[str, Any] | None = None,
    ) -> ApiResponse:
        """Call the API as API Gateway would; ``iam``: the caller its IAM authoriser vouched for."""
        import json

        with self.lock:
            if json_body is not None:
                body = json.dumps(json_body)
                headers = {"content-type": "application/json", **(headers or {})}
            event = http_api_event(
                method,
                path,
                body=body,
                headers=headers,
                query=query,
                base64_body=base64_body,
                now=self.clock.now(),
                iam=iam,
            )
            handler = self._webhook.handler if path.startswith("/webhooks/") else self._enrollment.handler
            response = handler(event, FakeLambdaContext(function_name="promptpipe-api"))
            self.drain()
            return ApiResponse(
                status=int(response.get("statusCode", 500)),
                body=response_json(response),
                headers={k.lower(): v for k, v in (response.get("headers") or {}).items()},
            )

    # -- the inbound queue ---------------------------------------------------------------------
    def drain(self, max_batches: int = 200) -> int:
        """Deliver queued turns to the worker until the queue is empty; failed records are retried
        (visibility reset) until the queue's redrive policy dead-letters them."""
        processed = 0
        with self.lock:
            for _ in range(max_batches):
                messages = self._line.receive(10)
                if not messages:
                    break
                event = {"Records": [sqs_record(m, self._queue_arn) for m in messages]}
                try:
                    result = self._worker.handler(event, FakeLambdaContext(function_name="promptpipe-worker"))
                    failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
                except Exception:  # the whole batch failed (BatchProcessingError)
                    logger.exception("worker batch failed")
                    failed = {m["MessageId"] for m in messages}
                for message in messages:
                    if message["MessageId"] in failed:
                        self._line.release(message["ReceiptHandle"])
                    else:
                        self._line.delete(message["ReceiptHandle"])
                        processed += 1
            self._collect_outbox()
        return processed

    # -- time ----------------------------------------------------------------------------------
    def advance(self, delta: timedelta) -> list[Firing]:
        return self.advance_to(self.clock.now() + delta)

    def advance_to(self, instant: datetime) -> list[Firing]:
        with self.lock:
            self.drain()
            firings = self.pump.run_until(instant)
            self.drain()
            return firings

    def _dispatch(self, target_arn: str, event: dict[str, Any]) -> None:
        handler = self._targets.get(target_arn)
        kind = event.get("kind", "?")
        if self._keep_timeline:
            self.timeline.append(
                TimelineEntry(self.clock.now(), "timer", f"{kind} fired", event.get("participant_id"), kind=str(kind))
            )
        if handler is None:
            logger.error("schedule targets an unknown function", extra={"target": target_arn})
            return
        try:
            handler(event, FakeLambdaContext(function_name=target_arn.rsplit(":", 1)[-1]))
        except Exception:  # EventBridge would retry and then dead-letter; locally we record it
            logger.exception("scheduled invocation failed")
            self.timeline.append(
                TimelineEntry(self.clock.now(), "system", f"{kind} failed", event.get("participant_id"))
            )
        self._collect_outbox()

    # -- observation ---------------------------------------------------------------------------
    @property
    def _queue_arn(self) -> str:
        return MEMORY_QUEUE_ARN if self.stack == "memory" else self.resources.inbound_queue_arn

    def _collect_outbox(self) -> None:
        if not self._keep_timeline:
            self.outbox.clear()
            return
        records = self.outbox.messages()
        for record in records[self._seen_outbox :]:
            self.timeline.append(
                TimelineEntry(record.sent_at, "coach", record.body_text, record.participant_id, record.kind)
            )
        self._seen_outbox = len(records)

    def note_inbound(self, participant_id: str | None, text: str) -> None:
        if self._keep_timeline:
            self.timeline.append(TimelineEntry(self.clock.now(), "participant", text, participant_id, "message"))

    def messages(self, participant_id: str | None = None) -> list[OutboxRecord]:
        return self.outbox.messages(participant_id)
