"""The controller's rules one at a time: gates, eligibility (with the operator-facing reasons), modes at
their boundaries, cooldown, the loop guard, bookkeeping of every decision kind, outcomes, retraction
and the text the model is given (docs/controller.md)."""

from __future__ import annotations

from typing import Any

import pytest

from promptpipe.controller.definition import FlowDefinition, parse_definition
from promptpipe.controller.engine import (
    HANDOFF_REQUESTED,
    Decision,
    Outcome,
    begin_turn,
    decide,
    determine_mode,
    evaluate_gates,
    gate_satisfied,
    goal_satisfied,
    instruction,
    objective_satisfied,
    record_outcome,
    release_hold,
    retract,
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


def flow(nodes: list[dict[str, Any]], gates: dict[str, Any] | None = None, **extra: Any) -> FlowDefinition:
    return parse_definition(
        {
            "id": "t",
            "primaryGoal": extra.pop("primaryGoal", {"type": "GATE", "gate": "G"}),
            "gates": gates if gates is not None else {"G": {"satisfiedBy": {"metricsAll": ["x"]}}},
            "nodes": nodes,
            **extra,
        }
    )


def state(**fields: Any) -> RuntimeState:
    return RuntimeState(flow_id="t", flow_version=1, **fields)


def ask(max_attempts: int = 3, on_exhaust: str = "CLARIFY", **node: Any) -> FlowDefinition:
    """One node 'ask' for fact x (gate G, the goal)."""
    return flow(
        [
            {
                "id": "ask",
                "produces": ["x"],
                "retryPolicy": {"maxAttempts": max_attempts, "onExhaust": on_exhaust},
                **node,
            }
        ]
    )


# -- gates and the goal -------------------------------------------------------------------------------

GATES = {
    "ALL": {"satisfiedBy": {"metricsAll": ["a", "b"]}},
    "ANY": {"satisfiedBy": {"metricsAny": ["a", "c"]}},
    "STATES": {"satisfiedBy": {"statesAll": ["S", "T"]}},
    "MIXED": {"satisfiedBy": {"metricsAll": ["a"], "metricsAny": ["b", "c"], "statesAll": ["S"]}},
}
GATED = flow(
    [{"id": "n", "produces": ["a", "b", "c"], "producesStates": ["S", "T"]}],
    gates=GATES,
    primaryGoal={"type": "GATE", "gate": "ALL"},
)


@pytest.mark.parametrize(
    ("facts", "states", "expected"),
    [
        (set(), set(), set()),
        ({"a"}, set(), {"ANY"}),
        ({"c"}, set(), {"ANY"}),
        ({"b"}, set(), set()),
        ({"a", "b"}, set(), {"ALL", "ANY"}),
        (set(), {"S"}, set()),
        (set(), {"S", "T"}, {"STATES"}),
        ({"a", "b"}, {"S"}, {"ALL", "ANY", "MIXED"}),
        ({"a", "c"}, {"S"}, {"ANY", "MIXED"}),
        ({"a"}, {"S"}, {"ANY"}),
        ({"b", "c"}, {"S"}, {"ANY"}),
    ],
)
def test_gate_conditions(facts: set[str], states: set[str], expected: set[str]) -> None:
    assert evaluate_gates(GATED, facts, states) == expected
    assert {g for g in GATES if gate_satisfied(GATED, g, facts, states)} == expected


def test_an_undefined_gate_is_never_satisfied() -> None:
    assert gate_satisfied(GATED, "NOPE", {"a", "b", "c"}, {"S", "T"}) is False


def test_goal_of_either_type() -> None:
    assert goal_satisfied(GATED, {"ALL"}, set()) is True
    assert goal_satisfied(GATED, {"ANY"}, {"ALL"}) is False
    by_state = flow(
        [{"id": "n", "produces": ["x"], "producesStates": ["S"]}], primaryGoal={"type": "STATE", "state": "S"}
    )
    assert goal_satisfied(by_state, set(), {"S"}) is True
    assert goal_satisfied(by_state, {"S"}, {"T"}) is False


def test_a_state_goal_completes_the_flow_when_its_state_holds() -> None:
    f = flow(
        [{"id": "n", "produces": ["x"], "producesStates": ["S"]}, {"id": "m", "producesStates": ["T"]}],
        primaryGoal={"type": "STATE", "state": "S"},
    )
    assert decide(f, state(states=["S"])).status is Status.COMPLETE
    assert decide(f, state(states=["T"], facts=["x"])).status is Status.OK


# -- eligibility, and why not ------------------------------------------------------------------------


def test_every_blocking_reason_in_a_deadlock() -> None:
    f = flow(
        [
            {"id": "capped", "produces": ["y"], "runPolicy": {"maxExecutions": 2}},
            {"id": "gated", "requires": ["H", "K"], "produces": ["x"]},
            {"id": "stated", "requiresStates": ["S", "T"], "produces": ["x"]},
            {"id": "done", "produces": ["y"], "satisfies": {"gates": ["H"]}},
            {"id": "gone", "produces": ["x"], "producesStates": ["S", "T"]},
        ],
        gates={
            "G": {"satisfiedBy": {"metricsAll": ["x"]}},
            "H": {"satisfiedBy": {"metricsAll": ["y"]}},
            "K": {"satisfiedBy": {"statesAll": ["S"]}},
        },
    )
    rt = state(facts=["y"], executions_by_node={"capped": 2, "done": 1}, skipped_nodes=["gone"])
    d = decide(f, rt)
    assert d.status is Status.DEADLOCK and d.node_id is None and d.mode is None
    assert d.reason == "no eligible node and the primary goal is not satisfied; a person should look"
    assert d.blocking == (
        "capped: reached its maximum of 2 execution(s)",
        "gated: requires gate(s) K",
        "stated: requires state(s) S, T",
        "done: done (its gates are satisfied)",
        "gone: skipped after exhausting its attempts",
    )
    assert d.skipped == () and d.silently_executed == () and not d.forced


def test_missing_gates_are_listed_joined() -> None:
    f = flow(
        [{"id": "gated", "requires": ["H", "K"], "produces": ["x"]}, {"id": "y", "produces": ["y"]}],
        gates={
            "G": {"satisfiedBy": {"metricsAll": ["x"]}},
            "H": {"satisfiedBy": {"metricsAll": ["y"]}},
            "K": {"satisfiedBy": {"metricsAll": ["y"]}},
        },
    )
    d = decide(f, state(executions_by_node={}, skipped_nodes=["y"]))
    assert d.blocking == ("gated: requires gate(s) H, K", "y: skipped after exhausting its attempts")


def test_a_node_below_its_cap_is_eligible() -> None:
    f = flow([{"id": "capped", "produces": ["x"], "runPolicy": {"maxExecutions": 2}}])
    d = decide(f, state(executions_by_node={"capped": 1}, attempts_by_node={"capped": 1}))
    assert (d.status, d.node_id) == (Status.OK, "capped")


def test_a_node_with_satisfied_gates_runs_once_then_is_done() -> None:
    f = flow(
        [{"id": "n", "produces": ["y"], "satisfies": {"gates": ["H"]}}, {"id": "m", "produces": ["x"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["y"]}}},
    )
    assert decide(f, state(facts=["y"])).node_id == "n"  # never ran: still gets its turn
    assert decide(f, state(facts=["y"], executions_by_node={"n": 1}, attempts_by_node={"n": 1})).node_id == "m"
    assert decide(f, state(executions_by_node={"n": 1}, attempts_by_node={"n": 1})).node_id == "m"  # fewer attempts


def test_a_node_with_some_of_its_gates_satisfied_is_not_done() -> None:
    f = flow(
        [{"id": "n", "produces": ["y", "z"], "satisfies": {"gates": ["H", "K"]}}, {"id": "m", "produces": ["x"]}],
        gates={
            "G": {"satisfiedBy": {"metricsAll": ["x"]}},
            "H": {"satisfiedBy": {"metricsAll": ["y"]}},
            "K": {"satisfiedBy": {"metricsAll": ["z"]}},
        },
    )
    rt = state(facts=["y"], executions_by_node={"n": 1}, attempts_by_node={"n": 1}, skipped_nodes=["m"])
    assert decide(f, rt).node_id == "n"


def test_a_node_that_satisfies_no_gate_is_never_done_by_gates() -> None:
    f = flow([{"id": "n", "produces": ["x"]}], primaryGoal={"type": "GATE", "gate": "G"})
    rt = state(executions_by_node={"n": 1}, attempts_by_node={"n": 1})
    assert decide(f, rt).node_id == "n"


# -- objectives ---------------------------------------------------------------------------------------


def test_objective_of_a_node_is_its_gates_else_what_it_produces() -> None:
    f = flow(
        [
            {"id": "gated", "produces": ["x"], "satisfies": {"gates": ["G", "H"]}},
            {"id": "facts", "produces": ["raw", "y"], "producesStates": ["S"]},
            {"id": "nothing"},
        ],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"statesAll": ["S"]}}},
        factAliases={"raw": "x"},
    )
    gated, facts_node, nothing = f.nodes
    assert objective_satisfied(f, gated, set(), {"G", "H"}, set()) is True
    assert objective_satisfied(f, gated, {"x"}, {"G"}, {"S"}) is False  # gates decide, not facts
    assert objective_satisfied(f, facts_node, {"x", "y"}, set(), {"S"}) is True  # through the alias
    assert objective_satisfied(f, facts_node, {"raw", "y"}, set(), {"S"}) is False
    assert objective_satisfied(f, facts_node, {"x"}, set(), {"S"}) is False
    assert objective_satisfied(f, facts_node, {"x", "y"}, set(), set()) is False
    assert objective_satisfied(f, nothing, {"x", "y"}, {"G", "H"}, {"S"}) is False


