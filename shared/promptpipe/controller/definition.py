"""Flow definitions: the declarative, edge-less description of a conversation (docs/controller.md).

A definition names *what* the conversation must achieve (gates over facts and states, a primary
goal) and the nodes that can contribute; the controller (``engine``) decides the order at run
time. Field names follow the stored JSON (camelCase) so a definition file reads as documented.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from promptpipe.controller.problems import DefinitionInvalid, Problem
from promptpipe.controller.tool_table import names_for
from promptpipe.lazy_model import LazyModel
from promptpipe.rules.http_body import MalformedBody, decode_utf8, read_json_text

# The tools a node may name: the intake module's tool set (``controller.tool_table``).
NODE_TOOLS: tuple[str, ...] = names_for("intake")


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


class _Model(LazyModel):
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


@dataclass
class AliasResolution:
    """Every aliased fact's canonical name, the alias cycles (each from where it was entered), and
    how many alias edges were followed to find them (``steps``: at most one per alias)."""

    canonical: dict[str, str] = dataclasses.field(default_factory=dict)
    cycles: list[list[str]] = dataclasses.field(default_factory=list)
    steps: int = 0


def resolve_aliases(aliases: dict[str, str]) -> AliasResolution:
    """``factAliases`` resolved in one pass, linear in their number: each alias's chain is walked
    until a name with no alias (its canonical name), a name already resolved (whose answer it
    shares) or a name on the walk itself (a cycle). A name on a cycle, or on the way into one,
    resolves where following it would first repeat: the cycle member before the entry point (what
    following the chain one name at a time gives)."""
    result = AliasResolution()
    canonical = result.canonical
    for start in aliases:
        if start in canonical:
            continue
        path: list[str] = []
        on_path: dict[str, int] = {}
        current = start
        while current in aliases and current not in canonical and current not in on_path:
            on_path[current] = len(path)
            path.append(current)
            current = aliases[current]
            result.steps += 1
        if current in on_path:  # a new cycle, entered at ``current``
            cycle = path[on_path[current] :]
            result.cycles.append(cycle)
            for index, name in enumerate(cycle):
                canonical[name] = cycle[index - 1]
            answer = cycle[-1]
            path = path[: on_path[current]]
        else:
            answer = canonical.get(current, current)
        for name in path:
            canonical[name] = answer
    return result


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

    # Derived once from ``fact_aliases`` when the definition is built (never a field: not stored).
    _aliases: AliasResolution = PrivateAttr()
    _nodes_by_id: dict[str, FlowNode] = PrivateAttr()

    @model_validator(mode="after")
    def _derive(self) -> FlowDefinition:
        self._aliases = resolve_aliases(self.fact_aliases)
        self._nodes_by_id = {}
        for node in self.nodes:
            self._nodes_by_id.setdefault(node.id, node)
        return self

    def node(self, node_id: str) -> FlowNode | None:
        return self._nodes_by_id.get(node_id)

    def retry_policy(self, node: FlowNode) -> RetryPolicy:
        return node.retry_policy or self.defaults.retry_policy

    def canonical(self, fact: str) -> str:
        """The fact's canonical name through ``factAliases`` (followed transitively; a cycle,
        which validation rejects, stops where it would repeat)."""
        return self._aliases.canonical.get(fact, fact)

    def alias_cycles(self) -> list[list[str]]:
        return self._aliases.cycles

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=False)


# ---------------------------------------------------------------------------------------------
# Validation: every problem at once, each with its path
# ---------------------------------------------------------------------------------------------


def parse_text(text: str | bytes) -> tuple[FlowDefinition | None, list[Problem]]:
    """Parse a JSON document and validate it, with the API's JSON reader (``http_body``): text
    nested deeper than the API takes, or with an integer longer than it takes, is one problem at
    ``$``; duplicate object keys (a gate defined twice) are problems too, which ``json.loads``
    alone would silently resolve to the last one."""
    try:
        raw, duplicates = read_json_text(text if isinstance(text, str) else decode_utf8(text))
    except MalformedBody as exc:
        return None, [Problem(path="$", message=str(exc))]
    definition, problems = validate(raw)
    extra = [Problem(path="$", message=f"duplicate key {key!r}") for key in duplicates]
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
    seen: set[str] = set()
    for index, node in enumerate(flow.nodes):
        if node.id in seen:
            problems.append(Problem(path=f"$.nodes[{index}].id", message=f"duplicate node id {node.id!r}"))
        seen.add(node.id)
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
    return [
        Problem(path=f"$.factAliases.{cycle[0]}", message="alias cycle: " + " → ".join([*cycle, cycle[0]]))
        for cycle in flow.alias_cycles()
    ]


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
    return Reachability(flow).run()


class Reachability:
    """The fixpoint by propagation, linear in the definition's size: every gate and node counts
    what it still waits for, and each fact or state, when first produced, updates only the gates
    and nodes that name it (rather than re-checking every node until nothing changes). ``steps``
    counts those updates: at most one per mention of a name in the definition."""

    def __init__(self, flow: FlowDefinition) -> None:
        self.flow = flow
        self.steps = 0
        self.reachable: set[str] = set()
        self.facts: set[str] = set()
        self.states: set[str] = set()
        self._gate_waits: dict[str, int] = {}  # metricsAll + statesAll not yet held, +1 for metricsAny
        self._gate_any: dict[str, bool] = {}
        self._node_waits: list[int] = []
        self._fact_watchers: dict[str, list[tuple[str, bool]]] = {}  # fact -> (gate, in metricsAny)
        self._state_gates: dict[str, list[str]] = {}
        self._state_nodes: dict[str, list[int]] = {}
        self._gate_nodes: dict[str, list[int]] = {}
        self._ready: list[int] = []

    def run(self) -> tuple[set[str], set[str], set[str]]:
        open_gates: list[str] = []
        for name, gate in self.flow.gates.items():
            by = gate.satisfied_by
            for fact in set(by.metrics_all):
                self._fact_watchers.setdefault(fact, []).append((name, False))
            for fact in set(by.metrics_any):
                self._fact_watchers.setdefault(fact, []).append((name, True))
            for state in set(by.states_all):
                self._state_gates.setdefault(state, []).append(name)
            self._gate_any[name] = bool(by.metrics_any)
            self._gate_waits[name] = len(set(by.metrics_all)) + len(set(by.states_all)) + bool(by.metrics_any)
            if self._gate_waits[name] == 0:
                open_gates.append(name)
        for index, node in enumerate(self.flow.nodes):
            for required in set(node.requires):
                self._gate_nodes.setdefault(required, []).append(index)
            for state in set(node.requires_states):
                self._state_nodes.setdefault(state, []).append(index)
            self._node_waits.append(len(set(node.requires)) + len(set(node.requires_states)))
            if self._node_waits[index] == 0:
                self._reach(index)
        for name in open_gates:
            self._open_gate(name)
        while self._ready:
            node = self.flow.nodes[self._ready.pop()]
            for fact in node.produces:
                self._produce_fact(self.flow.canonical(fact))
            for state in node.produces_states:
                self._produce_state(state)
        return self.reachable, self.facts, self.states

    def _produce_fact(self, fact: str) -> None:
        if fact in self.facts:
            return
        self.facts.add(fact)
        for gate, in_any in self._fact_watchers.get(fact, ()):
            self.steps += 1
            if in_any:
                if not self._gate_any[gate]:
                    continue  # another metricsAny fact came first
                self._gate_any[gate] = False
            self._wait_less_for_gate(gate)

    def _produce_state(self, state: str) -> None:
        if state in self.states:
            return
        self.states.add(state)
        for gate in self._state_gates.get(state, ()):
            self.steps += 1
            self._wait_less_for_gate(gate)
        self._release_nodes(self._state_nodes.get(state, ()))

    def _wait_less_for_gate(self, gate: str) -> None:
        self._gate_waits[gate] -= 1
        if self._gate_waits[gate] == 0:
            self._open_gate(gate)

    def _open_gate(self, gate: str) -> None:
        self._release_nodes(self._gate_nodes.get(gate, ()))

    def _release_nodes(self, indexes: Iterable[int]) -> None:
        """One requirement met for each of these nodes (a step each); a node with none left is reached."""
        for index in indexes:
            self.steps += 1
            self._node_waits[index] -= 1
            if self._node_waits[index] == 0:
                self._reach(index)

    def _reach(self, index: int) -> None:
        node_id = self.flow.nodes[index].id
        if node_id not in self.reachable:  # of two nodes with one id (a problem of its own), one counts
            self.reachable.add(node_id)
            self._ready.append(index)
