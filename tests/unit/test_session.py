"""ConversationSession, the unit of work (docs/architecture.md#state), against the in-memory store.

One load, operations applied in memory, one commit conditional on ``version``; on a conflict the
session reloads and replays its operations (guards re-checked) and commits again, bounded and
jittered; after-commit effects run once, after the successful commit only.
"""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.errors import ParticipantNotFound, StateConflict, StateConflictRetriesExhausted
from promptpipe.flow.effects import apply_schedule_changes
from promptpipe.flow.session import (
    DEFAULT_PREP_MINUTES,
    MAX_COMMIT_ATTEMPTS,
    ConversationSession,
    OpContext,
    SessionFactory,
)
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundKind, OutboundMessage, Question, QuestionOption
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import (
    ConversationMessage,
    DailyPromptPending,
    DataKey,
    FlowState,
    ScheduleInfo,
    ScheduleType,
    StateData,
    new_state_data,
)
from promptpipe.models.store import MAX_RECENT_EVENTS, RECENT_EVENTS_MAX_AGE_HOURS, Direction, EventRecord, StateCommit
from promptpipe.rules.clock import ManualClock

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


def enrolled(store: InMemoryStore, **flow: object) -> ConversationParticipant:
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=new_state_data(), **flow))
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
    assert [m.body for m in reminder.uncommitted_messages()] == [REMINDER]  # first decision, on the stale state

    reply = sessions.open(PID, "reply")  # B: the participant answers; the prompt is no longer pending
    reply.apply("clear", lambda op: op.data.set_daily_prompt_pending(None))
    reply.commit()

    outbound = reminder.commit().messages  # conflict, replay: the guard now refuses

    assert decisions == ["remind", "stale"]
    assert outbound == [] and reminder.uncommitted_messages() == []
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
    session = ConversationSession(SessionFactory(store, ManualClock(START)), loaded, event_id="e")
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


# --- ------------------------------------------------------------------------------------------
# ConversationSession's details that the behaviour tests pass through without looking at them.
#
# What each committed field holds (transcript order keys, event records, ``updated_at``), the schedule
# bookkeeping of ``touch_schedule``/``arm``/``disarm``/``forget_fired``, the pruning of event records at
# their age and count limits, the defaults a session falls back on, and ``landed_after_all`` (a commit
# whose answer failed with something other than a conflict) — each asserted on the store or the
# returned effects, so a wrong value, not only a crash, fails a test.


def sessions(store: InMemoryStore, clock: ManualClock | None = None, **kwargs: object) -> SessionFactory:
    return SessionFactory(store, clock or ManualClock(START), rng=random.Random(1), sleep=lambda _s: None, **kwargs)


def reply(op: OpContext, body: str, **fields: object) -> OutboundMessage:
    return OutboundMessage(participant_id=op.participant.id, to=op.participant.phone_number, body=body, **fields)


def one_shot(name: str) -> ScheduleSpec:
    payload = TimerPayload(participant_id=PID, kind=TimerKind.AUTO_FEEDBACK, timer_id=name)
    return ScheduleSpec(name=name, kind="timer", at=START + timedelta(minutes=5), timer=payload)


class ConflictOnce(InMemoryStore):
    """The first commit loses to a concurrent writer (nothing is written); later ones go through."""

    def __init__(self) -> None:
        super().__init__()
        self.conflicts = 1

    def commit(self, commit: StateCommit) -> None:
        if self.conflicts:
            self.conflicts -= 1
            self.commits += 1
            raise StateConflict("a concurrent commit won")
        super().commit(commit)


