"""Fault injection around a turn's effects: what is promised is delivered once, and schedules follow.

A turn whose model calls the ``scheduler`` tool (create a daily 09:30 prompt), then answers, runs
through the real handlers on the local stack (moto: DynamoDB, SQS FIFO with its dead-letter queue,
EventBridge Scheduler; the worker drained from the queue, failed records redelivered until the
redrive policy dead-letters them). At each step a fault or a crash is injected:

- (a) before the commit: the model fails on its last round;
- (b) at the commit: the write lands and its answer is lost — as a version conflict on the retry
  (the ambiguous commit) or as a non-conflict error (a read timeout after botocore's retries);
- (c) between effects: the messenger fails on the reply; EventBridge Scheduler answers 500 to
  ``CreateSchedule`` for a whole delivery (moto's own endpoint, so botocore parses and retries it);
- (d) after the effects: the handler crashes once its sends and schedule changes are done;

then redelivery runs to the end, and every case checks the same invariants (``assert_converged``):
the live schedules of the participant in the group are exactly those the state wants (the registry
and the pending one-shots, nothing while not active); every promised reply was sent exactly once;
no model call was repeated once the turn had committed; the queue is empty; ``reconcile`` finds
nothing to repair. Then the races: delete, pause and resume landing between a turn's commit and its
effects (or between its load and its commit), an LLM failure after a scheduler call on all three
deliveries, and a second delivery of the same SQS record while the first is still running.

Nothing sleeps: interleavings are forced with hooks (wrapped ports, ``threading.Event`` hand-offs
with timeouts), and botocore's backoff delays are computed, not slept.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError
from moto.core.exceptions import JsonRESTError

from promptpipe.adapters.aws_errors import store_error
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import LLMError, ParticipantNotFound, StateConflict
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.local.environment import LocalEnvironment
from promptpipe.local.lambda_runtime import FakeLambdaContext, http_api_event, sqs_record
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.effects import LiveSchedule, ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.store import StateCommit
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.participants import delete_participant, update_participant
from promptpipe.usecases.schedules import reconcile, reconcile_all

BASE = "/conversation/participants"
PHONE = "+14155550123"
TWILIO_URL = "https://localhost/webhooks/twilio"
GREETING = "Hello! What habit would you like to build?"
REPLY = "Done: a prompt every day at 09:30."
ASK = "Please remind me every day at 9:30."
SCHEDULE = {"action": "create", "type": "fixed", "fixed_time": "09:30"}
# promptpipe.adapters.aws: retries {"mode": "standard", "max_attempts": 5} = six attempts per call.
ATTEMPTS = 6
RECEIVES = 3  # the inbound queue's maxReceiveCount


# ===================================================================================== harness ==
class CountingTimers:
    """The app's ``Timers`` port, recording every create-or-update and delete it is asked for."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.puts: list[str] = []
        self.cancels: list[str] = []
        self.fail_puts = 0  # raise on the next N create-or-updates (before reaching the scheduler)

    def _put(self, name: str, call: Callable[[], str]) -> str:
        self.puts.append(name)
        return call()

    def schedule_timer(self, *, name: str, at: datetime, payload: TimerPayload) -> str:
        return self._put(name, lambda: self.inner.schedule_timer(name=name, at=at, payload=payload))

    def schedule_daily_prompt(
        self, *, name: str, hour: int, minute: int, timezone: str, payload: ScheduledPromptPayload
    ) -> str:
        return self._put(
            name,
            lambda: self.inner.schedule_daily_prompt(
                name=name, hour=hour, minute=minute, timezone=timezone, payload=payload
            ),
        )

    def schedule_prompt_at(self, *, name: str, at: datetime, payload: ScheduledPromptPayload) -> str:
        return self._put(name, lambda: self.inner.schedule_prompt_at(name=name, at=at, payload=payload))

    def cancel(self, name: str) -> None:
        self.cancels.append(name)
        self.inner.cancel(name)

    def list_names(self, prefix: str) -> list[str]:
        return self.inner.list_names(prefix)

    def describe(self, name: str) -> LiveSchedule | None:
        return self.inner.describe(name)

    def planned(self, spec: ScheduleSpec) -> LiveSchedule:
        return self.inner.planned(spec)


