"""ConversationSession, the unit of work (docs/architecture.md#state), against the in-memory store.

One load, operations applied in memory, one commit conditional on ``version``; on a conflict the
session reloads and replays its operations (guards re-checked) and commits again, bounded and
jittered; after-commit effects run once, after the successful commit only.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.clock import ManualClock
from promptpipe.errors import StateConflict, StateConflictRetriesExhausted
from promptpipe.flow.effects import apply_schedule_changes
from promptpipe.flow.session import MAX_COMMIT_ATTEMPTS, ConversationSession, OpContext, SessionFactory
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import (
    ConversationMessage,
    DailyPromptPending,
    DataKey,
    FlowState,
    StateData,
    new_state_data,
)
from promptpipe.models.store import Direction, StateCommit

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "a" * 32
PHONE = "+14155550101"
REMINDER = "Friendly check-in: how did today's habit go?"


class CountingStore(InMemoryStore):
    """The in-memory store, with a hook that runs just before each commit (to race a session)."""

    def __init__(self) -> None:
        super().__init__()
        self.before_commit: list = []  # callables, each run (and removed) before one commit

    def commit(self, commit: StateCommit) -> None:
        if self.before_commit:
            self.before_commit.pop(0)()
        super().commit(commit)


class AlwaysConflicting(InMemoryStore):
    def commit(self, commit: StateCommit) -> None:
        self.commits += 1
        raise StateConflict("someone else always wins")


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def enrolled(store: InMemoryStore) -> ConversationParticipant:
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=new_state_data()))
    return participant


def factory(store: InMemoryStore, clock: ManualClock | None = None, sleep: Sleeps | None = None) -> SessionFactory:
    return SessionFactory(store, clock or ManualClock(START), rng=random.Random(3), sleep=sleep or Sleeps())


def add_history(text: str):
    def apply(op: OpContext) -> None:
        op.data.append_history(ConversationMessage(role="user", content=text, timestamp=op.now))

    return apply


def history(store: InMemoryStore) -> list[str]:
    return [m.content for m in StateData(dict(store.flows[PID].state_data)).history()]


def message(op: OpContext, body: str, kind: OutboundKind = OutboundKind.REPLY) -> OutboundMessage:
    return OutboundMessage(participant_id=op.participant.id, to=op.participant.phone_number, body=body, kind=kind)


def set_pending(sent_at: datetime):
    def apply(op: OpContext) -> None:
        op.data.set_daily_prompt_pending(DailyPromptPending(sent_at=sent_at, to=op.participant.phone_number))

    return apply


def remind_if_pending(sent_at: datetime, decisions: list[str]):
    """A reminder's guard: only while the prompt it is about is still pending."""

    def apply(op: OpContext) -> None:
        pending = op.data.daily_prompt_pending()
        if pending is None or pending.sent_at != sent_at:
            decisions.append("stale")
            return
        decisions.append("remind")
        op.data.set_daily_prompt_pending(None)
        op.emit(message(op, REMINDER, OutboundKind.REMINDER))

    return apply


# --- commit ------------------------------------------------------------------------------------------
def test_commit_loads_once_and_writes_once_whatever_the_number_of_operations():
    store = CountingStore()
    enrolled(store)
    session = factory(store).open(PID, "evt-1")
    for i in range(5):  # e.g. a turn with several tool calls
        session.apply(f"op{i}", add_history(f"m{i}"))
    session.apply("reply", lambda op: op.emit(message(op, "hello")))

    outbound = session.commit().messages

    assert (store.loads, store.commits) == (1, 1)
    assert session.commit_attempts == 1
    assert store.flows[PID].version == 1
    assert session.committed_version == 1
    assert history(store) == ["m0", "m1", "m2", "m3", "m4"]
    assert [m.body for m in outbound] == ["hello"]
    assert outbound[0].message_id == "evt-1#0"  # stable: a re-send is keyed by it
    # the emitted message is in the transcript, written by the same commit
    assert [(e.direction, e.content) for e in store.transcripts[PID]] == [(Direction.OUTBOUND, "hello")]