# --- what an emitted message and its transcript entry hold --------------------------------------------
def test_each_emitted_message_gets_the_next_index_of_the_event_and_an_ordered_transcript_key():
    store = InMemoryStore()
    enrolled(store, version=6)
    session = sessions(store).open(PID, "evt-9")
    session.apply("two", lambda op: [op.emit(reply(op, "first")), op.emit(reply(op, "second"))])
    session.apply("note", lambda op: op.record(Direction.SYSTEM, "note", "internal"))

    effects = session.commit()

    assert (effects.participant_id, effects.event_id) == (PID, "evt-9")
    assert [m.message_id for m in effects.messages] == ["evt-9#0", "evt-9#1"]
    entries = store.transcripts[PID]
    # version this commit writes (7), zero-padded, then the entry's index within the event
    assert [e.seq for e in entries] == ["0000000007#000", "0000000007#001", "0000000007#002"]
    assert [(e.direction, e.kind, e.content) for e in entries] == [
        (Direction.OUTBOUND, "reply", "first"),
        (Direction.OUTBOUND, "reply", "second"),
        (Direction.SYSTEM, "note", "internal"),
    ]
    assert all(e.at == START and e.event_id == "evt-9" and e.participant_id == PID for e in entries)
    assert [e.outbound.body if e.outbound else None for e in entries] == ["first", "second", None]
    # the event record points at the two messages by their transcript keys
    record = store.events[PID][-1]
    assert [(ref.id, ref.seq) for ref in record.messages] == [
        ("evt-9#0", "0000000007#000"),
        ("evt-9#1", "0000000007#001"),
    ]


def test_a_message_that_already_has_an_id_keeps_it():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("resend", lambda op: op.emit(reply(op, "again", message_id="SM-original#3")))
    assert [m.message_id for m in session.commit().messages] == ["SM-original#3"]
    assert store.events[PID][-1].messages[0].id == "SM-original#3"


def test_the_transcript_shows_the_questions_asked_with_their_options():
    store = InMemoryStore()
    enrolled(store)
    done = Question(
        id="done",
        text="Did you do it?",
        options=[QuestionOption(id="done", title="Done"), QuestionOption(id="n", title="Next time")],
    )
    poll = Question(id="intensity", text="How's the intensity?", options=[QuestionOption(id="keep", title="Keep")])
    session = sessions(store).open(PID, "evt-1")
    session.apply("prompt", lambda op: op.emit(reply(op, "  Walk 5 min  ", question=done, follow_up=poll)))
    session.apply("plain", lambda op: op.emit(reply(op, " only text ")))
    session.commit()
    assert [e.content for e in store.transcripts[PID]] == [
        "Walk 5 min  \n[Did you do it? Done / Next time]\n[How's the intensity? Keep]",
        "only text",
    ]


def test_transcript_metadata_is_copied_when_recorded():
    store = InMemoryStore()
    enrolled(store)
    metadata = {"module": "intake"}
    session = sessions(store).open(PID, "evt-1")
    session.apply("reply", lambda op: op.emit(reply(op, "hi"), metadata=metadata))
    metadata["module"] = "changed afterwards"
    session.commit()
    assert store.transcripts[PID][0].metadata == {"module": "intake"}


# --- schedule bookkeeping --------------------------------------------------------------------------------
def test_touch_schedule_ignores_empty_names_and_repeats():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("touch", lambda op: [op.touch_schedule(n) for n in ("a-1", "", "b-2", "a-1")])
    assert session.commit().schedules == {"a-1": None, "b-2": None}
    assert store.events[PID][-1].schedules == ["a-1", "b-2"]


def test_disarm_of_an_empty_name_does_nothing_and_of_an_unknown_name_still_deletes():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("arm", lambda op: op.arm(one_shot("keep-me")))
    session.apply("disarm", lambda op: [op.disarm(""), op.disarm("never-armed")])
    effects = session.commit()
    assert store.events[PID][-1].schedules == ["keep-me", "never-armed"]
    assert effects.schedules == {"keep-me": one_shot("keep-me"), "never-armed": None}
    assert list(StateData(dict(store.flows[PID].state_data)).pending_timers()) == ["keep-me"]


def test_disarm_keeps_the_other_pending_timers():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("arm", lambda op: [op.arm(one_shot("t-1")), op.arm(one_shot("t-2"))])
    session.apply("disarm", lambda op: op.disarm("t-1"))
    assert session.commit().schedules == {"t-1": None, "t-2": one_shot("t-2")}
    assert list(StateData(dict(store.flows[PID].state_data)).pending_timers()) == ["t-2"]


