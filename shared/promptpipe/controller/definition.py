"""Flow definitions: the declarative, edge-less description of a conversation (docs/controller.md).

A definition names *what* the conversation must achieve (gates over facts and states, a primary
goal) and the nodes that can contribute; the controller (``engine``) decides the order at run
time. Field names follow the stored JSON (camelCase) so a definition file reads as documented.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

# The tools a node may name: the intake module's tool set (a unit test keeps the two equal).
NODE_TOOLS: tuple[str, ...] = ("save_user_profile", "generate_habit_prompt", "scheduler", "transition_state")


class Importance(StrEnum):
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"


IMPORTANCE_SCORE = {Importance.HIGH: 3, Importance.NORMAL: 2, Importance.LOW: 1}


class OnExhaust(StrEnum):
    CLARIFY = "CLARIFY"
    BROADEN = "BROADEN"
    HANDOFF = "HANDOFF"
    SKIP = "SKIP"


class VariantStrategy(StrEnum):
    ROTATE = "ROTATE"
    ESCALATE = "ESCALATE"
    REPHRASE = "REPHRASE"


class PostGoalPolicy(StrEnum):
    STOP = "STOP"  # the flow is COMPLETE as soon as the primary goal holds
    CONTINUE_HIGH = "CONTINUE_HIGH"  # eligible high-importance nodes still run after the goal


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class RetryPolicy(_Model):
    max_attempts: int = Field(3, alias="maxAttempts", ge=1, le=100)
    on_exhaust: OnExhaust = Field(OnExhaust.CLARIFY, alias="onExhaust")
    cooldown_turns: int = Field(0, alias="cooldownTurns", ge=0, le=100)
    prompt_variant_strategy: VariantStrategy = Field(VariantStrategy.ESCALATE, alias="promptVariantStrategy")


class RunPolicy(_Model):
    max_executions: int | None = Field(None, alias="maxExecutions", ge=1)


class Satisfies(_Model):
    gates: tuple[str, ...] = ()


class Prompts(_Model):
    """What the model is told for each mode. ``retry`` variants are chosen by the retry policy's
    ``promptVariantStrategy``; an absent text falls back to a generic instruction."""

    execute: str = ""
    retry: tuple[str, ...] = ()
    broaden: str = ""
    handoff: str = ""


class FlowNode(_Model):
    id: str = Field(min_length=1, max_length=100)
    importance: Importance = Importance.NORMAL
    objective: str = ""
    requires: tuple[str, ...] = ()
    requires_states: tuple[str, ...] = Field((), alias="requiresStates")
    produces: tuple[str, ...] = ()
    produces_states: tuple[str, ...] = Field((), alias="producesStates")
    satisfies: Satisfies = Satisfies()
    run_policy: RunPolicy = Field(RunPolicy(), alias="runPolicy")
    retry_policy: RetryPolicy | None = Field(None, alias="retryPolicy")
    prompts: Prompts = Prompts()
    # The tools a turn pursuing this node may need (names from NODE_TOOLS). Absent (a definition
    # stored before the field existed): derived from what the node produces (docs/controller.md).
    tools: tuple[str, ...] | None = None


class SatisfiedBy(_Model):
    metrics_all: tuple[str, ...] = Field((), alias="metricsAll")
    metrics_any: tuple[str, ...] = Field((), alias="metricsAny")
    states_all: tuple[str, ...] = Field((), alias="statesAll")


class Gate(_Model):
    satisfied_by: SatisfiedBy = Field(alias="satisfiedBy")
    description: str = ""


class PrimaryGoal(_Model):
    type: Literal["GATE", "STATE"]
    gate: str | None = None
    state: str | None = None

    @model_validator(mode="after")
    def _target(self) -> PrimaryGoal:
        if self.type == "GATE" and not self.gate:
            raise ValueError("a GATE goal needs 'gate'")
        if self.type == "STATE" and not self.state:
            raise ValueError("a STATE goal needs 'state'")
        return self


class Defaults(_Model):
    retry_policy: RetryPolicy = Field(RetryPolicy(), alias="retryPolicy")


class FlowDefinition(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    version: int = Field(1, ge=1)
    description: str = ""
    primary_goal: PrimaryGoal = Field(alias="primaryGoal")
    nodes: tuple[FlowNode, ...] = Field(min_length=1)
    gates: dict[str, Gate] = Field(default_factory=dict)
    fact_aliases: dict[str, str] = Field(default_factory=dict, alias="factAliases")
    defaults: Defaults = Defaults()
    post_goal_policy: PostGoalPolicy = Field(PostGoalPolicy.STOP, alias="postGoalPolicy")
    # A node whose objective already holds when it would first EXECUTE (the participant said it
    # unasked) is executed silently and the controller moves on (docs/controller.md).
    execute_satisfied_silently: bool = Field(False, alias="executeSatisfiedSilently")

    def node(self, node_id: str) -> FlowNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def retry_policy(self, node: FlowNode) -> RetryPolicy:
        return node.retry_policy or self.defaults.retry_policy

    def canonical(self, fact: str) -> str:
        """The fact's canonical name through ``factAliases`` (followed transitively; a cycle,
        which validation rejects, stops where it would repeat)."""
        seen = {fact}
        while fact in self.fact_aliases:
            nxt = self.fact_aliases[fact]
            if nxt in seen:
                break
            seen.add(nxt)
            fact = nxt
        return fact

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=False)


# ---------------------------------------------------------------------------------------------
# Validation: every problem at once, each with its path
# ---------------------------------------------------------------------------------------------


class Problem(BaseModel):
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class DefinitionInvalid(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


def _duplicate_keys(pairs: list[tuple[str, Any]], found: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            found.append(key)
        result[key] = value
    return result


def parse_text(text: str | bytes) -> tuple[FlowDefinition | None, list[Problem]]:
    """Parse a JSON document and validate it. Duplicate object keys (a gate defined twice) are
    problems too, which ``json.loads`` alone would silently resolve to the last one."""
    duplicates: list[str] = []
    try:
        raw = json.loads(text, object_pairs_hook=lambda pairs: _duplicate_keys(pairs, duplicates))
    except ValueError as exc:
        return None, [Problem(path="$", message=f"not valid JSON: {exc}")]
    definition, problems = validate(raw)
    extra = [Problem(path="$", message=f"duplicate key {key!r}") for key in sorted(set(duplicates))]
    if extra:
        return None, extra + problems
    return definition, problems


def validate(raw: Any) -> tuple[FlowDefinition | None, list[Problem]]:
    """Schema first (pydantic reports every field error at once); when the shape is valid, the
    semantic checks below all run and report together. Returns the definition only when valid."""
    try:
        definition = FlowDefinition.model_validate(raw)
    except ValidationError as exc:
        return None, [Problem(path=_loc(err.get("loc", ())), message=err.get("msg", "invalid")) for err in exc.errors()]
    problems = semantic_problems(definition)
    return (definition if not problems else None), problems


def parse_definition(raw: Any) -> FlowDefinition:
    definition, problems = validate(raw)
    if definition is None:
        raise DefinitionInvalid(problems)
    return definition


def _loc(loc: Any) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def semantic_problems(flow: FlowDefinition) -> list[Problem]:
    problems: list[Problem] = []
    node_ids = [n.id for n in flow.nodes]
    for index, node_id in enumerate(node_ids):
        if node_ids.index(node_id) != index:
            problems.append(Problem(path=f"$.nodes[{index}].id", message=f"duplicate node id {node_id!r}"))
    problems += _alias_cycles(flow)
    problems += _gate_problems(flow)
    problems += _node_reference_problems(flow)
    problems += _node_tool_problems(flow)
    problems += _reachability_problems(flow)
    return problems


def _gate_problems(flow: FlowDefinition) -> list[Problem]:
    problems: list[Problem] = []
    produced_states = {s for n in flow.nodes for s in n.produces_states}
    produced_facts = {flow.canonical(f) for n in flow.nodes for f in n.produces}
    for name, gate in flow.gates.items():
        base = f"$.gates.{name}.satisfiedBy"
        by = gate.satisfied_by
        if not (by.metrics_all or by.metrics_any or by.states_all):
            problems.append(Problem(path=base, message="empty: the gate would always be satisfied"))
        for field, facts in (("metricsAll", by.metrics_all), ("metricsAny", by.metrics_any)):
            problems += [
                Problem(path=f"{base}.{field}[{i}]", message=f"fact {fact!r} is produced by no node")
                for i, fact in enumerate(facts)
                if fact not in produced_facts
            ]
        problems += [
            Problem(path=f"{base}.statesAll[{i}]", message=f"state {state!r} is produced by no node")
            for i, state in enumerate(by.states_all)
            if state not in produced_states
        ]
    return problems


def _node_reference_problems(flow: FlowDefinition) -> list[Problem]:
    problems: list[Problem] = []
    produced_states = {s for n in flow.nodes for s in n.produces_states}
    for index, node in enumerate(flow.nodes):
        base = f"$.nodes[{index}]"
        for field, gates in (("requires", node.requires), ("satisfies.gates", node.satisfies.gates)):
            problems += [
                Problem(path=f"{base}.{field}[{i}]", message=f"undefined gate {gate!r}")
                for i, gate in enumerate(gates)
                if gate not in flow.gates
            ]
        problems += [
            Problem(path=f"{base}.requiresStates[{i}]", message=f"state {state!r} is produced by no node")
            for i, state in enumerate(node.requires_states)
            if state not in produced_states
        ]
    goal = flow.primary_goal
    if goal.type == "GATE" and goal.gate not in flow.gates:
        problems.append(Problem(path="$.primaryGoal.gate", message=f"undefined gate {goal.gate!r}"))
    if goal.type == "STATE" and goal.state not in produced_states:
        problems.append(Problem(path="$.primaryGoal.state", message=f"state {goal.state!r} is produced by no node"))
    return problems


def _node_tool_problems(flow: FlowDefinition) -> list[Problem]:
    known = ", ".join(NODE_TOOLS)
    return [
        Problem(path=f"$.nodes[{index}].tools[{i}]", message=f"unknown tool {tool!r} (known: {known})")
        for index, node in enumerate(flow.nodes)
        for i, tool in enumerate(node.tools or ())
        if tool not in NODE_TOOLS
    ]


def _reachability_problems(flow: FlowDefinition) -> list[Problem]:
    problems: list[Problem] = []
    reachable, facts, states = reachability(flow)
    for index, node in enumerate(flow.nodes):
        if node.id not in reachable:
            problems.append(
                Problem(
                    path=f"$.nodes[{index}]", message=f"node {node.id!r} is unreachable: its requirements never hold"
                )
            )
    goal = flow.primary_goal
    gates = _gates_satisfiable(flow, facts, states)
    goal_ok = (goal.type == "GATE" and goal.gate in gates) or (goal.type == "STATE" and goal.state in states)
    if not goal_ok:
        problems.append(Problem(path="$.primaryGoal", message="no sequence of nodes can satisfy the primary goal"))
    return problems


def _alias_cycles(flow: FlowDefinition) -> list[Problem]:
    problems: list[Problem] = []
    reported: set[frozenset[str]] = set()
    for start in flow.fact_aliases:
        chain = [start]
        current = start
        while current in flow.fact_aliases:
            current = flow.fact_aliases[current]
            if current in chain:
                cycle = chain[chain.index(current) :]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    problems.append(
                        Problem(
                            path=f"$.factAliases.{cycle[0]}",
                            message="alias cycle: " + " → ".join([*cycle, current]),
                        )
                    )
                break
            chain.append(current)
    return problems


def _gates_satisfiable(flow: FlowDefinition, facts: set[str], states: set[str]) -> set[str]:
    result = set()
    for name, gate in flow.gates.items():
        by = gate.satisfied_by
        if (
            all(f in facts for f in by.metrics_all)
            and (not by.metrics_any or any(f in facts for f in by.metrics_any))
            and all(s in states for s in by.states_all)
        ):
            result.add(name)
    return result


def reachability(flow: FlowDefinition) -> tuple[set[str], set[str], set[str]]:
    """An optimistic fixpoint: a node is reachable when its required gates and states can hold
    given what reachable nodes can produce. Returns (reachable node ids, facts, states)."""
    reachable: set[str] = set()
    facts: set[str] = set()
    states: set[str] = set()
    changed = True
    while changed:
        changed = False
        gates = _gates_satisfiable(flow, facts, states)
        for node in flow.nodes:
            if node.id in reachable:
                continue
            if all(g in gates for g in node.requires) and all(s in states for s in node.requires_states):
                reachable.add(node.id)
                facts |= {flow.canonical(f) for f in node.produces}
                states |= set(node.produces_states)
                changed = True
    return reachable, facts, states
