"""The flow controller's metrics (docs/controller.md, "Observability"), read from the EMF output the
way ``test_observability`` reads a turn's: a completed intake, a hand-off and a deadlock."""

from __future__ import annotations

from typing import Any

import pytest

from promptpipe.observability import metrics
from tests.integration.test_observability import _emf_blobs, _metric_names
from tests.unit.test_intake_in_context import CapableStandIn, hand_off_at_the_habit, save, start
from tests.unit.test_intake_steering import intake_raw


@pytest.fixture
def emitted(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Runs a scenario and returns the metrics it emitted: name → the EMF blobs carrying it."""
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)

    def run(scenario: Any) -> dict[str, list[dict[str, Any]]]:
        metrics.clear_metrics()  # what earlier tests in this process left in the buffer
        capfd.readouterr()
        scenario()
        metrics.flush_metrics()  # the metrics without dimensions (NeedsPerson) are buffered
        by_name: dict[str, list[dict[str, Any]]] = {}
        for blob in _emf_blobs(capfd.readouterr().out):
            for name in _metric_names(blob):
                by_name.setdefault(name, []).append(blob)
        return by_name

    return run


def test_a_completed_intake_emits_decisions_retries_completions_and_turns(emitted) -> None:
    def scenario() -> None:
        _h, chat = start(CapableStandIn())
        chat.say("walking", [save(habit_domain="walking")], "Why does walking matter to you?")
        chat.say("hmm", [], "What would make it worth it for you?")  # nothing learned: retried later
        chat.say("more energy", [save(motivational_frame="more energy")], "What time suits you?")
        chat.say("7pm", [save(preferred_time="19:00")], "What could it follow?")
        generate = ("generate_habit_prompt", {"delivery_mode": "immediate"})
        chat.say("dinner", [save(prompt_anchor="after dinner"), generate], "Shall I send it daily at 7pm?")
        chat.say("yes", [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"})], "Done!")

    by_name = emitted(scenario)
    decisions = {blob["mode"] for blob in by_name["ControllerDecisions"]}
    assert {"EXECUTE", "RETRY"} <= decisions
    retried = by_name["ControllerRetries"]
    assert retried and all(blob["flow"] == "intake" and blob["node"] for blob in retried)
    assert [blob["flow"] for blob in by_name["ControllerCompletions"]] == ["intake"]
    assert [blob["ControllerTurnsToComplete"] for blob in by_name["ControllerTurnsToComplete"]] == [[6.0]]
    assert "NeedsPerson" not in by_name


def test_a_hand_off_emits_handoffs_and_needs_person(emitted) -> None:
    def scenario() -> None:
        hand_off_at_the_habit(start(CapableStandIn())[1])

    by_name = emitted(scenario)
    assert [blob["flow"] for blob in by_name["ControllerHandoffs"]] == ["intake"]
    assert [blob["NeedsPerson"] for blob in by_name["NeedsPerson"]] == [[1.0]]


def test_a_deadlock_emits_deadlocks_and_needs_person(emitted) -> None:
    def scenario() -> None:
        h, chat = start(CapableStandIn())
        flows = h.app.deps.flows
        assert flows is not None
        flows.latest("intake")
        raw = intake_raw()
        raw["nodes"][0]["runPolicy"] = {"maxExecutions": 1}
        raw["nodes"][0]["retryPolicy"] = {"maxAttempts": 5, "onExhaust": "CLARIFY"}
        flows.push(raw)
        chat.say("hello", [], "Hi! What habit would you like to build?")
        chat.say("not sure", [], "Maybe a walk?")

    by_name = emitted(scenario)
    assert [blob["flow"] for blob in by_name["ControllerDeadlocks"]] == ["intake"]
    assert "NeedsPerson" in by_name
