"""The controller's decision algorithm and its bookkeeping (docs/controller.md).

Pure functions over (definition, runtime state): no I/O, no clock, no randomness, inputs never
mutated. A turn is ``decide`` → ``begin_turn`` (the decision is what the outgoing message pursues)
→ later ``record_outcome`` (the facts and states the participant's reply produced).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from promptpipe.controller.definition import (
    IMPORTANCE_SCORE,
    FlowDefinition,
    FlowNode,
    Importance,
    OnExhaust,
    PostGoalPolicy,
    VariantStrategy,
)
from promptpipe.controller.runtime import (
    LOOP_GUARD_TURNS,
    MAX_TURN_LOG,
    Hold,
    Mode,
    RuntimeState,
    Status,
    TurnLogEntry,
)
from promptpipe.lazy_model import LazyModel

HANDOFF_REQUESTED = "HANDOFF_REQUESTED"


class Decision(LazyModel):
    model_config = ConfigDict(frozen=True)

    status: Status
    node_id: str | None = None
    mode: Mode | None = None
    reason: str = ""
    skipped: tuple[str, ...] = ()
    silently_executed: tuple[str, ...] = ()
    blocking: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    forced: bool = False

    def summary(self) -> dict[str, object]:
        return {
            "status": self.status.value,
            "node": self.node_id,
            "mode": self.mode.value if self.mode else None,
            "reason": self.reason,
            **({"skipped": list(self.skipped)} if self.skipped else {}),
            **({"silently_executed": list(self.silently_executed)} if self.silently_executed else {}),
            **({"blocking": list(self.blocking)} if self.blocking else {}),
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }


# ---------------------------------------------------------------------------------------------
# Gates and eligibility
# ---------------------------------------------------------------------------------------------


def gate_satisfied(flow: FlowDefinition, name: str, facts: set[str], states: set[str]) -> bool:
    gate = flow.gates.get(name)
    if gate is None:
        return False
    by = gate.satisfied_by
    if any(f not in facts for f in by.metrics_all):
        return False
    if by.metrics_any and not any(f in facts for f in by.metrics_any):
        return False
    return all(s in states for s in by.states_all)


def evaluate_gates(flow: FlowDefinition, facts: set[str], states: set[str]) -> set[str]:
    return {name for name in flow.gates if gate_satisfied(flow, name, facts, states)}


def goal_satisfied(flow: FlowDefinition, gates: set[str], states: set[str]) -> bool:
    goal = flow.primary_goal
    if goal.type == "GATE":
        return goal.gate in gates
    return goal.state in states


def _ineligibility(node: FlowNode, rt: RuntimeState, gates: set[str], states: set[str]) -> str | None:
    """None when the node is eligible, else why not (the text of a deadlock's blocking reason)."""
    executions = rt.executions(node.id)
    cap = node.run_policy.max_executions
    if cap is not None and executions >= cap:
        return f"{node.id}: reached its maximum of {cap} execution(s)"
    missing_gates = [g for g in node.requires if g not in gates]
    if missing_gates:
        return f"{node.id}: requires gate(s) {', '.join(missing_gates)}"
    missing_states = [s for s in node.requires_states if s not in states]
    if missing_states:
        return f"{node.id}: requires state(s) {', '.join(missing_states)}"
    if node.satisfies.gates and all(g in gates for g in node.satisfies.gates) and executions > 0:
        return f"{node.id}: done (its gates are satisfied)"
    if node.id in rt.skipped_nodes:
        return f"{node.id}: skipped after exhausting its attempts"
    return None


def objective_satisfied(
    flow: FlowDefinition, node: FlowNode, facts: set[str], gates: set[str], states: set[str]
) -> bool:
    """A node's objective: its gates if it names any, else the states and facts it produces."""
    if node.satisfies.gates:
        return all(g in gates for g in node.satisfies.gates)
    wanted_facts = [flow.canonical(f) for f in node.produces]
    if not wanted_facts and not node.produces_states:
        return False
    return all(f in facts for f in wanted_facts) and all(s in states for s in node.produces_states)


def determine_mode(flow: FlowDefinition, node: FlowNode, rt: RuntimeState, gates: set[str]) -> Mode:
    attempts = rt.attempts(node.id)
    if attempts == 0:
        return Mode.EXECUTE
    if objective_satisfied(flow, node, set(rt.facts), gates, set(rt.states)):
        return Mode.EXECUTE
    policy = flow.retry_policy(node)
    if attempts >= policy.max_attempts:
        match policy.on_exhaust:
            case OnExhaust.CLARIFY:
                # One more clarifying attempt; after it, a person (docs/controller.md).
                return Mode.RETRY if attempts == policy.max_attempts else Mode.HANDOFF
            case OnExhaust.BROADEN:
                return Mode.BROADEN if node.id not in rt.broadened_nodes else Mode.HANDOFF
            case OnExhaust.HANDOFF:
                return Mode.HANDOFF
            case OnExhaust.SKIP:
                return Mode.SKIP
    return Mode.RETRY


def _cooling(flow: FlowDefinition, node: FlowNode, rt: RuntimeState) -> bool:
    """A node attempted at turn t waits ``cooldownTurns`` turns before it is retried."""
    cooldown = flow.retry_policy(node).cooldown_turns
    last = rt.last_attempt_turn_by_node.get(node.id)
    if not cooldown or last is None or rt.attempts(node.id) == 0:
        return False
    return (rt.turn_index + 1) - last <= cooldown


# ---------------------------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------------------------


def decide(flow: FlowDefinition, rt: RuntimeState) -> Decision:
    if rt.hold is not None:
        return Decision(status=Status.PAUSED, node_id=rt.hold.node_id, reason=f"waiting for a person: {rt.hold.reason}")
    facts, states = set(rt.facts), set(rt.states)
    gates = evaluate_gates(flow, facts, states)
    goal = goal_satisfied(flow, gates, states)

    eligible: list[tuple[int, FlowNode]] = []
    blocking: list[str] = []
    for index, node in enumerate(flow.nodes):
        why = _ineligibility(node, rt, gates, states)
        if why is None:
            eligible.append((index, node))
        else:
            blocking.append(why)

    if goal:
        if flow.post_goal_policy is PostGoalPolicy.STOP:
            return Decision(status=Status.COMPLETE, reason="primary goal satisfied")
        eligible = [(i, n) for i, n in eligible if n.importance is Importance.HIGH]
        if not eligible:
            return Decision(status=Status.COMPLETE, reason="primary goal satisfied; no high-importance node left")

    if not eligible:
        return _deadlock(blocking, ())

    # Priority: importance, then fewer attempts, then definition order (determinism). A node in
    # its cooldown yields to any node that is not; if every candidate is cooling, the best runs.
    eligible.sort(key=lambda item: (-IMPORTANCE_SCORE[item[1].importance], rt.attempts(item[1].id), item[0]))
    ready = [n for _, n in eligible if not _cooling(flow, n, rt)]
    cooling = [n for _, n in eligible if _cooling(flow, n, rt)]
    skipped: list[str] = []
    silent: list[str] = []
    for node in ready + cooling:
        mode = determine_mode(flow, node, rt, gates)
        if mode is Mode.SKIP:
            skipped.append(node.id)
            continue
        if (
            flow.execute_satisfied_silently
            and mode is Mode.EXECUTE
            and rt.executions(node.id) == 0
            and objective_satisfied(flow, node, facts, gates, states)
        ):
            silent.append(node.id)
            continue
        decision = _guarded(flow, node, mode, rt, gates=gates, skipped=tuple(skipped), cooling=node in cooling)
        return decision.model_copy(update={"silently_executed": tuple(silent)}) if silent else decision
    deadlock = _deadlock(blocking + [f"{n}: skipped after exhausting its attempts" for n in skipped], tuple(skipped))
    return deadlock.model_copy(update={"silently_executed": tuple(silent)}) if silent else deadlock


def _deadlock(blocking: list[str], skipped: tuple[str, ...]) -> Decision:
    return Decision(
        status=Status.DEADLOCK,
        reason="no eligible node and the primary goal is not satisfied; a person should look",
        blocking=tuple(blocking),
        skipped=skipped,
    )


def _guarded(
    flow: FlowDefinition,
    node: FlowNode,
    mode: Mode,
    rt: RuntimeState,
    *,
    gates: set[str],
    skipped: tuple[str, ...],
    cooling: bool,
) -> Decision:
    """The loop guard: the same node selected ``LOOP_GUARD_TURNS`` turns in a row is forced to
    BROADEN (once) and then HANDOFF, with a warning."""
    reason = _reason(flow, node, mode, rt, gates, cooling=cooling)
    consecutive = rt.consecutive_selections + 1 if rt.last_node == node.id else 1
    broadened = node.id in rt.broadened_nodes
    if consecutive >= LOOP_GUARD_TURNS and (mode not in (Mode.BROADEN, Mode.HANDOFF) or broadened):
        forced = Mode.HANDOFF if broadened or mode is Mode.BROADEN else Mode.BROADEN
        if mode is not forced:
            warning = f"loop guard: {node.id} selected {consecutive} turns in a row; forcing {forced.value}"
            return Decision(
                status=Status.OK,
                node_id=node.id,
                mode=forced,
                reason=f"{reason}; {warning}",
                skipped=skipped,
                warnings=(warning,),
                forced=True,
            )
    return Decision(status=Status.OK, node_id=node.id, mode=mode, reason=reason, skipped=skipped)


def _reason(
    flow: FlowDefinition, node: FlowNode, mode: Mode, rt: RuntimeState, gates: set[str], *, cooling: bool
) -> str:
    attempts = rt.attempts(node.id)
    policy = flow.retry_policy(node)
    parts = [f"{node.importance.value} importance", f"{attempts} attempt(s) so far"]
    if mode is Mode.EXECUTE:
        parts.append("first attempt" if attempts == 0 else "objective satisfied")
    elif mode is Mode.RETRY:
        parts.append(
            f"objective not met, attempts < {policy.max_attempts}"
            if attempts < policy.max_attempts
            else "one clarifying attempt after exhausting"
        )
    else:
        parts.append(f"attempts exhausted (max {policy.max_attempts}, onExhaust {policy.on_exhaust.value})")
    if cooling:
        parts.append("every candidate is in cooldown")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# Bookkeeping
# ---------------------------------------------------------------------------------------------


def _log(rt: RuntimeState, entry: TurnLogEntry) -> list[TurnLogEntry]:
    return [*rt.turn_log, entry][-MAX_TURN_LOG:]


def begin_turn(flow: FlowDefinition, rt: RuntimeState, decision: Decision) -> RuntimeState:
    """Record that this turn's outgoing message pursues ``decision``: attempts (every mode),
    executions (EXECUTE only), the consecutive-selection counter, skips, holds and the turn log."""
    turn = rt.turn_index + 1
    update: dict[str, object] = {"turn_index": turn}
    entry = TurnLogEntry(
        turn_index=turn, node_id=decision.node_id, mode=decision.mode, status=decision.status, reason=decision.reason
    )
    if decision.status is Status.OK and decision.node_id and decision.mode:
        node_id = decision.node_id
        update["attempts_by_node"] = {**rt.attempts_by_node, node_id: rt.attempts(node_id) + 1}
        if decision.mode is Mode.EXECUTE:
            update["executions_by_node"] = {**rt.executions_by_node, node_id: rt.executions(node_id) + 1}
        update["last_attempt_turn_by_node"] = {**rt.last_attempt_turn_by_node, node_id: turn}
        update["consecutive_selections"] = rt.consecutive_selections + 1 if rt.last_node == node_id else 1
        update["last_node"] = node_id
        if decision.mode is Mode.BROADEN:
            update["broadened_nodes"] = sorted({*rt.broadened_nodes, node_id})
        if decision.mode is Mode.HANDOFF:
            update["hold"] = Hold(kind=Mode.HANDOFF, node_id=node_id, reason=decision.reason, turn_index=turn)
            update["states"] = sorted({*rt.states, HANDOFF_REQUESTED})
    elif decision.status is Status.DEADLOCK:
        blocking = "; ".join(decision.blocking) or decision.reason
        update["hold"] = Hold(kind=Status.DEADLOCK, reason=blocking, turn_index=turn)
        update["consecutive_selections"], update["last_node"] = 0, None
    elif decision.status is Status.COMPLETE and rt.completed_at_turn is None:
        update["completed_at_turn"] = turn
    if decision.skipped:
        update["skipped_nodes"] = sorted({*rt.skipped_nodes, *decision.skipped})
    if decision.silently_executed:
        executions = {**rt.executions_by_node}
        for executed in (*decision.silently_executed, *([decision.node_id] if decision.mode is Mode.EXECUTE else [])):
            if executed:
                executions[executed] = executions.get(executed, 0) + 1
        update["executions_by_node"] = executions
    update["turn_log"] = _log(rt, entry)
    return rt.model_copy(update=update)


class Outcome(LazyModel):
    facts_produced: tuple[str, ...] = Field(default=())
    states_produced: tuple[str, ...] = Field(default=())
    new_gates: tuple[str, ...] = Field(default=())


def record_outcome(
    flow: FlowDefinition, rt: RuntimeState, raw_facts: list[str] | tuple[str, ...], states: list[str] | tuple[str, ...]
) -> tuple[RuntimeState, Outcome]:
    """Add the facts (through ``factAliases``) and states a reply produced, re-evaluate the gates,
    and attribute them to the latest turn-log entry (the decision the reply answered). Facts
    count in every mode, RETRY included (docs/controller.md, "RETRY turns and facts")."""
    canonical = tuple(dict.fromkeys(flow.canonical(f) for f in raw_facts))
    produced_states = tuple(dict.fromkeys(states))
    facts = {*rt.facts, *canonical}
    all_states = {*rt.states, *produced_states}
    gates = evaluate_gates(flow, facts, all_states)
    new_gates = tuple(sorted(gates - set(rt.gates_satisfied)))
    log = list(rt.turn_log)
    if log and (canonical or produced_states):
        last = log[-1]
        log[-1] = last.model_copy(
            update={
                "facts_produced": list(dict.fromkeys([*last.facts_produced, *canonical])),
                "states_produced": list(dict.fromkeys([*last.states_produced, *produced_states])),
            }
        )
    new = rt.model_copy(
        update={"facts": sorted(facts), "states": sorted(all_states), "gates_satisfied": sorted(gates), "turn_log": log}
    )
    return new, Outcome(facts_produced=canonical, states_produced=produced_states, new_gates=new_gates)


def retract(
    flow: FlowDefinition, rt: RuntimeState, raw_facts: list[str] | tuple[str, ...], states: list[str] | tuple[str, ...]
) -> RuntimeState:
    """Facts and states that no longer hold (the participant's data lost them): removed, gates
    re-evaluated. Attempts and executions are kept (they never reset)."""
    gone_facts = {flow.canonical(f) for f in raw_facts}
    facts = set(rt.facts) - gone_facts
    kept_states = set(rt.states) - set(states)
    if facts == set(rt.facts) and kept_states == set(rt.states):
        return rt
    gates = evaluate_gates(flow, facts, kept_states)
    return rt.model_copy(
        update={"facts": sorted(facts), "states": sorted(kept_states), "gates_satisfied": sorted(gates)}
    )


def release_hold(rt: RuntimeState) -> RuntimeState:
    """An operator resolved the handoff or deadlock: the flow resumes. The node that was handed
    off (and, after a deadlock, every node skipped for exhausting its attempts) gets a fresh
    attempt budget, BROADEN included; the loop counter restarts. Executions are kept."""
    if rt.hold is None:
        return rt
    fresh = {rt.hold.node_id} if rt.hold.node_id else set()
    if rt.hold.kind is Status.DEADLOCK:
        fresh |= set(rt.skipped_nodes)
    return rt.model_copy(
        update={
            "hold": None,
            "states": sorted(set(rt.states) - {HANDOFF_REQUESTED}),
            "consecutive_selections": 0,
            "last_node": None,
            "attempts_by_node": {k: v for k, v in rt.attempts_by_node.items() if k not in fresh},
            "last_attempt_turn_by_node": {k: v for k, v in rt.last_attempt_turn_by_node.items() if k not in fresh},
            "broadened_nodes": [n for n in rt.broadened_nodes if n not in fresh],
            "skipped_nodes": [n for n in rt.skipped_nodes if n not in fresh],
        }
    )


def restart_attempts(rt: RuntimeState) -> RuntimeState:
    """The participant re-enters intake (a new habit): every node gets a fresh attempt budget,
    BROADEN and the skipped nodes included, and the loop counter restarts; what they told us
    (facts, states) and an operator's hold are kept. Without it a returning participant starts
    with the old attempts and is handed to a person within a message or two."""
    return rt.model_copy(
        update={
            "consecutive_selections": 0,
            "last_node": None,
            "attempts_by_node": {},
            "last_attempt_turn_by_node": {},
            "broadened_nodes": [],
            "skipped_nodes": [],
        }
    )


# ---------------------------------------------------------------------------------------------
# What the model is told
# ---------------------------------------------------------------------------------------------

_GENERIC = {
    Mode.EXECUTE: "Pursue this objective now: {objective}",
    Mode.RETRY: "They have not given this yet. Ask again, differently and briefly: {objective}",
    Mode.BROADEN: "Several tries have not worked. Make it easy: offer two or three concrete examples or a "
    "sensible default they can accept with one word: {objective}",
    Mode.HANDOFF: "Do not ask for anything more. Tell them kindly that a member of the team will follow up "
    "with them personally soon.",
}


def instruction(flow: FlowDefinition, decision: Decision, rt: RuntimeState) -> str:
    """The text for the model: the node's objective and the mode's prompt variant."""
    if decision.status is not Status.OK or decision.node_id is None or decision.mode is None:
        return ""
    node = flow.node(decision.node_id)
    if node is None:
        return ""
    objective = node.objective or node.id
    prompts = node.prompts
    mode = decision.mode
    if mode is Mode.EXECUTE:
        return prompts.execute or _GENERIC[mode].format(objective=objective)
    if mode is Mode.BROADEN:
        return prompts.broaden or _GENERIC[mode].format(objective=objective)
    if mode is Mode.HANDOFF:
        return prompts.handoff or _GENERIC[mode]
    retry_index = max(rt.attempts(node.id) - 1, 0)  # the first retry is index 0
    strategy = flow.retry_policy(node).prompt_variant_strategy
    if not prompts.retry or strategy is VariantStrategy.REPHRASE:
        return _GENERIC[Mode.RETRY].format(objective=objective)
    if strategy is VariantStrategy.ROTATE:
        return prompts.retry[retry_index % len(prompts.retry)]
    return prompts.retry[min(retry_index, len(prompts.retry) - 1)]
