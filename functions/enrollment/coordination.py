"""The coordination routes the console runs a study with (docs/console.md): a staff message in the
conversation, the coordinators' audit (read; the export recorded), and a cohort's rows checked before
they are enrolled. ``caller`` names who acts, for the audit of every route that changes a participant:
the AWS principal that signed the call (IAM-authorised: API Gateway checked the signature), with the
``by`` the caller sends kept beside it as a note, never as the who (docs/console.md, "Accountability")."""

from __future__ import annotations

from typing import Annotated, Any, cast

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from functions.enrollment.answers import BAD_REQUEST, BASE, NOT_FOUND, ApiRouter, answer, dump, envelope
from promptpipe.models.api import (
    AuditEnvelope,
    AuditRequest,
    DecisionPageEnvelope,
    EnrolmentChecked,
    EnrolmentCheckedEnvelope,
    EnrolmentChecks,
    StaffMessageEnvelope,
    StaffMessageRequest,
)
from promptpipe.models.audit import Actor, AuditAction
from promptpipe.models.store import OPAQUE_TOKEN
from promptpipe.usecases import audit
from promptpipe.wiring import get_app

router = ApiRouter()

AUDIT = "/conversation/audit"
MAX_DECISIONS_PAGE = 1000


def signing_principal(current: Any) -> str:
    """The AWS principal API Gateway's IAM authorisation vouched for (``requestContext.authorizer.iam``
    of an HTTP API event: the user's or assumed role's ARN, else its caller id); "" for an unsigned call."""
    try:
        iam = cast(APIGatewayProxyEventV2, current).request_context.authorizer.iam
        return (iam.user_arn or iam.caller_id or "") if iam else ""
    except (AttributeError, KeyError, TypeError):
        return ""


def caller(current: Any, by: str | None) -> Actor:
    """Who acts: the signing AWS principal; the ``by`` the caller sends is only a note (``named``)."""
    return Actor.of(by, signing_principal(current))


@router.post(
    f"{BASE}/<participant_id>/staff-messages",
    status_code=201,
    responses={
        201: answer(
            "Sent (or recorded as not sent, with why, in the transcript); the coach is held", StaffMessageEnvelope
        ),
        **BAD_REQUEST,
        **NOT_FOUND,
    },
)
def staff_message(participant_id: str, request: StaffMessageRequest) -> Response[dict[str, Any]]:
    from promptpipe.usecases import staff  # each route's use case where it is called: cold start, docs/benchmarks.md

    sent = staff.send_staff_message(get_app(), participant_id, request, actor=caller(router.current_event, request.by))
    return envelope(201, message="Staff message recorded; the coach is held until released", result=dump(sent))


@router.get(AUDIT, responses={200: answer("The coordinators' audit records, oldest first", AuditEnvelope)})
def audit_records(
    participant_id: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Only this participant's records")
    ] = None,
) -> Response[dict[str, Any]]:
    records = audit.trail(get_app(), participant_id)
    return envelope(200, result={"records": [dump(r) for r in records]})


@router.post(AUDIT, status_code=201, responses={201: answer("Recorded", AuditEnvelope), **BAD_REQUEST})
def record_action(request: AuditRequest) -> Response[dict[str, Any]]:
    """An action the caller takes itself (the export, read through this API): recorded with who and why."""
    entry = audit.record(
        get_app(), caller(router.current_event, request.by), AuditAction(request.action), reason=request.reason
    )
    return envelope(201, message="Recorded", result={"records": [dump(entry)] if entry else []})


@router.post(
    "/conversation/enrolment-checks",
    responses={
        200: answer("Each row's problems (none: it can be enrolled); nothing written", EnrolmentCheckedEnvelope)
    },
)
def check_enrolments(request: EnrolmentChecks) -> Response[dict[str, Any]]:
    from promptpipe.usecases import cohort

    rows = cohort.check_rows(get_app(), request.rows)
    return envelope(200, result=dump(EnrolmentChecked(rows=rows)))


@router.get(
    "/conversation/studies/<study_id>/decisions",
    responses={
        200: answer(
            "A page of the study's decision records (none for a study with none on record)", DecisionPageEnvelope
        ),
        **BAD_REQUEST,
    },
)
def study_decisions(
    study_id: str,
    limit: Annotated[int, Query(ge=1, le=MAX_DECISIONS_PAGE)] = 500,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
) -> Response[dict[str, Any]]:
    """The randomised decisions of a study (docs/studies.md), for the de-identified export and the
    console's study view."""
    from promptpipe.usecases import decisions

    found, token = decisions.decision_page(get_app(), study_id, limit=limit, next_token=next_token)
    return envelope(200, result={"decisions": [dump(r) for r in found], "next_token": token})
