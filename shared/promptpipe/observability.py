"""Powertools Logger, Metrics and Tracer shared by every function (one service, one namespace).

Logs are JSON; phone numbers are masked and message bodies never logged at INFO. The tracer is
inactive outside Lambda (Powertools disables it unless ``LAMBDA_TASK_ROOT`` is set).

Metric names (namespace ``PromptPipe``): TurnsProcessed (module), ToolCalls (tool, outcome),
LLMCalls, LLMLatencyMs, LLMPromptTokens, LLMCompletionTokens, DailyPromptsDelivered, RemindersSent,
AutoFeedbackTransitions, StateTransitions (target), FeedbackNudgesSent, OptOuts, WebhookRejected
(reason), Errors (function), StateSaveFailures, CorruptStateValues (key), ColdStart.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from promptpipe.models.state import on_corrupt_value

if TYPE_CHECKING:  # the services import this module's metrics helpers
    from promptpipe.services import EventOutcome

Handler = TypeVar("Handler", bound=Callable[..., Any])

SERVICE = "promptpipe"
NAMESPACE = "PromptPipe"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
tracer = Tracer(service=SERVICE)

_TIMER_METRICS = {
    "daily_prompt_reminder": "RemindersSent",
    "auto_feedback": "AutoFeedbackTransitions",
    "state_transition": "StateTransitions",
    "feedback_timeout": "FeedbackNudgesSent",
    "feedback_followup": "FeedbackNudgesSent",
}


def count(name: str, value: float = 1, unit: MetricUnit = MetricUnit.Count, **dimensions: str) -> None:
    """One metric; with dimensions it is flushed on its own (EMF allows one dimension set per blob)."""
    if is_metrics_disabled():  # Powertools' auto-flush and single_metric ignore the switch
        return
    if not dimensions:
        metrics.add_metric(name=name, unit=unit, value=value)
        return
    with single_metric(name=name, unit=unit, value=value, namespace=NAMESPACE) as metric:
        metric.add_dimension(name="service", value=SERVICE)
        for key, dim_value in dimensions.items():
            metric.add_dimension(name=key, value=dim_value)


def record_outcome_metrics(outcome: EventOutcome) -> None:
    """Turn an event's outcome into the dashboard's metrics."""
    turn = outcome.turn
    if turn is not None and turn.module:
        count("TurnsProcessed", module=turn.module)
        for call in turn.audit.get("tool_calls", []):
            count("ToolCalls", tool=call["name"], outcome=call["outcome"])
            if call["name"] == "transition_state" and call["outcome"] == "ok":
                target = str(call["arguments"].get("target_state", "unknown"))
                count("StateTransitions", target=target)
        for call in turn.audit.get("llm_calls", []):
            count("LLMCalls")
            count("LLMLatencyMs", call["latency_ms"], MetricUnit.Milliseconds)
            count("LLMPromptTokens", call["prompt_tokens"])
            count("LLMCompletionTokens", call["completion_tokens"])
    if outcome.delivery is not None and outcome.delivery.delivered:
        count("DailyPromptsDelivered")
    timer = outcome.timer
    if timer is not None and timer.applied:
        name = _TIMER_METRICS[timer.kind.value]
        if name == "StateTransitions":
            count(name, target=timer.target or "unknown")
        else:
            count(name)
    if outcome.degraded:
        count("StateSaveFailures")


def count_corrupt_value(key: str) -> None:
    """A stored state value that could not be read (and was read as empty)."""
    count("CorruptStateValues", key=key)


# The core reports corrupt values through a listener, so it never imports Powertools.
on_corrupt_value(count_corrupt_value)


def count_error(function: str) -> None:
    count("Errors", function=function)


def counts_errors(function: str) -> Callable[[Handler], Handler]:
    """Decorate a Lambda handler: any exception it lets out is counted (``Errors``, by function)."""

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapped(event: dict[str, Any], context: Any) -> Any:
            try:
                return handler(event, context)
            except Exception:
                count_error(function)
                raise

        return wrapped  # type: ignore[return-value]

    return decorate
