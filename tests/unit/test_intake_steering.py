"""Intake on the flow controller: the real ConversationFlow, tools and session over in-memory
adapters and the in-memory flow store (docs/controller.md, "Intake")."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from promptpipe.adapters.memory_flows import InMemoryFlowDefinitionStore
from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.config import CoreConfig
from promptpipe.controller.catalog import FlowCatalog
from promptpipe.controller.runtime import Mode, Status
from promptpipe.flow.conversation import ConversationFlow, TurnResult
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.flow_files import load_flow_files
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import SessionFactory
from promptpipe.flow.steering import CONTROLLER_HEADER, HOLDING_MESSAGE, controller_view, release_controller_hold
from promptpipe.models.messaging import InboundMessage
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import FlowState, StateData, SubState, new_state_data
from promptpipe.ports import LLM
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings

FLOWS_DIR = Path(__file__).parents[2] / "prompts" / "flows"


def intake_raw() -> dict[str, Any]:
    return json.loads((FLOWS_DIR / "intake.json").read_text())


class Harness:
    def __init__(self, llm: LLM | None = None, flows: FlowCatalog | None = None) -> None:
        self.clock = ManualClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
        self.store = InMemoryStore()
        self.timers = InMemoryTimers()
        self.flow_store = InMemoryFlowDefinitionStore()
        self.flows = flows or FlowCatalog(self.flow_store, self.clock, bundled=load_flow_files(FLOWS_DIR))
        settings = Settings()
        self.llm = llm or OfflineCoach()
        self.deps = FlowDeps(
            config=CoreConfig.from_settings(settings),
            llm=self.llm,
            timers=self.timers,
            clock=self.clock,
            prompts=PromptLibrary.from_settings(settings),
            ids=IdGenerator(random.Random(7)),
            flows=self.flows,
        )
        now = self.clock.now()
        self.participant = ConversationParticipant(
            id="p_" + "b" * 32, phone_number="+15551234567", name="Sam", enrolled_at=now, created_at=now, updated_at=now
        )
        self.store.create(self.participant, FlowState(participant_id=self.participant.id, state_data=new_state_data()))
        self.sessions = SessionFactory(self.store, self.clock)
        self.flow = ConversationFlow(self.deps)
        self.events = 0

    def say(self, text: str) -> TurnResult:
        self.clock.advance(timedelta(minutes=1))
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
        session.commit()
        return result

    @property
    def data(self) -> StateData:
        return StateData(self.store.flows[self.participant.id].state_data)


def test_intake_runs_on_the_stored_default_flow_with_the_decision_in_the_audit() -> None:
    h = Harness()
    first = h.say("Hi")
    assert first.audit["controller"]["node"] == "habit" and first.audit["controller"]["mode"] == "EXECUTE"
    assert first.audit["controller"]["flow"] == "intake@1"
    assert "What's one small habit" in (first.reply or "")
    assert h.flow_store.versions("intake") == []  # the bundled flow, read without writing (the worker)

    answer = h.say("I'd like to exercise more")
    assert answer.audit["controller"]["facts_produced"] == ["habit"]
    assert answer.audit["controller"]["node"] == "motivation"
    h.say("I want to feel more energetic")
    h.say("around 8am")
    offered = h.say("after my morning coffee")
    assert h.data.sub_state is SubState.INTAKE and h.data.schedules() == []  # proposed, set up on the yes
    assert set(offered.audit["controller"]["states_produced"]) == {"FIRST_PROMPT_OFFERED"}
    done = h.say("yes")
    assert done.audit["controller"]["status"] == "COMPLETE"
    assert set(done.audit["controller"]["states_produced"]) == {"SCHEDULE_SET"}
    assert h.data.sub_state is SubState.FEEDBACK

    runtime = h.data.controller_state()
    assert runtime is not None and runtime.completed_at_turn is not None
    ok = [e.node_id for e in runtime.turn_log if e.status is Status.OK]
    assert ok == ["habit", "motivation", "time", "anchor", "schedule"]  # the schedule: its own turn, on the yes
    view = controller_view(h.data)
    assert view is not None and view["needs_person"] is False and "READY_FOR_DAILY_PROMPTS" in view["gates_satisfied"]


def test_the_model_is_given_the_node_objective_and_the_retry_variant() -> None:
    llm = ScriptedLLM([ScriptedLLM.text("What habit would you like?"), ScriptedLLM.text("Any habit in mind?")])
    h = Harness(llm)
    h.say("hello")
    h.say("hmm")
    blocks = [
        [m.content for m in r.messages if m.role == "system" and (m.content or "").startswith(CONTROLLER_HEADER)]
        for r in llm.requests
    ]
    assert "- pursue: habit (EXECUTE)" in blocks[0][0]
    assert "- pursue: habit (RETRY)" in blocks[1][0]
    assert "name two examples (a short walk" in blocks[1][0]  # the node's first retry variant


def test_goal_satisfied_moves_to_feedback_without_transition_state() -> None:
    profile = {
        "habit_domain": "walking",
        "motivational_frame": "clear head",
        "preferred_time": "19:00",
        "prompt_anchor": "after dinner",
    }
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("save_user_profile", profile),
            ScriptedLLM.tool_call("generate_habit_prompt", {"delivery_mode": "immediate"}),
            ScriptedLLM.text("Walk for one minute after dinner."),  # the prompt generator's own call
            ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"}),
            ScriptedLLM.text("All set!"),  # no transition_state
        ]
    )
    h = Harness(llm)
    result = h.say("walking after dinner at 7pm, it clears my head")
    assert result.audit["controller"]["status"] == "COMPLETE"
    assert h.data.sub_state is SubState.FEEDBACK
    assert "transition_state" not in [c["name"] for c in result.audit["tool_calls"]]


def test_a_pushed_flow_adds_a_required_fact_and_the_conversation_follows_it() -> None:
    h = Harness()
    h.flows.latest("intake")  # version 1 seeded
    raw = intake_raw()
    raw["nodes"].insert(
        4,
        {
            "id": "context",
            "objective": "Ask what else would help us support them.",
            "requires": ["HABIT"],
            "produces": ["additional_info"],
            "satisfies": {"gates": ["CONTEXT"]},
        },
    )
    raw["gates"]["CONTEXT"] = {"satisfiedBy": {"metricsAll": ["additional_info"]}}
    raw["gates"]["PROFILE"]["satisfiedBy"]["metricsAll"].append("additional_info")
    raw["gates"]["READY_FOR_DAILY_PROMPTS"]["satisfiedBy"]["metricsAll"].append("additional_info")
    assert h.flows.push(raw).version == 2

    for text in ("I'd like to exercise more", "I want to feel more energetic", "around 8am"):
        h.say(text)
    asked = h.say("after my morning coffee")
    assert asked.audit["controller"]["node"] == "context"
    assert "could you tell me your additional info" in (asked.reply or "")
    assert h.data.sub_state is SubState.INTAKE  # not complete: the new fact is required
    h.say("I work night shifts twice a week")
    assert h.data.profile().additional_info == "I work night shifts twice a week"
    done = h.say("yes")  # the first prompt proposed the daily schedule
    assert done.audit["controller"]["status"] == "COMPLETE" and done.audit["controller"]["flow"] == "intake@2"
    assert h.data.sub_state is SubState.FEEDBACK


def test_a_participant_stays_on_the_version_that_started_their_conversation() -> None:
    h = Harness()
    h.say("Hi")
    raw = intake_raw()
    raw["nodes"][0]["objective"] = "CHANGED"
    h.flows.push(raw)
    later = h.say("I'd like to exercise more")
    assert later.audit["controller"]["flow"] == "intake@1"
    runtime = h.data.controller_state()
    assert runtime is not None and (runtime.flow_id, runtime.flow_version) == ("intake", 1)


class CountingLLM:
    def __init__(self, inner: LLM) -> None:
        self.inner, self.calls = inner, 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        return self.inner.complete(request)


def test_a_pushed_retry_policy_hands_off_to_a_person_and_an_override_resumes() -> None:
    llm = CountingLLM(OfflineCoach())
    h = Harness(llm=llm)
    h.flows.latest("intake")
    raw = intake_raw()
    raw["nodes"][0]["retryPolicy"] = {"maxAttempts": 1, "onExhaust": "HANDOFF"}
    h.flows.push(raw)
    h.say("hello")  # habit EXECUTE
    held = h.say("I don't know")  # nothing learned: attempts exhausted → HANDOFF
    assert held.audit["controller"]["mode"] == Mode.HANDOFF.value
    assert held.reply == HOLDING_MESSAGE
    view = controller_view(h.data)
    assert view is not None and view["needs_person"] is True and view["hold"]["nodeId"] == "habit"
    hold = h.data.hold()
    assert hold is not None and hold.reason is HoldReason.HANDOFF and hold.set_by == "flow controller"
    calls = llm.calls
    waiting = h.say("hello?")  # the one hold (docs/safety.md): no model, no second holding message today
    assert waiting.audit == {"skipped": "on hold (handoff)"} and waiting.reply is None
    assert llm.calls == calls

    data = h.data
    release_controller_hold(data, SubState.INTAKE)  # what the operator's state override does
    view = controller_view(data)
    assert view is not None and view["needs_person"] is False


def test_deadlock_marks_the_participant_as_needing_a_person() -> None:
    h = Harness()
    h.flows.latest("intake")
    raw = intake_raw()
    raw["nodes"][0]["runPolicy"] = {"maxExecutions": 1}  # habit asked once only, the rest needs HABIT
    raw["nodes"][0]["retryPolicy"] = {"maxAttempts": 5, "onExhaust": "CLARIFY"}
    h.flows.push(raw)
    h.say("hello")
    stuck = h.say("not sure")
    # habit ran its one execution and HABIT does not hold; every other node needs HABIT
    assert stuck.audit["controller"]["status"] == "DEADLOCK"
    assert "habit: reached its maximum of 1 execution(s)" in stuck.audit["controller"]["blocking"]
    assert stuck.reply == HOLDING_MESSAGE
    view = controller_view(h.data)
    assert view is not None and view["needs_person"] is True and view["hold"]["kind"] == "DEADLOCK"


def test_steering_reads_the_flow_store_only_on_the_first_turn_of_a_process() -> None:
    h = Harness()
    h.say("Hi")
    reads = h.flow_store.reads  # the seed: latest (absent) + the put; the definition is now cached
    for text in ("I'd like to exercise more", "I want to feel more energetic", "around 8am"):
        h.say(text)
    assert h.flow_store.reads == reads
    # and the runtime state rides in the flow-state item the turn already writes
    assert "controllerState" in h.store.flows[h.participant.id].state_data


def test_a_field_lost_after_intake_is_pursued_again_when_back_in_intake() -> None:
    h = Harness()
    for text in ("I'd like to exercise more", "I want to feel more energetic", "around 8am", "after my morning coffee"):
        h.say(text)
    h.say("yes")
    assert h.data.sub_state is SubState.FEEDBACK
    # An operator cleared the anchor and sent them back to intake to repair it.
    raw = h.store.flows[h.participant.id].state_data
    data = StateData(raw)
    profile = data.profile()
    profile.prompt_anchor = ""
    data.set_profile(profile)
    raw["conversationState"] = SubState.INTAKE.value
    asked = h.say("hi again")
    assert asked.audit["controller"]["node"] == "anchor"
    assert "attach it to" in (asked.reply or "")
    h.say("after brushing my teeth")
    assert h.data.sub_state is SubState.FEEDBACK


def test_a_returning_participant_re_entering_intake_gets_fresh_attempts() -> None:
    # Given a first intake where the habit took several tries, then finished (FEEDBACK)
    h = Harness()
    for text in ("hello", "I don't know", "hmm not sure", "I'd like to exercise more"):
        h.say(text)
    for text in ("I want to feel more energetic", "around 8am", "after my morning coffee", "yes"):
        h.say(text)
    assert h.data.sub_state is SubState.FEEDBACK
    old = h.data.controller_state()
    assert old is not None and old.attempts("habit") >= 3

    # When they come back to intake for a new habit (the transition the model's tool makes)
    from promptpipe.flow.state_ops import immediate_transition

    session = h.sessions.open(h.participant.id, "evt-back")

    def new_habit(op: Any) -> None:
        profile = op.data.profile()
        profile.habit_domain = ""
        op.data.set_profile(profile)

    session.apply("new_habit", new_habit)
    session.apply("transition_to_INTAKE", immediate_transition(SubState.INTAKE))
    session.commit()

    # Then the controller's attempts start again: no person on the third message
    fresh = h.data.controller_state()
    assert fresh is not None and fresh.attempts_by_node == {} and fresh.skipped_nodes == []
    replies = [h.say(text) for text in ("hi again", "not sure yet", "hmm")]
    assert all(r.reply != HOLDING_MESSAGE for r in replies)
    assert all(r.audit["controller"]["mode"] != Mode.HANDOFF.value for r in replies)
