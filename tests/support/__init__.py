"""Builders for tests: the application wired with in-memory fakes (no AWS, no OpenAI)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.messengers import LocalOutbox
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.config import CoreConfig
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.local.memory_stack import memory_app_context
from promptpipe.models.api import EnrollmentRequest
from promptpipe.models.events import TimerPayload, TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.ports import LLM
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.participants import enrollment
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.timer_firings import run_timer

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


class RecordingQueue:
    """A ``TurnQueue`` that keeps what is enqueued (nothing drains it)."""

    def __init__(self) -> None:
        self.events: list[TurnEvent] = []

    def enqueue(self, event: TurnEvent) -> None:
        self.events.append(event)


def enroll(app: AppContext, request: EnrollmentRequest) -> ConversationParticipant:
    """The participant ``usecases.participants.enrollment`` enrols (a test's shorthand)."""
    return enrollment(app, request).participant


def enroll_over_api(env: Any, phone: str = "+14155550101", **fields: Any) -> str:
    """Enrols through a local environment's enrollment API (``env``: a ``LocalEnvironment``); the id."""
    response = env.api("POST", "/conversation/participants", json_body={"phone_number": phone, **fields})
    assert response.status == 201, response.body
    return str(response.body["result"]["id"])


@dataclass
class MemoryHarness:
    app: AppContext
    store: InMemoryStore
    timers: InMemoryTimers
    llm: LLM
    outbox: LocalOutbox
    clock: ManualClock

    @property
    def scripted(self) -> ScriptedLLM:
        assert isinstance(self.llm, ScriptedLLM)
        return self.llm

    def enroll(self, phone: str = "+14155550101", **fields: str) -> ConversationParticipant:
        return enroll(self.app, EnrollmentRequest(phone_number=phone, **fields))

    def message(
        self,
        participant: ConversationParticipant,
        text: str,
        *,
        msg_id: str | None = None,
        answer_id: str | None = None,
    ) -> InboundMessage:
        return InboundMessage(
            provider="local",
            provider_message_id=msg_id or f"m-{self.clock.now().timestamp()}-{len(self.outbox.messages())}",
            from_phone=participant.phone_number,
            body=text,
            answer_id=answer_id,
            received_at=self.clock.now(),
        )

    def data(self, participant_id: str) -> dict[str, str]:
        return self.store.flows[participant_id].state_data


def turn(h: MemoryHarness, participant: ConversationParticipant, text: str, **message: Any) -> EventOutcome:
    """One inbound message processed and its effects applied (``message``: ``MemoryHarness.message``'s)."""
    inbound = h.message(participant, text, **message)
    event = TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id=inbound.provider_message_id,
        message=inbound,
        enqueued_at=h.clock.now(),
    )
    outcome = process_turn(h.app, event)
    apply_effects(h.app, outcome)
    return outcome


def memory_harness(llm: LLM | None = None, *, settings: Settings | None = None, seed: int = 7) -> MemoryHarness:
    settings = settings or Settings()
    clock = ManualClock(START)
    store = InMemoryStore()
    timers = InMemoryTimers()
    outbox = LocalOutbox(clock)
    llm = llm if llm is not None else ScriptedLLM()
    rng = random.Random(seed)
    deps = FlowDeps(
        config=CoreConfig.from_settings(settings),
        llm=llm,
        timers=timers,
        clock=clock,
        prompts=PromptLibrary.from_settings(settings),
        ids=IdGenerator(random.Random(seed)),
    )
    app = memory_app_context(
        deps,
        store,
        messenger=outbox,
        queue=RecordingQueue(),
        rng=rng,
        prep_minutes=settings.scheduler_prep_time_minutes,
        history_limit=settings.chat_history_limit,
    )
    return MemoryHarness(app=app, store=store, timers=timers, llm=llm, outbox=outbox, clock=clock)


# The original PromptPipe's SQLite tables that `promptpipe import` reads, as its migrations create them.
ORIGINAL_SQLITE_SCHEMA = """
CREATE TABLE flow_states (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    participant_id TEXT NOT NULL,
    flow_type TEXT NOT NULL,
    current_state TEXT NOT NULL,
    state_data TEXT,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE(participant_id, flow_type)
);
CREATE TABLE conversation_participants (
    id TEXT PRIMARY KEY,
    phone_number TEXT NOT NULL UNIQUE,
    name TEXT, gender TEXT, ethnicity TEXT, background TEXT,
    status TEXT NOT NULL,
    enrolled_at DATETIME NOT NULL,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""


def hand_off_a_new_participant(env: Any, phone: str) -> str:
    """A real controller hold on a local environment: an intake flow whose first node hands off after
    one failed attempt is pushed, a participant enrolls and answers "idk" (docs/controller.md).
    Returns the participant's id."""
    import json
    from pathlib import Path

    flow = json.loads((Path(__file__).resolve().parents[2] / "prompts" / "flows" / "intake.json").read_text())
    flow["nodes"][0]["retryPolicy"] = {"maxAttempts": 1, "onExhaust": "HANDOFF"}
    assert env.api("PUT", "/conversation/flows/intake", json_body=flow).status == 200
    enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": phone, "name": "Alex"})
    assert enrolled.status == 201, enrolled.body
    text_over_webhook(env, phone, "idk", "SM-held-1")
    return str(enrolled.body["result"]["id"])


def text_over_webhook(env: Any, phone: str, body: str, sid: str) -> None:
    """A participant's text through a local environment's signed Twilio webhook, as the provider
    posts it (answered 200)."""
    from promptpipe.local.signing import twilio_form, twilio_signature

    params = {"MessageSid": sid, "AccountSid": "AC1", "From": phone, "To": "+14155550000", "Body": body}
    signature = twilio_signature("https://localhost/webhooks/twilio", params, env.settings.twilio_auth_token)
    answer = env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature},
        base64_body=True,
    )
    assert answer.status == 200


def fire(h: MemoryHarness, payload: TimerPayload, event_id: str) -> EventOutcome:
    """A one-shot timer's firing, its effects applied after the commit."""
    outcome = run_timer(h.app, payload, event_id=event_id)
    apply_effects(h.app, outcome)
    return outcome


def fire_due(h: MemoryHarness, until: datetime) -> list[tuple[str, EventOutcome]]:
    """Fire every due one-shot in time order (each deleted once fired), then set the clock."""
    fired: list[tuple[str, EventOutcome]] = []
    while due := h.timers.due(until):
        schedule = due[0]
        del h.timers.schedules[schedule.name]
        h.clock.set(max(schedule.at, h.clock.now()))
        fired.append((schedule.name, fire(h, schedule.payload, f"{schedule.name}:{schedule.at.isoformat()}")))
    h.clock.set(until)
    return fired


def priced_reply(at: datetime, segments: int = 1) -> Any:
    """A reply sent as ``segments`` SMS segments, whose turn made one gpt-4o-mini call of 1 M prompt
    tokens: what the console's cost estimate prices."""
    from promptpipe.models.store import DeliveryOutcome, Direction, TranscriptEntry

    return TranscriptEntry(
        participant_id="p_1",
        at=at,
        seq="e#1",
        direction=Direction.OUTBOUND,
        kind="reply",
        content="Hi",
        delivery=DeliveryOutcome(status="sent", provider_id="SM3", segments=segments),
        metadata={"llm_calls": [{"model": "gpt-4o-mini", "prompt_tokens": 1_000_000, "completion_tokens": 0}]},
    )
