"""ConversationSession's details that the behaviour tests pass through without looking at them.

What each committed field holds (transcript order keys, event records, ``updated_at``), the schedule
bookkeeping of ``touch_schedule``/``arm``/``disarm``/``forget_fired``, the pruning of event records at
their age and count limits, the defaults a session falls back on, and ``landed_after_all`` (a commit
whose answer failed with something other than a conflict) — each asserted on the store or the
returned effects, so a wrong value, not only a crash, fails a test.
"""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.clock import ManualClock
from promptpipe.errors import ParticipantNotFound, StateConflict
from promptpipe.flow.session import DEFAULT_PREP_MINUTES, ConversationSession, OpContext, SessionFactory
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundMessage, Question, QuestionOption
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey, FlowState, ScheduleInfo, ScheduleType, StateData, new_state_data
from promptpipe.models.store import MAX_RECENT_EVENTS, RECENT_EVENTS_MAX_AGE_HOURS, Direction, EventRecord, StateCommit

START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PID = "p_" + "b" * 32
PHONE = "+14155550102"


def enrolled(store: InMemoryStore, **flow: object) -> None:
    participant = ConversationParticipant(
        id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
    )
    store.create(participant, FlowState(participant_id=PID, state_data=new_state_data(), **flow))


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
    assert session.touched_schedules == ["a-1", "b-2"]
    assert session.commit().schedules == {"a-1": None, "b-2": None}
    assert store.events[PID][-1].schedules == ["a-1", "b-2"]


def test_disarm_of_an_empty_name_does_nothing_and_of_an_unknown_name_still_deletes():
    store = InMemoryStore()
    enrolled(store)
    session = sessions(store).open(PID, "evt-1")
    session.apply("arm", lambda op: op.arm(one_shot("keep-me")))
    session.apply("disarm", lambda op: [op.disarm(""), op.disarm("never-armed")])
    effects = session.commit()
    assert session.touched_schedules == ["keep-me", "never-armed"]
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
    session = ConversationSession(store, store.load(PID), clock=ManualClock(START), event_id="evt-1")
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
    session = ConversationSession(store, store.load(PID), clock=ManualClock(START), event_id="evt-1")
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
