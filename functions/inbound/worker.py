"""Inbound worker: SQS FIFO consumer. One record = one conversation turn (or the greeting), or the
schedule changes of a STOP / START, which the public webhook queues rather than makes itself.

Ordered per participant (message group = participant id; ``skip_group_on_error`` keeps a failing
participant's later messages behind the failure, without blocking anyone else). Exactly-once
effects: the event record written with the state is the idempotency record — a redelivered turn
that already committed applies what is left of its effects (schedules, then the messages not yet
delivered) without a new LLM call. An LLM failure raises, so SQS retries and finally dead-letters the
record (see docs/reliability.md).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.common import lambda_entry, run_and_send
from promptpipe.models.events import TurnEvent
from promptpipe.observability import count_error, logger
from promptpipe.usecases.events import process_turn
from promptpipe.wiring import get_app

if TYPE_CHECKING:
    from promptpipe.models.sweeps import RedriveRequest

processor = SqsFifoPartialProcessor(skip_group_on_error=True)


def process_and_send(event: TurnEvent) -> dict[str, Any]:
    outcome, sent = run_and_send(
        lambda app: process_turn(app, event), "turn processed", lambda _: {"kind": event.kind.value}
    )
    return {"messages": sent, "replayed": outcome.replayed}


def record_handler(record: SQSRecord) -> None:
    try:
        event = TurnEvent.model_validate_json(record.body)  # a record that is not a turn is counted too
        logger.append_keys(participant_id=event.participant_id, event_id=event.event_id, event_kind=event.kind.value)
        process_and_send(event=event)
    except Exception:
        count_error("worker")
        logger.exception("turn failed; the record returns to the queue")
        raise


def redrive(request: RedriveRequest) -> dict[str, Any]:
    """The stack's unanswered-turns sweep: the dead-lettered turns go back on the queue once the
    model answers again."""
    # Here, not at import: the worker's first event is a turn; the sweep is its own scheduled event
    # (tests/unit/test_cold_start.py).
    from promptpipe.usecases.redrive import redrive_unanswered

    result = redrive_unanswered(get_app(), request.limit)
    logger.info("unanswered turns swept", extra=asdict(result))
    return asdict(result)


# Each failed record is counted above; a batch whose every record failed is not counted again.
@lambda_entry("worker", uncounted=(BatchProcessingError,))
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse | dict[str, Any]:
    if "sweep" in event:  # its own scheduled event, not a turn: its input's model loads with it
        from promptpipe.models.sweeps import RedriveRequest

        return redrive(RedriveRequest.model_validate(event))
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
