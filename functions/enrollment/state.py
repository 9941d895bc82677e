"""The conversation state routes: read it, the operator's override (sub-state, debug mode, the
participant's model routes, profile facts), and reconcile (docs/architecture.md#effects)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from functions.enrollment.answers import (
    BAD_REQUEST,
    BASE,
    EFFECTS_PENDING,
    NOT_FOUND,
    PENDING_STATE,
    STATE,
    ApiRouter,
    answer,
    dump,
    envelope,
)
from functions.enrollment.coordination import caller
from promptpipe.models.api import ReconcileAllEnvelope, ReconcileEnvelope, StateOverride
from promptpipe.usecases import participants, schedules
from promptpipe.wiring import get_app

router = ApiRouter()

RECONCILED = {200: answer("The participant's schedules compared with their state, and the repairs", ReconcileEnvelope)}
RECONCILED_ALL = {200: answer("Every participant's reconcile report", ReconcileAllEnvelope)}


@router.get(f"{BASE}/<participant_id>/state", responses={**STATE, **NOT_FOUND})
def get_state(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=dump(participants.state_view(get_app(), participant_id)))


@router.post(f"{BASE}/<participant_id>/state", responses={**STATE, **PENDING_STATE, **BAD_REQUEST, **NOT_FOUND})
def override_state(participant_id: str, override: StateOverride) -> Response[dict[str, Any]]:
    view = participants.override_state(
        get_app(), participant_id, override, actor=caller(router.current_event, override.by)
    )
    if view.effects_pending:
        return envelope(202, message=EFFECTS_PENDING, result=dump(view))
    return envelope(200, message="State updated", result=dump(view))


@router.post(f"{BASE}/<participant_id>/reconcile", responses={**RECONCILED})
def reconcile_participant(participant_id: str) -> Response[dict[str, Any]]:
    """Make the participant's live schedules equal to what their state wants (repairs drift)."""
    report = schedules.reconcile(get_app(), participant_id)
    return envelope(200, message=f"{report.repairs} repair(s)", result=report.to_json_dict())


@router.post("/conversation/reconcile", responses={**RECONCILED_ALL})
def reconcile_everyone() -> Response[dict[str, Any]]:
    """Every participant, and every participant id that still has live schedules."""
    reports = schedules.reconcile_all(get_app())
    repairs = sum(r.repairs for r in reports)
    return envelope(
        200,
        message=f"{repairs} repair(s) for {len(reports)} participant(s)",
        result={"participants": [r.to_json_dict() for r in reports], "repairs": repairs},
    )