def test_forget_fired_drops_the_timer_from_the_state_without_touching_the_scheduler():
    store = InMemoryStore()
    enrolled(store)
    arm = sessions(store).open(PID, "arm")
    arm.apply("arm", lambda op: [op.arm(one_shot("fired")), op.arm(one_shot("other"))])
    arm.commit()

    fired = sessions(store).open(PID, "timer-fired")
    fired.apply("forget", lambda op: [op.forget_fired("fired"), op.forget_fired("unknown")])
    effects = fired.commit()

    assert effects.schedules == {}  # the one-shot deleted itself: no DeleteSchedule
    assert list(StateData(dict(store.flows[PID].state_data)).pending_timers()) == ["other"]

    last = sessions(store).open(PID, "timer-other")
    last.apply("forget", lambda op: op.forget_fired("other"))
    last.commit()
    assert DataKey.PENDING_TIMERS.value not in store.flows[PID].state_data


# --- what the commit writes --------------------------------------------------------------------------------
def test_the_commit_keeps_the_flows_type_and_state_and_stamps_updated_at():
    store = InMemoryStore()
    enrolled(store, flow_type="custom_flow", current_state="SOMEWHERE", version=3)
    clock = ManualClock(START + timedelta(hours=2))
    session = sessions(store, clock).open(PID, "evt-1")
    session.apply("x", lambda op: op.data.set(DataKey.FEEDBACK_STATE, "waiting"))
    session.commit()
    flow = store.flows[PID]
    assert (flow.flow_type, flow.current_state, flow.version) == ("custom_flow", "SOMEWHERE", 4)
    assert flow.updated_at == START + timedelta(hours=2)
    assert flow.state_data[DataKey.FEEDBACK_STATE.value] == "waiting"
    record = store.events[PID][-1]
    assert (record.event_id, record.committed_at, record.version) == ("evt-1", START + timedelta(hours=2), 4)
    assert record.token.startswith(session.token + "-") and record.token == f"{session.token}-1"
    assert session.committed_version == 4


def test_operations_work_on_a_copy_of_the_loaded_state_data():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    before = dict(session.loaded.flow.state_data)
    session.apply("x", lambda op: op.data.set(DataKey.FEEDBACK_STATE, "waiting"))
    assert session.loaded.flow.state_data == before
    assert session.data.get(DataKey.FEEDBACK_STATE) == "waiting"


def _record(event_id: str, at: datetime) -> EventRecord:
    return EventRecord(event_id=event_id, committed_at=at, version=1, token="t")


def test_event_records_are_kept_for_a_day_to_the_minute():
    store = InMemoryStore()
    enrolled(store)
    limit = START - timedelta(hours=RECENT_EVENTS_MAX_AGE_HOURS)
    store.events[PID] = [
        _record("too-old", limit - timedelta(microseconds=1)),
        _record("exactly-a-day", limit),
        _record("recent", START - timedelta(minutes=1)),
    ]
    session = sessions(store).open(PID, "now")
    session.apply("x", lambda op: op.touch_schedule("s"))
    session.commit()
    assert [r.event_id for r in store.events[PID]] == ["exactly-a-day", "recent", "now"]


def test_event_records_are_capped_keeping_the_newest():
    store = InMemoryStore()
    enrolled(store)
    store.events[PID] = [_record(f"e{i}", START - timedelta(minutes=60 - i)) for i in range(MAX_RECENT_EVENTS + 3)]
    session = sessions(store).open(PID, "latest")
    session.apply("x", lambda op: op.touch_schedule("s"))
    session.commit()
    kept = [r.event_id for r in store.events[PID]]
    assert len(kept) == MAX_RECENT_EVENTS
    assert kept[-1] == "latest" and kept[0] == f"e{4}"  # the oldest four went


def test_a_commit_without_a_record_still_prunes_and_keeps_the_others():
    store = InMemoryStore()
    enrolled(store)
    store.events[PID] = [_record("old", START - timedelta(days=2)), _record("fresh", START)]
    session = sessions(store).open(PID, "override")
    session.apply("x", lambda op: op.touch_schedule("s"))
    session.commit(record_event=False)
    assert [r.event_id for r in store.events[PID]] == ["fresh"]


