"""Powertools Logger, Metrics and Tracer shared by every function (one service, one namespace).

Logs are JSON; phone numbers are masked and message bodies never logged at INFO. The tracer is
inactive outside Lambda (Powertools disables it unless ``LAMBDA_TASK_ROOT`` is set).
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from promptpipe.services import EventOutcome

SERVICE = "promptpipe"
NAMESPACE = "PromptPipe"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
tracer = Tracer(service=SERVICE)


def record_outcome_metrics(outcome: EventOutcome) -> None:
    """Turn an event's outcome into the dashboard's metrics."""
    turn = outcome.turn
    if turn is not None and turn.module:
        metrics.add_metric(name=f"TurnsProcessed_{turn.module}", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="TurnsProcessed", unit=MetricUnit.Count, value=1)
        for call in turn.audit.get("tool_calls", []):
            metrics.add_metric(name=f"ToolCalls_{call['name']}_{call['outcome']}", unit=MetricUnit.Count, value=1)
            metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1)
        for call in turn.audit.get("llm_calls", []):
            metrics.add_metric(name="LLMCalls", unit=MetricUnit.Count, value=1)
            metrics.add_metric(name="LLMLatencyMs", unit=MetricUnit.Milliseconds, value=call["latency_ms"])
            metrics.add_metric(name="LLMPromptTokens", unit=MetricUnit.Count, value=call["prompt_tokens"])
            metrics.add_metric(name="LLMCompletionTokens", unit=MetricUnit.Count, value=call["completion_tokens"])
    if outcome.delivery is not None and outcome.delivery.delivered:
        metrics.add_metric(name="DailyPromptsDelivered", unit=MetricUnit.Count, value=1)
    if outcome.timer is not None and outcome.timer.applied:
        name = {
            "daily_prompt_reminder": "RemindersSent",
            "auto_feedback": "AutoFeedbackTransitions",
            "state_transition": "StateTransitions",
        }.get(outcome.timer.kind.value, "FeedbackNudgesSent")
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    if outcome.degraded:
        metrics.add_metric(name="StateSaveFailures", unit=MetricUnit.Count, value=1)