def test_operations_are_applied_immediately_and_visible_before_commit():
    store = CountingStore()
    enrolled(store)
    session = factory(store).open(PID, "evt-1")
    session.apply("a", add_history("hi"))
    assert [m.content for m in session.data.history()] == ["hi"]
    assert store.commits == 0 and history(store) == []  # nothing written yet
    assert session.dirty


def test_participant_is_written_only_when_an_operation_changed_it():
    store = CountingStore()
    enrolled(store)
    clock = ManualClock(START + timedelta(minutes=5))
    session = factory(store, clock).open(PID, "evt-1")

    def rename(op: OpContext) -> None:
        op.participant.name = "Sam"
        op.participant_changed = True

    session.apply("rename", rename)
    session.commit()
    assert store.participants[PID].name == "Sam"
    assert store.participants[PID].updated_at == clock.now()

    other = factory(store).open(PID, "evt-2")
    other.apply("touch", lambda op: setattr(op.participant, "name", "ignored"))  # not flagged as changed
    other.commit()
    assert store.participants[PID].name == "Sam"


# --- conflicts ---------------------------------------------------------------------------------------
def test_conflict_reloads_and_replays_operations_on_the_fresh_state():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    a = sessions.open(PID, "evt-a")
    b = sessions.open(PID, "evt-b")
    a.apply("a", add_history("from A"))
    b.apply("b", add_history("from B"))
    b.commit()  # B wins the race

    a.commit()  # A conflicts once, reloads (B's state), replays, commits

    assert a.commit_attempts == 2
    assert store.loads == 3  # A's load, B's load, A's reload
    assert history(store) == ["from B", "from A"]  # nothing lost
    assert store.flows[PID].version == 2
    assert a.committed_version == 2
    assert a.version == 1  # the session now stands on B's version


def test_a_conflict_inside_commit_replays_against_what_the_winner_wrote():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    a = sessions.open(PID, "evt-a")
    a.apply("a", add_history("A"))

    def concurrent_winner() -> None:
        winner = sessions.open(PID, "evt-w")
        winner.apply("w", add_history("W"))
        winner.commit()

    store.before_commit.append(concurrent_winner)
    a.commit()
    assert history(store) == ["W", "A"]
    assert store.flows[PID].version == 2


def test_replayed_guard_refuses_a_stale_decision_and_its_message_disappears():
    store = CountingStore()
    enrolled(store)
    sent_at = START - timedelta(hours=5)
    setup = factory(store).open(PID, "setup")
    setup.apply("pending", set_pending(sent_at))
    setup.commit(record_event=False)

    sessions = factory(store)
    decisions: list[str] = []
    reminder = sessions.open(PID, "timer-reminder")  # A: loads with the prompt still pending
    reminder.apply("bookkeeping", add_history("reminder fired"))
    reminder.apply("remind", remind_if_pending(sent_at, decisions))
    assert [m.body for m in reminder.outbound] == [REMINDER]  # first decision, on the stale state

    reply = sessions.open(PID, "reply")  # B: the participant answers; the prompt is no longer pending
    reply.apply("clear", lambda op: op.data.set_daily_prompt_pending(None))
    reply.commit()

    outbound = reminder.commit().messages  # conflict, replay: the guard now refuses

    assert decisions == ["remind", "stale"]
    assert outbound == [] and reminder.outbound == []
    assert reminder.transcript == []  # the reminder is not in the transcript either
    assert store.flows[PID].state_data.get(DataKey.DAILY_PROMPT_PENDING.value) is None
    assert history(store) == ["reminder fired"]  # the unguarded operation still applied
    assert all(e.kind != OutboundKind.REMINDER.value for e in store.transcripts.get(PID, []))
    # the event is recorded with no message: a redelivery sends nothing
    record = store.events[PID][-1]
    assert (record.event_id, record.messages) == ("timer-reminder", [])


