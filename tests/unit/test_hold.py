"""The one hold and the safety net in a turn (docs/safety.md), at the flow: a flagged message, a held
participant's messages, the greeting, the emit guard, the hold's precedence and its stored form."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.config import CoreConfig
from promptpipe.flow import hold as holds
from promptpipe.flow.conversation import ConversationFlow, TurnResult
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import SessionFactory
from promptpipe.models.messaging import InboundMessage, OutboundKind, OutboundMessage
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.models.state import FlowState, StateData, new_state_data
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings

US, MX, GB = "+12125550147", "+525512345678", "+447400123456"


class CountingLLM:
    def __init__(self) -> None:
        self.inner, self.calls = OfflineCoach(), 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        return self.inner.complete(request)


class Harness:
    def __init__(self, phone: str = US, *, status: ParticipantStatus = ParticipantStatus.ACTIVE, **config: Any) -> None:
        self.clock = ManualClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
        self.store = InMemoryStore()
        self.llm = CountingLLM()
        settings = Settings()
        self.deps = FlowDeps(
            config=CoreConfig.from_settings(settings, flow_controller_enabled=False, **config),
            llm=self.llm,
            timers=InMemoryTimers(),
            clock=self.clock,
            prompts=PromptLibrary.from_settings(settings),
            ids=IdGenerator(random.Random(7)),
        )
        now = self.clock.now()
        self.participant = ConversationParticipant(
            id="p_" + "c" * 32, phone_number=phone, status=status, enrolled_at=now, created_at=now, updated_at=now
        )
        self.store.create(self.participant, FlowState(participant_id=self.participant.id, state_data=new_state_data()))
        self.sessions = SessionFactory(self.store, self.clock)
        self.flow = ConversationFlow(self.deps)
        self.events = 0
        self.sent: list[OutboundMessage] = []
        self.records: list[Any] = []

    def say(self, text: str, *, after: timedelta = timedelta(minutes=1)) -> TurnResult:
        self.clock.advance(after)
        self.events += 1
        session = self.sessions.open(self.participant.id, f"evt-{self.events}")
        message = InboundMessage(
            provider="local",
            provider_message_id=f"m{self.events}",
            from_phone=self.participant.phone_number,
            body=text,
            received_at=self.clock.now(),
        )
        result = self.flow.handle_message(session, message)
        self.sent += session.uncommitted_messages()
        self.records += session.transcript
        self._metrics = list(session.metrics)
        session.commit()
        return result

    @property
    def data(self) -> StateData:
        return StateData(self.store.flows[self.participant.id].state_data)


def test_a_flagged_message_gets_the_safety_reply_and_a_hold_without_a_model_call() -> None:
    h = Harness(US)
    result = h.say("i want to end it all")
    assert h.llm.calls == 0 and result.module == "safety"
    assert result.reply is not None and "988" in result.reply and "not watched around the clock" in result.reply
    [sent] = h.sent
    assert sent.kind is OutboundKind.NOTICE and sent.body == result.reply
    hold = h.data.hold()
    assert hold is not None and (hold.reason, hold.set_by, hold.detail) == (
        HoldReason.SAFETY,
        "safety screen",
        "suicide",
    )
    assert hold.since == h.clock.now()
    assert result.alert is not None and (result.alert.category, result.alert.region) == ("suicide", "US")
    assert {m.name for m in h._metrics} >= {"SafetyFlag", "NeedsPerson"}
    # recorded: the message in the transcript, both in the history the coach reads on release
    assert [r.content for r in h.records if r.direction.value == "inbound"] == ["i want to end it all"]
    assert [m.role for m in h.data.history()] == ["user", "assistant"]


def test_the_reply_is_in_spanish_with_the_local_emergency_number_outside_the_configured_regions() -> None:
    h = Harness(MX)
    result = h.say("ya no quiero vivir")
    assert result.reply is not None and "número local de emergencias" in result.reply and "988" not in result.reply
    assert "no se vigila las 24 horas" in result.reply


def test_a_region_the_study_configures_gets_its_resources() -> None:
    h = Harness(GB, safety_resources={"GB": {"en": "call 999, or Samaritans on 116 123"}})
    result = h.say("i want to kill myself")
    assert result.reply is not None and "Samaritans on 116 123" in result.reply
    # a language the region does not list: its English text
    h2 = Harness(GB, safety_resources={"GB": {"en": "call 999"}})
    reply = h2.say("me quiero morir").reply
    assert reply is not None and reply.startswith("Parece") and "call 999" in reply


def test_a_held_participant_is_answered_without_a_model_and_at_most_once_a_day() -> None:
    h = Harness(US)
    h.say("i want to die")
    sent = len(h.sent)
    quiet = h.say("hello?", after=timedelta(hours=2))
    assert quiet.reply is None and quiet.audit == {"skipped": "on hold (safety)"} and len(h.sent) == sent
    later = h.say("hola, sigues ahí? no sé qué hacer", after=timedelta(hours=23))
    assert later.reply is not None and "no se vigila las 24 horas" in later.reply and "988" in later.reply
    assert h.llm.calls == 0
    assert [m.content for m in h.data.history() if m.role == "user"][-2:] == [
        "hello?",
        "hola, sigues ahí? no sé qué hacer",
    ]


def test_a_hand_off_hold_answers_with_the_holding_message() -> None:
    h = Harness(US)
    session = h.sessions.open(h.participant.id, "staff-hold")
    session.apply("hold", holds.place(HoldReason.STAFF, "coordinator"))
    session.commit(record_event=False)
    reply = h.say("hi", after=timedelta(days=2)).reply
    assert reply is not None and reply.startswith("Thanks for your message!") and h.llm.calls == 0


def test_an_idiom_is_coached_as_usual() -> None:
    h = Harness(US)
    result = h.say("my feet are killing me but i did my walk")
    assert h.llm.calls >= 1 and result.module != "safety" and h.data.hold() is None


def test_the_screen_can_be_turned_off() -> None:
    h = Harness(US, safety_screen_enabled=False)
    h.say("i want to end it all")
    assert h.llm.calls >= 1 and h.data.hold() is None


def test_a_paused_participant_in_crisis_is_held_and_the_team_alerted_without_a_reply() -> None:
    h = Harness(US, status=ParticipantStatus.PAUSED)
    result = h.say("i overdosed")
    assert result.reply is None and h.sent == [] and result.alert is not None and result.alert.category == "medical"
    hold = h.data.hold()
    assert hold is not None and hold.reason is HoldReason.SAFETY


def test_the_greeting_of_a_held_participant_is_skipped() -> None:
    h = Harness(US)
    h.say("i want to end it all")
    session = h.sessions.open(h.participant.id, "greeting")
    result = h.flow.handle_greeting(session)
    assert result.reply is None and result.audit == {"skipped": "on hold (safety)"}
    assert session.uncommitted_messages() == []


def test_the_emit_guard_records_what_a_hold_keeps_from_going_out_and_a_release_lets_it_through() -> None:
    h = Harness(US)
    h.say("i want to end it all")
    body = OutboundMessage(participant_id=h.participant.id, to=US, body="reminder", kind=OutboundKind.REMINDER)
    session = h.sessions.open(h.participant.id, "later")
    session.apply("emit", lambda op: op.emit(body))
    assert session.uncommitted_messages() == []
    assert [e.content for e in session.transcript] == ["reminder not sent: on hold (safety)"]
    released: list[ConversationHold | None] = []
    session.apply("release", lambda op: released.append(holds.release(op)))
    session.apply("emit_again", lambda op: op.emit(body))
    assert released[0] is not None and released[0].reason is HoldReason.SAFETY
    assert [m.body for m in session.uncommitted_messages()] == ["reminder"]


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        (HoldReason.HANDOFF, HoldReason.SAFETY, HoldReason.SAFETY),  # a safety flag comes first
        (HoldReason.SAFETY, HoldReason.HANDOFF, HoldReason.SAFETY),
        (HoldReason.STAFF, HoldReason.HANDOFF, HoldReason.STAFF),
    ],
)
def test_a_safety_flag_overrides_any_other_hold_and_nothing_overrides_it(
    first: HoldReason, second: HoldReason, kept: HoldReason
) -> None:
    h = Harness(US)
    for index, reason in enumerate((first, second)):
        session = h.sessions.open(h.participant.id, f"hold-{index}")
        session.apply("hold", holds.place(reason, "someone"))
        session.commit(record_event=False)
    hold = h.data.hold()
    assert hold is not None and hold.reason is kept


def test_an_unreadable_hold_still_holds() -> None:
    data = StateData({"hold": "{not json"})
    hold = data.hold()
    assert hold is not None and hold.reason is HoldReason.STAFF and "hold" in data.unreadable_keys


def test_the_hold_round_trips_and_its_view_leaves_the_event_out() -> None:
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    hold = ConversationHold(reason=HoldReason.SAFETY, since=now, set_by="x", event_id="e", replied_at=now)
    data = StateData({})
    data.set_hold(hold)
    assert data.hold() == hold
    assert hold.view() == {
        "reason": "safety",
        "since": "2026-03-02T12:00:00Z",
        "set_by": "x",
        "detail": "",
        "replied_at": "2026-03-02T12:00:00Z",
    }
    data.set_hold(None)
    assert data.hold() is None and data.raw == {}


def test_the_console_summary_reads_the_hold_from_the_state_view() -> None:
    from promptpipe.coordinator.summary import summarize

    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    participant = ConversationParticipant(
        id="p_" + "d" * 32, phone_number=US, enrolled_at=now, created_at=now, updated_at=now
    )
    held = summarize(participant, [], {"hold": {"reason": "safety"}, "controller": None})
    assert held.needs_person and held.hold_reason == "safety"
    free = summarize(participant, [], {"hold": None, "controller": {"needs_person": False}})
    assert not free.needs_person and free.hold_reason is None


@pytest.mark.parametrize("kind", ["daily_prompt_reminder", "feedback_timeout", "feedback_followup"])
def test_a_timer_that_would_send_is_skipped_and_recorded_while_held(kind: str) -> None:
    from promptpipe.flow.timer_events import handle_timer
    from promptpipe.models.events import TimerKind, TimerPayload

    h = Harness(US)
    h.say("i want to end it all")
    session = h.sessions.open(h.participant.id, f"timer-{kind}")
    payload = TimerPayload(participant_id=h.participant.id, kind=TimerKind(kind), timer_id=f"t-{kind}")
    outcome = handle_timer(h.deps, session, payload)
    assert not outcome.applied and outcome.detail == "on hold (safety)" and session.uncommitted_messages() == []
    assert [e.content for e in session.transcript] == [f"{kind} skipped: on hold (safety)"]


def test_a_timer_that_only_moves_the_state_still_applies_while_held() -> None:
    from promptpipe.flow.timer_events import handle_timer
    from promptpipe.models.events import TimerKind, TimerPayload

    h = Harness(US)
    h.say("i want to end it all")
    session = h.sessions.open(h.participant.id, "auto-feedback")
    payload = TimerPayload(participant_id=h.participant.id, kind=TimerKind.AUTO_FEEDBACK, timer_id="t-af")
    outcome = handle_timer(h.deps, session, payload)
    assert outcome.detail != "on hold (safety)"  # decided by its own guards (here: not armed)


@pytest.mark.parametrize(
    ("phone", "named"),
    [("+14165550142", "988"), ("+12125550147", "988"), ("+18765550123", "local emergency number")],
)
def test_every_plus_one_region_gets_its_own_resources_by_default(phone: str, named: str) -> None:
    reply = Harness(phone).say("everyone would be better off without me").reply
    assert reply is not None and named in reply
