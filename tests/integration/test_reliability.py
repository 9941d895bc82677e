"""The reliability suite: what survives conflicts, duplicates, faults and bad input.

Each case names what it injects and what must hold; docs/reliability.md lists them all, with the
cases other test files already cover.

- Conflicts (moto in server mode, in a subprocess): twenty threads deliver conflicting events for
  one participant — inbound turns (some saving profile fields, two answering "Done"), a reminder and
  an auto-feedback firing (each delivered twice), an operator override; and fifty participants in
  parallel.
- DynamoDB throttling, answered by moto's DynamoDB endpoint as a real HTTP 400
  ``ProvisionedThroughputExceededException``: retried by botocore; past its retries, a throttled load
  fails the SQS record (SQS retries) and a throttled commit is the documented degraded save.
- EventBridge Scheduler failing CreateSchedule with HTTP 500 during a tool call: the model sees the
  error, the registry is unchanged, the reply commits; a 500 after the schedule was in fact created
  ends as one schedule.
- Bad bodies: 100 KB, empty, whitespace only, not UTF-8, 200 messages in one Meta payload.
- Duplicates: each scheduler invocation kind, and one SQS record, delivered three times.
- Security: logs at INFO carry no credential.

Why faults are injected in moto's service handlers and not with a botocore ``before-send`` hook:
botocore's endpoint emits ``before-send`` to every handler and takes the first response, and
in-process moto answers from its own ``before-send`` handler — so with a hook in front, moto still
executes the write the hook pretends failed. A fault raised inside moto's handler instead comes back
as the HTTP error response AWS would send, through botocore's parser and retry logic; nothing is
written. botocore's backoff delays are recorded, not slept (``no_backoff``).
"""

from __future__ import annotations

import json
import random
import select
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config
from moto.core.exceptions import JsonRESTError

import promptpipe.adapters.aws as aws_adapters
from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT, aws_client, create_local_resources
from promptpipe.adapters.messengers import LocalOutbox
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import StateConflictRetriesExhausted
from promptpipe.flow.deps import IdGenerator
from promptpipe.flow.questions import DONE_QUESTION_ID, canonical_answer_text
from promptpipe.flow.timer_names import timer_name
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.flow.tools.state_transition import StateTransitionTool
from promptpipe.local.environment import SCHEDULED_PROMPT_ARN, SCHEDULER_ROLE_ARN, TIMERS_ARN, LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, sqs_record
from promptpipe.local.signing import meta_signature, twilio_form, twilio_signature
from promptpipe.models.api import EnrollmentRequest, StateOverride
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.history import stored_history_messages
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.messaging import InboundMessage, OutboundKind
from promptpipe.models.state import DataKey, StateData, SubState
from promptpipe.models.store import Direction, TranscriptEntry
from promptpipe.rules.clock import ManualClock
from promptpipe.rules.text_clipping import TRUNCATION_MARK
from promptpipe.settings import Settings
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.daily_prompts import run_scheduled_prompt
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.outcomes import EventOutcome, event_id_for_schedule
from promptpipe.usecases.participants import override_state
from promptpipe.usecases.schedules import reconcile
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.studies import load_study, with_study
from promptpipe.usecases.timer_firings import run_timer
from promptpipe.wiring import build_app
from tests.support import RecordingQueue, enroll_over_api
from tests.support import enroll as enroll_directly
from tests.support.schedules import apply_schedules

T0 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
BASE = "/conversation/participants"
PHONE = "+14155550101"
TWILIO_URL = "https://localhost/webhooks/twilio"
SQS_MAX_BYTES = 256 * 1024


# =============================================================================== shared helpers ==
def coach(request: ChatRequest) -> ChatResponse:
    """A deterministic, stateless coach (safe from any thread): "re: <the user's message>"; a user
    message "save <field>" makes it call save_user_profile with ``<field>="<field> value"``, and it
    answers "saved: <message>" once the tool result is back."""
    user = next((m.content or "" for m in reversed(request.messages) if m.role == "user"), "")
    if request.messages[-1].role == "tool":
        return ScriptedLLM.text(f"saved: {user}")
    if user.startswith("save "):
        name = user.removeprefix("save ")
        return ScriptedLLM.tool_call("save_user_profile", {name: f"{name} value"})
    return ScriptedLLM.text(f"re: {user}")


def coach_llm(calls: int = 1000) -> ScriptedLLM:
    return ScriptedLLM([coach] * calls)