# --- defaults ------------------------------------------------------------------------------------------------
def test_a_session_without_rng_or_sleep_still_retries_a_conflict():
    store = ConflictOnce()
    enrolled(store)
    session = SessionFactory(store, ManualClock(START)).open(PID, "evt-1")
    session.apply("x", lambda op: op.data.set(DataKey.FEEDBACK_STATE, "waiting"))
    session.commit()
    assert session.commit_attempts == 2 and store.flows[PID].version == 1


def test_the_factory_passes_its_sleep_and_randomness_to_each_session():
    store = ConflictOnce()
    enrolled(store)
    pauses: list[float] = []

    class Ceiling(random.Random):
        def uniform(self, a: float, b: float) -> float:
            return b

    factory = SessionFactory(store, ManualClock(START), rng=Ceiling(), sleep=pauses.append)
    session = factory.open(PID, "evt-1")
    session.apply("x", lambda op: op.data.set(DataKey.FEEDBACK_STATE, "waiting"))
    session.commit()
    assert pauses == [0.01]


def _daily(fixed_time: str) -> ScheduleInfo:
    return ScheduleInfo(
        id="sched_1",
        type=ScheduleType.FIXED,
        fixed_time=fixed_time,
        timezone="America/Toronto",
        created_at=START,
        timer_id=f"{PID}-sched_1",
    )


def _register(op: OpContext) -> None:
    op.data.set_schedules([_daily("09:00")])
    op.touch_schedule(f"{PID}-sched_1")


def test_daily_schedules_fire_the_default_prep_minutes_early():
    store = InMemoryStore()
    enrolled(store)
    assert DEFAULT_PREP_MINUTES == 10
    session = SessionFactory(store, ManualClock(START)).open(PID, "evt-1")
    session.apply("register", _register)
    spec = session.commit().schedules[f"{PID}-sched_1"]
    assert spec is not None and (spec.hour, spec.minute) == (8, 50)
    assert spec.prompt is not None and spec.prompt.created_at == START


def test_the_factory_passes_its_prep_minutes():
    store = InMemoryStore()
    enrolled(store)
    default = sessions(store).open(PID, "evt-0")
    default.apply("register", _register)
    spec = default.commit().schedules[f"{PID}-sched_1"]
    assert spec is not None and (spec.hour, spec.minute) == (8, 50)

    session = sessions(store, prep_minutes=25).open(PID, "evt-1")
    session.apply("register", _register)
    spec = session.commit().schedules[f"{PID}-sched_1"]
    assert spec is not None and (spec.hour, spec.minute) == (8, 35)


