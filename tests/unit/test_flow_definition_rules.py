"""Flow definitions: the schema's names, defaults and bounds, each validation problem with its exact
path and message (both are returned by the flows API), fact aliases and reachability."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from promptpipe.controller.definition import (
    IMPORTANCE_SCORE,
    DefinitionInvalid,
    FlowDefinition,
    Importance,
    OnExhaust,
    PostGoalPolicy,
    Problem,
    RetryPolicy,
    VariantStrategy,
    parse_definition,
    parse_text,
    reachability,
    validate,
)


def raw(nodes: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A valid flow: one node producing the fact of gate G, the goal."""
    return {
        "id": "t",
        "primaryGoal": {"type": "GATE", "gate": "G"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": ["x"]}}},
        "nodes": nodes if nodes is not None else [{"id": "a", "produces": ["x"]}],
        **extra,
    }


def problems_of(body: Any) -> list[tuple[str, str]]:
    definition, problems = validate(body)
    assert (definition is None) == bool(problems)
    return [(p.path, p.message) for p in problems]


def paths_of(body: Any) -> set[str]:
    """Schema errors inside a node also fail the node list as a whole ("$.nodes"): paths as a set."""
    return {path for path, _ in problems_of(body)}


# -- names and defaults of the schema -----------------------------------------------------------------


def test_every_field_is_read_under_its_documented_name() -> None:
    f = parse_definition(
        {
            "id": "full",
            "version": 4,
            "description": "all fields",
            "primaryGoal": {"type": "STATE", "state": "S"},
            "defaults": {
                "retryPolicy": {
                    "maxAttempts": 7,
                    "onExhaust": "SKIP",
                    "cooldownTurns": 2,
                    "promptVariantStrategy": "ROTATE",
                }
            },
            "postGoalPolicy": "CONTINUE_HIGH",
            "executeSatisfiedSilently": True,
            "factAliases": {"raw": "x"},
            "gates": {"G": {"satisfiedBy": {"metricsAll": ["x"], "metricsAny": ["x"]}, "description": "d"}},
            "nodes": [
                {
                    "id": "a",
                    "importance": "high",
                    "objective": "o",
                    "produces": ["raw"],
                    "producesStates": ["S0"],
                    "satisfies": {"gates": ["G"]},
                    "runPolicy": {"maxExecutions": 2},
                    "retryPolicy": {"maxAttempts": 1, "onExhaust": "BROADEN", "promptVariantStrategy": "REPHRASE"},
                    "prompts": {"execute": "e", "retry": ["r1"], "broaden": "b", "handoff": "h"},
                },
                {
                    "id": "b",
                    "importance": "normal",
                    "requires": ["G"],
                    "requiresStates": ["S0"],
                    "producesStates": ["S"],
                    "retryPolicy": {"onExhaust": "HANDOFF", "promptVariantStrategy": "ESCALATE"},
                },
                {"id": "c", "importance": "low", "retryPolicy": {"onExhaust": "CLARIFY"}, "producesStates": ["S"]},
            ],
        }
    )
    assert (f.id, f.version, f.description) == ("full", 4, "all fields")
    assert (f.primary_goal.type, f.primary_goal.state) == ("STATE", "S")
    assert f.defaults.retry_policy == RetryPolicy(
        max_attempts=7,
        on_exhaust=OnExhaust.SKIP,
        cooldown_turns=2,
        prompt_variant_strategy=VariantStrategy.ROTATE,
    )
    assert f.post_goal_policy is PostGoalPolicy.CONTINUE_HIGH and f.execute_satisfied_silently is True
    assert f.fact_aliases == {"raw": "x"}
    gate = f.gates["G"]
    assert (gate.satisfied_by.metrics_all, gate.satisfied_by.metrics_any, gate.description) == (("x",), ("x",), "d")
    a, b, c = f.nodes
    assert (a.importance, b.importance, c.importance) == (Importance.HIGH, Importance.NORMAL, Importance.LOW)
    assert (a.objective, a.produces, a.produces_states, a.satisfies.gates) == ("o", ("raw",), ("S0",), ("G",))
    assert a.run_policy.max_executions == 2
    assert a.retry_policy is not None
    assert (a.retry_policy.max_attempts, a.retry_policy.on_exhaust) == (1, OnExhaust.BROADEN)
    assert a.retry_policy.prompt_variant_strategy is VariantStrategy.REPHRASE
    assert (a.prompts.execute, a.prompts.retry, a.prompts.broaden, a.prompts.handoff) == ("e", ("r1",), "b", "h")
    assert (b.requires, b.requires_states) == (("G",), ("S0",))
    assert b.retry_policy is not None and b.retry_policy.on_exhaust is OnExhaust.HANDOFF
    assert b.retry_policy.prompt_variant_strategy is VariantStrategy.ESCALATE
    assert c.retry_policy is not None and c.retry_policy.on_exhaust is OnExhaust.CLARIFY


def test_the_enumerations_read_their_documented_values() -> None:
    assert [m.value for m in Importance] == ["high", "normal", "low"]
    assert [m.value for m in OnExhaust] == ["CLARIFY", "BROADEN", "HANDOFF", "SKIP"]
    assert [m.value for m in VariantStrategy] == ["ROTATE", "ESCALATE", "REPHRASE"]
    assert [m.value for m in PostGoalPolicy] == ["STOP", "CONTINUE_HIGH"]


def test_importance_scores_rank_high_over_normal_over_low() -> None:
    assert IMPORTANCE_SCORE[Importance.HIGH] > IMPORTANCE_SCORE[Importance.NORMAL] > IMPORTANCE_SCORE[Importance.LOW]


def test_defaults_of_a_minimal_definition() -> None:
    f = parse_definition(raw())
    assert (f.version, f.description, f.gates["G"].description) == (1, "", "")
    assert f.post_goal_policy is PostGoalPolicy.STOP and f.execute_satisfied_silently is False
    assert f.fact_aliases == {}
    assert f.defaults.retry_policy == RetryPolicy(
        max_attempts=3, on_exhaust=OnExhaust.CLARIFY, cooldown_turns=0, prompt_variant_strategy=VariantStrategy.ESCALATE
    )
    node = f.nodes[0]
    assert node.importance is Importance.NORMAL and node.objective == ""
    assert (node.requires, node.requires_states, node.produces_states, node.satisfies.gates) == ((), (), (), ())
    assert node.run_policy.max_executions is None and node.retry_policy is None
    assert (node.prompts.execute, node.prompts.retry, node.prompts.broaden, node.prompts.handoff) == ("", (), "", "")
    assert f.retry_policy(node) is f.defaults.retry_policy
    gate = f.gates["G"].satisfied_by
    assert (gate.metrics_any, gate.states_all) == ((), ())


def test_a_node_retry_policy_overrides_the_default() -> None:
    f = parse_definition(raw([{"id": "a", "produces": ["x"], "retryPolicy": {"maxAttempts": 9}}]))
    assert f.retry_policy(f.nodes[0]).max_attempts == 9
    assert f.retry_policy(f.nodes[0]).on_exhaust is OnExhaust.CLARIFY  # the rest from the model's defaults


def test_definitions_are_frozen() -> None:
    f = parse_definition(raw())
    with pytest.raises(ValidationError, match="frozen"):
        f.description = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        f.nodes[0].objective = "changed"  # type: ignore[misc]


def test_definitions_can_be_built_by_field_name() -> None:
    f = FlowDefinition(
        id="t",
        primary_goal={"type": "STATE", "state": "S"},  # type: ignore[arg-type]
        nodes=({"id": "a", "produces_states": ["S"], "retry_policy": {"max_attempts": 2}},),  # type: ignore[arg-type]
    )
    assert f.nodes[0].produces_states == ("S",)
    assert f.nodes[0].retry_policy is not None and f.nodes[0].retry_policy.max_attempts == 2


def test_unknown_fields_are_refused_with_their_path() -> None:
    body = raw([{"id": "a", "produces": ["x"], "retryPolicy": {"maxAttempt": 2}}], colour="blue")
    assert {
        ("$.colour", "Extra inputs are not permitted"),
        ("$.nodes[0].retryPolicy.maxAttempt", "Extra inputs are not permitted"),
    } <= set(problems_of(body))


def test_to_json_dict_uses_the_documented_names_and_keeps_defaults() -> None:
    out = parse_definition(raw()).to_json_dict()
    assert out["primaryGoal"] == {"type": "GATE", "gate": "G", "state": None}
    assert out["postGoalPolicy"] == "STOP" and out["executeSatisfiedSilently"] is False
    assert out["defaults"] == {
        "retryPolicy": {
            "maxAttempts": 3,
            "onExhaust": "CLARIFY",
            "cooldownTurns": 0,
            "promptVariantStrategy": "ESCALATE",
        }
    }
    node = out["nodes"][0]
    assert node["importance"] == "normal" and node["runPolicy"] == {"maxExecutions": None}
    assert node["requiresStates"] == [] and node["retryPolicy"] is None
    assert out["gates"]["G"]["satisfiedBy"] == {"metricsAll": ["x"], "metricsAny": [], "statesAll": []}
    json.dumps(out)  # JSON-ready: enums as their values, tuples as lists


# -- bounds -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "path"),
    [
        ({"maxAttempts": 0}, "maxAttempts"),
        ({"maxAttempts": 101}, "maxAttempts"),
        ({"cooldownTurns": -1}, "cooldownTurns"),
        ({"cooldownTurns": 101}, "cooldownTurns"),
    ],
)
def test_retry_policy_bounds_refuse(policy: dict[str, int], path: str) -> None:
    body = raw([{"id": "a", "produces": ["x"], "retryPolicy": policy}])
    assert f"$.nodes[0].retryPolicy.{path}" in paths_of(body)


