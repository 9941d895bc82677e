"""Intake on the flow controller (docs/controller.md, "Intake").

Each intake turn asks the controller what to pursue (node, mode) and gives the model that node's
objective and the mode's prompt variant; the model still understands the reply, calls the tools
and phrases the message. Facts are the ``save_user_profile`` arguments (through ``factAliases``);
states are the tools' effects (a first prompt generated, a daily schedule created). When the primary
goal holds the conversation moves to FEEDBACK even if the model did not call ``transition_state``;
a HANDOFF or DEADLOCK puts the participant on hold for a person, with a polite holding message.

The runtime state is the ``controllerState`` key of the flow-state item: no DynamoDB call of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from promptpipe.controller.definition import NODE_TOOLS, FlowDefinition, FlowNode
from promptpipe.controller.engine import (
    Decision,
    begin_turn,
    decide,
    instruction,
    record_outcome,
    release_hold,
    retract,
)
from promptpipe.controller.runtime import Mode, RuntimeState, Status
from promptpipe.controller.tool_table import HABIT_PROMPT, PROFILE, SCHEDULER
from promptpipe.errors import FlowNotFound
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.hold import place
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.state_ops import immediate_transition
from promptpipe.flow.tools.profile_save import merge_profile
from promptpipe.models.metrics import metric
from promptpipe.models.profile import PROFILE_TEXT_FIELDS
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import DataKey, StateData, SubState

logger = logging.getLogger(__name__)

CONTROLLER_HEADER = "FLOW CONTROLLER:"
CONTROLLER_UPDATE_HEADER = "FLOW CONTROLLER UPDATE:"
HOLDING_MESSAGE = (
    "Thanks for bearing with me! A member of our team will follow up with you personally soon to "
    "finish setting things up."
)
STATE_FIRST_PROMPT_OFFERED = "FIRST_PROMPT_OFFERED"
STATE_SCHEDULE_SET = "SCHEDULE_SET"
# What a tool's effect produces, read backwards: the tools a node needs for its states.
_STATE_TOOLS = {STATE_FIRST_PROMPT_OFFERED: HABIT_PROMPT.name, STATE_SCHEDULE_SET: SCHEDULER.name}
_PAUSED_TEXT = (
    "The participant is waiting for a member of the team. Do not ask for intake information; reply "
    "briefly and kindly that someone will follow up with them soon."
)


@dataclass(frozen=True)
class ToolEffect:
    """What one tool run tells the controller (the module's ``ToolRun``, reduced)."""

    name: str
    arguments: dict[str, Any]
    ok: bool


def outcome_of(runs: Sequence[ToolEffect]) -> tuple[list[str], list[str]]:
    """Raw facts (the non-empty profile fields saved) and states (tool effects) of a turn's runs."""
    facts: list[str] = []
    states: list[str] = []
    for run in runs:
        if not run.ok:
            continue
        if run.name == PROFILE.name:
            facts += [
                k for k, v in run.arguments.items() if k in PROFILE_TEXT_FIELDS and isinstance(v, str) and v.strip()
            ]
        elif run.name == HABIT_PROMPT.name:
            states.append(STATE_FIRST_PROMPT_OFFERED)
        elif run.name == SCHEDULER.name and run.arguments.get("action") == "create":
            states.append(STATE_SCHEDULE_SET)
    return list(dict.fromkeys(facts)), list(dict.fromkeys(states))


def observed(data: StateData) -> tuple[list[str], list[str], list[str], list[str]]:
    """What the participant's state says holds, and what it says no longer holds: facts (profile
    fields) and states (a schedule exists, a habit prompt was given). The state is the source of
    truth: a profile filled before the controller ran or edited by an operator counts, and a field
    that went missing (feedback sent them back to intake to repair it) is pursued again.
    Returns (facts, states, facts gone, states gone). A corrupt profile reads as a new one (its
    fields are pursued again, and the next save replaces it)."""
    profile = data.profile()
    present = [name for name in PROFILE_TEXT_FIELDS if str(getattr(profile, name, "") or "").strip()]
    absent = [name for name in PROFILE_TEXT_FIELDS if name not in present]
    states = [STATE_SCHEDULE_SET] if data.schedules() else []
    gone_states = [] if states else [STATE_SCHEDULE_SET]
    if data.get(DataKey.LAST_HABIT_PROMPT):
        states.append(STATE_FIRST_PROMPT_OFFERED)
    return present, states, absent, gone_states


def steer_intake(
    definition: FlowDefinition, runtime: RuntimeState, facts: Sequence[str], states: Sequence[str]
) -> tuple[Decision, RuntimeState, str]:
    """The controller's choice for an intake message, given what is known: (decision, the runtime
    with the facts and states recorded, the text for the model). Pure."""
    runtime, _ = record_outcome(definition, runtime, list(facts), list(states))
    decision = decide(definition, runtime)
    return decision, runtime, render(definition, decision, runtime)


def render(definition: FlowDefinition, decision: Decision, runtime: RuntimeState, *, update: bool = False) -> str:
    header = CONTROLLER_UPDATE_HEADER if update else CONTROLLER_HEADER
    lines = [header]
    if decision.status is Status.OK and decision.node_id:
        node = definition.node(decision.node_id)
        lines.append(f"- pursue: {decision.node_id} ({decision.mode.value if decision.mode else ''})")
        if node is not None and node.produces:
            lines.append(f"- fields: {', '.join(node.produces)}")
        lines.append(f"- instruction: {instruction(definition, decision, runtime)}")
        lines.append(
            "Pursue only this now (one question). If their message already gives it, save it and "
            "acknowledge; the controller will name the next step."
        )
    elif decision.status is Status.COMPLETE:
        lines.append("- pursue: nothing more: intake is complete. Confirm the set-up warmly.")
    else:
        lines.append(f"- pursue: nothing: {_PAUSED_TEXT}")
    return "\n".join(lines)


def tools_of(node: FlowNode) -> tuple[str, ...]:
    """The tools the flow names for the node. A node of a definition stored before nodes named
    them: the tools whose effects produce what it produces (``save_user_profile`` for facts,
    ``generate_habit_prompt`` for FIRST_PROMPT_OFFERED, ``scheduler`` for SCHEDULE_SET); a node
    producing neither gets every tool."""
    if node.tools is not None:
        return node.tools
    derived = ([PROFILE.name] if node.produces else []) + [
        tool for state, tool in _STATE_TOOLS.items() if state in node.produces_states
    ]
    return tuple(derived) or NODE_TOOLS


def turn_tools(definition: FlowDefinition, runtime: RuntimeState, decision: Decision) -> tuple[str, ...]:
    """The tools a turn pursuing ``decision`` may need: its node's, and those of the nodes the
    controller would pursue next if the answer lands, as long as they need no further answer
    (nodes producing only states: the anchor that completes the profile is followed by the first
    prompt and the schedule in the same turn). Pure."""
    node = definition.node(decision.node_id) if decision.node_id else None
    if node is None:
        return (PROFILE.name,) if decision.status is Status.PAUSED else ()
    tools = list(tools_of(node))
    if decision.status is not Status.OK:
        return tuple(tools)
    current, step = decision, node
    for _ in definition.nodes:
        runtime = begin_turn(definition, runtime, current)
        runtime, _ = record_outcome(definition, runtime, step.produces, step.produces_states)
        following = decide(definition, runtime)
        nxt = definition.node(following.node_id) if following.node_id else None
        if following.status is not Status.OK or nxt is None or nxt.id == step.id or following.mode is Mode.HANDOFF:
            break
        current, step = following, nxt
        tools += tools_of(step)
        if step.produces:  # the next question: its answer is another turn's
            break
    return tuple(dict.fromkeys(tools))


@dataclass
class IntakeSteering:
    """One intake turn's steering: built before the model runs, updated after each tool round,
    finished (recorded in the session) after the loop."""

    definition: FlowDefinition
    start: RuntimeState  # the runtime as loaded, with the observed state recorded
    decision: Decision
    text: str
    shown: Decision = field(init=False)

    def __post_init__(self) -> None:
        self.shown = self.decision

    def turn_context(self) -> dict[str, Any]:
        """The controller's part of the turn's ``TurnContext`` (``promptpipe.flow.intent_rules``)."""
        decision = self.decision
        return {
            "node": decision.node_id,
            "node_mode": decision.mode.value if decision.mode else None,
            "node_tools": turn_tools(self.definition, self.start, decision),
            "paused": decision.status in (Status.PAUSED, Status.DEADLOCK),
            "flow_complete": decision.status is Status.COMPLETE,
        }

    @classmethod
    def begin(cls, catalog: Any, data: StateData, flow_id: str) -> IntakeSteering | None:
        runtime = data.controller_state()
        try:
            if runtime is None:
                definition = catalog.latest(flow_id)
                runtime = RuntimeState.start(definition.id, definition.version)
            else:
                definition = catalog.get(runtime.flow_id, runtime.flow_version)  # pinned
        except FlowNotFound:
            logger.warning("intake flow not found; intake runs unsteered", extra={"flow_id": flow_id})
            return None
        facts, states, gone_facts, gone_states = observed(data)
        still = {definition.canonical(f) for f in facts}  # another alias may still give the fact
        gone = [f for f in gone_facts if definition.canonical(f) not in still]
        runtime = retract(definition, runtime, gone, gone_states)
        decision, runtime, text = steer_intake(definition, runtime, facts, states)
        return cls(definition=definition, start=runtime, decision=decision, text=text)

    def after_tools(self, runs: Sequence[ToolEffect]) -> str | None:
        """The controller's choice after this round's tool effects, when it changed."""
        facts, states = outcome_of(runs)
        decision, runtime, _ = steer_intake(self.definition, self.start, facts, states)
        if decision == self.shown:
            return None
        self.shown = decision
        return render(self.definition, decision, runtime, update=True)

    def finish(self, runs: Sequence[ToolEffect]) -> tuple[RuntimeState, Decision]:
        """The runtime to store: this turn's facts and states recorded against the previous turn's
        decision (the message they answered), then this turn's decision begun."""
        facts, states = outcome_of(runs)
        runtime, _ = record_outcome(self.definition, self.start, facts, states)
        decision = decide(self.definition, runtime)
        if decision.status is Status.PAUSED:
            return runtime, decision
        return begin_turn(self.definition, runtime, decision), decision


def _hold_detail(decision: Decision) -> str:
    return "deadlock" if decision.status is Status.DEADLOCK else f"hand-off at {decision.node_id}"


def is_new_hold(decision: Decision) -> bool:
    return decision.status is Status.DEADLOCK or (decision.status is Status.OK and decision.mode is Mode.HANDOFF)


def controller_view(data: StateData) -> dict[str, Any] | None:
    """The controller state for ``GET …/state``: readable, with ``needs_person``."""
    runtime = data.controller_state()
    if runtime is None:
        return None
    return {
        "flow": f"{runtime.flow_id}@{runtime.flow_version}",
        "needs_person": runtime.hold is not None,
        "hold": runtime.hold.model_dump(mode="json", by_alias=True) if runtime.hold else None,
        "turn": runtime.turn_index,
        "facts": runtime.facts,
        "states": runtime.states,
        "gates_satisfied": runtime.gates_satisfied,
        "attempts_by_node": runtime.attempts_by_node,
        "executions_by_node": runtime.executions_by_node,
        "completed_at_turn": runtime.completed_at_turn,
        "recent_turns": [e.model_dump(mode="json", by_alias=True) for e in runtime.turn_log[-5:]],
    }


def release_controller_hold(data: StateData, sub_state: SubState | None) -> None:
    """An operator's state override resolves a handoff or deadlock: the flow resumes, the node
    handed off with a fresh attempt budget."""
    runtime = data.controller_state()
    if sub_state is not None and runtime is not None and runtime.hold is not None:
        data.set_controller_state(release_hold(runtime))


def record_operator_facts(data: StateData, fields: dict[str, str], now: Any, catalog: Any) -> list[str]:
    """Profile fields an operator supplies (the facts the participant could not give): merged into
    the profile as ``save_user_profile`` would, and recorded by the controller at once, so the
    state view shows the gates they satisfy. Returns the fields that changed."""
    profile = data.profile()
    updated = merge_profile(profile, fields, now)
    if updated:
        data.set_profile(profile)
    runtime = data.controller_state()
    if runtime is None or catalog is None:
        return updated
    try:
        definition = catalog.get(runtime.flow_id, runtime.flow_version)
    except FlowNotFound:
        return updated  # the next turn observes the profile anyway
    facts = [name for name, value in fields.items() if name in PROFILE_TEXT_FIELDS and value.strip()]
    runtime, _ = record_outcome(definition, runtime, facts, [])
    data.set_controller_state(runtime)
    return updated


def finish_intake_steering(
    deps: FlowDeps, session: ConversationSession, steering: IntakeSteering, runs: Sequence[ToolEffect]
) -> tuple[str | None, dict[str, Any]]:
    """After the intake loop: store the controller state (one more key of the same write), move to
    FEEDBACK when the primary goal became satisfied this turn, put the participant on hold on a
    HANDOFF or DEADLOCK. Returns (a reply replacing the model's, or None; the audit record)."""

    def count(name: str, value: float = 1, **dimensions: str) -> None:
        session.metrics.append(metric(name, value, "Count", **dimensions))

    runtime, decision = steering.finish(runs)
    facts, states = outcome_of(runs)
    session.apply("controller_state", lambda op: op.data.set_controller_state(runtime))
    flow_label = f"{steering.definition.id}@{steering.definition.version}"
    reply: str | None = None
    if decision.status is Status.COMPLETE and steering.decision.status is not Status.COMPLETE:
        count("ControllerCompletions", flow=steering.definition.id)
        count("ControllerTurnsToComplete", runtime.turn_index, flow=steering.definition.id)
        data = session.data
        if data.sub_state is SubState.INTAKE and data.pending_transition() is None:
            session.apply("controller_goal_transition", immediate_transition(SubState.FEEDBACK))
    elif is_new_hold(decision):
        name = "ControllerDeadlocks" if decision.status is Status.DEADLOCK else "ControllerHandoffs"
        count(name, flow=steering.definition.id)
        count("NeedsPerson")  # alarmed in the stack
        logger.warning(
            "participant needs a person",
            extra={"flow": flow_label, "status": decision.status.value, "node": decision.node_id},
        )
        reply = HOLDING_MESSAGE
        # The one hold (docs/safety.md): this turn's holding message goes out, then nothing until released.
        session.apply("handoff_hold", place(HoldReason.HANDOFF, "flow controller", detail=_hold_detail(decision)))
    elif decision.status is Status.OK and decision.mode is not None:
        count("ControllerDecisions", flow=steering.definition.id, mode=decision.mode.value)
        if decision.mode is not Mode.EXECUTE and decision.node_id:  # the most-retried nodes
            count("ControllerRetries", flow=steering.definition.id, node=decision.node_id)
    for warning in decision.warnings:
        logger.warning("flow controller: %s", warning, extra={"flow": flow_label})
    audit = {
        "flow": flow_label,
        **decision.summary(),
        "facts_produced": [steering.definition.canonical(f) for f in facts],
        "states_produced": states,
    }
    return reply, audit
