"""The application context: the ports and the config the use cases need, wired once per process by
the composition root (``promptpipe.wiring``; tests and the local stack build their own).

Every use case is a function of this context and its typed input (``usecases/__init__.py``). The
context is frozen: a use case reads its ports, never swaps them; a test that wants another messenger
builds another context (``dataclasses.replace``). Every port is required: a process that has no use
for one is given one that says so when called (``wiring``), a test a fake.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptpipe.config import CoreConfig
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import SessionFactory
from promptpipe.ports import (
    AuditLog,
    DeadLetters,
    DecisionLog,
    DeliveryLog,
    InboundLog,
    Messenger,
    ParticipantRepo,
    PendingEffects,
    PhoneClaims,
    SentLedger,
    StateStore,
    TeamAlerts,
    Timers,
    TurnQueue,
)
from promptpipe.rules.clock import Clock


@dataclass(frozen=True, eq=False)
class AppContext:
    """``deps``: what the conversation flow needs (config, model, timers, clock, prompts, ids, flow
    catalog), handed on to it as is; the rest: the stores and channels only the use cases touch."""

    deps: FlowDeps
    repo: ParticipantRepo
    store: StateStore
    messenger: Messenger
    queue: TurnQueue
    sessions: SessionFactory
    ledger: SentLedger
    phone_claims: PhoneClaims
    pending_effects: PendingEffects
    deliveries: DeliveryLog
    inbound: InboundLog
    dead_letters: DeadLetters
    # The study team's alerts (docs/safety.md): an SNS topic deployed, a WARNING log line locally.
    alerts: TeamAlerts
    # The study decisions (docs/studies.md): written by the state commits, read and filled in here.
    decisions: DecisionLog
    # The coordinators' audit records (docs/console.md, "Accountability").
    audit: AuditLog

    @property
    def config(self) -> CoreConfig:
        return self.deps.config

    @property
    def clock(self) -> Clock:
        return self.deps.clock

    @property
    def timers(self) -> Timers:
        return self.deps.timers

    @property
    def prep_minutes(self) -> int:
        return self.deps.config.scheduler_prep_time_minutes
