"""Intake on the flow controller with answers as people write them, played through the real app
(in-memory adapters, the bundled flow) against a stand-in for a capable model: for each message it
makes the calls a good model would make, and only those the turn offers (docs/pipeline.md,
"Tools by context"; docs/controller.md, "Hand-offs that resume")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.memory_flows import InMemoryFlowDefinitionStore
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.controller.catalog import FlowCatalog
from promptpipe.controller.definition import NODE_TOOLS, validate
from promptpipe.flow.flow_files import load_flow_files
from promptpipe.flow.modules import IntakeModule
from promptpipe.flow.steering import CONTROLLER_UPDATE_HEADER, HOLDING_MESSAGE
from promptpipe.models.api import StateOverride
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.state import StateData, SubState
from promptpipe.usecases.participants import override_state, state_view
from tests.support import MemoryHarness, memory_harness
from tests.unit.test_intake_steering import intake_raw
from tests.unit.test_pipeline import turn

FLOWS_DIR = Path(__file__).parents[2] / "prompts" / "flows"
SAVE, GENERATE, SCHEDULER = "save_user_profile", "generate_habit_prompt", "scheduler"
SCHEDULE_OFFER = (
    "Here's your first one: after dinner, walk for two minutes. Shall I send you one like it every day at 8:30?"
)
Calls = list[tuple[str, dict[str, Any]]]


class CapableStandIn:
    """Makes the planned calls of the turn that the request offers; notes the rest as stranded, and
    a ``required`` turn with nothing to call as forced."""

    def __init__(self) -> None:
        self.plan: tuple[Calls, str] = ([], "")
        self.requests: list[ChatRequest] = []
        self.offered: list[tuple[set[str], str | None]] = []  # per turn: tools, tool_choice
        self.stranded: list[str] = []
        self.forced = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        calls, reply = self.plan
        if request.purpose == "prompt_generator":
            return ScriptedLLM.text("After dinner, walk for two minutes.")
        if request.purpose not in ("intake", "feedback") or request.messages[-1].role != "user":
            return ScriptedLLM.text(reply)  # a later round, the synthesis: the reply
        offered = {t.name for t in request.tools}
        self.offered.append((offered, request.tool_choice))
        self.stranded += [name for name, _ in calls if name not in offered]
        made = [(name, args, f"c{len(self.requests)}_{i}") for i, (name, args) in enumerate(calls) if name in offered]
        if made:
            return ScriptedLLM.tool_calls(made)
        if request.tool_choice == "required":
            self.forced += 1
        return ScriptedLLM.text(reply)


def steered(model: CapableStandIn) -> MemoryHarness:
    h = memory_harness(model)  # type: ignore[arg-type]
    h.app.deps.flows = FlowCatalog(InMemoryFlowDefinitionStore(), h.clock, bundled=load_flow_files(FLOWS_DIR))
    return h


@dataclass
class Chat:
    """One participant's conversation on ``h``, answered by ``model``."""

    h: MemoryHarness
    model: CapableStandIn
    participant: Any

    def say(self, text: str, calls: Calls, reply: str) -> Any:
        """The participant writes ``text``; a capable model would make ``calls`` and answer ``reply``."""
        self.model.plan = (calls, reply)
        return turn(self.h, self.participant, text)


def start(model: CapableStandIn) -> tuple[MemoryHarness, Chat]:
    h = steered(model)
    return h, Chat(h, model, h.enroll())


def data(h: MemoryHarness, participant: Any) -> StateData:
    return StateData(h.data(participant.id))


def save(**fields: str) -> tuple[str, dict[str, Any]]:
    return SAVE, fields


def play_to_the_anchor(chat: Chat) -> None:
    chat.say("hi", [], "Hi! What's one small habit you'd like to build?")
    chat.say("walking", [save(habit_domain="walking")], "Why does walking matter to you?")
    chat.say("more energy", [save(motivational_frame="more energy")], "What time of day suits you?")
    chat.say("8:30am", [save(preferred_time="08:30")], "What do you already do every day that it could follow?")