def test_objective_of_a_node_producing_only_states() -> None:
    f = flow([{"id": "s", "producesStates": ["S"]}, {"id": "a", "produces": ["x"]}])
    node = f.nodes[0]
    assert objective_satisfied(f, node, set(), set(), {"S"}) is True
    assert objective_satisfied(f, node, set(), set(), set()) is False


# -- modes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("on_exhaust", "attempts", "broadened", "expected"),
    [
        ("CLARIFY", 0, False, Mode.EXECUTE),
        ("CLARIFY", 1, False, Mode.RETRY),
        ("CLARIFY", 2, False, Mode.RETRY),
        ("CLARIFY", 3, False, Mode.RETRY),  # the one clarifying attempt at the limit
        ("CLARIFY", 4, False, Mode.HANDOFF),
        ("CLARIFY", 9, False, Mode.HANDOFF),
        ("BROADEN", 2, False, Mode.RETRY),
        ("BROADEN", 3, False, Mode.BROADEN),
        ("BROADEN", 4, False, Mode.BROADEN),
        ("BROADEN", 3, True, Mode.HANDOFF),
        ("HANDOFF", 2, False, Mode.RETRY),
        ("HANDOFF", 3, False, Mode.HANDOFF),
        ("SKIP", 2, False, Mode.RETRY),
        ("SKIP", 3, False, Mode.SKIP),
    ],
)
def test_mode_by_attempts_and_on_exhaust(on_exhaust: str, attempts: int, broadened: bool, expected: Mode) -> None:
    f = ask(max_attempts=3, on_exhaust=on_exhaust)
    rt = state(attempts_by_node={"ask": attempts}, broadened_nodes=["ask"] if broadened else [])
    assert determine_mode(f, f.nodes[0], rt, set()) is expected


