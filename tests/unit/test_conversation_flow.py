"""Scenarios through ConversationFlow with in-memory fakes (docs/behaviour.md#scenarios, cases F3–F4)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.state import DataKey
from promptpipe.settings import Settings
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.participants import override_state
from promptpipe.usecases.sending import apply_effects
from tests.support import memory_harness


def turn(h, participant, text, **kw):
    message = h.message(participant, text, **kw)
    event = TurnEvent(
        kind=TurnKind.MESSAGE,
        participant_id=participant.id,
        event_id=message.provider_message_id,
        message=message,
        enqueued_at=h.clock.now(),
    )
    outcome = process_turn(h.app, event)
    apply_effects(h.app, outcome)
    return outcome


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
    history = json.loads(data["conversationHistory"])["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]


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


def test_history_window_and_storage_limits():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text(f"r{i}") for i in range(30)]))
    p = h.enroll()
    for i in range(30):
        h.clock.advance(timedelta(minutes=5))
        turn(h, p, f"u{i}")
    history = json.loads(h.data(p.id)["conversationHistory"])["messages"]
    assert len(history) == 50
    last = h.scripted.requests[-1].messages
    sent_history = [m for m in last if m.role in ("user", "assistant")][:-1]
    assert len(sent_history) == 30


def test_greeting_hint_not_stored_as_user_message():
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Welcome! I'm your habit coach.")]))
    p = h.enroll()
    outcome = process_turn(
        h.app, TurnEvent(kind=TurnKind.GREETING, participant_id=p.id, event_id="g1", enqueued_at=h.clock.now())
    )
    assert outcome.outbound[0].body.startswith("Welcome")
    history = json.loads(h.data(p.id)["conversationHistory"])["messages"]
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
    from promptpipe.models.state import MAX_HISTORY_BYTES

    h = memory_harness(ScriptedLLM([ScriptedLLM.text("ok") for _ in range(25)]))
    p = h.enroll()
    for _ in range(25):
        h.clock.advance(timedelta(minutes=1))
        turn(h, p, "😀" * 4096)
    # Then the stored history is trimmed from the oldest end to fit, and the last turn is there
    stored = h.data(p.id)["conversationHistory"]
    assert len(stored.encode()) <= MAX_HISTORY_BYTES
    messages = json.loads(stored)["messages"]
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
    assert len(json.loads(h.data(p.id)["conversationHistory"])["messages"]) == 8
