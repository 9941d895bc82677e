"""Inbound worker: SQS FIFO consumer. One record = one conversation turn (or the greeting).

Ordered per participant (message group = participant id; ``skip_group_on_error`` keeps a failing
participant's later messages behind the failure, without blocking anyone else). Exactly-once
effects: the event record written with the state is the idempotency record — a redelivered turn
that already committed applies what is left of its effects (schedules, then the messages not yet
delivered) without a new LLM call. An LLM failure raises, so SQS retries and finally dead-letters the
record (see docs/reliability.md).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from promptpipe.models.events import TurnEvent
from promptpipe.observability import count_error, logger, metrics, record_outcome_metrics, tracer
from promptpipe.services import outcome_log_fields
from promptpipe.wiring import get_app

processor = SqsFifoPartialProcessor(skip_group_on_error=True)


def process_and_send(event: TurnEvent) -> dict[str, Any]:
    app = get_app()
    with tracer.provider.in_subsegment("conversation_turn"):
        outcome = app.process_turn(event)
    with tracer.provider.in_subsegment("messenger_send"):
        sent = app.finish(outcome)
    record_outcome_metrics(outcome)
    logger.info("turn processed", extra={**outcome_log_fields(outcome), "kind": event.kind.value, "sent": sent})
    return {"messages": sent, "replayed": outcome.replayed}


def record_handler(record: SQSRecord) -> None:
    event = TurnEvent.model_validate_json(record.body)
    logger.append_keys(participant_id=event.participant_id, event_id=event.event_id, event_kind=event.kind.value)
    try:
        process_and_send(event=event)
    except Exception:
        count_error("worker")
        logger.exception("turn failed; the record returns to the queue")
        raise


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