def test_a_satisfied_objective_is_executed_whatever_the_attempts() -> None:
    f = ask(max_attempts=1, on_exhaust="HANDOFF")
    rt = state(facts=["x"], attempts_by_node={"ask": 5})
    assert determine_mode(f, f.nodes[0], rt, {"G"}) is Mode.EXECUTE
    assert determine_mode(f, f.nodes[0], rt.model_copy(update={"facts": []}), set()) is Mode.HANDOFF


def test_mode_uses_the_flow_default_retry_policy() -> None:
    f = flow(
        [{"id": "ask", "produces": ["x"]}],
        defaults={"retryPolicy": {"maxAttempts": 2, "onExhaust": "SKIP"}},
    )
    assert determine_mode(f, f.nodes[0], state(attempts_by_node={"ask": 1}), set()) is Mode.RETRY
    assert determine_mode(f, f.nodes[0], state(attempts_by_node={"ask": 2}), set()) is Mode.SKIP


# -- the decision's reason (shown to operators in the turn log and the hold) -----------------------------


@pytest.mark.parametrize(
    ("on_exhaust", "attempts", "facts", "reason"),
    [
        ("CLARIFY", 0, [], "normal importance; 0 attempt(s) so far; first attempt"),
        ("CLARIFY", 1, [], "normal importance; 1 attempt(s) so far; objective not met, attempts < 3"),
        ("CLARIFY", 3, [], "normal importance; 3 attempt(s) so far; one clarifying attempt after exhausting"),
        ("CLARIFY", 4, [], "normal importance; 4 attempt(s) so far; attempts exhausted (max 3, onExhaust CLARIFY)"),
        ("BROADEN", 3, [], "normal importance; 3 attempt(s) so far; attempts exhausted (max 3, onExhaust BROADEN)"),
        ("HANDOFF", 3, [], "normal importance; 3 attempt(s) so far; attempts exhausted (max 3, onExhaust HANDOFF)"),
    ],
)
def test_reasons_by_mode(on_exhaust: str, attempts: int, facts: list[str], reason: str) -> None:
    f = flow(
        [{"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 3, "onExhaust": on_exhaust}}],
        postGoalPolicy="CONTINUE_HIGH",
    )
    assert decide(f, state(attempts_by_node={"ask": attempts}, facts=facts)).reason == reason


def test_reason_of_an_execute_on_a_satisfied_objective_and_of_high_importance() -> None:
    f = flow(
        [
            {"id": "ask", "importance": "high", "produces": ["y"], "satisfies": {"gates": ["H"]}},
            {"id": "x", "produces": ["x"]},
        ],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["y"]}}},
    )
    d = decide(f, state(facts=["y"], attempts_by_node={"ask": 2}))
    assert (d.node_id, d.mode) == ("ask", Mode.EXECUTE)
    assert d.reason == "high importance; 2 attempt(s) so far; objective satisfied"


# -- priority and cooldown ----------------------------------------------------------------------------


def test_importance_outranks_attempts_at_every_level() -> None:
    for upper, lower in (("high", "normal"), ("normal", "low"), ("high", "low")):
        f = flow([{"id": "lower", "importance": lower, "produces": ["x"]}, {"id": "upper", "importance": upper}])
        rt = state(attempts_by_node={"upper": 2})
        assert decide(f, rt).node_id == "upper", (upper, lower)


def test_fewer_attempts_outrank_definition_order() -> None:
    f = flow([{"id": "first", "produces": ["x"]}, {"id": "second"}])
    assert decide(f, state(attempts_by_node={"first": 1})).node_id == "second"
    assert decide(f, state(attempts_by_node={"first": 1, "second": 1})).node_id == "first"