def test_retries_exhausted_raise_after_bounded_jittered_attempts():
    store = AlwaysConflicting()
    enrolled(store)
    sleep = Sleeps()
    session = factory(store, sleep=sleep).open(PID, "evt-1")
    ran: list[str] = []
    session.apply("a", add_history("x"))
    session.apply("effect", lambda op: op.touch_schedule("p_x-sched"))

    with pytest.raises(StateConflictRetriesExhausted):
        ran.append(str(session.commit()))

    assert store.commits == MAX_COMMIT_ATTEMPTS
    assert session.commit_attempts == MAX_COMMIT_ATTEMPTS
    assert store.loads == MAX_COMMIT_ATTEMPTS + 1  # the first load and one reload per conflict
    # one pause between attempts, full jitter within 10 ms, 20 ms, 40 ms, …
    assert len(sleep.calls) == MAX_COMMIT_ATTEMPTS - 1
    for attempt, seconds in enumerate(sleep.calls, start=1):
        assert 0 <= seconds <= 0.01 * 2 ** (attempt - 1)
    assert ran == []  # never committed: no effect
    assert history(store) == []


def test_jitter_is_reproducible_with_a_seeded_generator():
    def pauses() -> list[float]:
        store = AlwaysConflicting()
        enrolled(store)
        sleep = Sleeps()
        session = factory(store, sleep=sleep).open(PID, "evt-1")
        session.apply("a", add_history("x"))
        with pytest.raises(StateConflictRetriesExhausted):
            session.commit()
        return sleep.calls

    assert pauses() == pauses()


# --- effects: decided in operations, returned by the commit --------------------------------------
def _one_shot(name: str) -> ScheduleSpec:
    payload = TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id=name)
    return ScheduleSpec(name=name, kind="timer", at=START + timedelta(minutes=5), timer=payload)


def test_effects_come_from_the_committed_state_after_a_replay():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    a = sessions.open(PID, "evt-a")
    a.apply("arm", lambda op: op.arm(_one_shot(f"{PID}-autofb")))
    b = sessions.open(PID, "evt-b")
    b.apply("b", add_history("B"))
    b.commit()

    effects = a.commit()  # conflict, replay, commit

    assert effects.schedules == {f"{PID}-autofb": _one_shot(f"{PID}-autofb")}
    assert store.flows[PID].version == 2 and store.events[PID][-1].schedules == [f"{PID}-autofb"]


def test_a_disarmed_one_shot_becomes_a_deletion():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    timers = InMemoryTimers()
    arm = sessions.open(PID, "arm")
    arm.apply("arm", lambda op: op.arm(_one_shot(f"{PID}-autofb")))
    apply_schedule_changes(timers, arm.commit().schedules)
    assert timers.get(f"{PID}-autofb") is not None
    cancel = sessions.open(PID, "cancel")
    cancel.apply("cancel", lambda op: op.disarm(f"{PID}-autofb"))
    effects = cancel.commit()
    assert effects.schedules == {f"{PID}-autofb": None}
    assert DataKey.PENDING_TIMERS.value not in store.flows[PID].state_data
    # and applied, the deletion leaves nothing in the timer backend
    apply_schedule_changes(timers, effects.schedules)
    assert timers.cancelled == [f"{PID}-autofb"] and timers.schedules == {}