def fill_placeholders(schedule_input: str, execution_id: str, when: datetime) -> dict[str, Any]:
    """A schedule's Input as EventBridge Scheduler hands it to the target (context attributes filled)."""
    text = schedule_input.replace("<aws.scheduler.execution-id>", execution_id).replace(
        "<aws.scheduler.scheduled-time>", when.strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    return json.loads(text)


def transcript(store: Any, participant_id: str) -> list[TranscriptEntry]:
    entries, token = store.list_transcript(participant_id, limit=500, next_token=None)
    assert token is None
    return entries


def commit_version(entry: TranscriptEntry) -> int:
    """The version of the commit that wrote an entry (``seq`` = ``<version>#<index>``)."""
    return int(entry.seq.split("#", 1)[0])


class ServiceFault(JsonRESTError):
    """An AWS error response produced by moto's service endpoint (status, ``__type``, message)."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(error_type, message)
        self.code = status


THROTTLED = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"
THROTTLED_MESSAGE = "The level of configured provisioned throughput for the table was exceeded."
# promptpipe.adapters.aws configures retries={"mode": "standard", "max_attempts": 5}; in a client
# Config botocore reads that as five *retries* (botocore/args.py: total_max_attempts = 5 + 1).
ATTEMPTS = 6


@dataclass
class FaultPlan:
    """Which calls of one moto action fail: ``fail(n)`` decides for the n-th matching call (1-based)."""

    fail: Callable[[int], bool]
    matches: Callable[[Any], bool] = lambda _handler: True  # given moto's response handler
    run_first: bool = False  # execute the real action, then answer with the fault (an ambiguous 5xx)
    calls: int = 0
    failed: int = 0


def inject(
    monkeypatch: pytest.MonkeyPatch, handler: type, action: str, plan: FaultPlan, fault: Callable[[], Exception]
) -> FaultPlan:
    original = getattr(handler, action)

    def faulty(self: Any) -> Any:
        if not plan.matches(self):
            return original(self)
        plan.calls += 1
        if not plan.fail(plan.calls):
            return original(self)
        plan.failed += 1
        if plan.run_first:
            original(self)
        raise fault()

    monkeypatch.setattr(handler, action, faulty)
    return plan


# --- the local stack (in-process moto, real handlers) ------------------------------------------------
def twilio_event(env: LocalEnvironment, text: str, sid: str, phone: str = PHONE) -> dict[str, Any]:
    params = {"MessageSid": sid, "AccountSid": "AC1", "From": phone, "To": "+14155550000", "Body": text}
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or ""),
    }
    return {"body": twilio_form(params), "headers": headers, "base64_body": True}


def post_twilio(env: LocalEnvironment, text: str, sid: str) -> int:
    """A signed Twilio webhook; the worker then drains the queue."""
    return env.api("POST", "/webhooks/twilio", **twilio_event(env, text, sid)).status


def webhook_only(env: LocalEnvironment, path: str, **parts: Any) -> int:
    """Deliver to the webhook handler only: what it enqueued stays on the queue."""
    from functions.inbound import webhook

    event = http_api_event("POST", path, now=env.clock.now(), **parts)
    return int(webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))["statusCode"])


def queue_messages(env: LocalEnvironment, url: str | None = None) -> list[dict[str, Any]]:
    received = env._sqs.receive_message(
        QueueUrl=url or env.resources.inbound_queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
        VisibilityTimeout=0,
    )
    return received.get("Messages", [])


def state(env: LocalEnvironment, pid: str) -> dict[str, Any]:
    response = env.api("GET", f"{BASE}/{pid}/state")
    assert response.status == 200, response.body
    return response.body["result"]


def entries(env: LocalEnvironment, pid: str) -> list[tuple[str, str, str]]:
    """(direction, kind, content) of the participant's transcript, oldest first."""
    return [(e.direction.value, e.kind, e.content) for e in transcript(env.app.store, pid)]


def sent(env: LocalEnvironment, pid: str, *kinds: OutboundKind) -> list[str]:
    return [m.body for m in env.messages(pid) if not kinds or m.kind in kinds]


# ====================================================================== (a) conflicts, server mode ==
# moto in server mode, in its own process: nothing this process patched (the faults above) reaches
# it. DynamoDB makes each request atomic; moto does not under concurrent
# requests (a cancelled transaction restores a deep copy of the table, erasing writes made meanwhile),
# so the server takes one request at a time, as tests/integration/test_concurrency.py explains. The
# races under test — between a load and its commit — all remain.
SERVER = """
import sys, threading
from moto.moto_server import threaded_moto_server
from moto.server import ThreadedMotoServer

base = threaded_moto_server.DomainDispatcherApplication
lock = threading.Lock()

class OneRequestAtATime(base):
    def __call__(self, environ, start_response):
        with lock:
            return super().__call__(environ, start_response)

threaded_moto_server.DomainDispatcherApplication = OneRequestAtATime
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
print(f"{host}:{port}", flush=True)
sys.stdin.read()  # until the test process closes our stdin (or terminates us)
"""


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline() if ready else ""
        if not line.strip():
            pytest.fail("the moto server did not start")
        yield f"http://{line.strip()}"
    finally:
        process.stdin.close()
        process.terminate()  # nothing to flush: all state lives in the server's memory
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class ServerStack:
    app: AppContext
    config: Settings
    clock: ManualClock
    llm: ScriptedLLM
    outbox: LocalOutbox

    def load(self, pid: str) -> tuple[int, StateData, Any]:
        loaded = self.app.store.load(pid)
        return loaded.flow.version, StateData(dict(loaded.flow.state_data)), loaded

    def schedule_input(self, name: str) -> str:
        scheduler = aws_client("scheduler", self.config)
        return scheduler.get_schedule(Name=name, GroupName=self.config.schedule_group_name)["Target"]["Input"]


# The server above answers one request at a time, so with fifty threads a request waits in line
# behind the others: on a loaded machine (the suite on both cores plus other jobs) that wait alone
# exceeds the production clients' 10-second read timeout, and botocore then retries a request the
# server is still going to execute — a retry storm that ends in ReadTimeoutError, which is the test
# harness starving, not the engine (DynamoDB does not queue a request for seconds). The stack's
# clients therefore wait as long as the server needs; their retry policy stays the production one.
SERVER_CLIENT_TIMEOUTS = Config(connect_timeout=60, read_timeout=900)


def server_stack(endpoint: str, table: str) -> ServerStack:
    """The production wiring (``build_app``) against the moto server, with the manual clock, the
    thread-safe scripted coach, the local outbox and clients patient with the serialized server."""
    config = Settings(
        table_name=table,
        schedule_group_name=table,
        aws_endpoint_url=endpoint,
        openai_api_key=None,
        timers_function_arn=TIMERS_ARN,
        scheduled_prompt_function_arn=SCHEDULED_PROMPT_ARN,
        scheduler_role_arn=SCHEDULER_ROLE_ARN,
    )
    clock = ManualClock(T0)
    llm = coach_llm()
    outbox = LocalOutbox(clock)
    production = aws_adapters._CLIENT_CONFIG
    aws_adapters._CLIENT_CONFIG = production.merge(SERVER_CLIENT_TIMEOUTS)  # clients keep their config
    try:
        create_local_resources(config)
        app = build_app(
            config,
            clock=clock,
            llm=llm,
            messenger=outbox,
            queue=RecordingQueue(),  # the greetings of direct enrolments (nothing drains it)
            rng=random.Random(3),
            ids=IdGenerator(random.Random(3)),
            sleep=None,  # the session's conflict backoff is not slept either
        )
    finally:
        aws_adapters._CLIENT_CONFIG = production
    return ServerStack(app=app, config=config, clock=clock, llm=llm, outbox=outbox)


def message_event(pid: str, event_id: str, text: str, at: datetime) -> TurnEvent:
    message = InboundMessage(
        provider="twilio", provider_message_id=event_id, from_phone=PHONE, body=text, received_at=at
    )
    return TurnEvent(kind=TurnKind.MESSAGE, participant_id=pid, event_id=event_id, message=message, enqueued_at=at)


@dataclass
class Delivered:
    """What one delivery of one event did."""

    kind: str  # "turn" | "reminder" | "auto_feedback" | "override"
    event_id: str
    outcome: EventOutcome | None = None  # None for the override (it returns a state view)
    redeliveries: int = 0


@dataclass
class Race:
    """Run every event on its own thread, all released at once. An event whose commit kept
    conflicting (``StateConflictRetriesExhausted``) is delivered again, as SQS or the scheduler would."""

    events: list[tuple[str, str, Callable[[], EventOutcome | None]]] = field(default_factory=list)

    def add(self, kind: str, event_id: str, run: Callable[[], EventOutcome | None]) -> None:
        self.events.append((kind, event_id, run))

    def run(self, max_redeliveries: int = 40) -> list[Delivered]:
        start = threading.Barrier(len(self.events))
        lock = threading.Lock()
        results: list[Delivered] = []
        errors: list[BaseException] = []

        def worker(kind: str, event_id: str, run: Callable[[], EventOutcome | None]) -> None:
            try:
                start.wait()
                for redelivery in range(max_redeliveries):
                    try:
                        outcome = run()
                    except StateConflictRetriesExhausted:
                        continue
                    with lock:
                        results.append(Delivered(kind, event_id, outcome, redelivery))
                    return
                raise AssertionError(f"{event_id} never committed")
            except BaseException as exc:  # reported by the test, not lost in the thread
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=worker, args=event) for event in self.events]
        for thread in threads:
            thread.start()
        for thread in threads:  # a guard against a deadlock, not a speed requirement
            thread.join(timeout=1800)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        return results