def _cooling_flow(cooldown: int) -> FlowDefinition:
    return flow(
        [
            {"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 9, "cooldownTurns": cooldown}},
            {"id": "other", "importance": "low", "producesStates": ["O"]},
        ]
    )


@pytest.mark.parametrize(
    ("cooldown", "last_turn", "turn_index", "expected"),
    [
        (0, 3, 3, "ask"),  # no cooldown
        (1, 3, 3, "other"),  # attempted last turn: cooling for one turn
        (1, 3, 4, "ask"),
        (2, 3, 4, "other"),
        (2, 3, 5, "ask"),
    ],
)
def test_cooldown_window(cooldown: int, last_turn: int, turn_index: int, expected: str) -> None:
    f = _cooling_flow(cooldown)
    rt = state(turn_index=turn_index, attempts_by_node={"ask": 1}, last_attempt_turn_by_node={"ask": last_turn})
    assert decide(f, rt).node_id == expected


def test_a_node_never_attempted_does_not_cool() -> None:
    f = _cooling_flow(5)
    rt = state(turn_index=3, attempts_by_node={}, last_attempt_turn_by_node={"ask": 3})
    assert decide(f, rt).node_id == "ask"
    rt = state(turn_index=3, attempts_by_node={"ask": 1})  # no recorded turn: not cooling
    assert decide(f, rt).node_id == "ask"


def test_when_every_candidate_cools_the_best_runs_and_says_so() -> None:
    cooling = {"maxAttempts": 9, "cooldownTurns": 3}
    f = flow([{"id": "ask", "produces": ["x"], "retryPolicy": cooling}, {"id": "b", "retryPolicy": cooling}])
    rt = state(
        turn_index=4,
        attempts_by_node={"ask": 1, "b": 1},
        last_attempt_turn_by_node={"ask": 4, "b": 4},
    )
    d = decide(f, rt)
    assert (d.node_id, d.mode) == ("ask", Mode.RETRY)
    assert d.reason == (
        "normal importance; 1 attempt(s) so far; objective not met, attempts < 9; every candidate is in cooldown"
    )


def test_a_ready_node_is_not_told_it_cools() -> None:
    f = _cooling_flow(1)
    d = decide(f, state(turn_index=3, attempts_by_node={"ask": 1}, last_attempt_turn_by_node={"ask": 3}))
    assert d.node_id == "other" and "cooldown" not in d.reason


# -- completion, pause, skip and silent execution -----------------------------------------------------


def test_complete_and_paused_decisions() -> None:
    f = flow([{"id": "a", "produces": ["x"]}, {"id": "h", "importance": "high", "producesStates": ["P"]}])
    d = decide(f, state(facts=["x"]))
    assert (d.status, d.node_id, d.mode, d.reason) == (Status.COMPLETE, None, None, "primary goal satisfied")
    cont = flow(
        [{"id": "a", "produces": ["x"]}, {"id": "h", "importance": "high", "runPolicy": {"maxExecutions": 1}}],
        postGoalPolicy="CONTINUE_HIGH",
    )
    assert decide(cont, state(facts=["x"])).node_id == "h"
    done = decide(cont, state(facts=["x"], executions_by_node={"h": 1}))
    assert (done.status, done.reason) == (Status.COMPLETE, "primary goal satisfied; no high-importance node left")
    hold = Hold(kind=Mode.HANDOFF, node_id="a", reason="stuck", turn_index=2)
    paused = decide(f, state(hold=hold))
    assert (paused.status, paused.node_id, paused.mode) == (Status.PAUSED, "a", None)
    assert paused.reason == "waiting for a person: stuck"


def test_continue_high_ignores_normal_nodes_after_the_goal() -> None:
    f = flow([{"id": "a", "produces": ["x"]}, {"id": "n", "producesStates": ["P"]}], postGoalPolicy="CONTINUE_HIGH")
    assert decide(f, state(facts=["x"])).status is Status.COMPLETE


def test_skips_then_deadlock_lists_the_skipped() -> None:
    f = flow(
        [
            {"id": "s1", "produces": ["x"], "retryPolicy": {"maxAttempts": 1, "onExhaust": "SKIP"}},
            {"id": "s2", "produces": ["x"], "retryPolicy": {"maxAttempts": 1, "onExhaust": "SKIP"}},
            {"id": "capped", "producesStates": ["C"], "runPolicy": {"maxExecutions": 1}},
        ]
    )
    rt = state(attempts_by_node={"s1": 1, "s2": 1}, executions_by_node={"capped": 1})
    d = decide(f, rt)
    assert d.status is Status.DEADLOCK and d.skipped == ("s1", "s2")
    assert d.blocking == (
        "capped: reached its maximum of 1 execution(s)",
        "s1: skipped after exhausting its attempts",
        "s2: skipped after exhausting its attempts",
    )
    after = begin_turn(f, rt, d)
    assert after.skipped_nodes == ["s1", "s2"]
    assert after.hold == Hold(kind=Status.DEADLOCK, reason="; ".join(d.blocking), turn_index=1)


def test_silent_executions_ride_along_with_the_decision_and_the_deadlock() -> None:
    nodes = [
        {"id": "known", "produces": ["y"], "satisfies": {"gates": ["H"]}},
        {"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 1, "onExhaust": "SKIP"}},
    ]
    gates = {"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["y"]}}}
    f = flow(nodes, gates, executeSatisfiedSilently=True)
    d = decide(f, state(facts=["y"]))
    assert (d.node_id, d.mode, d.silently_executed) == ("ask", Mode.EXECUTE, ("known",))
    stuck = decide(f, state(facts=["y"], attempts_by_node={"ask": 1}, executions_by_node={"ask": 1}))
    assert (stuck.status, stuck.skipped, stuck.silently_executed) == (Status.DEADLOCK, ("ask",), ("known",))
    assert decide(f, state()).silently_executed == ()


def test_silent_execution_only_for_a_first_execute() -> None:
    nodes = [
        {"id": "known", "produces": ["y"], "retryPolicy": {"maxAttempts": 1, "onExhaust": "HANDOFF"}},
        {"id": "ask", "produces": ["x"], "importance": "low"},
    ]
    f = flow(nodes, executeSatisfiedSilently=True)
    # executed before (and so not silently again): it runs as the decision, even satisfied
    d = decide(f, state(facts=["y"], attempts_by_node={"known": 1}, executions_by_node={"known": 1}))
    assert (d.node_id, d.mode, d.silently_executed) == ("known", Mode.EXECUTE, ())
    # not satisfied: a first EXECUTE turn of its own
    d = decide(f, state())
    assert (d.node_id, d.mode, d.silently_executed) == ("known", Mode.EXECUTE, ())


def test_silent_execution_skips_a_satisfied_node_in_retry_mode_only_if_its_mode_is_execute() -> None:
    nodes = [
        {"id": "nothing", "retryPolicy": {"maxAttempts": 5}},  # its objective never holds
        {"id": "ask", "produces": ["x"], "importance": "low"},
    ]
    f = flow(nodes, executeSatisfiedSilently=True)
    d = decide(f, state(attempts_by_node={"nothing": 1}, executions_by_node={"nothing": 1}))
    assert (d.node_id, d.mode, d.silently_executed) == ("nothing", Mode.RETRY, ())


# -- the loop guard -----------------------------------------------------------------------------------


def _guard(mode_attempts: int, consecutive: int, *, broadened: bool = False, last: str | None = "ask") -> Decision:
    f = ask(max_attempts=3, on_exhaust="BROADEN")
    rt = state(
        attempts_by_node={"ask": mode_attempts},
        last_node=last,
        consecutive_selections=consecutive,
        broadened_nodes=["ask"] if broadened else [],
    )
    return decide(f, rt)


def test_the_loop_guard_fires_on_the_tenth_selection_in_a_row() -> None:
    assert LOOP_GUARD_TURNS == 10
    below = _guard(1, LOOP_GUARD_TURNS - 2)
    assert (below.mode, below.forced, below.warnings) == (Mode.RETRY, False, ())
    at = _guard(1, LOOP_GUARD_TURNS - 1)
    warning = "loop guard: ask selected 10 turns in a row; forcing BROADEN"
    assert (at.status, at.node_id, at.mode, at.forced, at.warnings) == (
        Status.OK,
        "ask",
        Mode.BROADEN,
        True,
        (warning,),
    )
    assert at.reason == f"normal importance; 1 attempt(s) so far; objective not met, attempts < 3; {warning}"


def test_the_loop_guard_counts_only_the_same_node() -> None:
    assert _guard(1, 30, last="other").mode is Mode.RETRY
    assert _guard(1, 30, last=None).forced is False


def test_the_loop_guard_hands_off_a_broadened_node() -> None:
    d = _guard(1, LOOP_GUARD_TURNS - 1, broadened=True)
    assert (d.mode, d.forced) == (Mode.HANDOFF, True)
    assert d.warnings == ("loop guard: ask selected 10 turns in a row; forcing HANDOFF",)


def test_the_loop_guard_turns_a_natural_broaden_into_a_handoff_only_once_broadened() -> None:
    natural = _guard(3, LOOP_GUARD_TURNS - 1)  # exhausted: BROADEN anyway, not broadened yet
    assert (natural.mode, natural.forced, natural.warnings) == (Mode.BROADEN, False, ())
    handoff = _guard(4, LOOP_GUARD_TURNS + 3, broadened=True)  # already a HANDOFF: nothing to force
    assert (handoff.mode, handoff.forced) == (Mode.HANDOFF, False)


def test_the_loop_guard_forces_handoff_over_a_broaden_of_a_broadened_node() -> None:
    f = flow([{"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 2, "onExhaust": "HANDOFF"}}])
    rt = state(attempts_by_node={"ask": 1}, last_node="ask", consecutive_selections=20, broadened_nodes=["ask"])
    d = decide(f, rt)
    assert (d.mode, d.forced) == (Mode.HANDOFF, True)
    assert d.warnings == ("loop guard: ask selected 21 turns in a row; forcing HANDOFF",)


def test_skipped_nodes_are_carried_into_a_forced_decision() -> None:
    f = flow(
        [
            {"id": "s", "produces": ["x"], "retryPolicy": {"maxAttempts": 1, "onExhaust": "SKIP"}},
            {"id": "ask", "produces": ["x"], "retryPolicy": {"maxAttempts": 9}},
        ]
    )
    rt = state(attempts_by_node={"s": 1, "ask": 1}, last_node="ask", consecutive_selections=9)
    d = decide(f, rt)
    assert (d.node_id, d.mode, d.forced, d.skipped) == ("ask", Mode.BROADEN, True, ("s",))


# -- the summary ---------------------------------------------------------------------------------------


def test_decision_summary() -> None:
    minimal = Decision(status=Status.COMPLETE, reason="r")
    assert minimal.summary() == {"status": "COMPLETE", "node": None, "mode": None, "reason": "r"}
    full = Decision(
        status=Status.OK,
        node_id="n",
        mode=Mode.RETRY,
        reason="why",
        skipped=("s",),
        silently_executed=("q",),
        blocking=("b",),
        warnings=("w",),
    )
    assert full.summary() == {
        "status": "OK",
        "node": "n",
        "mode": "RETRY",
        "reason": "why",
        "skipped": ["s"],
        "silently_executed": ["q"],
        "blocking": ["b"],
        "warnings": ["w"],
    }


# -- bookkeeping: begin_turn ---------------------------------------------------------------------------


def test_begin_turn_of_an_execute() -> None:
    f = ask()
    rt = state(turn_index=4, attempts_by_node={"other": 2}, executions_by_node={"other": 1}, last_node="other")
    rt = rt.model_copy(update={"consecutive_selections": 3, "last_attempt_turn_by_node": {"other": 4}})
    d = decide(f, rt)
    after = begin_turn(f, rt, d)
    assert after.turn_index == 5
    assert after.attempts_by_node == {"other": 2, "ask": 1}
    assert after.executions_by_node == {"other": 1, "ask": 1}
    assert after.last_attempt_turn_by_node == {"other": 4, "ask": 5}
    assert (after.last_node, after.consecutive_selections) == ("ask", 1)
    assert after.hold is None and after.broadened_nodes == [] and after.completed_at_turn is None
    assert after.turn_log == [
        TurnLogEntry(turn_index=5, node_id="ask", mode=Mode.EXECUTE, status=Status.OK, reason=d.reason)
    ]
    assert rt.turn_index == 4 and rt.attempts_by_node == {"other": 2}  # the input is not mutated


def test_begin_turn_of_another_execute_adds_to_the_executions() -> None:
    f = flow([{"id": "ask", "produces": ["y"]}, {"id": "x", "produces": ["x"], "importance": "low"}])
    rt = state(facts=["y"], attempts_by_node={"ask": 2}, executions_by_node={"ask": 2})
    d = decide(f, rt)
    assert (d.node_id, d.mode) == ("ask", Mode.EXECUTE)  # its objective holds: EXECUTE again
    assert begin_turn(f, rt, d).executions_by_node == {"ask": 3}


def test_begin_turn_counts_consecutive_selections_of_the_same_node() -> None:
    f = ask(max_attempts=9)
    rt = state(attempts_by_node={"ask": 2}, executions_by_node={"ask": 1}, last_node="ask", consecutive_selections=2)
    after = begin_turn(f, rt, decide(f, rt))
    assert (after.consecutive_selections, after.attempts("ask"), after.executions("ask")) == (3, 3, 1)


def test_begin_turn_of_a_broaden_marks_the_node() -> None:
    f = ask(max_attempts=1, on_exhaust="BROADEN")
    rt = state(attempts_by_node={"ask": 1}, executions_by_node={"ask": 1}, broadened_nodes=["zz"])
    d = decide(f, rt)
    assert d.mode is Mode.BROADEN
    after = begin_turn(f, rt, d)
    assert after.broadened_nodes == ["ask", "zz"] and after.hold is None and after.executions("ask") == 1


def test_begin_turn_of_a_handoff_holds_the_flow() -> None:
    f = ask(max_attempts=1, on_exhaust="HANDOFF")
    rt = state(turn_index=6, attempts_by_node={"ask": 1}, states=["A"])
    d = decide(f, rt)
    after = begin_turn(f, rt, d)
    assert after.hold == Hold(kind=Mode.HANDOFF, node_id="ask", reason=d.reason, turn_index=7)
    assert after.states == ["A", HANDOFF_REQUESTED] and HANDOFF_REQUESTED == "HANDOFF_REQUESTED"
    assert after.attempts("ask") == 2 and after.executions("ask") == 0


def test_begin_turn_of_a_deadlock_resets_the_loop_counter() -> None:
    rt = state(turn_index=2, last_node="n", consecutive_selections=4)
    d = Decision(status=Status.DEADLOCK, reason="fallback reason", blocking=("n: why", "m: why not"))
    after = begin_turn(ask(), rt, d)
    assert after.hold == Hold(kind=Status.DEADLOCK, node_id=None, reason="n: why; m: why not", turn_index=3)
    assert (after.last_node, after.consecutive_selections) == (None, 0)
    assert after.attempts_by_node == {} and after.turn_log[-1].status is Status.DEADLOCK
    bare = begin_turn(ask(), rt, Decision(status=Status.DEADLOCK, reason="fallback reason"))
    assert bare.hold is not None and bare.hold.reason == "fallback reason"


def test_begin_turn_of_a_completion_records_the_first_turn_only() -> None:
    f = ask()
    d = Decision(status=Status.COMPLETE, reason="done")
    after = begin_turn(f, state(turn_index=3), d)
    assert after.completed_at_turn == 4 and after.hold is None
    again = begin_turn(f, after, d)
    assert again.completed_at_turn == 4 and again.turn_index == 5


def test_begin_turn_of_a_pause_only_logs() -> None:
    hold = Hold(kind=Mode.HANDOFF, node_id="ask", reason="r", turn_index=1)
    rt = state(turn_index=1, hold=hold, last_node="ask", consecutive_selections=1)
    after = begin_turn(ask(), rt, decide(ask(), rt))
    assert after.model_copy(update={"turn_index": 1, "turn_log": []}) == rt
    assert after.turn_log[-1].status is Status.PAUSED and after.turn_log[-1].node_id == "ask"


def test_begin_turn_of_an_ok_decision_without_a_node_or_mode_counts_nothing() -> None:
    rt = state()
    for d in (Decision(status=Status.OK, mode=Mode.EXECUTE), Decision(status=Status.OK, node_id="ask")):
        after = begin_turn(ask(), rt, d)
        assert after.attempts_by_node == {} and after.executions_by_node == {} and after.last_node is None


def test_begin_turn_counts_silent_executions() -> None:
    f = ask()
    rt = state(executions_by_node={"k": 2})
    executed = Decision(status=Status.OK, node_id="ask", mode=Mode.EXECUTE, silently_executed=("k", "j"))
    after = begin_turn(f, rt, executed)
    assert after.executions_by_node == {"k": 3, "j": 1, "ask": 1}
    assert after.attempts_by_node == {"ask": 1}
    retried = Decision(status=Status.OK, node_id="ask", mode=Mode.RETRY, silently_executed=("k",))
    assert begin_turn(f, rt, retried).executions_by_node == {"k": 3}
    stuck = Decision(status=Status.DEADLOCK, silently_executed=("k",))
    assert begin_turn(f, rt, stuck).executions_by_node == {"k": 3}


def test_begin_turn_merges_skips() -> None:
    rt = state(skipped_nodes=["b"])
    d = Decision(status=Status.OK, node_id="ask", mode=Mode.EXECUTE, skipped=("c", "a"))
    assert begin_turn(ask(), rt, d).skipped_nodes == ["a", "b", "c"]
    assert begin_turn(ask(), rt, Decision(status=Status.OK, node_id="ask", mode=Mode.EXECUTE)).skipped_nodes == ["b"]


def test_the_turn_log_keeps_the_last_entries() -> None:
    assert MAX_TURN_LOG == 20
    rt = state(turn_log=[TurnLogEntry(turn_index=i) for i in range(1, MAX_TURN_LOG + 1)], turn_index=MAX_TURN_LOG)
    after = begin_turn(ask(), rt, Decision(status=Status.COMPLETE))
    assert [e.turn_index for e in after.turn_log] == list(range(2, MAX_TURN_LOG + 2))


# -- outcomes -----------------------------------------------------------------------------------------


def test_record_outcome_aliases_dedups_and_attributes_to_the_last_turn() -> None:
    f = flow(
        [{"id": "ask", "produces": ["raw"], "producesStates": ["S"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"statesAll": ["S"]}}},
        factAliases={"raw": "x"},
    )
    rt = state(
        facts=["old"],
        gates_satisfied=["H"],
        states=["S"],
        turn_log=[
            TurnLogEntry(turn_index=1, factsProduced=["early"]),
            TurnLogEntry(turn_index=2, factsProduced=["old"], statesProduced=["S"]),
        ],
    )
    new, outcome = record_outcome(f, rt, ["raw", "x", "y", "raw"], ("T", "S", "T"))
    assert outcome == Outcome(facts_produced=("x", "y"), states_produced=("T", "S"), new_gates=("G",))
    assert new.facts == ["old", "x", "y"] and new.states == ["S", "T"] and new.gates_satisfied == ["G", "H"]
    assert new.turn_log[0] == rt.turn_log[0]
    assert new.turn_log[1].facts_produced == ["old", "x", "y"]
    assert new.turn_log[1].states_produced == ["S", "T"]
    assert rt.turn_log[1].facts_produced == ["old"]  # the input is not mutated


def test_record_outcome_of_nothing_leaves_the_log_alone_and_reports_new_gates_sorted() -> None:
    f = flow(
        [{"id": "ask", "produces": ["x"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "A": {"satisfiedBy": {"metricsAll": ["x"]}}},
    )
    entry = TurnLogEntry(turn_index=1)
    new, outcome = record_outcome(f, state(facts=["x"], turn_log=[entry]), [], [])
    assert outcome == Outcome(new_gates=("A", "G")) and new.turn_log == [entry]
    new, outcome = record_outcome(f, state(facts=["x"], gates_satisfied=["A", "G"]), [], [])
    assert outcome.new_gates == () and new.turn_log == []


def test_record_outcome_of_states_only_is_logged() -> None:
    f = ask()
    new, outcome = record_outcome(f, state(turn_log=[TurnLogEntry(turn_index=1)]), [], ["S"])
    assert outcome.states_produced == ("S",) and new.turn_log[-1].states_produced == ["S"]
    assert new.turn_log[-1].facts_produced == []


def test_record_outcome_without_a_log_still_records() -> None:
    new, outcome = record_outcome(ask(), state(), ["x"], [])
    assert new.facts == ["x"] and new.gates_satisfied == ["G"] and new.turn_log == []
    assert outcome.new_gates == ("G",)


def test_retract_removes_aliased_facts_and_states_and_reevaluates_gates() -> None:
    f = flow(
        [{"id": "ask", "produces": ["raw"], "producesStates": ["S"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"statesAll": ["S"]}}},
        factAliases={"raw": "x"},
    )
    rt = state(facts=["x", "y"], states=["S", "T"], gates_satisfied=["G", "H"], attempts_by_node={"ask": 2})
    gone_fact = retract(f, rt, ["raw"], [])
    assert (gone_fact.facts, gone_fact.states, gone_fact.gates_satisfied) == (["y"], ["S", "T"], ["H"])
    gone_state = retract(f, rt, [], ["S"])
    assert (gone_state.facts, gone_state.states, gone_state.gates_satisfied) == (["x", "y"], ["T"], ["G"])
    assert gone_state.attempts_by_node == {"ask": 2}


def test_retracting_what_does_not_hold_returns_the_same_state() -> None:
    rt = state(facts=["x"], states=["S"], gates_satisfied=["STALE"])
    assert retract(ask(), rt, ["nope"], ["NOPE"]) is rt


def test_release_hold_resumes_and_restarts_the_loop_counter() -> None:
    hold = Hold(kind=Mode.HANDOFF, node_id="ask", reason="r", turn_index=3)
    rt = state(hold=hold, states=["A", HANDOFF_REQUESTED], last_node="ask", consecutive_selections=7, facts=["f"])
    released = release_hold(rt)
    assert released.hold is None and released.states == ["A"]
    assert (released.last_node, released.consecutive_selections, released.facts) == (None, 0, ["f"])


# -- what the model is told ----------------------------------------------------------------------------

GENERIC_EXECUTE = "Pursue this objective now: {}"
GENERIC_RETRY = "They have not given this yet. Ask again, differently and briefly: {}"
GENERIC_BROADEN = (
    "Several tries have not worked. Make it easy: offer two or three concrete examples or a sensible default "
    "they can accept with one word: {}"
)
GENERIC_HANDOFF = (
    "Do not ask for anything more. Tell them kindly that a member of the team will follow up with them personally soon."
)


def _told(node: dict[str, Any], mode: Mode, attempts: int = 1, **policy: Any) -> str:
    f = flow([{"id": "ask", "produces": ["x"], **node, "retryPolicy": {"maxAttempts": 9, **policy}}])
    d = Decision(status=Status.OK, node_id="ask", mode=mode)
    return instruction(f, d, state(attempts_by_node={"ask": attempts}))


def test_generic_instructions_name_the_objective_or_the_node() -> None:
    assert _told({"objective": "Ask for x."}, Mode.EXECUTE) == GENERIC_EXECUTE.format("Ask for x.")
    assert _told({}, Mode.EXECUTE) == GENERIC_EXECUTE.format("ask")
    assert _told({"objective": "Ask for x."}, Mode.RETRY) == GENERIC_RETRY.format("Ask for x.")
    assert _told({"objective": "Ask for x."}, Mode.BROADEN) == GENERIC_BROADEN.format("Ask for x.")
    assert _told({"objective": "Ask for x."}, Mode.HANDOFF) == GENERIC_HANDOFF


def test_a_node_prompts_replace_the_generic_ones() -> None:
    prompts = {"execute": "E", "broaden": "B", "handoff": "H", "retry": ["R1", "R2", "R3"]}
    node = {"objective": "o", "prompts": prompts}
    told = {mode: _told(node, mode) for mode in (Mode.EXECUTE, Mode.BROADEN, Mode.HANDOFF, Mode.RETRY)}
    assert told == {Mode.EXECUTE: "E", Mode.BROADEN: "B", Mode.HANDOFF: "H", Mode.RETRY: "R1"}


@pytest.mark.parametrize(
    ("strategy", "by_attempts"),
    [
        ("ESCALATE", {0: "R1", 1: "R1", 2: "R2", 3: "R3", 4: "R3", 9: "R3"}),
        ("ROTATE", {0: "R1", 1: "R1", 2: "R2", 3: "R3", 4: "R1", 6: "R3"}),
    ],
)
def test_retry_variants_by_strategy(strategy: str, by_attempts: dict[int, str]) -> None:
    node = {"prompts": {"retry": ["R1", "R2", "R3"]}}
    got = {n: _told(node, Mode.RETRY, attempts=n, promptVariantStrategy=strategy) for n in by_attempts}
    assert got == by_attempts


def test_rephrase_or_no_variants_fall_back_to_the_generic_retry() -> None:
    assert _told({"objective": "o", "prompts": {"retry": ["R1"]}}, Mode.RETRY, promptVariantStrategy="REPHRASE") == (
        GENERIC_RETRY.format("o")
    )
    assert _told({"objective": "o"}, Mode.RETRY, promptVariantStrategy="ROTATE") == GENERIC_RETRY.format("o")


def test_no_instruction_without_an_ok_decision_on_a_known_node() -> None:
    f = ask()
    rt = state()
    assert instruction(f, Decision(status=Status.PAUSED, node_id="ask", mode=Mode.RETRY), rt) == ""
    assert instruction(f, Decision(status=Status.OK, mode=Mode.EXECUTE), rt) == ""
    assert instruction(f, Decision(status=Status.OK, node_id="ask"), rt) == ""
    assert instruction(f, Decision(status=Status.OK, node_id="ghost", mode=Mode.EXECUTE), rt) == ""
