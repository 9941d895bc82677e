"""An event's metrics, derived from its outcome: the one place the application's event metrics come
from (namespace ``PromptPipe``, published by ``run_once`` through ``promptpipe.observability``).

TurnsProcessed (module), ToolCalls (tool, outcome), StateTransitions (target), LLMCalls, LLMLatencyMs,
LLMPromptTokens, LLMCompletionTokens, ModelCostUSD (each model call of a turn or a daily prompt, its
estimated cost at rules/model_prices.py; LLMCallsUnpriced for a model without a price: the study's
spend cap, docs/safety.md#budgets),
DailyPromptsDelivered, the timers' RemindersSent,
AutoFeedbackTransitions, FeedbackNudgesSent, PausesEnded, StateSaveFailures; and what the flow observed on the
session (the flow controller's decisions, docs/controller.md, "Observability").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from promptpipe.models.metrics import Metric, metric
from promptpipe.usecases.outcomes import EventOutcome

if TYPE_CHECKING:
    from promptpipe.rules.model_prices import ModelPrice

_TIMER_METRICS = {
    "daily_prompt_reminder": "RemindersSent",
    "auto_feedback": "AutoFeedbackTransitions",
    "state_transition": "StateTransitions",
    "feedback_timeout": "FeedbackNudgesSent",
    "feedback_followup": "FeedbackNudgesSent",
    "schedule_resume": "PausesEnded",
    "study_check_in": "StudyCheckInsSent",
}


def outcome_metrics(outcome: EventOutcome, prices: Mapping[str, ModelPrice] | None = None) -> list[Metric]:
    """``prices``: the study's over the list prices (``flow/study_settings.py::model_prices``)."""
    points = list(outcome.metrics)
    turn = outcome.turn
    if turn is not None and turn.module:
        # Imported by the first turn's metrics: the webhook, the daily prompt and the timers (whose
        # outcomes carry no turn) never load the tool table.
        from promptpipe.controller.tool_table import TRANSITION

        points.append(metric("TurnsProcessed", module=turn.module))
        for call in turn.audit.get("tool_calls", []):
            points.append(metric("ToolCalls", tool=call["name"], outcome=call["outcome"]))
            if call["name"] == TRANSITION.name and call["outcome"] == "ok":
                target = str(call["arguments"].get("target_state", "unknown"))
                points.append(metric("StateTransitions", target=target))
        for call in turn.audit.get("llm_calls", []):
            points.append(metric("LLMCalls"))
            points.append(metric("LLMLatencyMs", call["latency_ms"], "Milliseconds"))
            points.append(metric("LLMPromptTokens", call["prompt_tokens"]))
            points.append(metric("LLMCompletionTokens", call["completion_tokens"]))
            points.append(_cost(call, prices))
    if outcome.delivery is not None and outcome.delivery.delivered:
        points.append(metric("DailyPromptsDelivered"))
        points.extend(_cost(call, prices) for call in outcome.delivery.llm_calls)
    timer = outcome.timer
    if timer is not None and timer.applied:
        name = _TIMER_METRICS[timer.kind.value]
        points.append(metric(name, target=timer.target or "unknown") if name == "StateTransitions" else metric(name))
    if outcome.degraded:
        points.append(metric("StateSaveFailures"))
    return points


def _cost(call: dict[str, Any], prices: Mapping[str, ModelPrice] | None) -> Metric:
    from promptpipe.rules.model_prices import PRICES, cost_usd  # at the first model call's metric, not at import

    cost = cost_usd(
        str(call.get("model", "")),
        int(call.get("prompt_tokens") or 0),
        int(call.get("completion_tokens") or 0),
        int(call.get("cached_tokens") or 0),
        PRICES if prices is None else prices,
    )
    return metric("LLMCallsUnpriced") if cost is None else metric("ModelCostUSD", cost)