class CountingMessenger:
    """The app's messenger, recording every message handed over successfully. The local outbox
    behind it ignores a repeated message id (as a provider keyed by it would), so counting here is
    what shows a duplicate send."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[OutboundMessage] = []

    def send(self, message: OutboundMessage, before_part: Any = None) -> Any:
        result = self.inner.send(message, before_part)
        self.sent.append(message)
        return result


@dataclass
class Stack:
    env: LocalEnvironment
    llm: ScriptedLLM
    pid: str
    timers: CountingTimers
    messenger: CountingMessenger
    deliveries: Counter[str] = field(default_factory=Counter)  # worker runs per event id

    # -- observations ---------------------------------------------------------------------------
    def live(self) -> list[str]:
        """The participant's live schedules in the group (one ListSchedules by name prefix)."""
        return sorted(self.env.app.timers.list_names(participant_prefix(self.pid)))

    def wanted(self) -> list[str]:
        """What the state view says should be live: the registry's schedules and the pending
        one-shots, while the participant is active; nothing for a paused or deleted one."""
        response = self.env.api("GET", f"{BASE}/{self.pid}/state")
        if response.status == 404:
            return []
        assert response.status == 200, response.body
        view = response.body["result"]
        if view["status"] != ParticipantStatus.ACTIVE.value:
            return []
        return sorted({s["timer_id"] for s in view["schedules"]} | set(view["pending_timers"].values()))

    def registry(self) -> list[str]:
        response = self.env.api("GET", f"{BASE}/{self.pid}/state")
        assert response.status == 200, response.body
        return sorted(s["timer_id"] for s in response.body["result"]["schedules"])

    def replies(self) -> list[str]:
        """Replies handed to the provider (every send, a repeated one too)."""
        handed = [m.body for m in self.messenger.sent if m.participant_id == self.pid and m.kind is OutboundKind.REPLY]
        outbox = [m.body for m in self.env.messages(self.pid) if m.kind is OutboundKind.REPLY]
        assert outbox == list(dict.fromkeys(handed)) or outbox == handed
        return handed

    def sent(self) -> list[str]:
        """Every message handed to the provider for this participant, in order."""
        return [m.body for m in self.messenger.sent if m.participant_id == self.pid]

    def version(self) -> int:
        return self.env.app.store.load(self.pid).flow.version

    def queue(self, url: str) -> list[dict[str, Any]]:
        received = self.env._sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=0
        )
        return received.get("Messages", [])

    def transcript(self) -> list[tuple[str, str, str]]:
        entries, _ = self.env.app.store.list_transcript(self.pid, limit=500, next_token=None)
        return [(e.direction.value, e.kind, e.content) for e in entries]

    # -- actions --------------------------------------------------------------------------------
    def text(self, body: str, sid: str) -> int:
        """A signed Twilio webhook; the worker then drains the queue (redeliveries included)."""
        return self.env.api("POST", "/webhooks/twilio", **twilio_event(self.env, body, sid)).status

    def assert_converged(self, *, replies: list[str], model_calls: int, schedules: int) -> None:
        """The invariants every case ends on."""
        live, wanted = self.live(), self.wanted()
        assert live == wanted, f"live {live} != wanted {wanted}"
        assert len(wanted) == schedules
        assert self.replies() == replies  # each promised reply, exactly once
        assert len(self.llm.requests) == model_calls  # no model call repeated after a commit
        self.llm.assert_exhausted()
        assert self.queue(self.env.resources.inbound_queue_url) == []
        report = reconcile(self.env.app, self.pid)  # nothing orphaned, nothing missing
        assert (report.deleted_orphans, report.created_missing) == ([], [])


def twilio_event(env: LocalEnvironment, text: str, sid: str) -> dict[str, Any]:
    params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": text}
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or ""),
    }
    return {"body": twilio_form(params), "headers": headers, "base64_body": True}


@pytest.fixture
def stack(local_env_factory: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Stack]:
    """``stack(*turn_steps)``: a greeted participant on the local stack, the model scripted with
    the greeting then ``turn_steps``; the timers port counted, the worker's runs counted."""

    def make(*steps: Any) -> Stack:
        llm = ScriptedLLM([ScriptedLLM.text(GREETING), *steps])
        env = local_env_factory(llm=llm)
        timers = CountingTimers(env.app.deps.timers)
        env.app.deps.timers = timers
        messenger = CountingMessenger(env.app.messenger)
        env.use_ports(messenger=messenger)
        response = env.api("POST", BASE, json_body={"phone_number": PHONE, "name": "Alice"})
        assert response.status == 201, response.body
        built = Stack(env=env, llm=llm, pid=response.body["result"]["id"], timers=timers, messenger=messenger)
        assert built.sent() == [GREETING]
        from functions.inbound import worker  # imported once the stack has its settings

        process_turn = worker.process_turn

        def counted(app: Any, event: Any) -> EventOutcome:
            built.deliveries[event.event_id] += 1
            return process_turn(app, event)

        monkeypatch.setattr(worker, "process_turn", counted)
        return built

    return make


