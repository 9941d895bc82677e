"""The controller's part of a turn's tools (``steering.turn_tools``) and the release of a hold
(``engine.release_hold``), on the bundled intake flow: pure functions, no I/O."""

from __future__ import annotations

from pathlib import Path

from promptpipe.controller.definition import NODE_TOOLS, FlowDefinition, parse_text
from promptpipe.controller.engine import begin_turn, decide, record_outcome, release_hold
from promptpipe.controller.runtime import Hold, Mode, RuntimeState, Status
from promptpipe.flow.steering import tools_of, turn_tools

INTAKE = Path(__file__).parents[2] / "prompts" / "flows" / "intake.json"
SAVE, GENERATE, SCHEDULER = "save_user_profile", "generate_habit_prompt", "scheduler"


def flow() -> FlowDefinition:
    definition, problems = parse_text(INTAKE.read_text())
    assert definition is not None, problems
    return definition


def knowing(*facts: str, states: tuple[str, ...] = ()) -> RuntimeState:
    definition = flow()
    runtime, _ = record_outcome(definition, RuntimeState.start("intake", 1), list(facts), list(states))
    return runtime


def test_a_fact_node_is_offered_the_save_and_the_last_one_what_follows_without_a_question() -> None:
    definition = flow()
    fresh = knowing()
    assert decide(definition, fresh).node_id == "habit"
    assert turn_tools(definition, fresh, decide(definition, fresh)) == (SAVE,)
    last = knowing("habit_domain", "motivational_frame", "preferred_time")
    decision = decide(definition, last)
    assert decision.node_id == "anchor"
    assert turn_tools(definition, last, decision) == (SAVE, GENERATE, SCHEDULER)


def test_the_schedule_offer_is_offered_the_scheduler() -> None:
    definition = flow()
    offered = knowing("habit_domain", "motivational_frame", "preferred_time", "prompt_anchor",
                      states=("FIRST_PROMPT_OFFERED",))  # fmt: skip
    decision = decide(definition, offered)
    assert decision.node_id == "schedule"
    assert SCHEDULER in turn_tools(definition, offered, decision)


def test_a_node_without_tools_gets_what_its_effects_need() -> None:
    definition = flow()
    by_id = {n.id: n.model_copy(update={"tools": None}) for n in definition.nodes}
    assert tools_of(by_id["time"]) == (SAVE,)
    assert tools_of(by_id["first-prompt"]) == (GENERATE,)
    assert tools_of(by_id["schedule"]) == (SCHEDULER,)
    nothing = by_id["time"].model_copy(update={"produces": ()})
    assert tools_of(nothing) == NODE_TOOLS


def test_a_paused_turn_keeps_the_held_nodes_tools() -> None:
    definition = flow()
    held = knowing().model_copy(update={"hold": Hold(kind=Mode.HANDOFF, node_id="habit", reason="x", turn_index=3)})
    decision = decide(definition, held)
    assert decision.status is Status.PAUSED and turn_tools(definition, held, decision) == (SAVE,)


def test_releasing_a_hand_off_gives_the_node_a_fresh_attempt_budget_and_keeps_the_rest() -> None:
    definition = flow()
    runtime = knowing()
    for _ in range(6):  # habit asked again and again: four attempts, BROADEN, then HANDOFF
        runtime = begin_turn(definition, runtime, decide(definition, runtime))
    assert runtime.hold is not None and runtime.hold.node_id == "habit"
    assert runtime.attempts("habit") == 6 and "habit" in runtime.broadened_nodes
    released = release_hold(runtime)
    assert released.hold is None and released.attempts("habit") == 0 and released.broadened_nodes == []
    assert released.executions("habit") == runtime.executions("habit")
    again = decide(definition, released)
    assert (again.node_id, again.mode) == ("habit", Mode.EXECUTE)


def test_releasing_a_deadlock_gives_the_skipped_nodes_another_chance() -> None:
    runtime = knowing().model_copy(
        update={
            "hold": Hold(kind=Status.DEADLOCK, reason="stuck", turn_index=5),
            "skipped_nodes": ["first-prompt"],
            "attempts_by_node": {"first-prompt": 2, "habit": 1},
        }
    )
    released = release_hold(runtime)
    assert released.skipped_nodes == [] and released.attempts_by_node == {"habit": 1}
    assert release_hold(released) == released  # nothing held: unchanged


def test_releasing_a_hand_off_forgets_only_that_nodes_attempt_bookkeeping() -> None:
    runtime = knowing().model_copy(
        update={
            "hold": Hold(kind=Mode.HANDOFF, node_id="habit", reason="x", turn_index=7),
            "attempts_by_node": {"habit": 6, "first-prompt": 1},
            "last_attempt_turn_by_node": {"habit": 7, "first-prompt": 2},
            "broadened_nodes": ["habit", "first-prompt"],
        }
    )
    released = release_hold(runtime)
    assert released.attempts_by_node == {"first-prompt": 1}
    assert released.last_attempt_turn_by_node == {"first-prompt": 2}
    assert released.broadened_nodes == ["first-prompt"]


def test_releasing_a_deadlock_that_names_a_node_refreshes_it_and_every_skipped_node() -> None:
    runtime = knowing().model_copy(
        update={
            "hold": Hold(kind=Status.DEADLOCK, node_id="habit", reason="stuck", turn_index=9),
            "skipped_nodes": ["first-prompt"],
            "attempts_by_node": {"habit": 4, "first-prompt": 3, "anchor": 1},
            "last_attempt_turn_by_node": {"habit": 9, "first-prompt": 8, "anchor": 2},
        }
    )
    released = release_hold(runtime)
    assert released.attempts_by_node == {"anchor": 1}
    assert released.last_attempt_turn_by_node == {"anchor": 2}
    assert released.skipped_nodes == []
