"""Concurrent units of work on one participant, against moto.

- Two sessions opened on the same participant both mutate and both commit: both changes are kept
  and the version moves by two (the loser reloads and replays its operations).
- A replayed guard refuses a stale decision: a reminder firing loads while the daily prompt is still
  pending, the participant's reply clears it and commits first, the reminder's commit conflicts and
  its replay finds nothing pending: no reminder is sent, nothing is recorded as sent.
- Twenty threads against moto in server mode each commit a distinct history message to one
  participant: none is lost, every commit gets its own version, in history order.
"""

from __future__ import annotations

import random
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.after_commit import DynamoDeliveryLog, DynamoPendingEffects, new_token
from promptpipe.adapters.aws import aws_client, create_local_resources
from promptpipe.adapters.dynamodb import DynamoParticipantRepo, DynamoStateStore
from promptpipe.adapters.dynamodb_decisions import DynamoDecisionLog
from promptpipe.adapters.inbound_log import DynamoInboundLog
from promptpipe.adapters.memory_audit import MemoryAuditLog
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.messengers import LocalOutbox
from promptpipe.adapters.phone_claims import DynamoPhoneClaims
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.adapters.sent_ledger import DynamoSentLedger
from promptpipe.adapters.team_alerts import LogTeamAlerts
from promptpipe.config import CoreConfig
from promptpipe.errors import StateConflictRetriesExhausted
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import OpContext, SessionFactory
from promptpipe.flow.timer_events import REMINDER_TEXT
from promptpipe.flow.timer_names import timer_name
from promptpipe.local.environment import SCHEDULED_PROMPT_ARN, SCHEDULER_ROLE_ARN, TIMERS_ARN
from promptpipe.models.api import EnrollmentRequest
from promptpipe.models.events import TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage, OutboundKind
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import (
    ConversationMessage,
    DailyPromptPending,
    DataKey,
    FlowState,
    StateData,
    new_state_data,
)
from promptpipe.models.store import Direction, StateCommit
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.timer_firings import run_timer
from promptpipe.wiring import NoDeadLetters
from tests.support import RecordingQueue, enroll

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PHONE = "+14155550123"


class RacingStore(DynamoStateStore):
    """DynamoStateStore with a hook run once just before the next commit: a concurrent event."""

    def __init__(self, table_name: str, client: object) -> None:
        super().__init__(table_name, client)
        self.before_next_commit: list[Callable[[], None]] = []
        self.commit_calls = 0

    def commit(self, commit: StateCommit) -> None:
        self.commit_calls += 1
        if self.before_next_commit:
            self.before_next_commit.pop(0)()
        super().commit(commit)


@dataclass
class Harness:
    app: AppContext
    store: RacingStore
    timers: InMemoryTimers
    llm: ScriptedLLM
    clock: ManualClock

    def data(self, participant_id: str) -> StateData:
        return StateData(dict(self.store.load(participant_id).flow.state_data))

    def version(self, participant_id: str) -> int:
        return self.store.load(participant_id).flow.version

    def history(self, participant_id: str) -> list[str]:
        return [m.content for m in self.data(participant_id).history()]


