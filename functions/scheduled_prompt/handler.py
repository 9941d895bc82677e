"""Scheduled prompt: the target of each participant's recurring EventBridge schedule.

Generates and delivers the daily prompt (flow/delivery.py). The scheduler's execution id is the
event id, recorded with the state: a repeated invocation delivers nothing new (a prompt whose send
failed is re-sent from its record without generating again). Random-window schedules arm a one-shot
at a random instant.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.common import lambda_entry, run_and_send
from promptpipe.lazy_model import LazyModel
from promptpipe.models.events import ScheduledPromptPayload
from promptpipe.observability import logger
from promptpipe.usecases.daily_prompts import run_scheduled_prompt
from promptpipe.usecases.outcomes import EventOutcome, event_id_for_schedule
from promptpipe.wiring import get_app


class ScheduledPromptInvocation(LazyModel):
    event_id: str
    payload: ScheduledPromptPayload


def _details(outcome: EventOutcome) -> dict[str, Any]:
    delivery = outcome.delivery
    return {
        "delivered": bool(delivery and delivery.delivered),
        "skipped": delivery.skipped_reason if delivery else None,
    }


def deliver(invocation: ScheduledPromptInvocation) -> dict[str, Any]:
    outcome, sent = run_and_send(
        lambda app: run_scheduled_prompt(app, invocation.payload, event_id=invocation.event_id),
        "scheduled prompt handled",
        _details,
    )
    return {"messages": sent, "replayed": outcome.replayed}


@lambda_entry("scheduled_prompt")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = ScheduledPromptPayload.model_validate(event)
    event_id = event_id_for_schedule(
        f"prompt-{payload.schedule_id}", payload.execution_id, payload.scheduled_time, get_app().clock.now()
    )
    logger.append_keys(participant_id=payload.participant_id, event_id=event_id)
    return deliver(invocation=ScheduledPromptInvocation(event_id=event_id, payload=payload))
