"""The local stack without the emulated AWS wire (``LocalEnvironment(stack="memory")``; docs/studies.md,
"A rehearsal", says why the study rehearsal runs on it).

The same handlers, use cases and pump as the moto stack; only the adapters differ: the in-memory
ones behind the same ports (``InMemoryStore`` for the participants, state, transcript, deliveries
and decisions; ``InMemoryTimers`` for the schedule group; ``InMemoryTurnQueue`` for the inbound FIFO
queue), each checked against its DynamoDB, Scheduler or SQS twin by the same tests. What it does not
exercise is the AWS side: request shapes, conditional writes as DynamoDB evaluates them, item sizes.
The moto stack stays the one the integration and end-to-end tests run.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

from promptpipe.adapters.eventbridge_timers import schedule_input
from promptpipe.adapters.memory_audit import MemoryAuditLog
from promptpipe.adapters.memory_decisions import InMemoryDecisionLog
from promptpipe.adapters.memory_flows import InMemoryFlowDefinitionStore
from promptpipe.adapters.memory_queue import InMemoryTurnQueue
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers, ScheduledTimer
from promptpipe.adapters.phone_claims import MemoryPhoneClaims
from promptpipe.adapters.prompt_store import prompt_store_from_settings
from promptpipe.adapters.sent_ledger import InMemorySentLedger
from promptpipe.adapters.team_alerts import LogTeamAlerts
from promptpipe.config import CoreConfig
from promptpipe.controller.catalog import FlowCatalog
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.flow_files import load_flow_files
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import SessionFactory
from promptpipe.models.history import stored_history_messages
from promptpipe.ports import LLM, Messenger, TurnQueue
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.wiring import NoDeadLetters, build_llm


class MemoryScheduleSource:
    """The pump's view (``pump.ScheduleSource``) of an ``InMemoryTimers``: each schedule as the
    Scheduler API would answer it (the adapter's own rendering, ``LiveSchedule``, and the Input
    ``EventBridgeTimers`` writes). A schedule's version moves each time the adapter replaces it."""

    def __init__(self, timers: InMemoryTimers, *, group_name: str, arn_prefix: str) -> None:
        self._timers = timers
        self._group_name = group_name
        self._arn_prefix = arn_prefix
        self._versions: dict[str, tuple[ScheduledTimer, int]] = {}  # name -> (object seen, its version)
        self._counter = itertools.count(1)

    def _version(self, name: str) -> int | None:
        schedule = self._timers.schedules.get(name)
        if schedule is None:
            self._versions.pop(name, None)
            return None
        seen = self._versions.get(name)
        if seen is None or seen[0] is not schedule:  # the adapter replaced it (a new object)
            seen = (schedule, next(self._counter))
            self._versions[name] = seen
        return seen[1]

    def _arn(self, name: str) -> str:
        return f"{self._arn_prefix}:schedule/{self._group_name}/{name}"

    def listing(self) -> Iterator[dict[str, Any]]:
        for name in sorted(self._timers.schedules):
            version = self._version(name)
            yield {"Name": name, "Arn": self._arn(name), "CreationDate": None, "LastModificationDate": version}

    def get(self, name: str) -> dict[str, Any] | None:
        version = self._version(name)
        spec = self._timers.specs.get(name)
        if version is None or spec is None:
            return None
        window = spec.flexible_window_minutes
        return {
            "Name": name,
            "GroupName": self._group_name,
            "Arn": self._arn(name),
            "CreationDate": None,
            "LastModificationDate": version,
            "ScheduleExpression": spec.expression,
            "ScheduleExpressionTimezone": spec.timezone,
            "FlexibleTimeWindow": {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": window} if window else {"Mode": "OFF"},
            "State": spec.state,
            "ActionAfterCompletion": spec.action_after_completion,
            "Target": {
                "Arn": spec.target_arn,
                "RoleArn": spec.role_arn,
                "Input": schedule_input(self._timers.schedules[name].payload),
            },
        }

    def delete(self, name: str) -> None:
        """A completed one-shot, deleted as the Scheduler deletes it (not a ``cancel`` of ours)."""
        self._timers.schedules.pop(name, None)
        self._timers.specs.pop(name, None)
        self._versions.pop(name, None)


def build_memory_app(
    settings: Settings,
    *,
    clock: ManualClock,
    messenger: Messenger,
    timers: InMemoryTimers,
    queue: InMemoryTurnQueue,
    rng: random.Random,
    ids: IdGenerator,
    llm: LLM | None = None,
) -> AppContext:
    """The application on in-memory adapters, with the settings' config, prompts, flows and study
    as ``wiring.build_app`` reads them (the flow catalog keeps pushed definitions in memory)."""
    from promptpipe.wiring import _study

    store = InMemoryStore()
    config = CoreConfig.from_settings(settings, schedule_changes_via_queue=True)
    deps = FlowDeps(
        config=config,
        llm=llm or build_llm(settings, {}),
        timers=timers,
        clock=clock,
        prompts=PromptLibrary.from_settings(settings, store=prompt_store_from_settings(settings)),
        ids=ids,
        flows=FlowCatalog(
            InMemoryFlowDefinitionStore(),
            clock,
            bundled=load_flow_files(settings.flows_dir),
            ttl_seconds=settings.flow_cache_seconds,
        ),
        study=_study(settings),
    )
    return memory_app_context(
        deps,
        store,
        messenger=messenger,
        queue=queue,
        rng=rng,
        prep_minutes=settings.scheduler_prep_time_minutes,
        history_limit=config.chat_history_limit,
    )


def memory_app_context(
    deps: FlowDeps,
    store: InMemoryStore,
    *,
    messenger: Messenger,
    queue: TurnQueue,
    rng: random.Random,
    prep_minutes: int,
    history_limit: int,
) -> AppContext:
    """The application context over one in-memory store: every port the store or a stand-in serves
    (the local memory stack and the tests' ``MemoryHarness`` both build theirs here)."""
    return AppContext(
        deps=deps,
        repo=store,
        store=store,
        messenger=messenger,
        queue=queue,
        sessions=SessionFactory(
            store,
            deps.clock,
            rng=rng,
            sleep=None,
            prep_minutes=prep_minutes,
            history_messages=stored_history_messages(history_limit),
        ),
        ledger=InMemorySentLedger(),
        phone_claims=MemoryPhoneClaims(store),
        pending_effects=store.pending_effects,
        deliveries=store,
        inbound=store,
        dead_letters=NoDeadLetters(),
        alerts=LogTeamAlerts(),
        decisions=InMemoryDecisionLog(store),
        audit=MemoryAuditLog(),
    )