def test_effect_dropped_on_replay_is_not_returned():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)

    def cancel_if_armed(op: OpContext) -> None:
        name = op.data.get(DataKey.AUTO_FEEDBACK_TIMER_ID)
        if name:
            op.data.clear(DataKey.AUTO_FEEDBACK_TIMER_ID)
            op.disarm(name)

    arm = sessions.open(PID, "arm")
    arm.apply("arm", lambda op: op.data.set(DataKey.AUTO_FEEDBACK_TIMER_ID, f"{PID}-autofb"))
    arm.commit()

    a = sessions.open(PID, "evt-a")
    a.apply("cancel", cancel_if_armed)
    b = sessions.open(PID, "evt-b")
    b.apply("cancel", cancel_if_armed)
    assert b.commit().schedules == {f"{PID}-autofb": None}
    assert a.commit().schedules == {}  # A's replay found nothing to cancel


class LandsThenRaises(CountingStore):
    """The ambiguous commit: the first write lands, then its answer is lost as a conflict."""

    def __init__(self) -> None:
        super().__init__()
        self.tripped = False

    def commit(self, commit: StateCommit) -> None:
        super().commit(commit)
        if not self.tripped:
            self.tripped = True
            raise StateConflict("the answer was lost")


def test_an_ambiguous_commit_is_recognised_as_this_sessions_own():
    store = LandsThenRaises()
    enrolled(store)
    session = factory(store).open(PID, "SM-ambiguous")
    session.apply("reply", lambda op: op.emit(message(op, "hello")))
    session.apply("arm", lambda op: op.arm(_one_shot(f"{PID}-autofb")))

    effects = session.commit()

    assert session.recovered_own_commit and session.duplicate_of is None and session.committed_version == 1
    assert [m.body for m in effects.messages] == ["hello"] and list(effects.schedules) == [f"{PID}-autofb"]
    assert store.commits == 1 and store.flows[PID].version == 1  # nothing written twice
    assert [e.content for e in store.transcripts[PID]] == ["hello"]


def test_commit_passes_a_request_token_unique_to_the_attempt():
    store = CountingStore()
    enrolled(store)
    tokens: list[str | None] = []
    original = store.commit

    def spy(commit: StateCommit) -> None:
        tokens.append(commit.request_token)
        original(commit)

    store.commit = spy  # type: ignore[method-assign]
    first = factory(store).open(PID, "e1")
    first.apply("a", add_history("x"))
    first.commit()
    second = factory(store).open(PID, "e2")
    second.apply("a", add_history("y"))
    second.commit()
    assert len(set(tokens)) == 2 and all(t and len(t) <= 36 for t in tokens)
    assert store.events[PID][-1].token == tokens[-1]


# --- idempotency -------------------------------------------------------------------------------------
def test_already_processed_returns_the_stored_record():
    store = CountingStore()
    enrolled(store)
    clock = ManualClock(START)
    sessions = factory(store, clock)
    first = sessions.open(PID, "SM123")
    assert first.already_processed() is None
    first.apply("reply", lambda op: op.emit(message(op, "hello")))
    first.commit()

    clock.advance(timedelta(seconds=30))
    again = sessions.open(PID, "SM123")
    record = again.already_processed()
    assert record is not None
    assert record.event_id == "SM123" and record.committed_at == START
    assert [m.id for m in record.messages] == ["SM123#0"]
    # the body is not on the state item: it is read back from the transcript
    assert [m.body for m in store.load_outbound(PID, record)] == ["hello"]
    assert sessions.open(PID, "SM124").already_processed() is None


def test_commit_without_record_event_leaves_no_record():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    session = sessions.open(PID, "override-1")
    session.apply("a", add_history("x"))
    session.commit(record_event=False)
    assert sessions.open(PID, "override-1").already_processed() is None


def test_session_is_constructed_from_a_loaded_state():
    store = CountingStore()
    enrolled(store)
    loaded = store.load(PID)
    session = ConversationSession(store, loaded, clock=ManualClock(START), event_id="e")
    assert session.participant.id == PID and session.version == 0 and not session.dirty