def settings(**overrides: object) -> Settings:
    values: dict[str, object] = {
        "table_name": "pp-concurrency",
        "openai_api_key": None,
        "timers_function_arn": TIMERS_ARN,
        "scheduled_prompt_function_arn": SCHEDULED_PROMPT_ARN,
        "scheduler_role_arn": SCHEDULER_ROLE_ARN,
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def harness(aws: None) -> Harness:
    config = settings()
    create_local_resources(config)
    client = aws_client("dynamodb", config)
    store = RacingStore(config.table_name, client)
    clock = ManualClock(T0)
    timers = InMemoryTimers()
    llm = ScriptedLLM()
    rng = random.Random(5)
    deps = FlowDeps(
        config=CoreConfig.from_settings(config),
        llm=llm,
        timers=timers,
        clock=clock,
        prompts=PromptLibrary.from_settings(config),
        ids=IdGenerator(random.Random(5)),
    )
    app = AppContext(
        deps=deps,
        repo=DynamoParticipantRepo(config.table_name, client, index_name=config.participants_index_name),
        store=store,
        messenger=LocalOutbox(clock),
        queue=RecordingQueue(),
        sessions=SessionFactory(store, clock, rng=rng),
        ledger=DynamoSentLedger(config.table_name, client),
        phone_claims=DynamoPhoneClaims(config.table_name, client),
        pending_effects=DynamoPendingEffects(
            config.table_name, client, index_name=config.participants_index_name, now=clock.now, token=new_token
        ),
        deliveries=DynamoDeliveryLog(config.table_name, client),
        inbound=DynamoInboundLog(config.table_name, client),
        dead_letters=NoDeadLetters(),
        alerts=LogTeamAlerts(),
        decisions=DynamoDecisionLog(config.table_name, client, index_name=config.participants_index_name),
        audit=MemoryAuditLog(),
    )
    return Harness(app=app, store=store, timers=timers, llm=llm, clock=clock)


def append(role: str, text: str) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        op.data.append_history(ConversationMessage(role=role, content=text, timestamp=op.now))

    return apply


def merge_profile(**fields: str) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        profile = op.data.profile()
        for name, value in fields.items():
            setattr(profile, name, value)
        op.data.set_profile(profile)

    return apply


def test_two_sessions_both_commit_and_both_changes_are_kept(harness: Harness):
    pid = enroll(harness.app, EnrollmentRequest(phone_number=PHONE)).id
    v0 = harness.version(pid)
    a = harness.app.sessions.open(pid, "evt-a")
    b = harness.app.sessions.open(pid, "evt-b")
    assert a.version == b.version == v0

    a.apply("history", append("user", "from A"))
    a.apply("profile", merge_profile(habit_domain="movement"))
    a.apply("transcript", lambda op: op.record(Direction.SYSTEM, "note", "A was here"))
    b.apply("history", append("user", "from B"))
    b.apply("profile", merge_profile(preferred_time="07:30"))
    b.apply("transcript", lambda op: op.record(Direction.SYSTEM, "note", "B was here"))

    b.commit()
    a.commit()

    assert (b.commit_attempts, a.commit_attempts) == (1, 2)  # A lost once, replayed, won
    assert harness.version(pid) == v0 + 2
    assert (b.committed_version, a.committed_version) == (v0 + 1, v0 + 2)
    assert harness.history(pid) == ["from B", "from A"]
    profile = harness.data(pid).profile()
    assert (profile.habit_domain, profile.preferred_time) == ("movement", "07:30")
    transcript, _ = harness.store.list_transcript(pid, limit=10, next_token=None)
    assert sorted(e.content for e in transcript) == ["A was here", "B was here"]
    events = [r.event_id for r in harness.store.load(pid).recent_events]
    assert events == ["evt-b", "evt-a"]


def test_replayed_reminder_guard_refuses_the_stale_decision(harness: Harness):
    app = harness.app
    pid = enroll(app, EnrollmentRequest(phone_number=PHONE)).id
    sent_at = T0 - timedelta(hours=5)
    reminder_name = timer_name(TimerKind.DAILY_PROMPT_REMINDER, pid)

    # The daily prompt went out five hours ago; its reminder is armed and now firing.
    setup = app.sessions.open(pid, "setup")

    def prompt_was_sent(op: OpContext) -> None:
        op.data.set_daily_prompt_pending(DailyPromptPending(sent_at=sent_at, to=op.participant.phone_number))
        op.data.set(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID, reminder_name)
        op.data.set_time(DataKey.LAST_PROMPT_SENT_AT, sent_at)

    setup.apply("prompt_was_sent", prompt_was_sent)
    setup.commit(record_event=False)
    v0 = harness.version(pid)
    harness.store.commit_calls = 0

    # B: the participant's reply lands between the reminder's load and its commit.
    harness.llm.add(ScriptedLLM.text("Nice work today!"))
    reply_outcomes = []

    def participant_replies() -> None:
        message = InboundMessage(
            provider="local",
            provider_message_id="SMreply1",
            from_phone=PHONE,
            body="Thanks, I'll tell you later how it went",
            received_at=harness.clock.now(),
        )
        event = TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=pid,
            event_id="SMreply1",
            message=message,
            enqueued_at=harness.clock.now(),
        )
        reply_outcomes.append(process_turn(app, event))

    harness.store.before_next_commit.append(participant_replies)

    # A: the reminder firing, through the service the timers function calls.
    payload = TimerPayload(
        participant_id=pid,
        kind=TimerKind.DAILY_PROMPT_REMINDER,
        timer_id=reminder_name,
        expected_sent_at=sent_at,
    )
    outcome = run_timer(app, payload, event_id=f"{reminder_name}:exec-1")

    # The reply committed first, the reminder's first commit conflicted and its replay refused.
    assert [m.body for m in reply_outcomes[0].outbound] == ["Nice work today!"]
    assert reply_outcomes[0].committed_version == v0 + 1
    assert outcome.timer is not None
    assert not outcome.timer.applied
    assert outcome.timer.detail == "stale: no matching pending prompt"
    assert outcome.outbound == []  # the reminder decided on the stale state is gone
    assert outcome.committed_version == v0 + 2
    assert harness.store.commit_calls == 3  # reminder (conflict), reply, reminder again

    data = harness.data(pid)
    assert data.daily_prompt_pending() is None  # stays cleared
    assert data.get(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID) == ""
    assert data.get_time(DataKey.DAILY_PROMPT_REMINDER_SENT_AT) is None
    assert data.get_time(DataKey.DAILY_PROMPT_RESPONDED_AT) == T0
    assert harness.history(pid) == ["Thanks, I'll tell you later how it went", "Nice work today!"]
    transcript, _ = harness.store.list_transcript(pid, limit=50, next_token=None)
    assert REMINDER_TEXT not in [e.content for e in transcript]
    assert all(e.kind != OutboundKind.REMINDER.value for e in transcript)
    # a redelivery of the firing sends nothing either
    replay = run_timer(app, payload, event_id=f"{reminder_name}:exec-1")
    assert replay.replayed and replay.outbound == []


