"""The reliability suite (issue 6 items 5–8): what survives conflicts, duplicates, faults and bad input.

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
from typing import Any

import boto3
import pytest
from moto.core.exceptions import JsonRESTError

from promptpipe.adapters.aws import INBOUND_MAX_RECEIVE_COUNT, aws_client, create_local_resources
from promptpipe.adapters.messengers import LocalOutbox
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.clock import ManualClock
from promptpipe.errors import StateConflictRetriesExhausted
from promptpipe.flow.conversation import TRUNCATION_MARK
from promptpipe.flow.deps import IdGenerator
from promptpipe.flow.timer_names import timer_name
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.scheduler import SchedulerTool
from promptpipe.flow.tools.state_transition import StateTransitionTool
from promptpipe.local.environment import TIMERS_ARN, LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, sqs_record
from promptpipe.local.signing import meta_signature, twilio_form, twilio_signature
from promptpipe.models.api import EnrollmentRequest, StateOverride
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.messaging import InboundMessage, OutboundKind
from promptpipe.models.state import DataKey, StateData, SubState
from promptpipe.models.store import Direction, TranscriptEntry
from promptpipe.questions import DONE_QUESTION_ID, canonical_answer_text
from promptpipe.services import EventOutcome, PromptPipe, event_id_for_schedule
from promptpipe.settings import Settings
from promptpipe.wiring import build_app

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


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """botocore's standard-mode backoff delays, recorded instead of slept."""
    from botocore.retries import standard

    delays: list[float] = []
    original = standard.ExponentialBackoff.delay_amount

    def record(self: Any, context: Any) -> float:
        delays.append(original(self, context))
        return 0.0

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", record)
    return delays


@dataclass
class FaultPlan:
    """Which calls of one moto action fail: ``fail(n)`` decides for the n-th matching call (1-based)."""

    fail: Callable[[int], bool]
    matches: Callable[[dict[str, Any]], bool] = lambda _body: True
    run_first: bool = False  # execute the real action, then answer with the fault (an ambiguous 5xx)
    calls: int = 0
    failed: int = 0


def inject(
    monkeypatch: pytest.MonkeyPatch, handler: type, action: str, plan: FaultPlan, fault: Callable[[], Exception]
) -> FaultPlan:
    original = getattr(handler, action)

    def faulty(self: Any) -> Any:
        body = getattr(self, "body", None)
        if not isinstance(body, dict) or not plan.matches(body):
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
def enroll(env: LocalEnvironment, phone: str = PHONE) -> str:
    response = env.api("POST", BASE, json_body={"phone_number": phone, "name": "Alice"})
    assert response.status == 201, response.body
    return response.body["result"]["id"]


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
# moto in server mode, in its own process: nothing this process patched (promptpipe.local.moto_patches,
# the faults above) reaches it. DynamoDB makes each request atomic; moto does not under concurrent
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
sys.stdin.read()  # until the test process closes our stdin
server.stop()
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
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class ServerStack:
    app: PromptPipe
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


def server_stack(endpoint: str, table: str) -> ServerStack:
    """The production wiring (``build_app``) against the moto server, with the manual clock, the
    thread-safe scripted coach and the local outbox."""
    config = Settings(
        table_name=table,
        idempotency_table_name=f"{table}-idempotency",
        schedule_group_name=table,
        aws_endpoint_url=endpoint,
        openai_api_key=None,
    )
    create_local_resources(config)
    clock = ManualClock(T0)
    llm = coach_llm()
    outbox = LocalOutbox(clock)
    app = build_app(
        config,
        clock=clock,
        llm=llm,
        messenger=outbox,
        rng=random.Random(3),
        ids=IdGenerator(random.Random(3)),
        sleep=None,  # the session's conflict backoff is not slept either
    )
    return ServerStack(app=app, config=config, clock=clock, llm=llm, outbox=outbox)


def message_event(pid: str, event_id: str, text: str, at: datetime) -> TurnEvent:
    message = InboundMessage(provider="twilio", provider_message_id=event_id, from_phone=PHONE, body=text, received_at=at)
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
        for thread in threads:
            thread.join(timeout=120)
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
    pid = app.enroll(EnrollmentRequest(phone_number=PHONE, name="Alice")).id
    app.override_state(pid, StateOverride(sub_state=SubState.INTAKE, reason="start in intake"))
    setup = app.sessions.open(pid, "setup-schedule")
    created = SchedulerTool(stack.config.scheduler_prep_time_minutes).execute(
        ToolContext(app.deps, setup), {"action": "create", "type": "fixed", "fixed_time": "09:30"}
    )
    setup.commit()
    assert created.ok, created.text
    [schedule] = StateData(dict(app.store.load(pid).flow.state_data)).schedules()
    prompt = ScheduledPromptPayload.model_validate(fill_placeholders(stack.schedule_input(schedule.timer_id), "x1", T0))
    delivered = app.run_scheduled_prompt(prompt, event_id=f"prompt-{prompt.schedule_id}:x1")
    assert delivered.delivery is not None and delivered.delivery.delivered
    clock.set(T0 + timedelta(hours=5))
    now = clock.now()
    timers = {
        kind: TimerPayload.model_validate(fill_placeholders(stack.schedule_input(timer_name(kind, pid)), "exec-1", now))
        for kind in (TimerKind.DAILY_PROMPT_REMINDER, TimerKind.AUTO_FEEDBACK)
    }
    v0, before, loaded = stack.load(pid)
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
        race.add("turn", event_id, lambda e=event: app.process_turn(e))
    for kind, payload in timers.items():
        event_id = event_id_for_schedule(payload.timer_id, payload.execution_id, payload.scheduled_time, now)
        for _ in range(2):
            race.add(kind.value, event_id, lambda p=payload, e=event_id: app.run_timer(p, event_id=e))
    override = StateOverride(sub_state=SubState.FEEDBACK, debug_mode=True, reason="operator moves to feedback")
    race.add("override", "override", lambda: app.override_state(pid, override) and None)
    assert len(race.events) == 20
    results = race.run()
    for result in results:  # what the handlers do next: send (a replay re-sends the stored messages)
        if result.outcome is not None:
            app.send_all(result.outcome.outbound)

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
            text = [e.content for e in by_event[event_id] if e.direction is Direction.INBOUND][0]
            assert text in ("done", DONE_TEXT)
        reply = f"saved: {text}" if text.startswith("save ") else f"re: {text}"
        expected += [("user", text), ("assistant", reply)]
    assert history == expected
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
    pids = [app.enroll(EnrollmentRequest(phone_number=f"+1415555{1000 + i:04d}")).id for i in range(50)]
    turns = 3

    # When each sends three messages, one after the other, on fifty threads at once
    def participant(index: int, pid: str) -> Callable[[], None]:
        def run() -> None:
            for turn in range(turns):
                event = message_event(pid, f"SM{index:02d}-{turn}", f"p{index:02d} turn {turn}", stack.clock.now())
                app.send_all(app.process_turn(event).outbound)

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