@pytest.mark.parametrize(
    "policy", [{"maxAttempts": 1}, {"maxAttempts": 100}, {"cooldownTurns": 0}, {"cooldownTurns": 100}]
)
def test_retry_policy_bounds_accept(policy: dict[str, int]) -> None:
    assert problems_of(raw([{"id": "a", "produces": ["x"], "retryPolicy": policy}])) == []


def test_run_policy_and_version_bounds() -> None:
    assert problems_of(raw([{"id": "a", "produces": ["x"], "runPolicy": {"maxExecutions": 1}}])) == []
    assert "$.nodes[0].runPolicy.maxExecutions" in paths_of(
        raw([{"id": "a", "produces": ["x"], "runPolicy": {"maxExecutions": 0}}])
    )
    assert problems_of(raw(version=1)) == []
    assert [p for p, _ in problems_of(raw(version=0))] == ["$.version"]


def test_node_id_length_bounds() -> None:
    def with_id(node_id: str) -> dict[str, Any]:
        return raw([{"id": node_id, "produces": ["x"]}])

    assert problems_of(with_id("a")) == [] and problems_of(with_id("n" * 100)) == []
    assert "$.nodes[0].id" in paths_of(with_id(""))
    assert "$.nodes[0].id" in paths_of(with_id("n" * 101))