def schedule_call() -> ChatResponse:
    return ScriptedLLM.tool_call("scheduler", SCHEDULE)


def reply() -> ChatResponse:
    return ScriptedLLM.text(REPLY)


def wrap_commit(
    monkeypatch: pytest.MonkeyPatch, s: Stack, around: Callable[[Callable[[StateCommit], None], StateCommit], None]
) -> list[StateCommit]:
    """Route the state store's commits through ``around(real_commit, commit)``; returns the commits
    of this participant's turn events it saw (the hook decides what to inject, and when)."""
    store = s.env.app.sessions.store
    real = store.commit
    seen: list[StateCommit] = []

    def commit(request: StateCommit) -> None:
        if request.participant_id == s.pid and any(e.event_id.startswith("SM") for e in request.recent_events[-1:]):
            seen.append(request)
            around(real, request)
        else:
            real(request)

    monkeypatch.setattr(store, "commit", commit)
    return seen


def wrap_finish(monkeypatch: pytest.MonkeyPatch, s: Stack, around: Callable[[Callable[..., int], Any], int]) -> None:
    """Route the worker's ``finish`` (the effects, after the commit) through ``around(real, outcome)``."""
    from functions import common

    real = common.apply_effects
    monkeypatch.setattr(common, "apply_effects", lambda app, outcome: around(lambda o: real(app, o), outcome))


