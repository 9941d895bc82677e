"""The flow controller: validator, decision rules, the specification's example trace, properties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.controller.definition import FlowDefinition, parse_definition, parse_text, validate
from promptpipe.controller.engine import (
    HANDOFF_REQUESTED,
    begin_turn,
    decide,
    instruction,
    record_outcome,
    release_hold,
)
from promptpipe.controller.runtime import LOOP_GUARD_TURNS, MAX_TURN_LOG, Mode, RuntimeState, Status

DATA = Path(__file__).parent.parent / "data" / "flows"
INTAKE = Path(__file__).parent.parent.parent / "prompts" / "flows" / "intake.json"


def load(name: str) -> FlowDefinition:
    return parse_definition(json.loads((DATA / name).read_text()))


def flow(nodes: list[dict[str, Any]], gates: dict[str, Any] | None = None, **extra: Any) -> FlowDefinition:
    raw = {
        "id": "t",
        "primaryGoal": extra.pop("primaryGoal", {"type": "GATE", "gate": "G"}),
        "gates": gates if gates is not None else {"G": {"satisfiedBy": {"metricsAll": ["x"]}}},
        "nodes": nodes,
        **extra,
    }
    return parse_definition(raw)


def turn(f: FlowDefinition, rt: RuntimeState, facts: tuple[str, ...] = (), states: tuple[str, ...] = ()):
    """One full turn: decide, begin, then the reply's outcome."""
    decision = decide(f, rt)
    rt = begin_turn(f, rt, decision)
    rt, _ = record_outcome(f, rt, list(facts), list(states))
    return decision, rt


# -- the specification's example trace ----------------------------------------------------------


def test_spec_trace_decision_by_decision() -> None:
    f = load("spec_trace.json")
    rt = RuntimeState.start(f.id, f.version)

    d, rt = turn(f, rt, states=("WELCOME_SHOWN",))
    assert (d.node_id, d.mode) == ("welcome-1", Mode.EXECUTE)
    assert rt.states == ["WELCOME_SHOWN"] and rt.facts == [] and rt.gates_satisfied == []

    d, rt = turn(f, rt, states=("REFLECTION_COMPLETE",))
    assert (d.node_id, d.mode) == ("reflect-1", Mode.EXECUTE)
    assert rt.states == ["REFLECTION_COMPLETE", "WELCOME_SHOWN"]

    d, rt = turn(f, rt, facts=("target", "baseline", "delta", "category"), states=("GOAL_GAP_CAPTURED",))
    assert (d.node_id, d.mode) == ("goal-gap-1", Mode.EXECUTE)
    assert rt.facts == ["goal_baseline", "goal_category", "goal_delta", "goal_target"]
    assert "GOAL_GAP_CAPTURED" in rt.states

    d, rt = turn(f, rt)  # "Umm, not ready to share that"
    assert (d.node_id, d.mode) == ("contact-1", Mode.EXECUTE)
    assert rt.gates_satisfied == []
    assert rt.attempts("contact-1") == 1 and rt.executions("contact-1") == 1

    d, rt = turn(f, rt, facts=("email",))  # "Ok, john@example.com"
    assert (d.node_id, d.mode) == ("contact-1", Mode.RETRY)
    assert instruction(f, d, rt) == "To personalize your plan, could you share an email or phone?"
    assert "contact_email" in rt.facts and rt.gates_satisfied == ["CONTACT"]
    assert rt.attempts("contact-1") == 2 and rt.executions("contact-1") == 1
    assert rt.turn_log[-1].facts_produced == ["contact_email"] and rt.turn_log[-1].mode is Mode.RETRY

    d, rt = turn(f, rt, facts=("date",))  # "Schedule me for next Tuesday"
    assert (d.node_id, d.mode) == ("booking-1", Mode.EXECUTE)
    assert "booking_date" in rt.facts and "BOOKING" in rt.gates_satisfied

    d = decide(f, rt)
    assert d.status is Status.COMPLETE
    assert [e.node_id for e in rt.turn_log] == [
        "welcome-1",
        "reflect-1",
        "goal-gap-1",
        "contact-1",
        "contact-1",
        "booking-1",
    ]


# -- the validator ----------------------------------------------------------------------------