@pytest.mark.parametrize("flow_id", ["t", "0-a_b", "a" * 64])
def test_flow_id_pattern_accepts(flow_id: str) -> None:
    assert problems_of(raw(id=flow_id)) == []


@pytest.mark.parametrize("flow_id", ["", "-a", "_a", "A", "a b", "a" * 65, "a/b"])
def test_flow_id_pattern_refuses(flow_id: str) -> None:
    assert [p for p, _ in problems_of(raw(id=flow_id))] == ["$.id"]


def test_a_flow_needs_a_node() -> None:
    assert [p for p, _ in problems_of(raw([]))] == ["$.nodes"]


def test_goal_types_need_their_target() -> None:
    assert problems_of(raw(primaryGoal={"type": "GATE"})) == [
        ("$.primaryGoal", "Value error, a GATE goal needs 'gate'")
    ]
    assert problems_of(raw(primaryGoal={"type": "STATE", "gate": "G"})) == [
        ("$.primaryGoal", "Value error, a STATE goal needs 'state'")
    ]
    assert problems_of(raw(primaryGoal={"type": "GATE", "gate": ""})) == [
        ("$.primaryGoal", "Value error, a GATE goal needs 'gate'")
    ]
    both = raw(primaryGoal={"type": "STATE", "state": "S", "gate": "G"}, nodes=[{"id": "a", "producesStates": ["S"]}])
    assert problems_of(both) == [("$.gates.G.satisfiedBy.metricsAll[0]", "fact 'x' is produced by no node")]


