"""The participants routes: enrol, list (and the list's rows), read, update, delete, transcript."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Query

from functions.enrollment.answers import (
    BAD_REQUEST,
    BASE,
    DONE,
    EFFECTS_PENDING,
    NOT_FOUND,
    PARTICIPANT,
    PENDING_PARTICIPANT,
    ApiRouter,
    answer,
    dump,
    envelope,
)
from functions.enrollment.coordination import caller
from promptpipe.models.api import (
    BY_NOTE,
    EnrollmentRequest,
    ErrorEnvelope,
    ParticipantEnvelope,
    ParticipantPageEnvelope,
    ParticipantRowsEnvelope,
    ParticipantUpdate,
    TranscriptPageEnvelope,
)
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.participant_list import ListView
from promptpipe.models.participant_rows import MAX_ROWS_PAGE, ROWS_PAGE
from promptpipe.models.store import OPAQUE_TOKEN
from promptpipe.usecases import participants
from promptpipe.wiring import get_app

router = ApiRouter()

CONFLICT = {409: answer("Phone number already enrolled (by another request)", ErrorEnvelope)}
CREATED = {201: answer("Enrolled: the participant", ParticipantEnvelope)}
RETRIED = {
    200: answer(
        "The same request again (same body, same Idempotency-Key or none): the participant it enrolled",
        ParticipantEnvelope,
    )
}
IDEMPOTENCY_KEY = (
    "Optional. A key unique to this enrolment (a UUID). A retry with the same key and the same body gets"
    " the participant the first attempt enrolled (200), the greeting sent once; the same phone number with"
    " another key or another body is 409. Without a key, the same body counts as the same request."
)
PAGE = {200: answer("A page of participants, newest first", ParticipantPageEnvelope)}
ROWS = {200: answer("A page of the participants list's rows, newest first, with the total", ParticipantRowsEnvelope)}
TRANSCRIPT = {200: answer("A page of the transcript, oldest first", TranscriptPageEnvelope)}
# up to 1,000 a page: the console and CLI list a whole study in one query (docs/benchmarks.md section 9)
MAX_PARTICIPANTS_PAGE = 1000


@router.post(BASE, status_code=201, responses={**CREATED, **RETRIED, **BAD_REQUEST, **CONFLICT})
def enroll(
    request: EnrollmentRequest,
    idempotency_key: Annotated[
        str | None, Header(alias="idempotency-key", min_length=1, max_length=255, description=IDEMPOTENCY_KEY)
    ] = None,
) -> Response[dict[str, Any]]:
    actor = caller(router.current_event, request.by)
    enrollment = participants.enrollment(get_app(), request, idempotency_key=idempotency_key, actor=actor)
    if not enrollment.created:  # a retry whose first answer was lost: the same participant
        return envelope(
            200, message="Participant already enrolled by this request", result=dump(enrollment.participant)
        )
    return envelope(201, message="Conversation participant enrolled successfully", result=dump(enrollment.participant))


@router.get(BASE, responses={**PAGE, **BAD_REQUEST})
def list_participants(
    limit: Annotated[int, Query(ge=1, le=MAX_PARTICIPANTS_PAGE)] = 50,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
    phone: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Find the participant with this phone number")
    ] = None,
) -> Response[dict[str, Any]]:
    if phone is not None:  # lookup by phone: at most one participant, no paging
        found = participants.participants_by_phone(get_app(), phone)
        return envelope(200, result={"participants": [dump(p) for p in found], "next_token": None})
    found_page, token = participants.list_participants(get_app(), limit=limit, next_token=next_token)
    return envelope(200, result={"participants": [dump(p) for p in found_page], "next_token": token})


@router.get("/conversation/participant-rows", responses={**ROWS, **BAD_REQUEST})
def list_participant_rows(  # noqa: PLR0917 - one query parameter each
    # docs/console.md, "The list's reads": a page of rows in one call, never one per participant
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS_PAGE)] = ROWS_PAGE,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
    status: Annotated[ParticipantStatus | None, Query(description="Only participants with this status")] = None,
    q: Annotated[
        str, Query(max_length=100, description="Only names or ids containing this (any case), or phones these digits")
    ] = "",
    needs_person: Annotated[
        bool, Query(description="Only participants the flow controller holds for a person")
    ] = False,
    # docs/console.md, "Sorting and filtering": a sorted or narrowed page reads every match, as a search does
    sort: Annotated[
        Literal["enrolled", "enrolled_oldest", "activity", "status", "adherence", "adherence_high"],
        Query(description="The order: enrolment (newest or oldest first), last activity, status, adherence"),
    ] = "enrolled",
    zone: Annotated[str, Query(max_length=64, description="Only participants in this IANA zone")] = "",
    study_day_min: Annotated[int | None, Query(ge=1, le=10000, description="Only from this study day")] = None,
    study_day_max: Annotated[int | None, Query(ge=1, le=10000, description="Only up to this study day")] = None,
    adherence: Annotated[
        Literal["", "none", "low", "mid", "high"],
        Query(description="Only this adherence band (Done share): none (no prompt), low <50 %, mid, high >=80 %"),
    ] = "",
    # docs/console.md, "Nobody missed": the needs-a-person queue with the page, one more read
    queue: Annotated[
        bool, Query(description="Also every participant held for a person, the longest wait first")
    ] = False,
) -> Response[dict[str, Any]]:
    from promptpipe.usecases import participant_rows  # the console's list alone: imported by its first call

    app = get_app()
    view = ListView(sort=sort, zone=zone, study_day_min=study_day_min, study_day_max=study_day_max, adherence=adherence)
    page = participant_rows.participant_rows(
        app.repo,
        limit=limit,
        next_token=next_token,
        status=status.value if status else None,
        search=q,
        needs_person=needs_person,
        view=view,
        now=app.clock.now(),
    )
    if queue:
        page = participant_rows.with_needs_person_queue(app.repo, page)
    return envelope(200, result=dump(page))


@router.get(f"{BASE}/<participant_id>", responses={**PARTICIPANT, **NOT_FOUND})
def get_participant(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=dump(participants.get_participant(get_app(), participant_id)))


@router.put(f"{BASE}/<participant_id>", responses={**PARTICIPANT, **PENDING_PARTICIPANT, **BAD_REQUEST, **NOT_FOUND})
def update_participant(participant_id: str, update: ParticipantUpdate) -> Response[dict[str, Any]]:
    actor = caller(router.current_event, update.by)
    outcome = participants.apply_participant_update(get_app(), participant_id, update, actor=actor)
    if outcome.effects_pending:  # stored; its schedule changes are retried without the caller
        return envelope(202, message=EFFECTS_PENDING, result=dump(outcome.participant))
    return envelope(200, message="Participant updated successfully", result=dump(outcome.participant))


@router.delete(f"{BASE}/<participant_id>", responses={**DONE, **BAD_REQUEST, **NOT_FOUND})
def delete_participant(
    participant_id: str,
    keep_transcript: Annotated[bool, Query()] = True,
    by: Annotated[str | None, Query(max_length=200, description=BY_NOTE)] = None,
    reason: Annotated[str, Query(max_length=500, description="Why (the audit)")] = "",
) -> Response[dict[str, Any]]:
    actor = caller(router.current_event, by)
    participants.delete_participant(
        get_app(), participant_id, keep_transcript=keep_transcript, actor=actor, reason=reason
    )
    return envelope(200, message="Participant deleted successfully")


@router.get(f"{BASE}/<participant_id>/history", responses={**TRANSCRIPT, **BAD_REQUEST, **NOT_FOUND})
def history(
    participant_id: str,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
    include_audit: Annotated[bool, Query()] = True,
) -> Response[dict[str, Any]]:
    entries, token = participants.history(
        get_app(), participant_id, limit=limit, next_token=next_token, include_audit=include_audit
    )
    return envelope(200, result={"messages": [dump(e) for e in entries], "next_token": token})
