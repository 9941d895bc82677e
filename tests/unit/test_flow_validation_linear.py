"""Flow validation is linear in the definition's size: alias resolution and reachability count their
steps, and those counts (not wall time, which is flaky on a shared machine) are bounded by the
number of aliases and of names mentioned. Both agree with the straightforward definitions they
replace (following one alias at a time; re-checking every node until nothing changes) on seeded
random definitions."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from promptpipe.controller.definition import (
    FlowDefinition,
    Reachability,
    parse_definition,
    parse_text,
    reachability,
    resolve_aliases,
    validate,
)

CHAIN = 3_000


def _follow(aliases: dict[str, str], fact: str) -> str:
    """The canonical name by following one alias at a time, stopping where it would repeat."""
    seen = {fact}
    while fact in aliases:
        nxt = aliases[fact]
        if nxt in seen:
            break
        seen.add(nxt)
        fact = nxt
    return fact


def _cycles(aliases: dict[str, str]) -> list[list[str]]:
    """Every cycle once, from the first alias (in order) that reaches it, entered where it repeats."""
    found: list[list[str]] = []
    reported: set[frozenset[str]] = set()
    for start in aliases:
        chain = [start]
        current = start
        while current in aliases:
            current = aliases[current]
            if current in chain:
                cycle = chain[chain.index(current) :]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    found.append(cycle)
                break
            chain.append(current)
    return found


def _fixpoint(flow: FlowDefinition) -> tuple[set[str], set[str], set[str]]:
    """Reachability by re-checking every node until nothing changes."""
    reachable: set[str] = set()
    facts: set[str] = set()
    states: set[str] = set()

    def gates() -> set[str]:
        return {
            name
            for name, gate in flow.gates.items()
            if all(f in facts for f in gate.satisfied_by.metrics_all)
            and (not gate.satisfied_by.metrics_any or any(f in facts for f in gate.satisfied_by.metrics_any))
            and all(s in states for s in gate.satisfied_by.states_all)
        }

    changed = True
    while changed:
        changed = False
        open_gates = gates()
        for node in flow.nodes:
            if node.id not in reachable and set(node.requires) <= open_gates and set(node.requires_states) <= states:
                reachable.add(node.id)
                facts |= {flow.canonical(f) for f in node.produces}
                states |= set(node.produces_states)
                changed = True
    return reachable, facts, states


def _chain_flow(length: int, *, cycle: bool = False) -> dict[str, Any]:
    aliases = {f"a{i}": f"a{i + 1}" for i in range(length)}
    if cycle:
        aliases[f"a{length}"] = "a0"
    return {
        "id": "chain",
        "primaryGoal": {"type": "GATE", "gate": "G"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": [f"a{length}"]}}},
        "factAliases": aliases,
        "nodes": [{"id": "n", "produces": ["a0"]}],
    }


# -- the step counts -------------------------------------------------------------------------------


def test_a_3000_alias_chain_resolves_in_one_step_per_alias() -> None:
    aliases = _chain_flow(CHAIN)["factAliases"]
    resolution = resolve_aliases(aliases)
    assert resolution.steps == CHAIN  # the walk from a0 resolves every later name on the way
    assert set(resolution.canonical.values()) == {f"a{CHAIN}"} and resolution.cycles == []


def test_a_3000_alias_cycle_resolves_in_one_step_per_alias_and_is_reported_once() -> None:
    aliases = _chain_flow(CHAIN, cycle=True)["factAliases"]
    resolution = resolve_aliases(aliases)
    assert resolution.steps == CHAIN + 1
    assert len(resolution.cycles) == 1 and len(resolution.cycles[0]) == CHAIN + 1


def test_the_3000_alias_chain_validates_and_the_cycle_is_one_problem() -> None:
    definition, problems = parse_text(json.dumps(_chain_flow(CHAIN)))
    assert problems == [] and definition is not None and definition.canonical("a0") == f"a{CHAIN}"
    definition, problems = parse_text(json.dumps(_chain_flow(CHAIN, cycle=True)))
    assert definition is None
    assert [p.path for p in problems if p.message.startswith("alias cycle: a0 → a1 → ")] == ["$.factAliases.a0"]


def _gate_chain(length: int) -> dict[str, Any]:
    """Node i needs gate Gi, which only node i+1 opens; listed last-needed-first, so re-checking
    every node until nothing changes takes ``length`` passes over ``length`` nodes."""
    nodes = [{"id": f"n{i}", "requires": [f"G{i}"], "produces": [f"f{i + 1}"]} for i in range(length)]
    nodes.append({"id": "start", "produces": ["f0"]})
    gates = {f"G{i}": {"satisfiedBy": {"metricsAll": [f"f{i}"]}} for i in range(length)}
    gates["DONE"] = {"satisfiedBy": {"metricsAll": [f"f{length}"]}}
    return {"id": "gates", "primaryGoal": {"type": "GATE", "gate": "DONE"}, "gates": gates, "nodes": nodes}


def test_reachability_over_3000_chained_gates_takes_a_step_per_mention() -> None:
    flow = parse_definition(_gate_chain(CHAIN))  # valid: the whole chain is reachable
    run = Reachability(flow)
    reachable, facts, _states = run.run()
    assert len(reachable) == CHAIN + 1 and f"f{CHAIN}" in facts
    # each chain gate is told once about its fact and tells its one node once; DONE is told once
    assert run.steps == 2 * CHAIN + 1


# -- the same answers as the definitions they replace -------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_alias_resolution_agrees_with_following_one_alias_at_a_time(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"f{i}" for i in range(rng.randint(1, 30))]
    aliases = {name: rng.choice(names) for name in rng.sample(names, rng.randint(0, len(names)))}
    resolution = resolve_aliases(aliases)
    assert {name: _follow(aliases, name) for name in names} == {
        name: resolution.canonical.get(name, name) for name in names
    }
    assert resolution.cycles == _cycles(aliases)
    assert resolution.steps <= len(aliases)


def _random_flow(rng: random.Random) -> dict[str, Any]:
    facts = [f"f{i}" for i in range(8)]
    states = [f"S{i}" for i in range(5)]
    gate_names = [f"G{i}" for i in range(6)]

    def some(pool: list[str], most: int) -> list[str]:
        return rng.sample(pool, rng.randint(0, most))

    gates = {
        name: {
            "satisfiedBy": {"metricsAll": some(facts, 2), "metricsAny": some(facts, 2), "statesAll": some(states, 1)}
        }
        for name in gate_names
    }
    nodes = [
        {
            "id": f"n{i}",
            "requires": some([*gate_names, "UNDEFINED"], 2),
            "requiresStates": some(states, 1),
            "produces": some(facts, 2),
            "producesStates": some(states, 1),
        }
        for i in range(rng.randint(1, 10))
    ]
    aliases = {f: rng.choice(facts) for f in some(facts, 3)}
    return {
        "id": "random",
        "primaryGoal": {"type": "GATE", "gate": gate_names[0]},
        "gates": gates,
        "nodes": nodes,
        "factAliases": aliases,
    }


@pytest.mark.parametrize("seed", range(60))
def test_reachability_agrees_with_rechecking_every_node_until_nothing_changes(seed: int) -> None:
    raw = _random_flow(random.Random(seed))
    flow = FlowDefinition.model_validate(raw)  # possibly invalid semantically: both must still agree
    assert reachability(flow) == _fixpoint(flow)
    validate(raw)  # and the whole validation runs on it
