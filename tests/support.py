"""Builders for tests: the application wired with in-memory fakes (no AWS, no OpenAI)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.messengers import LocalOutbox
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.adapters.sent_ledger import InMemorySentLedger
from promptpipe.config import CoreConfig
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import SessionFactory
from promptpipe.models.api import EnrollmentRequest
from promptpipe.models.history import stored_history_messages
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.ports import LLM
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.participants import enroll

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


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
    app = AppContext(
        deps=deps,
        repo=store,
        store=store,
        messenger=outbox,
        queue=None,
        sessions=SessionFactory(
            store,
            clock,
            rng=rng,
            prep_minutes=settings.scheduler_prep_time_minutes,
            history_messages=stored_history_messages(settings.chat_history_limit),
        ),
        ledger=InMemorySentLedger(),
        pending_effects=store.pending_effects,
        deliveries=store,
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
