"""Timers: the target of every one-shot EventBridge schedule (reminder, auto-feedback, delayed
transition, feedback timeout and follow-up), of the stack's periodic sweep (pending effects, hold
alerts left pending) and of
its daily study sweep.
Dispatches on ``kind``; every kind re-checks its guards against the stored state, so a stale or
duplicated firing changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.common import lambda_entry, run_and_send
from promptpipe.lazy_model import LazyModel
from promptpipe.models.events import TimerPayload
from promptpipe.models.sweeps import StudySweepRequest, SweepRequest
from promptpipe.observability import logger
from promptpipe.usecases.hold_alerts import sweep_hold_alerts
from promptpipe.usecases.outcomes import event_id_for_schedule
from promptpipe.usecases.schedules import sweep_pending_effects
from promptpipe.usecases.timer_firings import run_timer
from promptpipe.wiring import get_app


class TimerInvocation(LazyModel):
    event_id: str
    payload: TimerPayload


def fire(invocation: TimerInvocation) -> dict[str, Any]:
    outcome, sent = run_and_send(
        lambda app: run_timer(app, invocation.payload, event_id=invocation.event_id),
        "timer fired",
        lambda outcome: {
            "kind": invocation.payload.kind.value,
            "applied": bool(outcome.timer and outcome.timer.applied),
            "detail": outcome.timer.detail if outcome.timer else None,
        },
    )
    return {"messages": sent, "applied": bool(outcome.timer and outcome.timer.applied), "replayed": outcome.replayed}


def sweep(request: SweepRequest) -> dict[str, Any]:
    """The stack's periodic sweep: publish the hold alerts left pending (first: a person waits), then
    re-apply the schedule changes that failed after a commit."""
    app = get_app()
    alerted = sweep_hold_alerts(app)
    repaired = sweep_pending_effects(app, request.limit)
    logger.info("pending effects swept", extra={"repaired": len(repaired), "hold_alerts": len(alerted)})
    return {"repaired": len(repaired), "hold_alerts": len(alerted)}


def study_sweep(request: StudySweepRequest, context: LambdaContext) -> dict[str, Any]:
    """The stack's daily study sweep (docs/studies.md): a second run the same day finds nothing to do.
    It stops before the function's deadline and continues from where it stopped (``continued``)."""
    # Here, not at import: the timers' first event is a timer, and the study engine loads with a study
    # (tests/unit/test_cold_start.py).
    from promptpipe.usecases.studies import sweep_study

    report = sweep_study(
        get_app(),
        time_left=lambda: timedelta(milliseconds=context.get_remaining_time_in_millis()),
        cursor=request.cursor,
    )
    summary = {
        "participants": report.participants,
        "unavailable_rows": report.unavailable_rows,
        "outcomes_closed": report.outcomes_closed,
        "ended": report.ended,
        "continued": report.cursor is not None,
    }
    logger.info("study swept", extra=summary)
    return summary


@lambda_entry("timers")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("sweep") == "study":
        return study_sweep(StudySweepRequest.model_validate(event), context)
    if "sweep" in event:
        return sweep(SweepRequest.model_validate(event))
    payload = TimerPayload.model_validate(event)
    event_id = event_id_for_schedule(
        payload.timer_id, payload.execution_id, payload.scheduled_time, get_app().clock.now()
    )
    logger.append_keys(participant_id=payload.participant_id, event_id=event_id)
    return fire(invocation=TimerInvocation(event_id=event_id, payload=payload))