def test_validator_reports_every_problem_with_paths() -> None:
    raw = {
        "id": "bad",
        "primaryGoal": {"type": "GATE", "gate": "NOPE"},
        "factAliases": {"a": "b", "b": "c", "c": "a"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": ["never_produced"], "statesAll": ["GHOST"]}}},
        "nodes": [
            {"id": "n1", "produces": ["x"], "requires": ["UNDEFINED"]},
            {"id": "n1", "produces": ["y"]},
            {"id": "n3", "requiresStates": ["NOBODY_SETS_THIS"]},
            {"id": "n4", "requires": ["G"]},
        ],
    }
    definition, problems = validate(raw)
    assert definition is None
    text = {str(p) for p in problems}
    assert "$.nodes[1].id: duplicate node id 'n1'" in text
    assert "$.nodes[0].requires[0]: undefined gate 'UNDEFINED'" in text
    assert "$.primaryGoal.gate: undefined gate 'NOPE'" in text
    assert "$.nodes[2].requiresStates[0]: state 'NOBODY_SETS_THIS' is produced by no node" in text
    assert "$.gates.G.satisfiedBy.metricsAll[0]: fact 'never_produced' is produced by no node" in text
    assert "$.gates.G.satisfiedBy.statesAll[0]: state 'GHOST' is produced by no node" in text
    assert any(p.path == "$.factAliases.a" and "alias cycle: a → b → c → a" in p.message for p in problems)
    assert "$.nodes[3]: node 'n4' is unreachable: its requirements never hold" in text
    assert "$.primaryGoal: no sequence of nodes can satisfy the primary goal" in text


def test_validator_schema_errors_have_paths() -> None:
    _, problems = validate(
        {"id": "Bad Id", "primaryGoal": {"type": "GATE"}, "nodes": [{"id": "a", "importance": "urgent"}]}
    )
    paths = {p.path for p in problems}
    assert {"$.id", "$.primaryGoal", "$.nodes[0].importance"} <= paths


def test_duplicate_json_keys_are_problems() -> None:
    text = (
        '{"id": "d", "primaryGoal": {"type": "STATE", "state": "S"}, "gates": {'
        '"G": {"satisfiedBy": {"statesAll": ["S"]}}, "G": {"satisfiedBy": {"statesAll": ["S"]}}}, '
        '"nodes": [{"id": "a", "producesStates": ["S"]}]}'
    )
    definition, problems = parse_text(text)
    assert definition is None and "$: duplicate key 'G'" in {str(p) for p in problems}


def test_valid_flows_validate_cleanly() -> None:
    for path in (DATA / "spec_trace.json", INTAKE):
        definition, problems = parse_text(path.read_text())
        assert problems == [] and definition is not None, path


# -- eligibility and priority ----------------------------------------------------------------


def test_priority_importance_then_attempts_then_order() -> None:
    f = flow(
        [
            {"id": "low", "importance": "low", "produces": ["x"]},
            {"id": "a", "produces": ["x"]},
            {"id": "b", "produces": ["x"]},
            {"id": "hi", "importance": "high", "produces": ["x"], "runPolicy": {"maxExecutions": 1}},
        ]
    )
    rt = RuntimeState.start("t", 1)
    assert decide(f, rt).node_id == "hi"
    rt = begin_turn(f, rt, decide(f, rt))
    assert decide(f, rt).node_id == "a"  # hi capped; a and b tie on attempts → definition order
    rt = begin_turn(f, rt, decide(f, rt))
    assert decide(f, rt).node_id == "b"  # fewer attempts wins the tie
    assert decide(f, rt).mode is Mode.EXECUTE


def test_required_gates_and_states_gate_eligibility() -> None:
    f = flow(
        [
            {"id": "second", "requires": ["FIRST"], "requiresStates": ["S"], "produces": ["x"]},
            {"id": "first", "produces": ["y"], "producesStates": ["S"], "satisfies": {"gates": ["FIRST"]}},
        ],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "FIRST": {"satisfiedBy": {"metricsAll": ["y"]}}},
    )
    d, rt = turn(f, RuntimeState.start("t", 1), facts=("y",), states=("S",))
    assert d.node_id == "first"
    assert decide(f, rt).node_id == "second"  # first is done: its gate holds after an execution