class ServiceFault(JsonRESTError):
    """An AWS error response produced inside moto's service endpoint (status, ``__type``)."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(error_type, message)
        self.code = status


def failing_create_schedule(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """EventBridge Scheduler answers the first ``times`` CreateSchedule calls with HTTP 500."""
    from moto.scheduler.responses import EventBridgeSchedulerResponse

    original = EventBridgeSchedulerResponse.create_schedule
    calls: list[int] = []

    def faulty(self: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise ServiceFault(500, "InternalServerException", "Unexpected error, please try again.")
        return original(self)

    monkeypatch.setattr(EventBridgeSchedulerResponse, "create_schedule", faulty)
    return calls


# ======================================================================== (a) before the commit ==
@pytest.mark.logs_errors  # the failed deliveries are logged at ERROR by design
def test_model_failing_on_its_last_round_commits_nothing_and_creates_no_schedule(stack: Any) -> None:
    # Given a turn whose model calls the scheduler tool and then fails (its last round), once
    s = stack(schedule_call(), LLMError("model down", retryable=True), schedule_call(), reply())

    # When the message arrives and redelivery runs to the end
    assert s.text(ASK, "SM-a") == 200

    # Then the first delivery committed nothing and created nothing (the tool's decision died with
    # it); the second ran the model again (nothing had committed) and applied its effects once
    assert s.deliveries["SM-a"] == 2
    assert s.timers.puts == s.registry() and len(s.timers.puts) == 1
    assert [e for e in s.transcript() if e[0] == "inbound"] == [("inbound", "message", ASK)]
    s.assert_converged(replies=[REPLY], model_calls=1 + 4, schedules=1)


# ============================================================================== (b) at the commit ==
def test_ambiguous_commit_lands_then_conflicts_and_the_reply_is_sent_once(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store whose first commit of the turn lands but answers StateConflict (its answer was
    # lost; the retry then failed its version condition)
    s = stack(schedule_call(), reply())
    version = s.version()

    def lands_then_conflicts(real: Callable[[StateCommit], None], request: StateCommit) -> None:
        real(request)
        if len(seen) == 1:
            raise StateConflict("answer lost after the write landed")

    seen = wrap_commit(monkeypatch, s, lands_then_conflicts)

    # When the turn runs
    assert s.text(ASK, "SM-b1") == 200

    # Then the session recognised its own commit (its token in the event record) and applied the
    # effects: one delivery, one commit, the reply once, the schedule live
    assert (s.deliveries["SM-b1"], len(seen), s.version()) == (1, 1, version + 1)
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


def test_commit_lands_then_a_non_conflict_error_still_applies_every_effect(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store whose commit of the turn lands, then raises what the adapter raises when the answer
    # never came back (botocore's read timeout after its retries, as a StoreError): not a conflict
    s = stack(schedule_call(), reply())
    version = s.version()

    def lands_then_times_out(real: Callable[[StateCommit], None], request: StateCommit) -> None:
        real(request)
        if len(seen) == 1:
            timeout = ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/")
            raise store_error("DynamoStateStore.commit", timeout) from timeout

    seen = wrap_commit(monkeypatch, s, lands_then_times_out)

    # When the turn runs
    assert s.text(ASK, "SM-b2") == 200

    # Then the turn committed once, the reply went out once, and the schedule the committed
    # registry lists is live (a state that landed must not be treated as an unsaved one)
    assert s.version() == version + 1
    assert len(s.registry()) == 1
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


# ======================================================================== (c) between effects ==
@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_messenger_failing_on_the_reply_is_resent_once_and_the_schedule_applied(stack: Any) -> None:
    # Given a provider that fails the turn's reply once
    s = stack(schedule_call(), reply())
    s.env.outbox.fail_next(1)
    version = s.version()

    # When the turn runs and the record is redelivered
    assert s.text(ASK, "SM-c1") == 200

    # Then the first delivery committed and failed on its send (before any schedule change); the
    # redelivery found the committed record and sent the reply and created the schedule, with no
    # new model call and no new commit
    assert s.deliveries["SM-c1"] == 2
    assert s.version() == version + 1
    assert len(s.timers.puts) == 1
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_scheduler_failing_on_create_is_retried_without_resending_the_reply(
    stack: Any, monkeypatch: pytest.MonkeyPatch, no_backoff: list[float]
) -> None:
    # Given EventBridge Scheduler answering HTTP 500 to every CreateSchedule of one delivery (all six
    # of botocore's attempts)
    s = stack(schedule_call(), reply())
    creates = failing_create_schedule(monkeypatch, times=ATTEMPTS)
    version = s.version()

    # When the turn runs and the record is redelivered
    assert s.text(ASK, "SM-c2") == 200

    # Then the reply went out on the first delivery, the schedule failed and the record was
    # redelivered; the redelivery created the schedule (one more call) and sent nothing again
    assert s.deliveries["SM-c2"] == 2
    assert len(creates) == ATTEMPTS + 1 and len(no_backoff) == ATTEMPTS - 1
    assert s.version() == version + 1
    assert s.timers.puts == s.registry() * 2
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


# ========================================================================= (d) after the sends ==
@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_crash_after_the_effects_resends_nothing_and_keeps_the_schedule(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a worker that crashes once right after the effects were applied (before the record is
    # acknowledged)
    s = stack(schedule_call(), reply())
    crashed: list[int] = []

    def crash_after(real: Callable[..., int], outcome: Any) -> int:
        sent = real(outcome)
        if not crashed:
            crashed.append(sent)
            raise RuntimeError("crash after the sends")
        return sent

    wrap_finish(monkeypatch, s, crash_after)

    # When the turn runs and the record is redelivered
    assert s.text(ASK, "SM-d") == 200

    # Then the redelivery found the committed record and no record of a partial send: it sent
    # nothing again and re-applied the schedule (an idempotent update)
    assert s.deliveries["SM-d"] == 2 and crashed == [1]
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


# ================================================================ LLM failure to the dead letters ==
@pytest.mark.logs_errors  # the failed delivery is logged, then redelivered: the case itself
def test_llm_failure_after_a_scheduler_call_three_times_dead_letters_and_leaves_no_schedule(stack: Any) -> None:
    # Given a model that calls the scheduler tool and then fails, on every delivery
    s = stack(*[step for _ in range(RECEIVES) for step in (schedule_call(), LLMError("down", retryable=True))])

    # When the message arrives and the queue is drained
    assert s.text(ASK, "SM-dlq") == 200

    # Then three deliveries ran and the record is in the dead-letter queue; no schedule was ever
    # created, none is registered, no reply was sent
    assert s.deliveries["SM-dlq"] == RECEIVES
    assert len(s.queue(s.env.resources.inbound_dlq_url)) == 1
    assert s.timers.puts == [] and s.registry() == []
    s.assert_converged(replies=[], model_calls=1 + 2 * RECEIVES, schedules=0)


# ====================================================================== lifecycle racing a turn ==
def test_delete_between_a_turns_commit_and_its_effects_leaves_an_orphan_that_removes_itself_on_its_first_firing(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn that commits, then — before its effects run — the participant is deleted
    s = stack(schedule_call(), reply())

    def delete_first(real: Callable[..., int], outcome: Any) -> int:
        delete_participant(s.env.app, s.pid)
        return real(outcome)

    wrap_finish(monkeypatch, s, delete_first)
    assert s.text(ASK, "SM-del") == 200
    monkeypatch.undo()

    # Then the turn's effects created the schedule after the clean-up: an orphan
    [orphan] = s.live()
    assert s.wanted() == []
    before = len(s.sent())

    # When it fires (the next 09:20 in the scheduler's zone)
    firings = s.env.advance_to(s.env.pump.next_due())

    # Then the scheduled-prompt handler found no participant and removed the schedule it fired
    # through; no prompt was sent
    assert [f.name for f in firings] == [orphan]
    assert s.live() == [] and len(s.sent()) == before
    assert s.env.pump.next_due() is None


@pytest.mark.parametrize("repair", ["reconcile", "reconcile_all"])
def test_delete_between_a_turns_commit_and_its_effects_leaves_an_orphan_that_reconcile_removes(
    stack: Any, monkeypatch: pytest.MonkeyPatch, repair: str
) -> None:
    # Given the same race: the participant deleted between the turn's commit and its effects
    s = stack(schedule_call(), reply())

    def delete_first(real: Callable[..., int], outcome: Any) -> int:
        delete_participant(s.env.app, s.pid)
        return real(outcome)

    wrap_finish(monkeypatch, s, delete_first)
    assert s.text(ASK, "SM-del2") == 200
    [orphan] = s.live()

    # When reconcile runs (for the participant, or for everyone: it lists the group too, so a
    # deleted participant's schedules are found)
    if repair == "reconcile":
        reports = [reconcile(s.env.app, s.pid)]
    else:
        reports = [r for r in reconcile_all(s.env.app) if r.participant_id == s.pid]

    # Then the orphan is deleted, and the next run finds nothing to do
    assert [r.deleted_orphans for r in reports] == [[orphan]]
    assert s.live() == []
    assert reconcile(s.env.app, s.pid).repairs == 0


def test_delete_between_a_turns_load_and_its_commit_sends_nothing_and_creates_nothing(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the participant deleted after the turn loaded its state, before it commits
    s = stack(schedule_call(), reply())

    def delete_then_commit(real: Callable[[StateCommit], None], request: StateCommit) -> None:
        delete_participant(s.env.app, s.pid)
        real(request)

    wrap_commit(monkeypatch, s, delete_then_commit)

    # When the turn runs
    assert s.text(ASK, "SM-del3") == 200

    # Then its commit failed (the participant item is gone), it sent and created nothing
    assert s.timers.puts == []
    assert s.live() == [] and s.replies() == []
    with pytest.raises(ParticipantNotFound):
        s.env.app.store.load(s.pid)


def pause(s: Stack) -> None:
    update_participant(s.env.app, s.pid, ParticipantUpdate(status=ParticipantStatus.PAUSED))


def resume(s: Stack) -> None:
    update_participant(s.env.app, s.pid, ParticipantUpdate(status=ParticipantStatus.ACTIVE))


def test_pause_between_a_turns_commit_and_its_effects_leaves_an_orphan_that_removes_itself_or_reconcile_does(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn that commits, then the participant is paused before its effects run
    s = stack(schedule_call(), reply())

    def pause_first(real: Callable[..., int], outcome: Any) -> int:
        pause(s)
        return real(outcome)

    wrap_finish(monkeypatch, s, pause_first)
    assert s.text(ASK, "SM-pause") == 200
    monkeypatch.undo()

    # Then the turn's effects created its schedule after the pause had removed everything: live
    # while the participant is paused (the state wants nothing)
    [orphan] = s.live()
    assert s.registry() == [orphan] and s.wanted() == []
    before = len(s.sent())

    # When it fires, the scheduled-prompt handler delivers nothing and removes it
    firings = s.env.advance_to(s.env.pump.next_due())
    assert [f.name for f in firings] == [orphan]
    assert s.live() == [] and len(s.sent()) == before

    # And when the participant is resumed, the registry's schedule is live again
    resume(s)
    assert s.live() == s.wanted() == [orphan]
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


def test_pause_between_a_turns_commit_and_its_effects_is_repaired_by_reconcile(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the same race
    s = stack(schedule_call(), reply())

    def pause_first(real: Callable[..., int], outcome: Any) -> int:
        pause(s)
        return real(outcome)

    wrap_finish(monkeypatch, s, pause_first)
    assert s.text(ASK, "SM-pause2") == 200
    [orphan] = s.live()

    # When reconcile runs, the schedule the paused participant should not have is deleted
    report = reconcile(s.env.app, s.pid)
    assert report.deleted_orphans == [orphan] and report.created_missing == []
    assert s.live() == s.wanted() == []


def test_pause_and_resume_between_a_turns_commit_and_its_effects_converge(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn that commits, then a pause and a resume, both before its effects run
    s = stack(schedule_call(), reply())

    def pause_resume_first(real: Callable[..., int], outcome: Any) -> int:
        pause(s)
        resume(s)
        return real(outcome)

    wrap_finish(monkeypatch, s, pause_resume_first)
    assert s.text(ASK, "SM-pr") == 200

    # Then the registry's schedule is live once (the resume re-created it, the turn's effect
    # updated it in place) and the reply went out once
    s.assert_converged(replies=[REPLY], model_calls=1 + 2, schedules=1)


def test_pause_between_a_turns_load_and_its_commit_replays_the_turn_on_the_paused_state(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the participant paused after the turn loaded its state, before it commits
    s = stack(schedule_call(), reply())
    paused: list[bool] = []

    def pause_then_commit(real: Callable[[StateCommit], None], request: StateCommit) -> None:
        if not paused:
            paused.append(True)
            pause(s)
        real(request)

    seen = wrap_commit(monkeypatch, s, pause_then_commit)

    # When the turn runs
    assert s.text(ASK, "SM-pause3") == 200

    # Then its first commit conflicted and its replay, against the paused state, committed without
    # making any schedule live (the registry keeps the decision for the resume) and without a reply:
    # a participant paused (or opted out) while the model was answering is not messaged
    assert len(seen) == 2
    assert s.live() == [] and s.wanted() == []
    [registered] = s.registry()
    assert s.replies() == []

    # And the resume brings the registry's schedule back
    resume(s)
    assert s.live() == [registered]
    s.assert_converged(replies=[], model_calls=1 + 2, schedules=1)


# ============================================================ a duplicate delivery, concurrently ==
def test_a_second_delivery_of_the_same_record_while_the_first_runs_has_one_commit_and_one_effect(
    stack: Any,
) -> None:
    # Given a turn waiting on the queue; the first delivery (A) will stop inside its last model call
    # until a second delivery of the same record (B) has run to the end
    a_in_model, b_done = threading.Event(), threading.Event()

    def a_last_round(_request: ChatRequest) -> ChatResponse:
        a_in_model.set()
        assert b_done.wait(timeout=60), "the second delivery never finished"
        return reply()

    s = stack(schedule_call(), a_last_round, schedule_call(), reply())
    version = s.version()
    from functions.inbound import webhook, worker

    event = http_api_event("POST", "/webhooks/twilio", now=s.env.clock.now(), **twilio_event(s.env, ASK, "SM-dup"))
    assert webhook.handler(event, FakeLambdaContext(function_name="webhook"))["statusCode"] == 200
    [message] = s.queue(s.env.resources.inbound_queue_url)
    record = sqs_record(message, s.env.resources.inbound_queue_arn)
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    # When A runs on its own thread (the per-record function the batch processor calls) and B, the
    # whole handler, runs while A waits in the model
    errors: list[BaseException] = []

    def run_a() -> None:
        try:
            worker.record_handler(SQSRecord(record))
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    first = threading.Thread(target=run_a)
    first.start()
    assert a_in_model.wait(timeout=60), "the first delivery never reached its model call"
    try:
        result = worker.handler({"Records": [record]}, FakeLambdaContext(function_name="worker"))
    finally:
        b_done.set()
    first.join(timeout=60)
    assert not first.is_alive() and errors == []
    assert result == {"batchItemFailures": []}
    s.env._sqs.delete_message(QueueUrl=s.env.resources.inbound_queue_url, ReceiptHandle=message["ReceiptHandle"])

    # Then one commit (version + 1; one inbound entry, one reply entry), the reply sent once, the
    # schedule created once (by B); A spent its model calls and found B's commit: no effect
    assert s.version() == version + 1
    turn = [e for e in s.transcript() if e[2] in (ASK, REPLY)]
    assert turn == [("inbound", "message", ASK), ("outbound", "reply", REPLY)]
    assert len(s.timers.puts) == 1
    s.assert_converged(replies=[REPLY], model_calls=1 + 2 + 2, schedules=1)


@pytest.fixture(autouse=True)
def _no_thread_left() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    assert not [t for t in threading.enumerate() if t not in before and t.is_alive()]
