"""Timers: the target of every one-shot EventBridge schedule (reminder, auto-feedback, delayed
transition, feedback timeout and follow-up). Dispatches on ``kind``; every kind re-checks its guards
against the stored state, so a stale or duplicated firing changes nothing."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from promptpipe.models.events import TimerPayload
from promptpipe.observability import counts_errors, logger, metrics, record_outcome_metrics, tracer
from promptpipe.services import event_id_for_schedule, outcome_log_fields
from promptpipe.wiring import get_app


class TimerInvocation(BaseModel):
    event_id: str
    payload: TimerPayload


def fire(invocation: TimerInvocation) -> dict[str, Any]:
    app = get_app()
    outcome = app.run_timer(invocation.payload, event_id=invocation.event_id)
    sent = app.finish(outcome)
    record_outcome_metrics(outcome)
    timer = outcome.timer
    logger.info(
        "timer fired",
        extra={
            **outcome_log_fields(outcome),
            "kind": invocation.payload.kind.value,
            "applied": bool(timer and timer.applied),
            "detail": timer.detail if timer else None,
            "sent": sent,
        },
    )
    return {"messages": sent, "applied": bool(timer and timer.applied), "replayed": outcome.replayed}


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler
@counts_errors("timers")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = TimerPayload.model_validate(event)
    event_id = event_id_for_schedule(
        payload.timer_id, payload.execution_id, payload.scheduled_time, get_app().clock.now()
    )
    logger.append_keys(participant_id=payload.participant_id, event_id=event_id)
    return fire(invocation=TimerInvocation(event_id=event_id, payload=payload))