def test_complete_when_goal_holds_and_post_goal_policy() -> None:
    nodes = [
        {"id": "a", "produces": ["x"]},
        {"id": "promo", "importance": "high", "producesStates": ["P"], "runPolicy": {"maxExecutions": 1}},
    ]
    rt = RuntimeState(flow_id="t", flow_version=1, facts=["x"])
    assert decide(flow(nodes), rt).status is Status.COMPLETE
    cont = flow(nodes, postGoalPolicy="CONTINUE_HIGH")
    assert decide(cont, rt).node_id == "promo"
    _, rt = turn(cont, rt, states=("P",))
    assert decide(cont, rt).status is Status.COMPLETE


def test_deadlock_lists_blocking_reasons() -> None:
    f = flow(
        [
            {"id": "once", "produces": ["y"], "runPolicy": {"maxExecutions": 1}},
            {"id": "needs", "requires": ["H"], "produces": ["x"]},
        ],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["y"]}}},
    )
    _, rt = turn(f, RuntimeState.start("t", 1))  # "once" ran but produced nothing
    d = decide(f, rt)
    assert d.status is Status.DEADLOCK
    assert d.blocking == ("once: reached its maximum of 1 execution(s)", "needs: requires gate(s) H")
    rt = begin_turn(f, rt, d)
    assert rt.hold is not None and rt.hold.kind is Status.DEADLOCK
    assert decide(f, rt).status is Status.PAUSED


# -- modes ------------------------------------------------------------------------------------


def _retry_flow(on_exhaust: str, max_attempts: int = 2, **policy: Any) -> FlowDefinition:
    return flow(
        [
            {
                "id": "ask",
                "produces": ["x"],
                "satisfies": {"gates": ["G"]},
                "retryPolicy": {"maxAttempts": max_attempts, "onExhaust": on_exhaust, **policy},
                "prompts": {"retry": ["v1", "v2", "v3"]},
            },
            {"id": "other", "importance": "low", "produces": ["z"], "producesStates": ["O"]},
        ]
    )


def _modes(f: FlowDefinition, turns: int) -> list[tuple[str | None, Mode | None]]:
    rt = RuntimeState.start("t", 1)
    seen = []
    for _ in range(turns):
        d, rt = turn(f, rt)
        seen.append((d.node_id, d.mode))
    return seen


def test_clarify_gives_one_more_retry_then_handoff() -> None:
    modes = _modes(_retry_flow("CLARIFY"), 5)
    assert modes[:3] == [("ask", Mode.EXECUTE), ("ask", Mode.RETRY), ("ask", Mode.RETRY)]
    assert modes[3] == ("ask", Mode.HANDOFF)
    assert modes[4] == ("ask", None)  # paused: the handoff holds the flow for a person


def test_handoff_sets_the_hold_and_release_resumes() -> None:
    f = _retry_flow("HANDOFF")
    rt = RuntimeState.start("t", 1)
    for expected in (Mode.EXECUTE, Mode.RETRY, Mode.HANDOFF):
        d, rt = turn(f, rt)
        assert d.mode is expected
    assert rt.hold is not None and HANDOFF_REQUESTED in rt.states
    assert decide(f, rt).status is Status.PAUSED
    rt = release_hold(rt)
    assert HANDOFF_REQUESTED not in rt.states and decide(f, rt).status is Status.OK


def test_broaden_once_then_handoff() -> None:
    modes = [m for _, m in _modes(_retry_flow("BROADEN"), 4)]
    assert modes == [Mode.EXECUTE, Mode.RETRY, Mode.BROADEN, Mode.HANDOFF]


def test_skip_moves_to_the_next_node() -> None:
    f = _retry_flow("SKIP")
    rt = RuntimeState.start("t", 1)
    for _ in range(2):
        _, rt = turn(f, rt)
    d = decide(f, rt)
    assert d.skipped == ("ask",) and (d.node_id, d.mode) == ("other", Mode.EXECUTE)
    rt = begin_turn(f, rt, d)
    assert "ask" in rt.skipped_nodes