# --- a commit that failed with something other than a conflict ---------------------------------------
class LandsThenFails(InMemoryStore):
    """The write lands, then the answer is lost to a timeout (not a conflict); ``fail_loads`` makes
    the reload fail too (the participant deleted meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_loads = False

    def commit(self, commit: StateCommit) -> None:
        super().commit(commit)
        raise TimeoutError("the answer was lost")

    def load(self, participant_id: str):  # type: ignore[no-untyped-def]
        if self.fail_loads:
            raise ParticipantNotFound(participant_id)
        return super().load(participant_id)


def test_landed_after_all_recognises_this_sessions_own_write():
    store = LandsThenFails()
    enrolled(store, version=2)
    session = sessions(store).open(PID, "SM-1")
    session.apply("reply", lambda op: op.emit(reply(op, "hello")))
    session.apply("arm", lambda op: op.arm(one_shot("t-1")))
    with pytest.raises(TimeoutError):
        session.commit()
    assert session.committed_version is None and not session.recovered_own_commit

    effects = session.landed_after_all()

    assert effects is not None and effects.event_id == "SM-1"
    assert [m.body for m in effects.messages] == ["hello"] and effects.schedules == {"t-1": one_shot("t-1")}
    assert session.recovered_own_commit and session.committed_version == 3


def test_landed_after_all_is_none_when_another_delivery_of_the_event_wrote_it():
    store = InMemoryStore()
    enrolled(store)
    factory = sessions(store)
    mine = factory.open(PID, "SM-1")
    mine.apply("reply", lambda op: op.emit(reply(op, "mine")))
    other = factory.open(PID, "SM-1")  # a concurrent delivery of the same event
    other.apply("reply", lambda op: op.emit(reply(op, "theirs")))
    other.commit()
    assert mine.landed_after_all() is None
    assert not mine.recovered_own_commit and mine.committed_version is None


def test_landed_after_all_is_none_when_nothing_landed():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "SM-1")
    session.apply("reply", lambda op: op.emit(reply(op, "hello")))
    assert session.landed_after_all() is None
    assert session.uncommitted_messages()[0].body == "hello"  # a degraded save still has its reply
    assert not session.recovered_own_commit


def test_landed_after_all_is_none_when_the_reload_fails(caplog: pytest.LogCaptureFixture):
    store = LandsThenFails()
    enrolled(store)
    session = sessions(store).open(PID, "SM-1")
    session.apply("reply", lambda op: op.emit(reply(op, "hello")))
    with pytest.raises(TimeoutError):
        session.commit()
    store.fail_loads = True
    with caplog.at_level(logging.WARNING, logger="promptpipe.flow.session"):
        assert session.landed_after_all() is None
    assert not session.recovered_own_commit
    [record] = [r for r in caplog.records if r.name == "promptpipe.flow.session"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "could not check whether a failed commit landed"
    assert record.participant_id == PID  # type: ignore[attr-defined]


# --- logs ------------------------------------------------------------------------------------------------------
def test_a_replay_and_a_recovered_commit_are_logged_with_the_attempt(caplog: pytest.LogCaptureFixture):
    store = ConflictOnce()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("x", lambda op: op.touch_schedule("s"))
    with caplog.at_level(logging.INFO, logger="promptpipe.flow.session"):
        session.commit()
    [record] = [r for r in caplog.records if r.name == "promptpipe.flow.session"]
    assert record.getMessage() == "state conflict; replaying operations"
    assert (record.participant_id, record.attempt) == (PID, 1)  # type: ignore[attr-defined]


class LandsThenConflicts(InMemoryStore):
    def commit(self, commit: StateCommit) -> None:
        first = not self.events.get(commit.participant_id)
        super().commit(commit)
        if first:
            raise StateConflict("the answer was lost")


def test_a_recovered_commit_is_logged_and_keeps_the_event_id(caplog: pytest.LogCaptureFixture):
    store = LandsThenConflicts()
    enrolled(store)
    session = sessions(store).open(PID, "SM-7")
    session.apply("reply", lambda op: op.emit(reply(op, "hello")))
    with caplog.at_level(logging.INFO, logger="promptpipe.flow.session"):
        effects = session.commit()
    assert effects.event_id == "SM-7" and [m.body for m in effects.messages] == ["hello"]
    [record] = [r for r in caplog.records if r.name == "promptpipe.flow.session"]
    assert record.getMessage() == "commit landed although its answer was lost"
    assert (record.participant_id, record.attempt) == (PID, 1)  # type: ignore[attr-defined]


def test_a_fresh_session_has_made_no_attempt_and_recovered_nothing():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    assert session.commit_attempts == 0
    assert session.recovered_own_commit is False
    assert session.committed_version is None and session.duplicate_of is None
    assert len(session.token) == 16 and int(session.token, 16) >= 0  # 8 random bytes, hex


def test_the_duplicate_of_a_concurrent_delivery_returns_no_effects_for_its_event():
    store = InMemoryStore()
    enrolled(store)
    factory = sessions(store)
    first = factory.open(PID, "SM-dup")
    second = factory.open(PID, "SM-dup")
    for session in (first, second):
        session.apply("reply", lambda op: op.emit(reply(op, "hi")))
    first.commit()
    effects = second.commit()
    assert effects.empty and (effects.participant_id, effects.event_id) == (PID, "SM-dup")
