"""The controller's runtime state as stored (``controllerState``, docs/controller.md "Runtime state"):
camelCase keys, sets kept sorted and unique so the same state always serialises to the same text."""

from __future__ import annotations

import json

from promptpipe.controller.runtime import Hold, Mode, RuntimeState, Status, TurnLogEntry


def test_a_new_state_serialises_with_the_documented_keys() -> None:
    stored = json.loads(RuntimeState.start("intake", 3).to_json())
    assert stored == {
        "flowId": "intake",
        "flowVersion": 3,
        "turnIndex": 0,
        "facts": [],
        "states": [],
        "gatesSatisfied": [],
        "attemptsByNode": {},
        "executionsByNode": {},
        "lastAttemptTurnByNode": {},
        "broadenedNodes": [],
        "skippedNodes": [],
        "lastNode": None,
        "consecutiveSelections": 0,
        "completedAtTurn": None,
        "hold": None,
        "turnLog": [],
    }


def test_nested_entries_use_the_documented_keys_and_round_trip() -> None:
    rt = RuntimeState(
        flow_id="intake",
        flow_version=1,
        hold=Hold(kind=Mode.HANDOFF, node_id="anchor", reason="r", turn_index=4),
        turn_log=[TurnLogEntry(turn_index=4, node_id="anchor", mode=Mode.HANDOFF, facts_produced=["habit"])],
    )
    stored = json.loads(rt.to_json())
    assert stored["hold"] == {"kind": "HANDOFF", "nodeId": "anchor", "reason": "r", "turnIndex": 4}
    assert stored["turnLog"] == [
        {
            "turnIndex": 4,
            "nodeId": "anchor",
            "mode": "HANDOFF",
            "status": "OK",
            "reason": "",
            "factsProduced": ["habit"],
            "statesProduced": [],
        }
    ]
    assert RuntimeState.from_json(rt.to_json()) == rt
    deadlock = Hold(kind=Status.DEADLOCK, reason="stuck", turn_index=2)
    assert RuntimeState.from_json(rt.model_copy(update={"hold": deadlock}).to_json()).hold == deadlock


def test_sets_are_stored_sorted_and_unique_so_equal_states_serialise_equally() -> None:
    a = RuntimeState(
        flow_id="f",
        flow_version=1,
        facts=["b", "a", "b"],
        states=["Z", "A"],
        gates_satisfied=["H", "G", "H"],
        broadened_nodes=["y", "x"],
        skipped_nodes=["q", "p", "q"],
    )
    b = RuntimeState(
        flow_id="f",
        flow_version=1,
        facts=["a", "b"],
        states=["A", "Z"],
        gates_satisfied=["G", "H"],
        broadened_nodes=["x", "y"],
        skipped_nodes=["p", "q"],
    )
    assert (a.facts, a.states, a.gates_satisfied, a.broadened_nodes, a.skipped_nodes) == (
        ["a", "b"],
        ["A", "Z"],
        ["G", "H"],
        ["x", "y"],
        ["p", "q"],
    )
    assert a.to_json() == b.to_json()


def test_counters_default_to_zero() -> None:
    rt = RuntimeState(flow_id="f", flow_version=1, attempts_by_node={"a": 2}, executions_by_node={"a": 1})
    assert (rt.attempts("a"), rt.attempts("b"), rt.executions("a"), rt.executions("b")) == (2, 0, 1, 0)
