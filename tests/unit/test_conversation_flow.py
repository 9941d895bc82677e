"""Scenarios through ConversationFlow with in-memory fakes (docs/behaviour.md#scenarios, cases F3–F4)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.conversation import (
    GREETING_HINT,
    ConversationFlow,
    clip_inbound_text,
    outstanding_questions,
)
from promptpipe.flow.session import ConversationSession, OpContext, SessionFactory
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.messaging import InboundMessage, OutboundKind
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import DailyPromptPending, DataKey, FlowState, StateData, new_state_data
from promptpipe.models.store import Direction, StateCommit
from promptpipe.rules.clock import to_rfc3339
from promptpipe.settings import Settings
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.participants import override_state
from tests.support import memory_harness, turn


def stored_history(h, pid) -> list[dict]:
    return [m.to_json_dict() for m in StateData(dict(h.data(pid))).history()]


def profile(h, pid):
    return json.loads(h.data(pid)[DataKey.USER_PROFILE.value])


def test_f3_empty_sub_state_hello_replies_and_persists_intake():
    # Given a new participant with no sub-state
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Hi! What habit would you like to build?")]))
    p = h.enroll()
    # When they say hello
    outcome = turn(h, p, "hello")
    # Then they get the reply and INTAKE is persisted; history holds both messages
    assert outcome.outbound[0].body == "Hi! What habit would you like to build?"
    data = h.data(p.id)
    assert data["conversationState"] == "INTAKE"
    history = StateData(dict(data)).history()
    assert [m.role for m in history] == ["user", "assistant"]


def test_f4_legacy_sub_state_resets_to_intake():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("ok")]))
    p = h.enroll()
    h.store.flows[p.id].state_data["conversationState"] = "PROMPT_GENERATOR"
    turn(h, p, "hi")
    assert h.data(p.id)["conversationState"] == "INTAKE"
    assert h.scripted.requests[0].purpose == "intake"


def test_scenario_1_intake_completion_with_tools():
    # Given a new participant; the model saves the profile, generates a prompt, schedules, transitions
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call(
                "save_user_profile",
                {
                    "habit_domain": "movement",
                    "motivational_frame": "energy",
                    "preferred_time": "09:30",
                    "prompt_anchor": "after coffee",
                },
            ),
            ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}),
            ScriptedLLM.text("After coffee, stretch for a minute. Would that feel doable?"),  # the generator call
            ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed", "fixed_time": "09:30"}),
            ScriptedLLM.tool_call("transition_state", {"target_state": "FEEDBACK"}),
            ScriptedLLM.text("All set! Your first prompt: stretch after coffee."),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll(timezone="America/Toronto")
    outcome = turn(h, p, "I want to move more, at 9:30 after coffee")
    assert outcome.outbound[0].body == "All set! Your first prompt: stretch after coffee."
    data = h.data(p.id)
    prof = profile(h, p.id)
    assert prof["prompt_anchor"] == "after coffee" and prof["preferred_time"] == "09:30"
    assert data["lastHabitPrompt"].startswith("After coffee")
    registry = json.loads(data["scheduleRegistry"])
    assert len(registry) == 1 and registry[0]["timezone"] == "America/Toronto"
    assert data["conversationState"] == "FEEDBACK"
    daily = [s for s in h.timers.schedules.values() if s.kind == "daily_prompt"]
    assert len(daily) == 1 and (daily[0].hour, daily[0].minute) == (9, 20)
    # one turn = one load and one commit, whatever the number of tool calls
    assert h.store.commits == 1


def test_tool_error_reaches_model_with_detail():
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed"}),
            ScriptedLLM.text("Which time suits you?"),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll()
    turn(h, p, "schedule me")
    tool_message = h.scripted.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert "fixed_time is required for fixed scheduler type" in tool_message.content


def test_tool_loop_max_ten_rounds_then_fallback():
    llm = ScriptedLLM([ScriptedLLM.tool_call("scheduler", {"action": "list"}) for _ in range(10)])
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "hi")
    assert len(h.scripted.requests) == 10
    assert outcome.outbound[0].body  # fallback, never empty


def test_empty_response_gets_fallback():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("")]))
    p = h.enroll()
    outcome = turn(h, p, "hi")
    assert outcome.outbound[0].body


def test_content_with_tool_calls_runs_tools_and_returns_content():
    response = ScriptedLLM.tool_call("save_user_profile", {"habit_domain": "sleep"}, content="Noted!")
    h = memory_harness(ScriptedLLM([response]))
    p = h.enroll()
    outcome = turn(h, p, "I want better sleep")
    assert outcome.outbound[0].body == "Noted!"
    assert profile(h, p.id)["habit_domain"] == "sleep"


def test_scenario_2_and_pg_generator_validation():
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}),
            ScriptedLLM.text("Let's finish your profile first."),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll()
    turn(h, p, "give me a prompt")
    assert "profile not found" in h.scripted.requests[1].messages[-1].content


@pytest.mark.parametrize(("limit", "stored"), [(-1, 30), (40, 40), (50, 50)])
def test_history_window_and_storage_limits(limit, stored):
    # Given CHAT_HISTORY_LIMIT and 30 exchanges (60 messages)
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text(f"r{i}") for i in range(30)]), settings=Settings(chat_history_limit=limit)
    )
    p = h.enroll()
    for i in range(30):
        h.clock.advance(timedelta(minutes=5))
        turn(h, p, f"u{i}")
    # Then the state keeps as many messages as the model can be shown, the latest ones
    history = stored_history(h, p.id)
    assert len(history) == stored and history[-1]["content"] == "r29"
    # And the last request showed the model the stored history as it was before this turn
    last = h.scripted.requests[-1].messages
    sent_history = [m.content for m in last if m.role in ("user", "assistant")][:-1]
    expected = [f"{role}{i}" for i in range(29) for role in ("u", "r")][-stored:]
    assert sent_history == expected


def test_greeting_hint_not_stored_as_user_message():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Welcome! I'm your habit coach.")]))
    p = h.enroll()
    outcome = process_turn(
        h.app, TurnEvent(kind=TurnKind.GREETING, participant_id=p.id, event_id="g1", enqueued_at=h.clock.now())
    )
    assert outcome.outbound[0].body.startswith("Welcome")
    history = stored_history(h, p.id)
    assert [m["role"] for m in history] == ["assistant"]
    assert "<Hint:" in h.scripted.requests[0].messages[-1].content


def test_replayed_event_resends_without_llm():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("once")]))
    p = h.enroll()
    message = h.message(p, "hi", msg_id="SM1")
    event = TurnEvent(
        kind=TurnKind.MESSAGE, participant_id=p.id, event_id="SM1", message=message, enqueued_at=h.clock.now()
    )
    first = process_turn(h.app, event)
    second = process_turn(h.app, event)
    assert second.replayed and [m.body for m in second.outbound] == [m.body for m in first.outbound]
    assert len(h.scripted.requests) == 1


def test_debug_mode_sends_debug_messages_only_to_that_participant():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("hey"), ScriptedLLM.text("hey")]))
    p1 = h.enroll("+14155550101")
    p2 = h.enroll("+14155550102")
    from promptpipe.models.api import StateOverride

    override_state(h.app, p1.id, StateOverride(debug_mode=True, reason="testing"))
    turn(h, p1, "hi")
    turn(h, p2, "hi")
    debug = [m for m in h.outbox.messages() if m.body.startswith("🐛 DEBUG:")]
    assert debug and all(m.participant_id == p1.id for m in debug)
    assert any("Current state: INTAKE" in m.body for m in debug)


def test_stored_history_stays_under_the_item_size_budget():
    # Given 25 turns of 4,096 four-byte characters (≈ 16 KB each, ≈ 800 KB for 50 messages)
    from promptpipe.models.history import MAX_HISTORY_BYTES

    h = memory_harness(ScriptedLLM([ScriptedLLM.text("ok") for _ in range(25)]))
    p = h.enroll()
    for _ in range(25):
        h.clock.advance(timedelta(minutes=1))
        turn(h, p, "😀" * 4096)
    # Then the stored history is trimmed from the oldest end to fit, and the last turn is there
    messages = stored_history(h, p.id)
    assert len(json.dumps({"messages": messages}, ensure_ascii=False).encode()) <= MAX_HISTORY_BYTES
    assert messages[-1]["content"] == "ok" and messages[-2]["content"].startswith("😀")


@pytest.mark.parametrize(
    ("limit", "sent"), [(0, []), (3, ["r1", "u2", "r2"]), (-1, ["u0", "r0", "u1", "r1", "u2", "r2"])]
)
def test_chat_history_limit_bounds_what_the_model_sees(limit, sent):
    # Given CHAT_HISTORY_LIMIT (0: none, N: the last N, -1: the default window) and three exchanges
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text(f"r{i}") for i in range(4)]), settings=Settings(chat_history_limit=limit)
    )
    p = h.enroll()
    for i in range(4):
        h.clock.advance(timedelta(minutes=5))
        turn(h, p, f"u{i}")
    # Then the fourth request carries that much of the stored history, and the new message last
    last = h.scripted.requests[-1].messages
    assert [m.content for m in last if m.role in ("user", "assistant")] == [*sent, "u3"]
    # And the stored history is not cut by the window
    assert len(stored_history(h, p.id)) == 8


# --- ------------------------------------------------------------------------------------------
# ConversationFlow at the session level: what one inbound message or greeting writes, field by field.
#
# The outstanding-question window at its boundary, the guards that keep a fixed answer to its own
# prompt (re-checked when the commit replays on a state a concurrent delivery changed), the inbound
# record and its metadata, the reply-to-the-prompt bookkeeping, the sub-state routing and what it
# cancels, the greeting, and the debug output. Real session, in-memory store, a model that always
# answers the same text.


START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
MARK = " […]"  # what a clipped inbound text ends with (docs/behaviour.md)
PID = "p_" + "c" * 32
PHONE = "+14155550103"
REPLY = "Sounds good!"


class Says:
    """A model that answers every call with the same text."""

    def __init__(self, text: str = REPLY) -> None:
        self.text = text
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(content=self.text)


class RacingStore(InMemoryStore):
    """Runs a callable (a concurrent event) just before the next commit."""

    def __init__(self) -> None:
        super().__init__()
        self.before_commit: list[Any] = []

    def commit(self, commit: StateCommit) -> None:
        if self.before_commit:
            self.before_commit.pop(0)()
        super().commit(commit)


class World:
    def __init__(self, *, debug: bool = False, max_chars: int | None = None, **data: str) -> None:
        self.llm = Says()
        fields: dict[str, Any] = {"promptpipe_debug": debug}
        if max_chars is not None:
            fields["max_inbound_message_chars"] = max_chars
        # the application's own wiring of the flow's dependencies; this test's store and sessions
        harness = memory_harness(self.llm, settings=Settings(**fields))
        self.clock = harness.clock
        self.deps = harness.app.deps
        self.store = RacingStore()
        participant = ConversationParticipant(
            id=PID, phone_number=PHONE, enrolled_at=START, created_at=START, updated_at=START
        )
        raw = new_state_data()
        raw.update(data)
        self.store.create(participant, FlowState(participant_id=PID, state_data=raw))
        self.sessions = SessionFactory(self.store, self.clock, rng=random.Random(1), sleep=lambda _s: None)
        self.flow = ConversationFlow(self.deps)
        self.n = 0

    def session(self) -> ConversationSession:
        self.n += 1
        return self.sessions.open(PID, f"evt-{self.n}")

    def inbound(self, text: str, *, answer_id: str | None = None, at: datetime | None = None) -> InboundMessage:
        return InboundMessage(
            provider="twilio",
            provider_message_id=f"SM{self.n}",
            from_phone=PHONE,
            body=text,
            answer_id=answer_id,
            received_at=at or self.clock.now(),
        )

    def say(self, text: str, **kwargs: Any):
        session = self.session()
        result = self.flow.handle_message(session, self.inbound(text, **kwargs))
        effects = session.commit()
        return result, effects

    @property
    def data(self) -> StateData:
        return StateData(dict(self.store.flows[PID].state_data))

    def change(self, fn: Any) -> None:
        session = self.session()
        session.apply("setup", fn)
        session.commit(record_event=False)

    def deliver_prompt(self, sent_at: datetime, *, intensity_asked: bool = False) -> str:
        """What a daily-prompt delivery leaves in the state, for the answers to refer to."""
        stamp = to_rfc3339(sent_at)

        def apply(op: OpContext) -> None:
            op.data.set(DataKey.LAST_PROMPT_SENT_AT, stamp)
            if intensity_asked:
                op.data.mark_question("intensity_asked", stamp)

        self.change(apply)
        return stamp


def stored_profile(world: World) -> dict[str, Any]:
    """The stored profile as JSON ({} when none was written)."""
    return json.loads(world.store.flows[PID].state_data.get(DataKey.USER_PROFILE.value, "{}"))


def open_questions(world: World, at: datetime) -> list[str]:
    world.clock.set(at)
    return [q.id for q in outstanding_questions(world.session())]


# --- clipping ---------------------------------------------------------------------------------------------
def test_clip_keeps_a_text_of_exactly_the_limit_and_marks_a_longer_one():
    assert clip_inbound_text("  abcde \n", 5) == "abcde"
    assert clip_inbound_text("abcdef", 5) == "abcde" + MARK
    assert clip_inbound_text(clip_inbound_text("abcdef", 5), 5) == "abcde" + MARK  # idempotent


def test_a_long_inbound_message_is_recorded_and_answered_clipped():
    world = World(max_chars=10)
    world.say("  0123456789abc  ")
    [inbound, _reply] = world.store.transcripts[PID]
    assert inbound.content == "0123456789" + MARK
    assert world.llm.requests[-1].messages[-1].content == "0123456789" + MARK


# --- outstanding questions ----------------------------------------------------------------------------------
def test_no_question_is_open_before_any_prompt():
    assert open_questions(World(), START) == []


def test_the_done_question_stays_open_for_24_hours_to_the_second():
    world = World()
    sent = START - timedelta(hours=3)
    world.deliver_prompt(sent)
    assert open_questions(world, sent + timedelta(hours=24)) == ["done"]
    assert open_questions(world, sent + timedelta(hours=24, seconds=1)) == []


def test_the_window_is_a_parameter_in_hours():
    world = World()
    world.deliver_prompt(START)
    world.clock.set(START + timedelta(minutes=90))
    assert [q.id for q in outstanding_questions(world.session(), within_hours=1.5)] == ["done"]
    world.clock.set(START + timedelta(minutes=91))
    assert outstanding_questions(world.session(), within_hours=1.5) == []


def test_done_is_closed_by_its_mark_or_by_its_count_for_this_prompt_only():
    world = World()
    stamp = world.deliver_prompt(START)
    world.change(lambda op: op.data.mark_question("done", "2026-03-01T12:00:00Z"))  # yesterday's
    assert open_questions(world, START) == ["done"]
    world.change(lambda op: op.data.set(DataKey.DONE_COUNTED_FOR_PROMPT, "2026-03-01T12:00:00Z"))
    assert open_questions(world, START) == ["done"]
    world.change(lambda op: op.data.set(DataKey.DONE_COUNTED_FOR_PROMPT, stamp))
    assert open_questions(world, START) == []

    other = World()
    stamp = other.deliver_prompt(START)
    other.change(lambda op: op.data.mark_question("done", stamp))
    assert open_questions(other, START) == []


@pytest.mark.parametrize(
    ("intensity", "titles"),
    [("low", ["Keep current", "Increase"]), ("high", ["Decrease", "Keep current"])],
)
def test_the_intensity_poll_is_open_while_asked_and_unanswered_for_this_prompt(intensity: str, titles: list[str]):
    world = World()
    world.change(lambda op: op.data.set(DataKey.USER_PROFILE, json.dumps({"intensity": intensity})))
    stamp = world.deliver_prompt(START, intensity_asked=True)
    world.clock.set(START)
    asked = outstanding_questions(world.session())
    assert [q.id for q in asked] == ["done", "intensity"]
    assert [o.title for o in asked[1].options] == titles

    world.change(lambda op: op.data.mark_question("intensity", "2026-03-01T12:00:00Z"))  # an older answer
    assert open_questions(world, START) == ["done", "intensity"]
    world.change(lambda op: op.data.mark_question("intensity", stamp))
    assert open_questions(world, START) == ["done"]


def test_an_intensity_poll_of_an_older_prompt_is_not_open():
    world = World()
    world.deliver_prompt(START - timedelta(days=1), intensity_asked=True)
    world.deliver_prompt(START)
    assert open_questions(world, START) == ["done"]


# --- fixed answers ----------------------------------------------------------------------------------------------
def test_done_counts_marks_and_stamps_the_profile():
    world = World()
    stamp = world.deliver_prompt(START - timedelta(minutes=20))
    world.clock.set(START + timedelta(minutes=1))
    world.say("1")
    assert stored_profile(world)["success_count"] == 1
    assert stored_profile(world)["updated_at"] == "2026-03-02T12:01:00Z"
    assert world.data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == stamp
    assert world.data.answered_questions() == {"done": stamp}
    # the transcript keeps what was typed, with the answer it was read as; the model gets the canonical text
    inbound = world.store.transcripts[PID][0]
    assert (inbound.direction, inbound.kind, inbound.content) == (Direction.INBOUND, "message", "1")
    assert inbound.metadata == {
        "provider": "twilio",
        "provider_message_id": f"SM{world.n}",
        "parsed_answer": "Q: Did you do it? A: Done",
    }
    assert world.llm.requests[-1].messages[-1].content == "Q: Did you do it? A: Done"
    assert [(m.role, m.content) for m in world.data.history()][-2:] == [
        ("user", "Q: Did you do it? A: Done"),
        ("assistant", REPLY),
    ]


def test_a_free_text_message_has_no_parsed_answer_in_its_metadata():
    world = World()
    world.say("hello there")
    assert world.store.transcripts[PID][0].metadata == {"provider": "twilio", "provider_message_id": "SM1"}


def test_next_time_marks_the_question_without_counting():
    world = World()
    stamp = world.deliver_prompt(START - timedelta(minutes=20))
    world.say("2")
    assert stored_profile(world).get("success_count", 0) == 0
    assert world.data.answered_questions() == {"done": stamp}
    assert world.data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == ""


def test_a_done_button_without_a_prompt_marks_and_counts_nothing():
    world = World()
    world.say("", answer_id="done:done")
    assert world.data.answered_questions() == {}
    assert world.data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == ""
    assert stored_profile(world).get("success_count", 0) == 0


def test_a_done_for_a_prompt_superseded_before_the_commit_counts_for_nothing():
    world = World()
    world.deliver_prompt(START - timedelta(hours=20))
    today = to_rfc3339(START - timedelta(minutes=1))
    # today's prompt is delivered while the answer to yesterday's is being processed
    world.store.before_commit.append(lambda: world.change(lambda op: op.data.set(DataKey.LAST_PROMPT_SENT_AT, today)))
    world.say("1")
    data = world.data
    assert data.get(DataKey.LAST_PROMPT_SENT_AT) == today
    assert data.get(DataKey.DONE_COUNTED_FOR_PROMPT) == ""
    assert data.answered_questions() == {}
    assert stored_profile(world).get("success_count", 0) == 0


def test_a_done_counted_concurrently_for_the_same_prompt_is_not_counted_again():
    world = World()
    stamp = world.deliver_prompt(START - timedelta(minutes=20))

    def counted_meanwhile() -> None:
        def count(op: OpContext) -> None:
            op.data.set(DataKey.DONE_COUNTED_FOR_PROMPT, stamp)
            op.data.set(DataKey.USER_PROFILE, json.dumps({"success_count": 4}))

        world.change(count)

    world.store.before_commit.append(counted_meanwhile)
    world.say("1")
    assert stored_profile(world)["success_count"] == 4
    assert world.data.answered_questions() == {"done": stamp}


def test_an_intensity_change_stamps_the_profile_and_keeping_it_does_not():
    world = World()
    world.deliver_prompt(START - timedelta(minutes=20), intensity_asked=True)
    world.clock.set(START + timedelta(minutes=2))
    world.say("less")
    assert stored_profile(world)["intensity"] == "low"
    assert stored_profile(world)["updated_at"] == "2026-03-02T12:02:00Z"

    world.clock.set(START + timedelta(minutes=5))
    world.say("", answer_id="intensity:keep")
    assert stored_profile(world)["intensity"] == "low"
    assert stored_profile(world)["updated_at"] == "2026-03-02T12:02:00Z"  # nothing changed: not rewritten


# --- a reply to the daily prompt ---------------------------------------------------------------------------
def _pending(sent_at: datetime):
    def apply(op: OpContext) -> None:
        op.data.set_daily_prompt_pending(DailyPromptPending(sent_at=sent_at, to=PHONE))
        op.data.set(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID, f"{PID}-reminder")

    return apply


def test_a_reply_at_the_prompts_instant_cancels_its_reminder():
    world = World()
    world.change(_pending(START))
    _result, effects = world.say("ok", at=START)
    data = world.data
    assert data.daily_prompt_pending() is None
    assert data.get(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID) == ""
    assert data.get_time(DataKey.DAILY_PROMPT_RESPONDED_AT) == START
    assert effects.schedules == {f"{PID}-reminder": None}


def test_a_reply_older_than_the_prompt_leaves_it_pending():
    world = World()
    world.change(_pending(START))
    _result, effects = world.say("ok", at=START - timedelta(seconds=1))
    data = world.data
    assert data.daily_prompt_pending() is not None
    assert data.get(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID) == f"{PID}-reminder"
    assert data.get(DataKey.DAILY_PROMPT_RESPONDED_AT) == ""
    assert effects.schedules == {}


# --- routing and what the reply writes ------------------------------------------------------------------------
def _timers(op: OpContext) -> None:
    op.data.set(DataKey.FEEDBACK_TIMER_ID, f"{PID}-fb")
    op.data.set(DataKey.FEEDBACK_FOLLOWUP_TIMER_ID, f"{PID}-fbf")


def test_a_message_in_feedback_completes_the_pending_feedback():
    world = World(conversationState="FEEDBACK", feedbackState="waiting_initial")
    world.change(_timers)
    result, effects = world.say("It went well")
    assert result.module == "feedback" and result.reply == REPLY
    data = world.data
    assert data.get(DataKey.FEEDBACK_STATE) == "completed"
    assert data.get(DataKey.FEEDBACK_TIMER_ID) == data.get(DataKey.FEEDBACK_FOLLOWUP_TIMER_ID) == ""
    assert effects.schedules == {f"{PID}-fb": None, f"{PID}-fbf": None}
    assert data.get(DataKey.CONVERSATION_STATE) == "FEEDBACK"  # a valid sub-state is left alone


def test_feedback_without_a_feedback_state_does_not_invent_one():
    world = World(conversationState="FEEDBACK")
    world.say("hi")
    assert world.data.get(DataKey.FEEDBACK_STATE) == ""


def test_a_message_in_intake_leaves_the_feedback_timers():
    world = World(conversationState="INTAKE", feedbackState="waiting_initial")
    world.change(_timers)
    result, effects = world.say("hi")
    assert result.module == "intake"
    assert world.data.get(DataKey.FEEDBACK_TIMER_ID) == f"{PID}-fb"
    assert world.data.get(DataKey.FEEDBACK_STATE) == "waiting_initial"
    assert effects.schedules == {}


def test_the_reply_is_stored_in_history_and_sent_with_its_audit():
    world = World()
    world.clock.set(START + timedelta(seconds=30))
    at = START + timedelta(seconds=10)
    result, effects = world.say("hello", at=at)
    assert [(m.role, m.content, m.timestamp) for m in world.data.history()] == [
        ("user", "hello", at),
        ("assistant", REPLY, START + timedelta(seconds=30)),
    ]
    [message] = effects.messages
    assert (message.body, message.kind, message.to, message.participant_id) == (REPLY, OutboundKind.REPLY, PHONE, PID)
    reply_entry = world.store.transcripts[PID][1]
    assert reply_entry.metadata["state_version"] == 1
    assert reply_entry.metadata["module"] == "intake" == result.audit["module"]
    assert isinstance(result.audit["duration_ms"], float) and result.audit["duration_ms"] >= 0


def test_a_paused_participants_message_is_recorded_and_not_answered():
    world = World()
    world.change(
        lambda op: (
            setattr(op, "participant_changed", True) or setattr(op.participant, "status", ParticipantStatus.PAUSED)
        )
    )
    result, effects = world.say("hello")
    assert (result.module, result.reply, result.audit) == (None, None, {"skipped": "participant paused"})
    assert [e.content for e in world.store.transcripts[PID]] == ["hello"]
    assert effects.messages == [] and world.llm.requests == []


def test_a_participant_paused_while_the_model_answered_gets_no_reply():
    world = World()

    def pause() -> None:
        def apply(op: OpContext) -> None:
            op.participant.status = ParticipantStatus.PAUSED
            op.participant_changed = True

        world.change(apply)

    world.store.before_commit.append(pause)
    _result, effects = world.say("hello")
    assert effects.messages == []
    assert world.data.history() == []
    assert [e.content for e in world.store.transcripts[PID]] == ["hello"]


# --- greeting --------------------------------------------------------------------------------------------------
def test_the_greeting_is_the_first_assistant_message_and_the_hint_is_not_stored():
    world = World()
    session = world.session()
    result = world.flow.handle_greeting(session)
    effects = session.commit()
    assert result.module == "intake" and result.reply == REPLY
    assert world.llm.requests[0].messages[-1].content == GREETING_HINT
    assert [(m.role, m.content) for m in world.data.history()] == [("assistant", REPLY)]
    assert [(m.kind, m.body) for m in effects.messages] == [(OutboundKind.GREETING, REPLY)]


def test_no_greeting_for_a_paused_participant():
    world = World()
    world.change(
        lambda op: (
            setattr(op, "participant_changed", True) or setattr(op.participant, "status", ParticipantStatus.PAUSED)
        )
    )
    session = world.session()
    result = world.flow.handle_greeting(session)
    assert (result.module, result.reply, result.audit) == (None, None, {"skipped": "participant paused"})
    assert not session.dirty and world.llm.requests == []


# --- debug output ---------------------------------------------------------------------------------------------
def test_debug_output_follows_the_reply_when_enabled():
    world = World(debug=True)
    world.change(
        lambda op: op.data.set(
            DataKey.USER_PROFILE, json.dumps({"habit_domain": "sleep", "success_count": 2, "total_prompts": 3})
        )
    )
    _result, effects = world.say("hello")
    assert [(m.kind, m.body) for m in effects.messages] == [
        (OutboundKind.REPLY, REPLY),
        (OutboundKind.DEBUG, "🐛 DEBUG: intake module; tools: none"),
        (
            OutboundKind.DEBUG,
            "🐛 DEBUG: Current state: INTAKE\nProfile: Domain=sleep, Motivation=, Time=, Anchor=, "
            "Intensity=normal, Success=2/3",
        ),
    ]


def test_debug_mode_of_the_participant_alone_enables_it():
    world = World()
    world.change(lambda op: setattr(op, "participant_changed", True) or setattr(op.participant, "debug_mode", True))
    _result, effects = world.say("hello")
    assert [m.kind for m in effects.messages] == [OutboundKind.REPLY, OutboundKind.DEBUG, OutboundKind.DEBUG]
    assert World().flow.debug_enabled(World().session()) is False


def test_no_debug_output_to_a_participant_paused_before_the_commit():
    world = World(debug=True)

    def pause() -> None:
        def apply(op: OpContext) -> None:
            op.participant.status = ParticipantStatus.PAUSED
            op.participant_changed = True

        world.change(apply)

    world.store.before_commit.append(pause)
    _result, effects = world.say("hello")
    assert effects.messages == []


def test_debug_greeting_has_its_debug_lines_too():
    world = World(debug=True)
    session = world.session()
    world.flow.handle_greeting(session)
    effects = session.commit()
    assert [m.kind for m in effects.messages] == [OutboundKind.GREETING, OutboundKind.DEBUG, OutboundKind.DEBUG]


class Ticks:
    """``time.perf_counter`` that advances a quarter of a second per read."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def test_a_greeting_in_feedback_comes_from_the_feedback_module_with_its_duration(monkeypatch: pytest.MonkeyPatch):
    from promptpipe.flow import conversation

    monkeypatch.setattr(conversation.time, "perf_counter", Ticks())
    world = World(conversationState="FEEDBACK")
    session = world.session()
    result = world.flow.handle_greeting(session)
    assert result.module == "feedback" and world.llm.requests[0].purpose == "feedback"
    assert result.audit["module"] == "feedback" and result.audit["duration_ms"] == 250.0
    session.commit()
    assert world.store.transcripts[PID][0].metadata["duration_ms"] == 250.0


def test_a_turns_duration_is_measured_in_milliseconds(monkeypatch: pytest.MonkeyPatch):
    from promptpipe.flow import conversation

    monkeypatch.setattr(conversation.time, "perf_counter", Ticks())
    world = World()
    result, _effects = world.say("hello")
    assert result.audit["duration_ms"] == 250.0
    assert world.store.transcripts[PID][1].metadata["duration_ms"] == 250.0