# --- moto server mode: many writers ------------------------------------------------------------------
THREADS = 20
MAX_REDELIVERIES = 25  # a unit of work whose retries ran out is redelivered, as SQS would


@pytest.fixture
def moto_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """moto in server mode, one request at a time.

    DynamoDB makes every request atomic; moto does not under concurrent requests: its
    ``transact_write_items`` deep-copies the tables first and, when the transaction is cancelled (a
    lost version check, here on purpose), puts that copy back, erasing what other requests wrote in
    between (and the copy itself can fail with "dictionary changed size during iteration"). So the
    server handles requests one at a time; the races this test is about are between requests (load,
    then commit), and those stay.
    """
    from moto.moto_server import threaded_moto_server
    from moto.server import ThreadedMotoServer

    base = threaded_moto_server.DomainDispatcherApplication
    lock = threading.Lock()

    class OneRequestAtATime(base):  # type: ignore[misc,valid-type]
        def __call__(self, environ, start_response):  # type: ignore[no-untyped-def]
            with lock:
                return super().__call__(environ, start_response)

    monkeypatch.setattr(threaded_moto_server, "DomainDispatcherApplication", OneRequestAtATime)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        yield endpoint
    finally:
        # The server shares moto's in-process backends: leave nothing behind for other tests.
        request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass
        server.stop()


@pytest.mark.slow
def test_twenty_threads_commit_to_one_participant_and_nothing_is_lost(moto_server: str):
    config = settings(table_name="pp-threads", aws_endpoint_url=moto_server)
    create_local_resources(config)
    client = aws_client("dynamodb", config)  # botocore clients are thread-safe
    repo = DynamoParticipantRepo(config.table_name, client)
    store = DynamoStateStore(config.table_name, client)
    clock = ManualClock(T0)
    pid = "p_" + "c" * 32
    repo.create(
        ConversationParticipant(id=pid, phone_number=PHONE, enrolled_at=T0, created_at=T0, updated_at=T0),
        FlowState(participant_id=pid, state_data=new_state_data()),
    )

    start = threading.Barrier(THREADS)
    all_loaded = threading.Barrier(THREADS)  # everyone reads version 0 before anyone commits
    lock = threading.Lock()
    committed: dict[int, int] = {}  # thread -> committed version
    attempts: dict[int, int] = {}
    redeliveries: dict[int, int] = {}
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        sessions = SessionFactory(store, clock, rng=random.Random(index), sleep=time.sleep)
        try:
            start.wait()
            for delivery in range(MAX_REDELIVERIES):
                session = sessions.open(pid, f"evt-{index:02d}")
                if session.already_processed() is not None:
                    raise AssertionError("an event committed twice")
                session.apply("history", append("user", f"message {index:02d}"))
                session.apply("transcript", lambda op, i=index: op.record(Direction.INBOUND, "message", f"t{i:02d}"))
                if delivery == 0:
                    all_loaded.wait()
                try:
                    session.commit()
                except StateConflictRetriesExhausted:
                    continue
                with lock:
                    committed[index] = session.committed_version or 0
                    attempts[index] = session.commit_attempts
                    redeliveries[index] = delivery
                return
            raise AssertionError(f"thread {index} never committed")
        except BaseException as exc:
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []

    loaded = store.load(pid)
    history = [m.content for m in StateData(dict(loaded.flow.state_data)).history()]
    # No message lost, none duplicated.
    assert sorted(history) == [f"message {i:02d}" for i in range(THREADS)]
    # Every commit got its own version, 1..20, and versions follow the history's order.
    assert loaded.flow.version == THREADS
    assert sorted(committed.values()) == list(range(1, THREADS + 1))
    by_version = [f"message {i:02d}" for i, _ in sorted(committed.items(), key=lambda item: item[1])]
    assert history == by_version
    # Every transcript entry was written, exactly once.
    transcript, _ = store.list_transcript(pid, limit=100, next_token=None)
    assert sorted(e.content for e in transcript) == [f"t{i:02d}" for i in range(THREADS)]
    # All twenty decided on version 0: exactly one committed at its first attempt, the others replayed.
    first_try = [i for i in range(THREADS) if attempts[i] == 1 and redeliveries[i] == 0]
    assert len(first_try) == 1
    assert committed[first_try[0]] == 1