# -- parsing text ------------------------------------------------------------------------------------


def test_text_that_is_not_json_is_one_problem_at_the_root() -> None:
    definition, problems = parse_text("{not json")
    assert definition is None and len(problems) == 1
    assert problems[0].path == "$" and problems[0].message.startswith("not valid JSON: Expecting property name")


def test_duplicate_keys_are_listed_once_each_sorted_and_before_other_problems() -> None:
    text = (
        '{"id": "t", "id": "t", "primaryGoal": {"type": "GATE", "gate": "NOPE"},'
        ' "gates": {"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "G": {"satisfiedBy": {"metricsAll": ["x"]}}},'
        ' "nodes": [{"id": "a", "produces": ["x"]}]}'
    )
    definition, problems = parse_text(text.encode())
    assert definition is None
    assert [str(p) for p in problems] == [
        "$: duplicate key 'G'",
        "$: duplicate key 'id'",
        "$.primaryGoal.gate: undefined gate 'NOPE'",
        "$.primaryGoal: no sequence of nodes can satisfy the primary goal",
    ]


def test_duplicate_keys_alone_make_the_text_invalid() -> None:
    text = json.dumps(raw())[:-1] + ', "id": "t"}'
    definition, problems = parse_text(text)
    assert definition is None and [str(p) for p in problems] == ["$: duplicate key 'id'"]


def test_valid_text_parses_without_problems() -> None:
    definition, problems = parse_text(json.dumps(raw()))
    assert problems == [] and definition == parse_definition(raw())


def test_parse_definition_raises_every_problem() -> None:
    with pytest.raises(DefinitionInvalid) as caught:
        parse_definition(raw(primaryGoal={"type": "GATE", "gate": "NOPE"}))
    assert str(caught.value) == (
        "$.primaryGoal.gate: undefined gate 'NOPE'; $.primaryGoal: no sequence of nodes can satisfy the primary goal"
    )
    assert [p.path for p in caught.value.problems] == ["$.primaryGoal.gate", "$.primaryGoal"]


def test_problem_text_and_schema_paths() -> None:
    assert str(Problem(path="$.a", message="m")) == "$.a: m"
    body = raw([{"id": "a", "produces": ["x"]}, {"id": "b", "prompts": {"retry": ["ok", 3]}}])
    assert problems_of(body) == [("$.nodes[1].prompts.retry[1]", "Input should be a valid string")]


def test_a_body_that_is_not_an_object_is_a_root_problem() -> None:
    assert problems_of([1, 2]) == [("$", "Input should be a valid dictionary or instance of FlowDefinition")]


# -- semantic problems -----------------------------------------------------------------------------


def test_duplicate_node_ids_are_reported_at_each_repeat() -> None:
    nodes = [{"id": "a", "produces": ["x"]}, {"id": "b"}, {"id": "a"}, {"id": "a"}]
    assert [p for p in problems_of(raw(nodes)) if "duplicate" in p[1]] == [
        ("$.nodes[2].id", "duplicate node id 'a'"),
        ("$.nodes[3].id", "duplicate node id 'a'"),
    ]


def test_an_empty_gate_is_a_problem() -> None:
    body = raw(gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "E": {"satisfiedBy": {}}})
    assert problems_of(body) == [("$.gates.E.satisfiedBy", "empty: the gate would always be satisfied")]