def test_variant_strategies() -> None:
    for strategy, expected in (("ESCALATE", ["v1", "v2", "v3", "v3"]), ("ROTATE", ["v1", "v2", "v3", "v1"])):
        f = _retry_flow("CLARIFY", max_attempts=10, promptVariantStrategy=strategy)
        rt = RuntimeState.start("t", 1)
        _, rt = turn(f, rt)
        got = []
        for _ in range(4):
            d = decide(f, rt)
            got.append(instruction(f, d, rt))
            rt = begin_turn(f, rt, d)
        assert got == expected, strategy
    f = _retry_flow("CLARIFY", promptVariantStrategy="REPHRASE")
    _, rt = turn(f, RuntimeState.start("t", 1))
    assert "Ask again, differently" in instruction(f, decide(f, rt), rt)


def test_cooldown_lets_another_node_go_first() -> None:
    f = _retry_flow("CLARIFY", max_attempts=5, cooldownTurns=1)
    assert [n for n, _ in _modes(f, 4)] == ["ask", "other", "ask", "other"]


def test_loop_guard_forces_broaden_then_handoff() -> None:
    f = flow([{"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 50}}])
    rt = RuntimeState.start("t", 1)
    decisions = []
    for _ in range(LOOP_GUARD_TURNS + 1):
        d, rt = turn(f, rt)
        decisions.append(d)
    assert all(d.mode in (Mode.EXECUTE, Mode.RETRY) for d in decisions[: LOOP_GUARD_TURNS - 1])
    tenth = decisions[LOOP_GUARD_TURNS - 1]
    assert tenth.mode is Mode.BROADEN and tenth.forced and tenth.warnings
    assert decisions[LOOP_GUARD_TURNS].mode is Mode.HANDOFF


# -- RETRY and facts (the specification's contradiction, docs/controller.md) -------------------


def test_retry_turn_records_facts_but_not_an_execution() -> None:
    f = _retry_flow("CLARIFY", max_attempts=5)
    _, rt = turn(f, RuntimeState.start("t", 1))
    d, rt = turn(f, rt, facts=("x",))
    assert d.mode is Mode.RETRY
    assert rt.facts == ["x"] and rt.executions("ask") == 1 and rt.attempts("ask") == 2
    assert decide(f, rt).status is Status.COMPLETE


def test_turn_log_is_bounded_and_runtime_roundtrips() -> None:
    f = flow([{"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 100}}, {"id": "b", "produces": ["x"]}])
    rt = RuntimeState.start("t", 1)
    for _ in range(MAX_TURN_LOG + 5):
        rt = begin_turn(f, rt, decide(f, rt))
        rt = release_hold(rt)
    assert len(rt.turn_log) == MAX_TURN_LOG and rt.turn_log[-1].turn_index == MAX_TURN_LOG + 5
    assert RuntimeState.from_json(rt.to_json()) == rt


# -- properties -------------------------------------------------------------------------------

FLOWS = [load("spec_trace.json"), parse_definition(json.loads(INTAKE.read_text()))]


@st.composite
def runtimes(draw: st.DrawFn) -> tuple[FlowDefinition, RuntimeState]:
    f = draw(st.sampled_from(FLOWS))
    facts = sorted({f.canonical(x) for n in f.nodes for x in n.produces})
    states = sorted({s for n in f.nodes for s in n.produces_states})
    ids = [n.id for n in f.nodes]
    counts = st.dictionaries(st.sampled_from(ids), st.integers(0, 12), max_size=len(ids))
    attempts = draw(counts)
    executions = {k: min(v, attempts.get(k, 0)) for k, v in draw(counts).items()}
    rt = RuntimeState(
        flow_id=f.id,
        flow_version=f.version,
        turn_index=draw(st.integers(0, 40)),
        facts=draw(st.lists(st.sampled_from(facts), max_size=len(facts))) if facts else [],
        states=draw(st.lists(st.sampled_from(states), max_size=len(states))),
        attempts_by_node=attempts,
        executions_by_node=executions,
        broadened_nodes=draw(st.lists(st.sampled_from(ids), max_size=2)),
        last_node=draw(st.none() | st.sampled_from(ids)),
        consecutive_selections=draw(st.integers(0, 12)),
    )
    return f, rt


@settings(max_examples=300, deadline=None)
@given(runtimes())
def test_same_state_same_decision(case: tuple[FlowDefinition, RuntimeState]) -> None:
    f, rt = case
    before = rt.to_json()
    first = decide(f, rt)
    assert rt.to_json() == before  # the input is not mutated
    assert decide(f, RuntimeState.from_json(before)) == first  # same state (even reloaded) → same decision


@settings(max_examples=300, deadline=None)
@given(runtimes())
def test_decision_invariants(case: tuple[FlowDefinition, RuntimeState]) -> None:
    f, rt = case
    d = decide(f, rt)
    if d.status is Status.OK:
        node = f.node(d.node_id or "")
        assert node is not None and d.mode is not Mode.SKIP
        cap = node.run_policy.max_executions
        assert cap is None or rt.executions(node.id) < cap
        if rt.attempts(node.id) == 0 and not d.forced:
            assert d.mode is Mode.EXECUTE
        after = begin_turn(f, rt, d)
        assert after.attempts(node.id) == rt.attempts(node.id) + 1
        assert after.executions(node.id) == rt.executions(node.id) + (d.mode is Mode.EXECUTE)
        assert after.consecutive_selections <= rt.consecutive_selections + 1
    if d.status is Status.DEADLOCK:
        assert d.blocking
    if d.status is Status.COMPLETE:
        goal = f.primary_goal
        rt2, _ = record_outcome(f, rt, [], [])
        assert goal.gate in rt2.gates_satisfied if goal.type == "GATE" else goal.state in rt2.states


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(FLOWS), st.lists(st.tuples(st.booleans(), st.integers(0, 1000)), max_size=40))
def test_runs_terminate_or_pause_without_breaking_caps(f: FlowDefinition, replies: list[tuple[bool, int]]) -> None:
    """Random replies (answering the node or not): caps hold, the loop guard bounds repetition."""
    rt = RuntimeState.start(f.id, f.version)
    for answers, pick in replies:
        d = decide(f, rt)
        if d.status is not Status.OK:
            break
        rt = begin_turn(f, rt, d)
        assert rt.consecutive_selections <= LOOP_GUARD_TURNS
        node = f.node(d.node_id or "")
        assert node is not None
        if answers:
            rt, _ = record_outcome(f, rt, list(node.produces), list(node.produces_states))
        elif node.produces and pick % 3 == 0:
            rt, _ = record_outcome(f, rt, [node.produces[pick % len(node.produces)]], [])
        for n in f.nodes:
            cap = n.run_policy.max_executions
            assert cap is None or rt.executions(n.id) <= cap
    assert len(rt.turn_log) <= MAX_TURN_LOG


@pytest.mark.parametrize("name", ["spec_trace.json"])
def test_definition_roundtrips_through_json(name: str) -> None:
    f = load(name)
    assert parse_definition(json.loads(json.dumps(f.to_json_dict()))) == f


def test_execute_satisfied_silently_moves_past_a_node_answered_unasked() -> None:
    nodes = [
        {"id": "first", "produces": ["y"], "satisfies": {"gates": ["H"]}},
        {"id": "second", "produces": ["x"], "satisfies": {"gates": ["G"]}},
    ]
    gates = {"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["y"]}}}
    rt = RuntimeState(flow_id="t", flow_version=1, facts=["y"])
    # The specification's default: the satisfied node still gets its EXECUTE turn ("move to next")
    assert (decide(flow(nodes, gates), rt).node_id, decide(flow(nodes, gates), rt).mode) == ("first", Mode.EXECUTE)
    silent = flow(nodes, gates, executeSatisfiedSilently=True)
    d = decide(silent, rt)
    assert (d.node_id, d.mode, d.silently_executed) == ("second", Mode.EXECUTE, ("first",))
    rt = begin_turn(silent, rt, d)
    assert rt.executions("first") == 1 and rt.attempts("first") == 0 and rt.executions("second") == 1


def test_retract_removes_facts_and_reopens_the_node() -> None:
    from promptpipe.controller.engine import retract

    f = _retry_flow("CLARIFY")
    _, rt = turn(f, RuntimeState.start("t", 1), facts=("x",))
    assert decide(f, rt).status is Status.COMPLETE
    rt = retract(f, rt, ["x"], [])
    assert rt.facts == [] and rt.gates_satisfied == []
    d = decide(f, rt)
    assert (d.node_id, d.mode) == ("ask", Mode.RETRY)  # attempts never reset
    assert rt.executions("ask") == 1
