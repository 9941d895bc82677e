"""Reachability's counting, rule by rule (docs/controller.md): a gate's ``metricsAny`` counts once
however many of its facts are produced, a fact shared by several gates tells each of them, a state
tells its gates and its nodes (one step each), a primary goal behind ``metricsAny`` is satisfiable
exactly when one of its facts can be produced, and an unknown node tool is reported with the list of
known ones."""

from __future__ import annotations

from typing import Any

from promptpipe.controller.definition import NODE_TOOLS, FlowDefinition, Reachability, validate
from promptpipe.controller.problems import Problem

GOAL_UNSATISFIABLE = Problem(path="$.primaryGoal", message="no sequence of nodes can satisfy the primary goal")


def shape(gates: dict[str, Any], nodes: list[dict[str, Any]], goal: str = "G") -> FlowDefinition:
    """The definition's shape only: the semantic checks (unreachable nodes...) are what is under test."""
    return FlowDefinition.model_validate(
        {"id": "t", "primaryGoal": {"type": "GATE", "gate": goal}, "gates": gates, "nodes": nodes}
    )


def test_metrics_any_counts_once_so_the_gates_metrics_all_is_still_needed() -> None:
    # G needs x and one of a, b; the start produces both a and b, only the node behind G produces x
    flow = shape(
        {"G": {"satisfiedBy": {"metricsAll": ["x"], "metricsAny": ["a", "b"]}}},
        [{"id": "start", "produces": ["a", "b"]}, {"id": "behind", "requires": ["G"], "produces": ["x"]}],
    )
    run = Reachability(flow)
    reachable, facts, _states = run.run()
    assert (reachable, facts) == ({"start"}, {"a", "b"})
    assert run.steps == 2  # G is told about a and b; neither opens it


def test_a_fact_already_counted_for_one_gates_metrics_any_still_tells_the_next_gate() -> None:
    # b is G1's second metricsAny fact (a came first) and G2's only fact
    flow = shape(
        {
            "G1": {"satisfiedBy": {"metricsAny": ["a", "b"]}},
            "G2": {"satisfiedBy": {"metricsAll": ["b"]}},
        },
        [
            {"id": "start", "produces": ["a", "b"]},
            {"id": "after-g1", "requires": ["G1"]},
            {"id": "after-g2", "requires": ["G2"]},
        ],
        goal="G2",
    )
    reachable, _facts, _states = Reachability(flow).run()
    assert reachable == {"start", "after-g1", "after-g2"}


def test_a_state_tells_each_of_its_gates_and_nodes_once() -> None:
    # f tells H (1); S tells G (2), G opens for after-gate (3), S tells after-state (4)
    flow = shape(
        {"H": {"satisfiedBy": {"metricsAll": ["f"]}}, "G": {"satisfiedBy": {"statesAll": ["S"]}}},
        [
            {"id": "start", "produces": ["f"], "producesStates": ["S"]},
            {"id": "after-gate", "requires": ["G"]},
            {"id": "after-state", "requiresStates": ["S"]},
        ],
    )
    run = Reachability(flow)
    reachable, facts, states = run.run()
    assert (reachable, facts, states) == ({"start", "after-gate", "after-state"}, {"f"}, {"S"})
    assert run.steps == 4


def test_a_goal_behind_metrics_any_is_satisfiable_when_all_its_facts_are_produced() -> None:
    definition, problems = validate(
        {
            "id": "t",
            "primaryGoal": {"type": "GATE", "gate": "G"},
            "gates": {"G": {"satisfiedBy": {"metricsAny": ["a", "b"]}}},
            "nodes": [{"id": "start", "produces": ["a", "b"]}],
        }
    )
    assert problems == [] and definition is not None


def test_a_goal_behind_metrics_any_is_unsatisfiable_when_none_of_its_facts_can_be_produced() -> None:
    # a and b are produced only by a node behind G itself
    definition, problems = validate(
        {
            "id": "t",
            "primaryGoal": {"type": "GATE", "gate": "G"},
            "gates": {"G": {"satisfiedBy": {"metricsAny": ["a", "b"]}}},
            "nodes": [{"id": "start", "produces": ["c"]}, {"id": "late", "requires": ["G"], "produces": ["a", "b"]}],
        }
    )
    assert definition is None
    assert problems == [
        Problem(path="$.nodes[1]", message="node 'late' is unreachable: its requirements never hold"),
        GOAL_UNSATISFIABLE,
    ]


def test_an_unknown_node_tool_is_reported_with_the_known_ones() -> None:
    definition, problems = validate(
        {
            "id": "t",
            "primaryGoal": {"type": "GATE", "gate": "G"},
            "gates": {"G": {"satisfiedBy": {"metricsAll": ["x"]}}},
            "nodes": [{"id": "ask", "produces": ["x"], "tools": ["scheduler", "launch_rocket"]}],
        }
    )
    known = "transition_state, save_user_profile, scheduler, generate_habit_prompt, opt_out, ask_for_person"  # in order
    assert known == ", ".join(NODE_TOOLS)
    assert definition is None
    assert problems == [
        Problem(path="$.nodes[0].tools[1]", message=f"unknown tool 'launch_rocket' (known: {known})"),
    ]