PLAIN_TURNS = [f"message {i:02d}" for i in range(9)]
PROFILE_FIELDS = ["habit_domain", "motivational_frame", "prompt_anchor", "additional_info"]
DONE_TEXT = canonical_answer_text(DONE_QUESTION_ID, "done")


@pytest.mark.slow
def test_twenty_threads_of_turns_timers_and_an_override_on_one_participant_lose_nothing(moto_server: str) -> None:
    # Given a participant in INTAKE with a daily schedule, whose prompt was delivered five hours ago
    # (so its reminder and auto-feedback one-shots are armed on the scheduler)
    stack = server_stack(moto_server, "pp-race")
    app, clock = stack.app, stack.clock
    pid = enroll_directly(app, EnrollmentRequest(phone_number=PHONE, name="Alice")).id
    override_state(app, pid, StateOverride(sub_state=SubState.INTAKE, reason="start in intake"))
    setup = app.sessions.open(pid, "setup-schedule")
    created = SchedulerTool(stack.config.scheduler_prep_time_minutes).execute(
        ToolContext(app.deps, setup), {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    )
    apply_schedules(app, setup.commit())
    assert created.ok, created.text
    [schedule] = StateData(dict(app.store.load(pid).flow.state_data)).schedules()
    prompt = ScheduledPromptPayload.model_validate(fill_placeholders(stack.schedule_input(schedule.timer_id), "x1", T0))
    delivered = run_scheduled_prompt(app, prompt, event_id=f"prompt-{prompt.schedule_id}:x1")
    apply_effects(app, delivered)
    assert delivered.delivery is not None and delivered.delivery.delivered
    clock.set(T0 + timedelta(hours=5))
    now = clock.now()
    timers = {
        kind: TimerPayload.model_validate(fill_placeholders(stack.schedule_input(timer_name(kind, pid)), "exec-1", now))
        for kind in (TimerKind.DAILY_PROMPT_REMINDER, TimerKind.AUTO_FEEDBACK)
    }
    v0, before, _ = stack.load(pid)
    assert before.daily_prompt_pending() is not None and before.get(DataKey.AUTO_FEEDBACK_TIMER_ID)
    assert (before.sub_state, before.profile().total_prompts) == (SubState.INTAKE, 1)

    # When twenty threads deliver, all at once: nine plain turns, four turns that each save a
    # different profile field, two "done" answers to the prompt, the reminder and the auto-feedback
    # firing (each twice, with one execution id) and an operator override (FEEDBACK + debug mode)
    race = Race()
    turn_texts: dict[str, str] = {}
    for i, text in enumerate([*PLAIN_TURNS, *(f"save {f}" for f in PROFILE_FIELDS), "done", "done"]):
        event_id = f"SM{i:02d}"
        turn_texts[event_id] = text
        event = message_event(pid, event_id, text, now)
        race.add("turn", event_id, lambda e=event: process_turn(app, e))
    for kind, payload in timers.items():
        event_id = event_id_for_schedule(payload.timer_id, payload.execution_id, payload.scheduled_time, now)
        for _ in range(2):
            race.add(kind.value, event_id, lambda p=payload, e=event_id: run_timer(app, p, event_id=e))
    override = StateOverride(sub_state=SubState.FEEDBACK, debug_mode=True, reason="operator moves to feedback")

    def operator() -> None:
        override_state(app, pid, override)

    race.add("override", "override", operator)
    assert len(race.events) == 20
    results = race.run()
    for result in results:  # what the handlers do next: send (a replay re-sends the stored messages)
        if result.outcome is not None:
            apply_effects(app, result.outcome)

    version, data, final = stack.load(pid)
    log = transcript(app.store, pid)
    by_event: dict[str, list[TranscriptEntry]] = defaultdict(list)
    for entry in log:
        by_event[entry.event_id].append(entry)

    # Then every event committed at most once: one fresh outcome per event id (a duplicate delivery
    # is a replay), and all of an event's transcript entries come from one commit
    fresh = [r for r in results if r.outcome is None or not r.outcome.replayed]
    assert sorted(Counter(r.event_id for r in fresh).values()) == [1] * 18
    assert all(r.outcome is not None and r.outcome.replayed for r in results if r not in fresh)
    for event_id, written in by_event.items():
        assert len({commit_version(e) for e in written}) == 1, event_id
    recorded = [r.event_id for r in final.recent_events]
    assert len(recorded) == len(set(recorded))

    # And every commit got its own version, with no gap: no update was lost
    override_versions = {commit_version(e) for e in log if e.kind == "override" and "moves to feedback" in e.content}
    assert len(override_versions) == 1
    versions = [r.outcome.committed_version for r in fresh if r.outcome is not None] + list(override_versions)
    assert all(v is not None for v in versions)
    assert sorted(versions) == list(range(v0 + 1, version + 1))  # type: ignore[type-var]
    commit_of = {r.event_id: r.outcome.committed_version for r in fresh if r.outcome is not None}
    commit_of["override"] = override_versions.pop()

    # And no history message is lost: the prompt, then each turn's message and its reply, in the
    # order the turns committed
    history = [(m.role, m.content) for m in data.history()]
    turns_in_commit_order = sorted((e for e in turn_texts), key=lambda e: commit_of[e])
    expected: list[tuple[str, str]] = [("assistant", delivered.delivery.prompt or "")]
    for event_id in turns_in_commit_order:
        text = turn_texts[event_id]
        if text == "done":
            # History holds the parsed answer when "done" answered the open question, else the text
            inbound = next(e for e in by_event[event_id] if e.direction is Direction.INBOUND)
            text = inbound.metadata.get("parsed_answer", inbound.content)
            assert text in ("done", DONE_TEXT)
        reply = f"saved: {text}" if text.startswith("save ") else f"re: {text}"
        expected += [("user", text), ("assistant", reply)]
    # (the state keeps the latest 30, what the model can be shown: docs/behaviour.md#B-HIST-1; the
    # transcript, checked next, keeps every one)
    assert len(expected) > stored_history_messages(-1) and history == expected[-stored_history_messages(-1) :]
    for event_id in turn_texts:  # each turn's inbound entry and reply, written once
        kinds = Counter((e.direction, e.kind) for e in by_event[event_id])
        assert kinds[(Direction.INBOUND, "message")] == 1 and kinds[(Direction.OUTBOUND, "reply")] == 1

    # And no profile field is lost: every saved field, "done" counted once, the one delivered prompt
    profile = data.profile()
    assert {name: getattr(profile, name) for name in PROFILE_FIELDS} == {f: f"{f} value" for f in PROFILE_FIELDS}
    assert (profile.success_count, profile.total_prompts) == (1, 1)
    assert final.participant.debug_mode is True and final.participant.name == "Alice"

    # And each timer decided on the state it committed against: the reminder went out only if it
    # committed before every reply (a reply clears the pending prompt), at most once
    reminder_id = next(r.event_id for r in fresh if r.kind == TimerKind.DAILY_PROMPT_REMINDER.value)
    reminder = next(r.outcome for r in fresh if r.event_id == reminder_id)
    assert reminder is not None and reminder.timer is not None
    first_reply = min(commit_of[e] for e in turn_texts)
    assert reminder.timer.applied == (commit_of[reminder_id] < first_reply)
    reminders = [e for e in log if e.kind == OutboundKind.REMINDER.value]
    assert len(reminders) == int(reminder.timer.applied)
    assert len([m for m in stack.outbox.messages(pid) if m.kind is OutboundKind.REMINDER]) == len(reminders)
    assert data.daily_prompt_pending() is None
    assert (data.get_time(DataKey.DAILY_PROMPT_REMINDER_SENT_AT) is not None) == reminder.timer.applied
    # And the auto-feedback moved the participant only if it committed before the override (whose
    # sub-state write cancels it); either way they end in FEEDBACK with the timer cleared
    autofb_id = next(r.event_id for r in fresh if r.kind == TimerKind.AUTO_FEEDBACK.value)
    autofb = next(r.outcome for r in fresh if r.event_id == autofb_id)
    assert autofb is not None and autofb.timer is not None
    assert autofb.timer.applied == (commit_of[autofb_id] < commit_of["override"])
    assert (data.sub_state, data.get(DataKey.AUTO_FEEDBACK_TIMER_ID)) == (SubState.FEEDBACK, "")


@pytest.mark.slow
def test_fifty_participants_in_parallel_each_keep_their_whole_history(moto_server: str) -> None:
    # Given fifty enrolled participants
    stack = server_stack(moto_server, "pp-fifty")
    app = stack.app
    pids = [enroll_directly(app, EnrollmentRequest(phone_number=f"+1415555{1000 + i:04d}")).id for i in range(50)]
    turns = 2  # moto copies the whole table per transaction item: more turns cost quadratically

    # When each sends two messages, one after the other, on fifty threads at once
    def participant(index: int, pid: str) -> Callable[[], None]:
        def run() -> None:
            for turn in range(turns):
                event = message_event(pid, f"SM{index:02d}-{turn}", f"p{index:02d} turn {turn}", stack.clock.now())
                apply_effects(app, process_turn(app, event))

        return run

    race = Race()
    for index, pid in enumerate(pids):
        race.add("turns", pid, participant(index, pid))
    assert len(race.run(max_redeliveries=1)) == 50

    # Then every participant's history is complete and in order, one version per turn
    for index, pid in enumerate(pids):
        version, data, _ = stack.load(pid)
        texts = [f"p{index:02d} turn {t}" for t in range(turns)]
        assert [m.content for m in data.history()] == [x for t in texts for x in (t, f"re: {t}")]
        assert version == turns
        assert [e.content for e in transcript(app.store, pid)] == [x for t in texts for x in (t, f"re: {t}")]
        assert [m.body for m in stack.outbox.messages(pid)] == [f"re: {t}" for t in texts]


# ============================================================================= (b) DynamoDB throttling ==
def throttle(monkeypatch: pytest.MonkeyPatch, action: str, table: str, fail: Callable[[int], bool]) -> FaultPlan:
    """Answer matching calls of ``action`` on ``table`` (base table only) with HTTP 400
    ``ProvisionedThroughputExceededException`` from moto's DynamoDB endpoint. Of the transactions,
    the state's commits (those that put the flow state), not the delivery outcomes' write."""
    from moto.dynamodb.responses import DynamoHandler

    def on_table(handler: Any) -> bool:
        body = handler.body  # the parsed request (DynamoHandler.call_action sets it)
        if action == "query":
            return body.get("TableName") == table and not body.get("IndexName")
        puts = [item["Put"] for item in body.get("TransactItems", []) if "Put" in item]
        return any(
            put.get("TableName") == table and put["Item"].get("sk", {}).get("S", "").startswith("FLOW#") for put in puts
        )

    return inject(
        monkeypatch,
        DynamoHandler,
        action,
        FaultPlan(fail=fail, matches=on_table),
        lambda: ServiceFault(400, THROTTLED, THROTTLED_MESSAGE),
    )


def test_throttled_load_and_commit_are_retried_by_botocore_and_the_turn_commits_once(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given a greeted participant
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    version, llm_calls = state(env, pid)["version"], env.app.deps.llm.calls
    # And DynamoDB throttling the first two loads (Query) and the first two commits (TransactWriteItems)
    table = env.settings.table_name
    loads = throttle(monkeypatch, "query", table, lambda n: n <= 2)
    commits = throttle(monkeypatch, "transact_write_items", table, lambda n: n <= 2)

    # When a message arrives and the worker takes the turn
    assert post_twilio(env, "hello through the throttle", "SM-throttled") == 200

    # Then botocore retried each call past the throttling (two backoffs each, computed, not slept)
    assert (loads.failed, commits.failed) == (2, 2) and commits.calls == 3
    assert len(no_backoff) == 4
    # And the turn committed once: one version, one inbound entry, one reply sent, one model call
    monkeypatch.undo()
    assert state(env, pid)["version"] == version + 1
    assert entries(env, pid)[-2:] == [
        ("inbound", "message", "hello through the throttle"),
        ("outbound", "reply", "re: hello through the throttle"),
    ]
    assert sent(env, pid, OutboundKind.REPLY) == ["re: hello through the throttle"]
    assert env.app.deps.llm.calls == llm_calls + 1
    assert queue_messages(env) == []


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_load_throttled_past_the_retries_fails_the_record_and_sqs_retries_it(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given a greeted participant, and DynamoDB throttling every load for a while: all six of
    # botocore's attempts during the first delivery of the next turn
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    version, llm_calls = state(env, pid)["version"], env.app.deps.llm.calls
    loads = throttle(monkeypatch, "query", env.settings.table_name, lambda n: n <= ATTEMPTS)

    # When a message arrives: the worker's first run fails (the record returns to the queue), the
    # second receive of the same record succeeds
    assert post_twilio(env, "are you there?", "SM-retried") == 200

    # Then the first delivery failed after botocore's six attempts, before any model call or write,
    # and SQS's redelivery committed the turn once
    assert (loads.failed, loads.calls) == (ATTEMPTS, ATTEMPTS + 1)
    monkeypatch.undo()
    assert state(env, pid)["version"] == version + 1
    assert env.app.deps.llm.calls == llm_calls + 1
    assert sent(env, pid, OutboundKind.REPLY) == ["re: are you there?"]
    assert [e for e in entries(env, pid) if e[0] == "inbound"] == [("inbound", "message", "are you there?")]


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_load_that_stays_throttled_is_dead_lettered_with_nothing_written(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given a greeted participant and a table that throttles every load
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    before, llm_calls = entries(env, pid), env.app.deps.llm.calls
    version = state(env, pid)["version"]
    loads = throttle(monkeypatch, "query", env.settings.table_name, lambda _n: True)

    # When a message arrives and the queue is drained
    assert post_twilio(env, "still throttled", "SM-doomed") == 200

    # Then each of the queue's three receives failed after botocore's six attempts, and the turn is
    # in the dead-letter queue: no model call, no write, no reply
    assert loads.calls == ATTEMPTS * INBOUND_MAX_RECEIVE_COUNT
    monkeypatch.undo()
    assert queue_messages(env) == []
    [dead] = queue_messages(env, env.resources.inbound_dlq_url)
    assert json.loads(dead["Body"])["event_id"] == "SM-doomed"
    assert env.app.deps.llm.calls == llm_calls
    assert (state(env, pid)["version"], entries(env, pid)) == (version, before)
    assert sent(env, pid, OutboundKind.REPLY) == []


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_commit_throttled_past_the_retries_is_the_documented_degraded_save(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given a greeted participant and a table that throttles every commit
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    before, version = entries(env, pid), state(env, pid)["version"]
    commits = throttle(monkeypatch, "transact_write_items", env.settings.table_name, lambda _n: True)

    # When a message arrives and the worker takes the turn
    assert post_twilio(env, "keep this if you can", "SM-unsaved") == 200

    # Then the commit was tried six times and nothing of it was written (one transaction: no
    # half-written turn), and — docs/behaviour.md#SC-10, docs/architecture.md "A failed state save" —
    # the reply still went out once and the record completed (it is not retried by SQS); the
    # message and the reply still reach the transcript, the message marked as not saved
    assert commits.calls == ATTEMPTS
    monkeypatch.undo()
    assert state(env, pid)["version"] == version
    assert entries(env, pid) == [
        *before,
        ("inbound", "message", "keep this if you can"),
        ("outbound", "reply", "re: keep this if you can"),
    ]
    history = env.api("GET", f"/conversation/participants/{pid}/history").body["result"]["messages"]
    assert history[-2]["state"] == "answered; the turn could not be saved"
    assert history[-1]["delivery"]["status"] == "sent"
    assert sent(env, pid, OutboundKind.REPLY) == ["re: keep this if you can"]
    assert queue_messages(env) == [] and queue_messages(env, env.resources.inbound_dlq_url) == []


# ==================================================== (c) EventBridge Scheduler failing during a tool ==
def failing_create_schedule(monkeypatch: pytest.MonkeyPatch, *, run_first: bool, times: int) -> FaultPlan:
    from moto.scheduler.responses import EventBridgeSchedulerResponse

    return inject(
        monkeypatch,
        EventBridgeSchedulerResponse,
        "create_schedule",
        FaultPlan(fail=lambda n: n <= times, run_first=run_first),
        lambda: ServiceFault(500, "InternalServerException", "Unexpected error, please try again."),
    )


def scheduling_coach() -> ScriptedLLM:
    """A model that asks for a daily 09:30 schedule, then answers with what the tool told it."""

    def answer(request: ChatRequest) -> ChatResponse:
        assert request.messages[-1].role == "tool"
        return ScriptedLLM.text(f"tool said: {request.messages[-1].content}")

    return ScriptedLLM(
        [
            ScriptedLLM.text("Hello!"),
            ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed", "fixed_time": "09:30"}),
            answer,
        ]
    )


def daily_schedules(env: LocalEnvironment, pid: str) -> list[str]:
    items = aws_client("scheduler", env.settings).list_schedules(GroupName=env.settings.schedule_group_name)
    return sorted(s["Name"] for s in items["Schedules"] if s["Name"].startswith(pid))


@pytest.mark.logs_errors  # the failure is the case: it is logged, then retried or degraded
def test_a_scheduler_outage_after_the_commit_delivers_the_reply_once_and_reconcile_repairs(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given a greeted participant, and EventBridge Scheduler answering every CreateSchedule with 500
    llm = scheduling_coach()
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    version, model_calls = state(env, pid)["version"], len(llm.requests)
    creates = failing_create_schedule(monkeypatch, run_first=False, times=99)

    # When the model calls the scheduler tool during a turn
    assert post_twilio(env, "remind me at 9:30 please", "SM-schedule") == 200

    # Then the decision committed once (the model was told what will be scheduled; the registry lists
    # it) and the reply went out once, although creating the schedule failed
    tool_result = llm.requests[-1].messages[-1].content or ""
    assert "Daily habit prompt scheduled" in tool_result
    assert state(env, pid)["version"] == version + 1
    [registered] = state(env, pid)["schedules"]
    [reply] = sent(env, pid, OutboundKind.REPLY)
    assert reply.startswith("tool said: ")
    # And each redelivery retried only the schedule (three receives, six HTTP attempts each), never
    # the model and never the reply; the record then dead-lettered
    assert len(llm.requests) == model_calls + 2
    assert creates.calls == 3 * ATTEMPTS
    assert len(queue_messages(env, env.resources.inbound_dlq_url)) == 1
    monkeypatch.undo()
    assert daily_schedules(env, pid) == []

    # When the outage is over, reconcile repairs the drift
    report = reconcile(env.app, pid)
    assert report.created_missing == [registered["timer_id"]] and report.deleted_orphans == []
    assert daily_schedules(env, pid) == [registered["timer_id"]]
    assert reconcile(env.app, pid).repairs == 0


def test_scheduler_500_after_the_schedule_was_created_ends_with_exactly_one_schedule(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given EventBridge Scheduler creating the schedule but answering 500 (an ambiguous failure)
    llm = scheduling_coach()
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env)
    creates = failing_create_schedule(monkeypatch, run_first=True, times=1)

    # When the model calls the scheduler tool
    assert post_twilio(env, "remind me at 9:30 please", "SM-ambiguous") == 200

    # Then botocore's retry met ConflictException, the adapter replaced the schedule in place, and the
    # tool succeeded: one registered schedule, one schedule in the group, firing at 09:20 daily
    monkeypatch.undo()
    assert creates.calls == 2
    [registered] = state(env, pid)["schedules"]
    assert daily_schedules(env, pid) == [registered["timer_id"]]
    item = aws_client("scheduler", env.settings).get_schedule(
        Name=registered["timer_id"], GroupName=env.settings.schedule_group_name
    )
    assert item["ScheduleExpression"] == "cron(20 9 * * ? *)"
    assert "Daily habit prompt scheduled" in (llm.requests[-1].messages[-1].content or "")


# ===================================================================== (d) oversized and bad bodies ==
def test_a_100_kb_sms_is_accepted_and_truncated_before_the_model_and_the_history(local_env_factory: Any) -> None:
    # Given a greeted participant
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    limit = env.settings.max_inbound_message_chars
    body = "".join(f"{i:07d}," for i in range(12_500))  # 100,000 characters, every cut point distinct
    clipped = body[:limit] + TRUNCATION_MARK

    # When a signed 100 KB SMS arrives
    assert post_twilio(env, body, "SM-huge") == 200

    # Then the model saw the first MAX_INBOUND_MESSAGE_CHARS characters and the mark
    assert env.app.deps.llm.requests[-1].messages[-1].content == clipped
    # And so do the transcript and the stored history
    assert entries(env, pid)[-2:] == [("inbound", "message", clipped), ("outbound", "reply", f"re: {clipped}")]
    history = StateData(dict(env.app.store.load(pid).flow.state_data)).history()
    assert [m.content for m in history[-2:]] == [clipped, f"re: {clipped}"]


def test_an_oversized_body_is_clipped_before_it_is_queued(local_env_factory: Any) -> None:
    # Given a greeted participant
    env = local_env_factory(llm=coach_llm())
    enroll_over_api(env)
    limit = env.settings.max_inbound_message_chars

    # When a signed SMS of 80,000 four-byte characters (320 KB of UTF-8; its form, percent-encoded,
    # stays just under the webhook's 1 MiB body cap) reaches the webhook
    event = twilio_event(env, "😀" * 80_000, "SM-emoji")
    assert len(event["body"].encode()) < env.settings.max_webhook_body_bytes
    status = webhook_only(env, "/webhooks/twilio", **event)

    # Then it is accepted and what was queued fits an SQS message (256 KiB of UTF-8), already clipped
    assert status == 200
    [queued] = queue_messages(env)
    assert len(queued["Body"].encode()) < SQS_MAX_BYTES
    assert json.loads(queued["Body"])["message"]["body"] == "😀" * limit + TRUNCATION_MARK


@pytest.mark.parametrize("body", ["", "  \n\t  "], ids=["empty", "whitespace"])
def test_an_empty_or_blank_sms_is_a_turn_with_empty_text(local_env_factory: Any, body: str) -> None:
    # Given a greeted participant
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)

    # When a signed SMS with an empty (or whitespace-only) body arrives
    assert post_twilio(env, body, "SM-blank") == 200

    # Then it is one turn with empty text: recorded, given to the model as "", answered once
    assert env.app.deps.llm.requests[-1].messages[-1].content == ""
    assert entries(env, pid)[-2:] == [("inbound", "message", ""), ("outbound", "reply", "re:")]
    assert sent(env, pid, OutboundKind.REPLY) == ["re:"]


def test_bodies_that_are_not_utf8_never_cause_a_5xx(local_env_factory: Any) -> None:
    # Given a greeted participant
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    llm_calls = env.app.deps.llm.calls
    raw = b"MessageSid=SMbytes&From=%2B14155550101&To=%2B14155550000&Body=caf\xe9 \xff\xfe"
    params = {"MessageSid": "SMbytes", "From": PHONE, "To": "+14155550000", "Body": "caf\ufffd \ufffd\ufffd"}
    signature = twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or "")
    headers = {"content-type": "application/x-www-form-urlencoded"}

    # When Twilio's route gets raw non-UTF-8 bytes, unsigned and with a signature over the decoded form
    unsigned = webhook_only(env, "/webhooks/twilio", body=raw, headers=headers)
    signed = webhook_only(env, "/webhooks/twilio", body=raw, headers={**headers, "x-twilio-signature": signature})
    # And Meta's route gets a non-UTF-8 body carrying a valid signature over those exact bytes
    meta_raw = b'{"object":"whatsapp_business_account","entry":[\xff]}'
    meta = webhook_only(
        env,
        "/webhooks/whatsapp",
        body=meta_raw,
        headers={
            "content-type": "application/json",
            "x-hub-signature-256": meta_signature(meta_raw, env.settings.whatsapp_app_secret or ""),
        },
    )

    # Then no 5xx: the unsigned form is refused (403); a form signed over its decoded text (invalid
    # bytes read as U+FFFD) is a normal message; the signed Meta body that is not UTF-8 JSON is a 400
    # (Meta never sends one) and nothing of it is queued
    assert (unsigned, signed, meta) == (403, 200, 400)
    [queued] = queue_messages(env)
    assert json.loads(queued["Body"])["message"]["body"] == "caf\ufffd \ufffd\ufffd"
    env.drain()
    assert env.app.deps.llm.calls == llm_calls + 1
    assert entries(env, pid)[-2][2] == "caf\ufffd \ufffd\ufffd"


def test_a_meta_payload_with_200_messages_is_200_ordered_turns(
    local_env_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a greeted participant (the scripted coach ignores intake: no flow controller, whose
    # handoff would answer the fourth non-answer with its holding message)
    env = local_env_factory(llm=coach_llm(), flow_controller_enabled=False)
    pid = enroll_over_api(env)
    texts = [f"batched {i:03d}" for i in range(200)]
    payload = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "WABA_ID",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "contacts": [{"profile": {"name": "Alice"}, "wa_id": PHONE[1:]}],
                            "messages": [
                                {"from": PHONE[1:], "id": f"wamid.{i:03d}", "type": "text", "text": {"body": t}}
                                for i, t in enumerate(texts)
                            ],
                        },
                    }
                ],
            }
        ],
    }
    raw = json.dumps(payload).encode()
    headers = {
        "content-type": "application/json",
        "x-hub-signature-256": meta_signature(raw, env.settings.whatsapp_app_secret or ""),
    }

    queued: list[TurnEvent] = []
    enqueue = env.app.queue.enqueue

    def spy(event: TurnEvent) -> None:
        queued.append(event)
        enqueue(event)

    monkeypatch.setattr(env.app.queue, "enqueue", spy)

    # When one signed webhook carries 200 messages
    from functions.inbound import webhook

    event = http_api_event("POST", "/webhooks/whatsapp", body=raw.decode(), headers=headers, now=env.clock.now())
    response = webhook.handler(event, FakeLambdaContext(function_name="promptpipe-webhook"))

    # Then all are acknowledged, and each became its own turn on the participant's FIFO message
    # group, in the payload's order (the group is what orders them for the worker)
    assert (response["statusCode"], json.loads(response["body"])) == (200, {"received": 200})
    assert [(e.event_id, e.message.body if e.message else None) for e in queued] == [
        (f"wamid.{i:03d}", t) for i, t in enumerate(texts)
    ]
    attributes = env._sqs.get_queue_attributes(
        QueueUrl=env.resources.inbound_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    assert attributes["Attributes"]["ApproximateNumberOfMessages"] == "200"
    # And the worker answers them in that order (the first two batches; every further batch is the
    # same, and moto's cost per commit grows with the partition, so the test stops there)
    env.drain(max_batches=2)
    assert sent(env, pid, OutboundKind.REPLY) == [f"re: {t}" for t in texts[:20]]


# ====================================================================== (e) duplicates, three times ==
def invoke_schedule(env: LocalEnvironment, schedule_input: tuple[str, str], execution_id: str) -> dict[str, Any]:
    """Hand a schedule's (target, Input) to its handler as EventBridge Scheduler does."""
    from functions.scheduled_prompt import handler as scheduled_prompt
    from functions.timers import handler as timers

    target, text = schedule_input
    handler = timers.handler if target == TIMERS_ARN else scheduled_prompt.handler
    return handler(fill_placeholders(text, execution_id, env.clock.now()), FakeLambdaContext(function_name="test"))


def captured(env: LocalEnvironment, name: str) -> tuple[str, str]:
    item = aws_client("scheduler", env.settings).get_schedule(Name=name, GroupName=env.settings.schedule_group_name)
    return item["Target"]["Arn"], item["Target"]["Input"]


def timer_entries(env: LocalEnvironment, pid: str, kind: str) -> list[tuple[str, str, str]]:
    return [e for e in entries(env, pid) if e[0] == "system" and e[1] == "timer" and e[2] == f"{kind} fired"]


KINDS = ["daily_prompt", *(k.value for k in TimerKind)]


@pytest.mark.parametrize("kind", KINDS)
def test_each_scheduler_invocation_delivered_three_times_has_one_effect(local_env_factory: Any, kind: str) -> None:
    # Given a participant in INTAKE with a daily 09:30 schedule (feedback timers on)
    env = local_env_factory(llm=coach_llm(), feedback_timers_enabled=True)
    pid = enroll_over_api(env)
    app = env.app
    override_state(app, pid, StateOverride(sub_state=SubState.INTAKE, reason="start in intake"))
    session = app.sessions.open(pid, "setup")
    tool = SchedulerTool(env.settings.scheduler_prep_time_minutes)
    created = tool.execute(ToolContext(app.deps, session), {"action": "create", "type": "fixed", "fixed_time": "09:30"})
    apply_schedules(app, session.commit())
    assert created.ok
    daily = captured(env, state(env, pid)["schedules"][0]["timer_id"])
    # And, for a timer kind, what arms it: the prompt delivered, a delayed transition, or the timeout
    if kind == TimerKind.STUDY_CHECK_IN.value:  # the check-in comes with a study's daily decision
        with_study(app, load_study(Path(__file__).resolve().parents[2] / "prompts" / "studies", "example-mrt"))
    if kind != "daily_prompt":
        env.clock.set(T0 + timedelta(hours=1))
        invoke_schedule(env, daily, "exec-prompt")
    if kind == TimerKind.STATE_TRANSITION.value:
        session = app.sessions.open(pid, "setup-transition")
        args = {"target_state": "FEEDBACK", "delay_minutes": 30}
        assert StateTransitionTool().execute(ToolContext(app.deps, session), args).ok
        apply_schedules(app, session.commit())
    if kind == TimerKind.FEEDBACK_FOLLOWUP.value:
        env.clock.advance(env.settings.feedback_initial_timeout)
        invoke_schedule(env, captured(env, timer_name(TimerKind.FEEDBACK_TIMEOUT, pid)), "exec-timeout")
    if kind == TimerKind.SCHEDULE_RESUME.value:  # a pause of a day, whose end the timer brings
        session = app.sessions.open(pid, "setup-pause")
        assert tool.execute(ToolContext(app.deps, session), {"action": "pause", "days": 1}).ok
        apply_schedules(app, session.commit())
        env.clock.advance(timedelta(days=1))
    target = daily if kind == "daily_prompt" else captured(env, timer_name(TimerKind(kind), pid))
    env.clock.advance(timedelta(hours=6))  # past every kind's due time (the reminder's is 5 h)
    version, outbox = state(env, pid)["version"], len(env.messages(pid))

    # When EventBridge Scheduler delivers that invocation three times with one execution id
    results = [invoke_schedule(env, target, f"exec-{kind}") for _ in range(3)]

    # Then it had one effect: one commit; the repeats find its record and send nothing again
    assert state(env, pid)["version"] == version + 1
    assert [r["replayed"] for r in results] == [False, True, True]
    assert results[1]["messages"] == results[2]["messages"] == 0
    if kind == "daily_prompt":
        assert results[0]["messages"] == 2  # the prompt and the intensity poll, once
        assert len(sent(env, pid, OutboundKind.DAILY_PROMPT)) == 1
    else:
        assert results[0]["applied"] is True
        assert len(timer_entries(env, pid, kind)) == 1
    assert len(env.messages(pid)) == outbox + results[0]["messages"]


def test_one_sqs_record_delivered_three_times_is_one_turn(local_env_factory: Any) -> None:
    # Given a greeted participant and one turn waiting on the queue
    env = local_env_factory(llm=coach_llm())
    pid = enroll_over_api(env)
    version, llm_calls = state(env, pid)["version"], env.app.deps.llm.calls
    assert webhook_only(env, "/webhooks/twilio", **twilio_event(env, "only once please", "SM-thrice")) == 200
    [message] = queue_messages(env)
    record = sqs_record(message, env.resources.inbound_queue_arn)
    from functions.inbound import worker

    # When Lambda's poller hands the same record to the worker three times (e.g. a visibility timeout
    # that expired while the first run was still going, and a delete that failed)
    results = [worker.handler({"Records": [record]}, FakeLambdaContext(function_name="worker")) for _ in range(3)]

    # Then every run succeeded and there was one turn: one model call, one commit, one reply
    assert results == [{"batchItemFailures": []}] * 3
    assert env.app.deps.llm.calls == llm_calls + 1
    assert state(env, pid)["version"] == version + 1
    assert sent(env, pid, OutboundKind.REPLY) == ["re: only once please"]
    assert [e for e in entries(env, pid) if e[0] == "inbound"] == [("inbound", "message", "only once please")]


# ================================================================= (f) security: no secret in logs ==
SECRETS = {
    "twilio_auth_token": "twilio-token-SECRET-5f1e",
    "whatsapp_app_secret": "meta-app-SECRET-9c2d",
    "whatsapp_verify_token": "meta-verify-SECRET-77ab",
    "openai_api_key": "sk-SECRET-openai-0d3c",
}


@pytest.fixture
def info_logs_to_stdout(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Call it in the test body to route the Powertools logger, at INFO (the production level), to
    the current ``sys.stdout`` (pytest captures the setup and call phases in different streams)."""
    import logging

    from promptpipe.observability import logger

    stdlib = logging.getLogger(logger.name)
    previous = stdlib.level

    def route() -> None:
        stdlib.setLevel(logging.INFO)
        for handler in stdlib.handlers:  # a handler may still hold an earlier test's capture
            if isinstance(handler, logging.StreamHandler):
                monkeypatch.setattr(handler, "stream", sys.stdout)

    yield route
    stdlib.setLevel(previous)


def test_logs_at_info_carry_no_secret(
    local_env_factory: Any, capfd: pytest.CaptureFixture[str], info_logs_to_stdout: Callable[[], None]
) -> None:
    # Given the stack configured with recognisable credentials, logging at INFO
    env = local_env_factory(llm=coach_llm(), **SECRETS)
    info_logs_to_stdout()
    capfd.readouterr()

    # When a participant enrols and writes, and requests arrive unsigned, wrongly signed and with a
    # wrong or right verification token
    pid = enroll_over_api(env)
    assert post_twilio(env, "hello", "SM-logs") == 200
    unsigned = env.api("POST", "/webhooks/twilio", body="From=%2B1&Body=x", headers={"x-twilio-signature": "no"})
    raw = b'{"object":"whatsapp_business_account","entry":[]}'
    forged = env.api("POST", "/webhooks/whatsapp", body=raw, headers={"x-hub-signature-256": "sha256=00"})
    assert (unsigned.status, forged.status) == (403, 403)
    for token in ("wrong", SECRETS["whatsapp_verify_token"]):
        query = {"hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": "1234"}
        env.api("GET", "/webhooks/whatsapp", query=query)
    output = "".join(capfd.readouterr())

    # Then there were INFO logs, and none of them carries a credential
    assert '"level":"INFO"' in output and pid in output
    for name, value in SECRETS.items():
        assert value not in output, name