@pytest.mark.parametrize(
    ("anchor", "acceptance"),
    [
        ("dinner", "yes"),
        ("despues del desayuno", "si"),
        ("after my coffee", "sure 👍"),
        ("when I get home from work", "ok"),
        ("brushing my teeth", "yep"),
    ],
)
def test_a_short_intake_completes_with_answers_as_people_write_them(anchor: str, acceptance: str) -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    play_to_the_anchor(chat)
    # The anchor completes the profile: the first prompt is generated in the same turn and offered
    chat.say(anchor, [save(prompt_anchor=anchor), (GENERATE, {"delivery_mode": "immediate"})], SCHEDULE_OFFER)
    # and the one-word acceptance creates the schedule
    create = (SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": "08:30"})
    chat.say(acceptance, [create], "Done! See you tomorrow at 8:30.")

    assert model.stranded == [] and model.forced == 0
    state = data(h, p)
    assert state.profile().is_complete and [s.fixed_time for s in state.schedules()] == ["08:30"]
    assert state.sub_state is SubState.FEEDBACK
    runtime = state.controller_state()
    assert runtime is not None and runtime.hold is None and runtime.completed_at_turn is not None


def test_the_controller_update_reaches_the_model_mid_loop() -> None:
    model = CapableStandIn()
    _h, chat = start(model)
    chat.say("I'd like to walk more", [save(habit_domain="walking")], "Why does it matter to you?")
    first, second = (r for r in model.requests if r.purpose == "intake")
    updates = [m.content or "" for m in second.messages if (m.content or "").startswith(CONTROLLER_UPDATE_HEADER)]
    assert not any((m.content or "").startswith(CONTROLLER_UPDATE_HEADER) for m in first.messages)
    assert len(updates) == 1 and "- pursue: motivation (EXECUTE)" in updates[0]


def test_feedback_requests_are_offered_their_tool_and_capability_questions_are_not_forced() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    play_to_the_anchor(chat)
    chat.say("after dinner", [save(prompt_anchor="after dinner"), (GENERATE, {"delivery_mode": "immediate"})],
        SCHEDULE_OFFER)  # fmt: skip
    chat.say("yes", [(SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": "08:30"})], "Done!")
    assert data(h, p).sub_state is SubState.FEEDBACK

    chat.say("can I change the time later?", [], "Yes, any time: just tell me the new time.")
    assert model.offered[-1][1] == "auto"
    move = (SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": "19:00"})
    chat.say("I'd rather get it at 7pm from now on", [move], "Moved to 7pm.")
    assert SCHEDULER in model.offered[-1][0] and model.offered[-1][1] == "auto"  # offered, never forced
    assert "19:00" in [s.fixed_time for s in data(h, p).schedules()]
    assert model.stranded == [] and model.forced == 0


def test_broaden_proposes_a_default_and_yes_saves_it() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    chat.say("walking", [save(habit_domain="walking")], "Why does walking matter to you?")
    chat.say("more energy", [save(motivational_frame="more energy")], "What time of day suits you?")
    proposal = "No problem: how about 8am, after your morning coffee? Just say yes and I'll note it."
    controller: dict[str, Any] = {}
    for _ in range(10):  # time and anchor take turns (fewer attempts first) until one is broadened
        controller = chat.say("not sure", [], proposal).turn.audit["controller"]
        if controller["mode"] == "BROADEN":
            break
    broadened = controller["node"]
    assert controller["mode"] == "BROADEN" and broadened in ("time", "anchor")
    field, value = ("preferred_time", "08:00") if broadened == "time" else ("prompt_anchor", "after my morning coffee")

    accepted = chat.say("yes", [save(**{field: value})], "Great, noted!")
    assert SAVE in model.offered[-1][0] and model.stranded == []
    assert getattr(data(h, p).profile(), field) == value
    assert accepted.outbound[0].body != HOLDING_MESSAGE
    assert accepted.turn.audit["controller"]["node"] != broadened


def hand_off_at_the_habit(chat: Chat) -> None:
    h, p = chat.h, chat.participant
    flows = h.app.deps.flows
    assert flows is not None
    flows.latest("intake")
    raw = intake_raw()
    raw["nodes"][0]["retryPolicy"] = {"maxAttempts": 1, "onExhaust": "HANDOFF"}
    assert flows.push(raw).version == 2
    chat.say("hello", [], "Hi! What habit would you like to build?")
    held = chat.say("I don't know", [], "Maybe a walk?")
    assert held.outbound[0].body == HOLDING_MESSAGE
    assert state_view(h.app, p.id).controller["needs_person"] is True  # type: ignore[index]


def test_a_released_hand_off_resumes_with_a_fresh_attempt_budget() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    hand_off_at_the_habit(chat)
    view = override_state(h.app, p.id, StateOverride(sub_state=SubState.INTAKE, reason="talked to them"))
    assert view.controller is not None and view.controller["needs_person"] is False

    back = chat.say("hi, I'm back", [], "Welcome back! What habit would you like to build?")
    assert back.outbound[0].body != HOLDING_MESSAGE
    assert (back.turn.audit["controller"]["node"], back.turn.audit["controller"]["mode"]) == ("habit", "EXECUTE")
    nxt = chat.say("stretching", [save(habit_domain="stretching")], "Why does it matter to you?")
    assert nxt.turn.audit["controller"]["node"] == "motivation"
    assert data(h, p).controller_state().hold is None  # type: ignore[union-attr]


def test_the_operator_supplies_the_missing_fact_and_intake_completes() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    hand_off_at_the_habit(chat)
    override = StateOverride(
        sub_state=SubState.INTAKE, profile={"habit_domain": "a short walk"}, reason="they told me on the phone"
    )
    view = override_state(h.app, p.id, override)
    assert view.profile["habit_domain"] == "a short walk"
    assert view.controller is not None and "habit" in view.controller["facts"]
    assert "HABIT" in view.controller["gates_satisfied"] and view.controller["needs_person"] is False

    back = chat.say("hi, I'm back", [], "Welcome back! Why does a short walk matter to you?")
    assert back.outbound[0].body != HOLDING_MESSAGE and back.turn.audit["controller"]["node"] == "motivation"
    chat.say("to clear my head", [save(motivational_frame="clear my head")], "What time suits you?")
    chat.say("7pm", [save(preferred_time="19:00")], "What could it follow?")
    chat.say("dinner", [save(prompt_anchor="after dinner"), (GENERATE, {"delivery_mode": "immediate"})],
        SCHEDULE_OFFER)  # fmt: skip
    chat.say("ok", [(SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": "19:00"})], "Done!")
    assert model.stranded == [] and data(h, p).sub_state is SubState.FEEDBACK
    transcript = h.store.list_transcript(p.id, limit=100, next_token=None)[0]
    assert any(e.kind == "override" and "profile=habit_domain" in e.content for e in transcript)


def test_a_pushed_flow_names_the_tools_of_its_nodes() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    flows = h.app.deps.flows
    assert flows is not None
    flows.latest("intake")  # version 1 seeded
    raw = intake_raw()
    time_node = next(n for n in raw["nodes"] if n["id"] == "time")
    time_node["tools"] = [SAVE, SCHEDULER]  # a study that schedules as soon as the time is known
    assert flows.push(raw).version == 2
    chat.say("walking", [save(habit_domain="walking")], "Why?")
    chat.say("more energy", [save(motivational_frame="more energy")], "What time suits you?")
    chat.say("9ish", [save(preferred_time="09:00")], "Noted.")
    assert model.offered[-1][0] >= {SAVE, SCHEDULER}


def test_a_stored_definition_without_node_tools_still_loads_and_offers_what_its_nodes_produce() -> None:
    model = CapableStandIn()
    h, chat = start(model)
    p = chat.participant
    flows = h.app.deps.flows
    assert flows is not None
    flows.latest("intake")
    raw = intake_raw()
    for node in raw["nodes"]:
        node.pop("tools")
    assert flows.push(raw).nodes[0].tools is None
    play_to_the_anchor(chat)
    chat.say("dinner", [save(prompt_anchor="after dinner"), (GENERATE, {"delivery_mode": "immediate"})],
        SCHEDULE_OFFER)  # fmt: skip
    chat.say("yes", [(SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": "08:30"})], "Done!")
    assert model.stranded == [] and data(h, p).sub_state is SubState.FEEDBACK


def test_node_tools_are_validated_against_the_intake_modules_tools() -> None:
    raw = intake_raw()
    raw["nodes"][2]["tools"] = [SAVE, "send_fax"]
    definition, problems = validate(raw)
    assert definition is None
    assert [(p.path, "send_fax" in p.message) for p in problems] == [("$.nodes[2].tools[1]", True)]
    model = CapableStandIn()
    assert set(NODE_TOOLS) == set(IntakeModule(steered(model).app.deps).tools)
    bundled = load_flow_files(FLOWS_DIR)["intake"]
    assert all(node.tools for node in bundled.nodes)  # the bundled flow declares every node's tools
