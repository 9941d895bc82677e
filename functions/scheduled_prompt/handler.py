"""Scheduled prompt: the target of each participant's recurring EventBridge schedule.

Generates and delivers the daily prompt (flow/delivery.py). The scheduler's execution id is the
idempotency key: a repeated invocation delivers nothing new (a stored prompt whose send failed is
re-sent without generating again). Random-window schedules arm a one-shot at a random instant.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.idempotency import idempotent_function
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from promptpipe.adapters.idempotency import event_config, persistence_layer
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.observability import counts_errors, logger, metrics, record_outcome_metrics, tracer
from promptpipe.services import event_id_for_schedule, outcome_log_fields
from promptpipe.settings import get_settings
from promptpipe.wiring import get_app

idempotency_config = event_config("event_id")


class ScheduledPromptInvocation(BaseModel):
    event_id: str
    payload: ScheduledPromptPayload


@idempotent_function(
    data_keyword_argument="invocation", config=idempotency_config, persistence_store=persistence_layer(get_settings())
)
def deliver(invocation: ScheduledPromptInvocation) -> dict[str, Any]:
    app = get_app()
    outcome = app.run_scheduled_prompt(invocation.payload, event_id=invocation.event_id)
    record_outcome_metrics(outcome)
    delivery = outcome.delivery
    logger.info(
        "scheduled prompt handled",
        extra={
            **outcome_log_fields(outcome),
            "delivered": bool(delivery and delivery.delivered),
            "skipped": delivery.skipped_reason if delivery else None,
        },
    )
    app.send_all(outcome.outbound, resume=outcome.replayed)
    return {"messages": len(outcome.outbound)}


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler
@counts_errors("scheduled_prompt")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = ScheduledPromptPayload.model_validate(event)
    event_id = event_id_for_schedule(
        f"prompt-{payload.schedule_id}", payload.execution_id, payload.scheduled_time, get_app().clock.now()
    )
    logger.append_keys(participant_id=payload.participant_id, event_id=event_id)
    idempotency_config.register_lambda_context(context)
    return deliver(invocation=ScheduledPromptInvocation(event_id=event_id, payload=payload))