@pytest.mark.parametrize(
    "satisfied_by", [{"metricsAll": ["x"]}, {"metricsAny": ["x"]}, {"statesAll": ["S"]}], ids=["all", "any", "states"]
)
def test_a_gate_with_any_one_condition_is_not_empty(satisfied_by: dict[str, list[str]]) -> None:
    body = raw(
        [{"id": "a", "produces": ["x"], "producesStates": ["S"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": satisfied_by}},
    )
    assert problems_of(body) == []


def test_gate_conditions_naming_nothing_produced_are_reported_by_index() -> None:
    body = raw(
        [{"id": "a", "produces": ["x"], "producesStates": ["S"]}],
        gates={
            "G": {"satisfiedBy": {"metricsAll": ["x", "nope"], "metricsAny": ["x", "ghost"]}},
            "H": {"satisfiedBy": {"statesAll": ["S", "NOSTATE"]}},
        },
    )
    assert problems_of(body) == [
        ("$.gates.G.satisfiedBy.metricsAll[1]", "fact 'nope' is produced by no node"),
        ("$.gates.G.satisfiedBy.metricsAny[1]", "fact 'ghost' is produced by no node"),
        ("$.gates.H.satisfiedBy.statesAll[1]", "state 'NOSTATE' is produced by no node"),
        ("$.primaryGoal", "no sequence of nodes can satisfy the primary goal"),
    ]


def test_gate_facts_are_matched_through_aliases() -> None:
    body = raw([{"id": "a", "produces": ["raw_x"]}], factAliases={"raw_x": "x"})
    assert problems_of(body) == []
    unaliased = raw([{"id": "a", "produces": ["raw_x"]}])
    assert ("$.gates.G.satisfiedBy.metricsAll[0]", "fact 'x' is produced by no node") in problems_of(unaliased)


def test_undefined_gates_and_unproduced_states_in_nodes_are_reported_by_index() -> None:
    nodes = [
        {"id": "a", "produces": ["x"], "producesStates": ["S"]},
        {"id": "b", "requires": ["G", "NOGATE"], "satisfies": {"gates": ["G", "OTHER"]}},
        {"id": "c", "requiresStates": ["S", "NOSTATE"]},
    ]
    assert problems_of(raw(nodes)) == [
        ("$.nodes[1].requires[1]", "undefined gate 'NOGATE'"),
        ("$.nodes[1].satisfies.gates[1]", "undefined gate 'OTHER'"),
        ("$.nodes[2].requiresStates[1]", "state 'NOSTATE' is produced by no node"),
        ("$.nodes[1]", "node 'b' is unreachable: its requirements never hold"),
        ("$.nodes[2]", "node 'c' is unreachable: its requirements never hold"),
    ]


def test_goal_targets_must_exist() -> None:
    assert problems_of(raw(primaryGoal={"type": "GATE", "gate": "NOPE"})) == [
        ("$.primaryGoal.gate", "undefined gate 'NOPE'"),
        ("$.primaryGoal", "no sequence of nodes can satisfy the primary goal"),
    ]
    assert problems_of(raw(primaryGoal={"type": "STATE", "state": "NOPE"})) == [
        ("$.primaryGoal.state", "state 'NOPE' is produced by no node"),
        ("$.primaryGoal", "no sequence of nodes can satisfy the primary goal"),
    ]


def test_a_state_goal_produced_by_a_reachable_node_is_valid() -> None:
    body = raw([{"id": "a", "produces": ["x"], "producesStates": ["S"]}], primaryGoal={"type": "STATE", "state": "S"})
    assert problems_of(body) == []


def test_a_state_goal_produced_only_by_an_unreachable_node() -> None:
    body = raw(
        [{"id": "a", "produces": ["x"]}, {"id": "b", "requiresStates": ["S"], "producesStates": ["S"]}],
        primaryGoal={"type": "STATE", "state": "S"},
    )
    assert problems_of(body) == [
        ("$.nodes[1]", "node 'b' is unreachable: its requirements never hold"),
        ("$.primaryGoal", "no sequence of nodes can satisfy the primary goal"),
    ]


def test_a_gate_goal_on_a_gate_nothing_can_satisfy() -> None:
    body = raw(
        [{"id": "a", "produces": ["x"]}, {"id": "b", "requires": ["G"], "produces": ["y"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAll": ["x", "y", "z"]}}},
        primaryGoal={"type": "GATE", "gate": "H"},
    )
    assert problems_of(body) == [
        ("$.gates.H.satisfiedBy.metricsAll[2]", "fact 'z' is produced by no node"),
        ("$.primaryGoal", "no sequence of nodes can satisfy the primary goal"),
    ]


# -- aliases ------------------------------------------------------------------------------------------


def test_canonical_follows_aliases_transitively() -> None:
    f = parse_definition(raw(factAliases={"a": "b", "b": "x"}))
    assert [f.canonical(n) for n in ("a", "b", "x", "other")] == ["x", "x", "x", "other"]


def test_canonical_stops_where_a_cycle_would_repeat() -> None:
    f = FlowDefinition.model_validate(raw(factAliases={"a": "b", "b": "c", "c": "a"}))  # schema only
    assert [f.canonical(n) for n in ("a", "b", "c")] == ["c", "a", "b"]
    loop = FlowDefinition.model_validate(raw(factAliases={"s": "s"}))
    assert loop.canonical("s") == "s"


def test_a_chain_into_a_cycle_stops_before_repeating() -> None:
    aliases = {"x": "a", "a": "b", "b": "a"}
    f = FlowDefinition.model_validate(raw(factAliases=aliases))
    assert f.canonical("x") == "b"
    body = raw([{"id": "n", "produces": ["x"]}], factAliases=aliases)
    assert ("$.factAliases.a", "alias cycle: a → b → a") in problems_of(body)


def test_alias_cycles_are_reported_once_each_from_where_they_start() -> None:
    body = raw(factAliases={"a": "b", "b": "c", "c": "b", "s": "s", "p": "q", "q": "p"})
    assert [p for p in problems_of(body) if p[0].startswith("$.factAliases")] == [
        ("$.factAliases.b", "alias cycle: b → c → b"),
        ("$.factAliases.s", "alias cycle: s → s"),
        ("$.factAliases.p", "alias cycle: p → q → p"),
    ]


def test_an_alias_chain_without_a_cycle_is_fine() -> None:
    assert problems_of(raw(factAliases={"p": "q", "q": "r"})) == []


# -- reachability -------------------------------------------------------------------------------------


def test_reachability_is_a_fixpoint_over_gates_states_and_aliases() -> None:
    f = FlowDefinition.model_validate(
        raw(
            [
                {"id": "last", "requires": ["H"], "producesStates": ["END"]},
                {"id": "mid", "requiresStates": ["S"], "produces": ["raw_y"]},
                {"id": "first", "produces": ["x"], "producesStates": ["S"]},
                {"id": "never", "requiresStates": ["NOBODY"], "produces": ["z"]},
            ],
            gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "H": {"satisfiedBy": {"metricsAny": ["q", "y"]}}},
            factAliases={"raw_y": "y"},
        )
    )
    nodes, facts, states = reachability(f)
    assert nodes == {"first", "mid", "last"}
    assert facts == {"x", "y"} and states == {"S", "END"}


def test_metrics_any_needs_one_of_its_facts() -> None:
    body = raw(
        [{"id": "a", "produces": ["x"]}, {"id": "b", "requires": ["ANY"], "produces": ["y"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "ANY": {"satisfiedBy": {"metricsAny": ["y", "z"]}}},
    )
    assert ("$.nodes[1]", "node 'b' is unreachable: its requirements never hold") in problems_of(body)
    body["nodes"].append({"id": "c", "produces": ["z"]})
    assert problems_of(body) == []


def test_states_all_needs_every_state() -> None:
    body = raw(
        [
            {"id": "a", "produces": ["x"], "producesStates": ["S1"]},
            {"id": "b", "requires": ["BOTH"], "producesStates": ["S2"]},
        ],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "BOTH": {"satisfiedBy": {"statesAll": ["S1", "S2"]}}},
    )
    assert problems_of(body) == [("$.nodes[1]", "node 'b' is unreachable: its requirements never hold")]


def test_metrics_all_needs_every_fact() -> None:
    body = raw(
        [{"id": "a", "produces": ["x"]}, {"id": "b", "requires": ["BOTH"], "produces": ["y"]}],
        gates={"G": {"satisfiedBy": {"metricsAll": ["x"]}}, "BOTH": {"satisfiedBy": {"metricsAll": ["x", "y"]}}},
    )
    assert problems_of(body) == [("$.nodes[1]", "node 'b' is unreachable: its requirements never hold")]


def test_node_lookup() -> None:
    f = parse_definition(raw([{"id": "a", "produces": ["x"]}, {"id": "b"}]))
    assert f.node("b") is f.nodes[1] and f.node("zzz") is None