def test_replay_stops_when_the_same_event_was_committed_concurrently():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    first = sessions.open(PID, "SM-dup")
    second = sessions.open(PID, "SM-dup")  # a concurrent duplicate delivery of the same event
    for session in (first, second):
        session.apply("turn", add_history("hello"))
        session.apply("reply", lambda op: op.emit(message(op, "hi!")))
        session.apply("effect", lambda op: op.arm(_one_shot(f"{PID}-autofb")))
    effects_first = first.commit()
    effects_second = second.commit()

    assert history(store) == ["hello"]  # applied once
    assert [r.event_id for r in store.events[PID]] == ["SM-dup"]
    assert store.flows[PID].version == 1 and store.commits == 2  # the duplicate's write lost, not retried
    assert second.duplicate_of is not None and second.duplicate_of.event_id == "SM-dup"
    assert second.committed_version is None
    # The winner applies the effects; the duplicate has none to apply (no message, no schedule twice).
    assert [m.message_id for m in effects_first.messages] == ["SM-dup#0"] and effects_first.schedules
    assert effects_second.empty
    assert [e.content for e in store.transcripts[PID]] == ["hi!"]


# --- the store changes between the decision and the commit ---------------------------------------------
class UpperBound(random.Random):
    """Full jitter at its ceiling, so the backoff schedule itself is visible."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_backoff_doubles_from_ten_milliseconds():
    store = AlwaysConflicting()
    enrolled(store)
    sleep = Sleeps()
    session = SessionFactory(store, ManualClock(START), rng=UpperBound(), sleep=sleep).open(PID, "evt-1")
    session.apply("a", add_history("x"))
    with pytest.raises(StateConflictRetriesExhausted, match=f"participant {PID}: state kept conflicting after"):
        session.commit()
    assert sleep.calls == [0.01 * 2**k for k in range(MAX_COMMIT_ATTEMPTS - 1)]


def test_an_operation_changing_the_participant_never_changes_the_loaded_state():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    a = sessions.open(PID, "evt-a")

    def rename(op: OpContext) -> None:
        op.participant.name = op.participant.name + "!"
        op.participant_changed = True

    a.apply("rename", rename)
    assert a.loaded.participant.name == ""  # the decision worked on a copy
    winner = sessions.open(PID, "evt-b")
    winner.apply("b", add_history("B"))
    winner.commit()

    a.commit()  # conflict: replays on the fresh state, from the stored participant, once

    assert store.participants[PID].name == "!"
    assert store.flows[PID].version == 2


def test_the_commit_writes_when_it_was_decided():
    store = InMemoryStore()
    enrolled(store)
    clock = ManualClock(START + timedelta(hours=5))
    session = SessionFactory(store, clock, rng=random.Random(3), sleep=Sleeps()).open(PID, "evt-1")

    def rename(op: OpContext) -> None:
        op.participant.name = "Ada"
        op.participant_changed = True

    session.apply("rename", rename)
    clock.advance(timedelta(minutes=3))  # the commit happens later; the event's time is its start
    session.commit()
    assert store.flows[PID].updated_at == START + timedelta(hours=5)
    assert store.participants[PID].updated_at == START + timedelta(hours=5)
    assert store.participants[PID].name == "Ada"
    assert store.events[PID][-1].committed_at == START + timedelta(hours=5)


def test_a_participant_paused_before_the_commit_gets_deletions_not_schedules():
    store = CountingStore()
    enrolled(store)
    sessions = factory(store)
    a = sessions.open(PID, "evt-a")
    a.apply("arm", lambda op: op.arm(_one_shot(f"{PID}-autofb")))

    def pause(op: OpContext) -> None:
        op.participant.status = ParticipantStatus.PAUSED
        op.participant_changed = True

    def concurrently_paused() -> None:
        other = sessions.open(PID, "evt-pause")
        other.apply("pause", pause)
        other.commit()

    store.before_commit.append(concurrently_paused)

    effects = a.commit()  # conflict, replay on the paused participant, commit

    assert effects.schedules == {f"{PID}-autofb": None}
    assert store.participants[PID].status is ParticipantStatus.PAUSED
