"""``transition_state`` (docs/behaviour.md#transitions, SC-5, B-TRANS-3, cases ST1–ST6) with in-memory fakes.

Timers are fired the way EventBridge would: at their time, once, and deleted after completion
(``fire_due``); duplicated or late firings are replayed by hand with the stored payload.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.errors import TimerError
from promptpipe.flow.tools.base import ToolContext, ToolResult
from promptpipe.flow.tools.state_transition import StateTransitionTool
from promptpipe.models.api import StateOverride
from promptpipe.models.events import TimerKind, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey, StateData, SubState
from promptpipe.usecases.events import process_turn
from promptpipe.usecases.participants import override_state
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import resume
from tests.support import START, MemoryHarness, fire, fire_due, memory_harness
from tests.support.schedules import apply_schedules


def run(h: MemoryHarness, participant: ConversationParticipant, args: dict[str, Any]) -> ToolResult:
    session = h.app.sessions.open(participant.id, f"tool-{h.store.commits}-{h.clock.now().isoformat()}")
    result = StateTransitionTool().execute(ToolContext(h.app.deps, session), args)
    if session.dirty:
        apply_schedules(h.app, session.commit())
    return result


def sub_state(h: MemoryHarness, participant_id: str) -> str:
    return h.data(participant_id).get(DataKey.CONVERSATION_STATE.value, "")


def given_participant(h: MemoryHarness, state: str = "INTAKE") -> ConversationParticipant:
    p = h.enroll(timezone="America/Toronto")
    h.store.flows[p.id].state_data[DataKey.CONVERSATION_STATE.value] = state
    return p


def transition_timer(h: MemoryHarness, participant_id: str) -> Any:
    return h.timers.get(f"{participant_id}-transition")


# --- ST1–ST5 ----------------------------------------------------------------------------------


def test_st1_definition() -> None:
    # Given the definition / Then its name, enum, minimum and required field match docs/behaviour.md#B-TOOL-1
    definition = StateTransitionTool().definition
    assert definition.name == "transition_state"
    assert definition.parameters["required"] == ["target_state"]
    props = definition.parameters["properties"]
    assert props["target_state"]["enum"] == ["INTAKE", "FEEDBACK"]
    assert props["delay_minutes"] == {"type": "number", "minimum": 0, "description": "Delay before moving."}


def test_st2_immediate_intake_sets_the_sub_state() -> None:
    # Given a participant in FEEDBACK
    h = memory_harness()
    p = given_participant(h, "FEEDBACK")
    # When transitioning to INTAKE without a delay
    result = run(h, p, {"target_state": "INTAKE"})
    # Then the sub-state is written at once and no timer exists
    assert result.ok and "INTAKE" in result.text
    assert sub_state(h, p.id) == "INTAKE"
    assert h.timers.schedules == {}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"target_state": "INVALID_STATE"}, "invalid target_state: INVALID_STATE"),
        ({}, "target_state is required and must be a string"),
        ({"target_state": 3}, "target_state is required and must be a string"),
        ({"target_state": "FEEDBACK", "delay_minutes": -1}, "delay_minutes must be zero or more"),
        ({"target_state": "FEEDBACK", "delay_minutes": "5"}, "delay_minutes must be a number"),
        ({"target_state": "FEEDBACK", "delay_minutes": True}, "delay_minutes must be a number"),
    ],
)
def test_st4_st5_invalid_arguments(args: dict[str, Any], error: str) -> None:
    # Given a participant in INTAKE
    h = memory_harness()
    p = given_participant(h)
    # When the arguments are invalid
    result = run(h, p, args)
    # Then the model sees the reason and nothing changes
    assert not result.ok and error in result.text
    assert sub_state(h, p.id) == "INTAKE" and h.timers.schedules == {}


# --- ST3 and docs/behaviour.md#SC-5: delayed transitions ---------------------------------------


def test_st3_delay_5_arms_one_timer_and_stores_its_id() -> None:
    # Given a participant in INTAKE
    h = memory_harness()
    p = given_participant(h)
    # When transitioning to FEEDBACK in 5 minutes
    result = run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 5, "reason": "after the first prompt"})
    # Then one one-shot timer exists, due in 5 minutes, and its id is stored
    assert result.ok and "5 minute(s)" in result.text
    [timer] = h.timers.schedules.values()
    assert timer.kind == "timer" and timer.at == h.clock.now() + timedelta(minutes=5)
    assert timer.payload.kind is TimerKind.STATE_TRANSITION and timer.payload.target_state == "FEEDBACK"
    data = h.data(p.id)
    assert data[DataKey.STATE_TRANSITION_TIMER_ID.value] == timer.name
    pending = json.loads(data[DataKey.PENDING_TRANSITION.value])
    assert pending["target_state"] == "FEEDBACK" and pending["reason"] == "after the first prompt"


def test_scenario_5_state_unchanged_until_the_timer_fires_then_feedback() -> None:
    # Given a participant in INTAKE and a transition to FEEDBACK in 30 minutes
    h = memory_harness()
    p = given_participant(h)
    start = h.clock.now()
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 30}).ok
    # When 29 minutes 59 seconds pass / Then the sub-state has not moved
    assert fire_due(h, start + timedelta(minutes=29, seconds=59)) == []
    assert sub_state(h, p.id) == "INTAKE"
    # When the 30th minute is reached / Then the timer fires and the sub-state is FEEDBACK
    [(name, outcome)] = fire_due(h, start + timedelta(minutes=30))
    assert name == f"{p.id}-transition" and outcome.timer is not None and outcome.timer.applied
    assert sub_state(h, p.id) == "FEEDBACK"
    data = h.data(p.id)
    assert DataKey.STATE_TRANSITION_TIMER_ID.value not in data and DataKey.PENDING_TRANSITION.value not in data


def test_a_transition_firing_deletes_no_schedule_the_scheduler_already_removed() -> None:
    # Given a delayed move to FEEDBACK in 30 minutes (a one-shot EventBridge deletes once it has run)
    h = memory_harness()
    p = given_participant(h)
    start = h.clock.now()
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 30}).ok
    before = list(h.timers.cancelled)
    # When it fires
    [(name, outcome)] = fire_due(h, start + timedelta(minutes=30))
    # Then it moved the participant and asked the scheduler to delete nothing (no DeleteSchedule)
    assert outcome.timer is not None and outcome.timer.applied
    assert h.timers.cancelled == before and name not in h.timers.cancelled
    assert name not in StateData(h.data(p.id)).pending_timers()


def test_a_transition_firing_deletes_an_armed_auto_feedback_but_not_itself() -> None:
    # Given a delayed move to INTAKE in 10 minutes, and an auto-feedback armed for 20 minutes
    h = memory_harness()
    p = given_participant(h, "FEEDBACK")
    start = h.clock.now()
    assert run(h, p, {"target_state": "INTAKE", "delay_minutes": 10}).ok
    autofb = f"{p.id}-autofb"
    payload = TimerPayload(participant_id=p.id, kind=TimerKind.AUTO_FEEDBACK, timer_id=autofb, due_at=start)
    h.timers.schedule_timer(name=autofb, at=start + timedelta(minutes=20), payload=payload)
    h.store.flows[p.id].state_data[DataKey.AUTO_FEEDBACK_TIMER_ID.value] = autofb
    # When the transition fires
    [(name, outcome)] = fire_due(h, start + timedelta(minutes=10))
    # Then the auto-feedback, still armed, is deleted (any write of the sub-state cancels it), and
    # the transition's own one-shot, already gone, is not asked to be
    assert outcome.timer is not None and outcome.timer.applied and sub_state(h, p.id) == "INTAKE"
    assert h.timers.cancelled == [autofb] and h.timers.get(autofb) is None and name not in h.timers.cancelled


@pytest.mark.parametrize(("delay", "minutes"), [(0.5, 1), (0.01, 1), (1.2, 2), (2.0, 2), (29.5, 30)])
def test_fractional_delays_round_up_to_whole_minutes_never_immediate(delay: float, minutes: int) -> None:
    # Given a participant in INTAKE (the original truncated 0.5 to 0 and moved at once)
    h = memory_harness()
    p = given_participant(h)
    start = h.clock.now()
    # When the delay is fractional
    result = run(h, p, {"target_state": "FEEDBACK", "delay_minutes": delay})
    # Then it is rounded up to whole minutes (the scheduler's precision): nothing happens now
    assert result.ok and f"{minutes} minute(s)" in result.text
    assert sub_state(h, p.id) == "INTAKE"
    assert transition_timer(h, p.id).at == start + timedelta(minutes=minutes)
    # And the move happens when that minute comes, not before
    assert fire_due(h, start + timedelta(minutes=minutes) - timedelta(seconds=1)) == []
    assert sub_state(h, p.id) == "INTAKE"
    fire_due(h, start + timedelta(minutes=minutes))
    assert sub_state(h, p.id) == "FEEDBACK"


@pytest.mark.parametrize("delay", [0, 0.0, None])
def test_zero_or_absent_delay_is_immediate(delay: float | None) -> None:
    h = memory_harness()
    p = given_participant(h)
    args: dict[str, Any] = {"target_state": "FEEDBACK"} | ({"delay_minutes": delay} if delay is not None else {})
    assert run(h, p, args).ok
    assert sub_state(h, p.id) == "FEEDBACK" and h.timers.schedules == {}


def test_scenario_5_through_the_intake_tool_loop() -> None:
    # Given the model asks for a delayed move to FEEDBACK of half a minute during an intake turn
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("transition_state", {"target_state": "FEEDBACK", "delay_minutes": 0.5}),
            ScriptedLLM.text("I'll check in shortly."),
        ]
    )
    h = memory_harness(llm)
    p = given_participant(h)
    message = h.message(p, "that's all for now", msg_id="SMt1")
    outcome = process_turn(
        h.app,
        TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=p.id,
            event_id="SMt1",
            message=message,
            enqueued_at=message.received_at,
        ),
    )
    apply_effects(h.app, outcome)
    # Then the tool result tells the model the rounded delay, the reply goes out, and the turn
    # left the sub-state at INTAKE with the timer armed
    assert "1 minute(s)" in llm.requests[1].messages[-1].content
    assert outcome.outbound[0].body == "I'll check in shortly."
    assert sub_state(h, p.id) == "INTAKE" and transition_timer(h, p.id) is not None
    # When a minute passes / Then FEEDBACK
    fire_due(h, h.clock.now() + timedelta(minutes=1))
    assert sub_state(h, p.id) == "FEEDBACK"


def test_a_timer_failure_after_the_commit_raises_and_the_redelivery_arms_it() -> None:
    # Given EventBridge failing the next call
    h = memory_harness()
    p = given_participant(h)
    h.timers.fail_next = TimerError("AccessDenied")
    session = h.app.sessions.open(p.id, "evt-transition")
    result = StateTransitionTool().execute(
        ToolContext(h.app.deps, session), {"target_state": "FEEDBACK", "delay_minutes": 10}
    )
    # When the turn commits, applying its effects fails
    effects = session.commit()
    with pytest.raises(TimerError, match="AccessDenied"):
        apply_schedules(h.app, effects)
    # Then the decision is stored and the timer is not live yet …
    name = h.data(p.id)[DataKey.STATE_TRANSITION_TIMER_ID.value]
    assert result.ok and h.timers.get(name) is None
    # … and the redelivered event, finding its record, arms exactly that timer
    again = h.app.sessions.open(p.id, "evt-transition")
    record = again.already_processed()
    assert record is not None and record.schedules == [name]
    apply_schedules(h.app, resume(h.app, again, record))
    live = h.timers.get(name)
    assert live is not None and live.at == START + timedelta(minutes=10)


# --- ST6 and docs/behaviour.md#B-TRANS-3: cancellation, duplicates, stale firings --------------


def test_st6_immediate_transition_cancels_a_pending_delayed_one() -> None:
    # Given a delayed move to FEEDBACK in 10 minutes, and its payload as EventBridge holds it
    h = memory_harness()
    p = given_participant(h)
    start = h.clock.now()
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 10}).ok
    stale = transition_timer(h, p.id)
    # When an immediate transition to INTAKE happens first (the original left the delayed job armed)
    h.clock.advance(timedelta(minutes=2))
    assert run(h, p, {"target_state": "INTAKE"}).ok
    # Then the id is cleared and the EventBridge schedule deleted
    data = h.data(p.id)
    assert DataKey.STATE_TRANSITION_TIMER_ID.value not in data and DataKey.PENDING_TRANSITION.value not in data
    assert stale.name in h.timers.cancelled and transition_timer(h, p.id) is None
    # And if the old firing is delivered anyway, it does not override the newer decision
    h.clock.set(start + timedelta(minutes=10))
    outcome = fire(h, stale.payload, "late-delivery")
    assert outcome.timer is not None and not outcome.timer.applied
    assert sub_state(h, p.id) == "INTAKE"


def test_a_newer_delayed_transition_replaces_the_older_one() -> None:
    # Given a move to FEEDBACK in 10 minutes, then (3 minutes later) a move to FEEDBACK in 20
    h = memory_harness()
    p = given_participant(h)
    start = h.clock.now()
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 10}).ok
    older = transition_timer(h, p.id)
    h.clock.advance(timedelta(minutes=3))
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 20}).ok
    newer = transition_timer(h, p.id)
    # Then the same name holds only the newer timer
    assert newer.name == older.name and newer.at == start + timedelta(minutes=23)
    # When the older firing arrives anyway (a retry in flight) / Then it is stale
    h.clock.set(start + timedelta(minutes=10))
    outcome = fire(h, older.payload, "older")
    assert outcome.timer is not None and not outcome.timer.applied and "stale" in outcome.timer.detail
    assert sub_state(h, p.id) == "INTAKE"
    # When the newer one fires / Then FEEDBACK
    fire_due(h, start + timedelta(minutes=23))
    assert sub_state(h, p.id) == "FEEDBACK"


def test_transition_fired_twice_has_one_effect() -> None:
    # Given a delayed move to FEEDBACK that fires
    h = memory_harness()
    p = given_participant(h)
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 5}).ok
    timer = transition_timer(h, p.id)
    h.clock.set(timer.at)
    first = fire(h, timer.payload, "exec-1")
    assert first.timer is not None and first.timer.applied
    # When an operator moves the participant back to INTAKE, and the same execution is redelivered
    override_state(h.app, p.id, StateOverride(sub_state=SubState.INTAKE, reason="test"))
    same = fire(h, timer.payload, "exec-1")
    # Then the redelivery is recognised as already processed
    assert same.replayed and same.timer is None
    # And a second delivery under another execution id is stale: INTAKE stays
    other = fire(h, timer.payload, "exec-2")
    assert other.timer is not None and not other.timer.applied
    assert sub_state(h, p.id) == "INTAKE"


def test_delayed_transition_to_the_current_state_is_a_no_op_that_clears_the_timer() -> None:
    # Given a pending move to FEEDBACK, and the participant reached FEEDBACK meanwhile
    h = memory_harness()
    p = given_participant(h)
    assert run(h, p, {"target_state": "FEEDBACK", "delay_minutes": 5}).ok
    timer = transition_timer(h, p.id)
    h.store.flows[p.id].state_data[DataKey.CONVERSATION_STATE.value] = "FEEDBACK"
    # When it fires / Then nothing is written beyond clearing the pending transition
    h.clock.set(timer.at)
    outcome = fire(h, timer.payload, "exec")
    assert outcome.timer is not None and not outcome.timer.applied and outcome.timer.detail == "already in FEEDBACK"
    assert sub_state(h, p.id) == "FEEDBACK"
    assert DataKey.STATE_TRANSITION_TIMER_ID.value not in h.data(p.id)


def test_immediate_transition_cancels_a_pending_auto_feedback() -> None:
    # Given an armed auto-feedback timer (as after a daily prompt)
    h = memory_harness()
    p = given_participant(h)
    name = f"{p.id}-autofb"
    payload = TimerPayload(participant_id=p.id, kind=TimerKind.AUTO_FEEDBACK, timer_id=name, due_at=h.clock.now())
    h.timers.schedule_timer(name=name, at=h.clock.now() + timedelta(minutes=5), payload=payload)
    h.store.flows[p.id].state_data[DataKey.AUTO_FEEDBACK_TIMER_ID.value] = name
    # When the model moves the conversation at once (docs/behaviour.md#SC-11)
    assert run(h, p, {"target_state": "INTAKE"}).ok
    # Then the auto-feedback id is cleared and its schedule deleted
    assert DataKey.AUTO_FEEDBACK_TIMER_ID.value not in h.data(p.id)
    assert name in h.timers.cancelled and h.timers.get(name) is None
    # And a late firing does not move the participant to FEEDBACK
    h.clock.advance(timedelta(minutes=10))
    outcome = fire(h, payload, "late")
    assert outcome.timer is not None and not outcome.timer.applied
    assert sub_state(h, p.id) == "INTAKE"
