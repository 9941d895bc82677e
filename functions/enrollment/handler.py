"""Participants API (API Gateway HTTP API, IAM-authorised): enrollment and management.

Each route parses and validates, calls one service function, and maps the result into the
``{"status", "message", "result"}`` envelope (docs/behaviour.md#B-API-1). Domain errors map to HTTP in one place.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from functions.common import lambda_entry
from promptpipe.controller.problems import DefinitionInvalid
from promptpipe.errors import (
    ConfigurationError,
    FlowNotFound,
    FlowPushConflict,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StoreError,
    ValidationFailed,
    error_body,
)
from promptpipe.models.api import (
    EnrollmentRequest,
    ErrorEnvelope,
    FlowEnvelope,
    FlowValidationEnvelope,
    FlowVersionsEnvelope,
    MessageEnvelope,
    ParticipantEnvelope,
    ParticipantPageEnvelope,
    ParticipantRowsEnvelope,
    ParticipantUpdate,
    ReconcileAllEnvelope,
    ReconcileEnvelope,
    StateOverride,
    StateViewEnvelope,
    TranscriptPageEnvelope,
)
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.participant_rows import MAX_ROWS_PAGE, ROWS_PAGE
from promptpipe.models.store import OPAQUE_TOKEN
from promptpipe.observability import logger
from promptpipe.rules.http_body import MalformedBody, NotJson, body_bytes, decode_utf8, error_response, parse_json
from promptpipe.settings import get_settings
from promptpipe.usecases import participant_rows, participants, schedules
from promptpipe.wiring import get_app

if TYPE_CHECKING:  # the flows routes import the controller when first called (cold start)
    from promptpipe.controller.catalog import FlowCatalog
    from promptpipe.controller.problems import Problem

app = APIGatewayHttpResolver(enable_validation=True)
BASE = "/conversation/participants"
FLOWS = "/conversation/flows"


# The answers, documented in the OpenAPI document with their models (all in the envelope).
def _answer(description: str, model: Any) -> OpenAPIResponse:
    return {"description": description, "content": {"application/json": {"model": model}}}


BAD_REQUEST = {400: _answer("Invalid request: the message names the field", ErrorEnvelope)}
NOT_FOUND = {404: _answer("Participant not found", ErrorEnvelope)}
CONFLICT = {409: _answer("Phone number already enrolled (by another request)", ErrorEnvelope)}
PARTICIPANT = {200: _answer("The participant", ParticipantEnvelope)}
CREATED = {201: _answer("Enrolled: the participant", ParticipantEnvelope)}
RETRIED = {
    200: _answer(
        "The same request again (same body, same Idempotency-Key or none): the participant it enrolled",
        ParticipantEnvelope,
    )
}
IDEMPOTENCY_KEY = (
    "Optional. A key unique to this enrolment (a UUID). A retry with the same key and the same body gets"
    " the participant the first attempt enrolled (200), the greeting sent once; the same phone number with"
    " another key or another body is 409. Without a key, the same body counts as the same request."
)
PAGE = {200: _answer("A page of participants, newest first", ParticipantPageEnvelope)}
ROWS = {200: _answer("A page of the participants list's rows, newest first, with the total", ParticipantRowsEnvelope)}
TRANSCRIPT = {200: _answer("A page of the transcript, oldest first", TranscriptPageEnvelope)}
STATE = {200: _answer("The conversation state", StateViewEnvelope)}
DONE = {200: _answer("Done: a message, no result", MessageEnvelope)}
# docs/architecture.md, "Effects that failed": the change is stored, its schedules are retried.
EFFECTS_PENDING = "Stored; its schedule changes failed and are being retried (effects_pending)"
PENDING_PARTICIPANT = {202: _answer(f"{EFFECTS_PENDING}: the participant", ParticipantEnvelope)}
PENDING_STATE = {202: _answer(f"{EFFECTS_PENDING}: the conversation state", StateViewEnvelope)}
RECONCILED = {200: _answer("The participant's schedules compared with their state, and the repairs", ReconcileEnvelope)}
RECONCILED_ALL = {200: _answer("Every participant's reconcile report", ReconcileAllEnvelope)}


def envelope(
    status_code: int, *, message: str | None = None, result: Any = None, error: bool = False
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = dict(error_body(message or "")) if error else {"status": "ok"}
    if message is not None and not error:
        body["message"] = message
    if result is not None:
        body["result"] = result
    return Response(status_code=status_code, content_type=content_types.APPLICATION_JSON, body=body)


def _json_object_bodies(resolver: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Every body this API takes is a JSON object. Powertools' validation unwraps a one-element
    array into its element (``[{...}]`` would pass as ``{...}``); this refuses any other JSON value."""
    event = resolver.current_event
    if event.http_method in ("POST", "PUT") and event.body:
        try:
            body = event.json_body
        except ValueError:
            body = {}  # not JSON: the validation has answered it already
        if not isinstance(body, dict):
            return envelope(400, message="Invalid request: the body must be a JSON object", error=True)
    return next_middleware(resolver)


app.use(middlewares=[_json_object_bodies])


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json")


@app.post(BASE, status_code=201, responses={**CREATED, **RETRIED, **BAD_REQUEST, **CONFLICT})
def enroll(
    request: EnrollmentRequest,
    idempotency_key: Annotated[
        str | None, Header(alias="idempotency-key", min_length=1, max_length=255, description=IDEMPOTENCY_KEY)
    ] = None,
) -> Response[dict[str, Any]]:
    enrollment = participants.enrollment(get_app(), request, idempotency_key=idempotency_key)
    if not enrollment.created:  # a retry whose first answer was lost: the same participant
        return envelope(
            200, message="Participant already enrolled by this request", result=_dump(enrollment.participant)
        )
    return envelope(201, message="Conversation participant enrolled successfully", result=_dump(enrollment.participant))


MAX_PARTICIPANTS_PAGE = 1000


@app.get(BASE, responses={**PAGE, **BAD_REQUEST})
def list_participants(
    # up to 1,000 a page: the console and CLI list a whole study in one query (docs/benchmarks.md section 9)
    limit: Annotated[int, Query(ge=1, le=MAX_PARTICIPANTS_PAGE)] = 50,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
    phone: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Find the participant with this phone number")
    ] = None,
) -> Response[dict[str, Any]]:
    if phone is not None:  # lookup by phone: at most one participant, no paging
        found = participants.participants_by_phone(get_app(), phone)
        return envelope(200, result={"participants": [_dump(p) for p in found], "next_token": None})
    found_page, token = participants.list_participants(get_app(), limit=limit, next_token=next_token)
    return envelope(200, result={"participants": [_dump(p) for p in found_page], "next_token": token})


@app.get("/conversation/participant-rows", responses={**ROWS, **BAD_REQUEST})
def list_participant_rows(
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
) -> Response[dict[str, Any]]:
    page = participant_rows.participant_rows(
        get_app().repo,
        limit=limit,
        next_token=next_token,
        status=status.value if status else None,
        search=q,
        needs_person=needs_person,
    )
    return envelope(200, result=_dump(page))


@app.get(f"{BASE}/<participant_id>", responses={**PARTICIPANT, **NOT_FOUND})
def get_participant(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=_dump(participants.get_participant(get_app(), participant_id)))


@app.put(f"{BASE}/<participant_id>", responses={**PARTICIPANT, **PENDING_PARTICIPANT, **BAD_REQUEST, **NOT_FOUND})
def update_participant(participant_id: str, update: ParticipantUpdate) -> Response[dict[str, Any]]:
    outcome = participants.apply_participant_update(get_app(), participant_id, update)
    if outcome.effects_pending:  # stored; its schedule changes are retried without the caller
        return envelope(202, message=EFFECTS_PENDING, result=_dump(outcome.participant))
    return envelope(200, message="Participant updated successfully", result=_dump(outcome.participant))


@app.delete(f"{BASE}/<participant_id>", responses={**DONE, **BAD_REQUEST, **NOT_FOUND})
def delete_participant(
    participant_id: str, keep_transcript: Annotated[bool, Query()] = True
) -> Response[dict[str, Any]]:
    participants.delete_participant(get_app(), participant_id, keep_transcript=keep_transcript)
    return envelope(200, message="Participant deleted successfully")


@app.get(f"{BASE}/<participant_id>/history", responses={**TRANSCRIPT, **BAD_REQUEST, **NOT_FOUND})
def history(
    participant_id: str,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query(description=OPAQUE_TOKEN)] = None,
    include_audit: Annotated[bool, Query()] = True,
) -> Response[dict[str, Any]]:
    entries, token = participants.history(
        get_app(), participant_id, limit=limit, next_token=next_token, include_audit=include_audit
    )
    return envelope(200, result={"messages": [_dump(e) for e in entries], "next_token": token})


@app.get(f"{BASE}/<participant_id>/state", responses={**STATE, **NOT_FOUND})
def get_state(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=_dump(participants.state_view(get_app(), participant_id)))


@app.post(f"{BASE}/<participant_id>/state", responses={**STATE, **PENDING_STATE, **BAD_REQUEST, **NOT_FOUND})
def override_state(participant_id: str, override: StateOverride) -> Response[dict[str, Any]]:
    view = participants.override_state(get_app(), participant_id, override)
    if view.effects_pending:
        return envelope(202, message=EFFECTS_PENDING, result=_dump(view))
    return envelope(200, message="State updated", result=_dump(view))


# -- reconcile (docs/architecture.md#effects) -----------------------------------------------------
@app.post(f"{BASE}/<participant_id>/reconcile", responses={**RECONCILED})
def reconcile_participant(participant_id: str) -> Response[dict[str, Any]]:
    """Make the participant's live schedules equal to what their state wants (repairs drift)."""
    report = schedules.reconcile(get_app(), participant_id)
    return envelope(200, message=f"{report.repairs} repair(s)", result=report.to_json_dict())


@app.post("/conversation/reconcile", responses={**RECONCILED_ALL})
def reconcile_everyone() -> Response[dict[str, Any]]:
    """Every participant, and every participant id that still has live schedules."""
    reports = schedules.reconcile_all(get_app())
    repairs = sum(r.repairs for r in reports)
    return envelope(
        200,
        message=f"{repairs} repair(s) for {len(reports)} participant(s)",
        result={"participants": [r.to_json_dict() for r in reports], "repairs": repairs},
    )


# -- flow definitions (docs/controller.md) ------------------------------------------------------
FLOW_NOT_FOUND = {404: _answer("Flow (or version) not found", ErrorEnvelope)}
FLOW = {200: _answer("The flow definition", FlowEnvelope)}
FlowBody = Annotated[dict[str, Any], Body(description="A flow definition (docs/controller.md)")]


# ``validate`` is the path of POST …/validate, not a flow id: GET and PUT on it are refused rather
# than read or store a flow of that name (the document lists POST only for that path).
VALIDATE = "validate"


def _method_not_allowed(allowed: str) -> Response[dict[str, Any]]:
    response = envelope(405, message=f"Method not allowed here; allowed: {allowed}", error=True)
    response.headers["Allow"] = allowed
    return response


def _validate_only() -> Response[dict[str, Any]]:
    return _method_not_allowed("POST")


def _flows() -> FlowCatalog:
    flows = get_app().deps.flows
    if flows is None:
        raise ConfigurationError("the flow catalog is not configured")
    return flows


def _problems(problems: list[Problem]) -> list[dict[str, str]]:
    return [p.model_dump() for p in problems]


@app.post(
    f"{FLOWS}/validate",
    responses={
        200: _answer("Whether the definition is valid, with every problem", FlowValidationEnvelope),
        **BAD_REQUEST,
    },
)
def validate_flow(definition: FlowBody) -> Response[dict[str, Any]]:
    from promptpipe.controller.catalog import FlowCatalog

    parsed, problems = FlowCatalog.validate(definition)
    return envelope(200, result={"valid": parsed is not None, "problems": _problems(problems)})


@app.get(f"{FLOWS}/<flow_id>", responses={**FLOW, **BAD_REQUEST, **FLOW_NOT_FOUND})
def get_flow(flow_id: str, version: Annotated[int | None, Query(ge=1)] = None) -> Response[dict[str, Any]]:
    if flow_id == VALIDATE:
        return _validate_only()
    flows = _flows()
    definition = flows.latest(flow_id) if version is None else flows.get(flow_id, version)
    return envelope(200, result=definition.to_json_dict())


FLOW_CONFLICT = {409: _answer("Concurrent pushes kept winning: the message names the version that won", ErrorEnvelope)}


@app.put(f"{FLOWS}/<flow_id>", responses={**FLOW, **BAD_REQUEST, **FLOW_CONFLICT})
def put_flow(flow_id: str, definition: FlowBody) -> Response[dict[str, Any]]:
    if flow_id == VALIDATE:
        return _validate_only()
    caller = (app.current_event.request_context.authorizer.iam.user_arn or "") if _has_iam() else ""
    stored = _flows().push(definition, flow_id=flow_id, created_by=caller)
    return envelope(200, message=f"Flow stored as version {stored.version}", result=stored.to_json_dict())


@app.get(
    f"{FLOWS}/<flow_id>/versions",
    responses={200: _answer("The stored versions", FlowVersionsEnvelope), **FLOW_NOT_FOUND},
)
def flow_versions(flow_id: str) -> Response[dict[str, Any]]:
    versions = _flows().versions(flow_id)
    return envelope(200, result={"flow_id": flow_id, "versions": [_dump(v) for v in versions]})


def _has_iam() -> bool:
    try:
        return app.current_event.request_context.authorizer.iam is not None
    except (AttributeError, KeyError, TypeError):
        return False


# -- one place mapping domain errors to HTTP ------------------------------------------------
_ROUTES = (
    (re.compile(rf"^{BASE}/?$"), "GET, POST"),
    (re.compile(rf"^{BASE}/[^/]+/?$"), "GET, PUT, DELETE"),
    (re.compile(rf"^{BASE}/[^/]+/history/?$"), "GET"),
    (re.compile(rf"^{BASE}/[^/]+/state/?$"), "GET, POST"),
    (re.compile(rf"^{BASE}/[^/]+/reconcile/?$"), "POST"),
    (re.compile(r"^/conversation/reconcile/?$"), "POST"),
    (re.compile(r"^/conversation/participant-rows/?$"), "GET"),
    (re.compile(rf"^{FLOWS}/{VALIDATE}/?$"), "POST"),
    (re.compile(rf"^{FLOWS}/[^/]+/?$"), "GET, PUT"),
    (re.compile(rf"^{FLOWS}/[^/]+/versions/?$"), "GET"),
)


@app.not_found
def _no_route(_exc: Exception) -> Response[dict[str, Any]]:
    path = app.current_event.path
    for pattern, allowed in _ROUTES:
        if pattern.match(path):  # a route of this API, another method
            return _method_not_allowed(allowed)
    return envelope(404, message="No such route", error=True)


@app.exception_handler(RequestValidationError)
def _invalid_request(exc: RequestValidationError) -> Response[dict[str, Any]]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return envelope(400, message="Invalid JSON format", error=True)
    details = []
    for e in errors:
        loc = ".".join(str(part) for part in e.get("loc", ()) if part not in ("body", "query", "path"))
        if e.get("type") == "missing" and not loc:  # no body at all (or an empty one)
            details.append(_missing_body())
        elif e.get("type") == "missing":
            details.append(f"{loc} is required")
        else:
            details.append(f"{loc}: {e.get('msg', 'invalid value')}")
    return envelope(400, message="; ".join(details) or "invalid request", error=True)


def _missing_body() -> str:
    """What an absent body leaves out: the required fields of the route's body model (``phone_number
    is required``), else the body itself (Powertools' own message names neither: ``" is required"``)."""
    route = app.context.get("_route")
    required: list[str] = []
    for param in getattr(getattr(route, "dependant", None), "body_params", None) or []:
        model = getattr(param, "type_", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            required += [name for name, field in model.model_fields.items() if field.is_required()]
    if not required:
        return "request body is required"
    return "; ".join(f"{name} is required" for name in required)


@app.exception_handler(RequestUnsupportedContentType)
def _unsupported_media(_exc: RequestUnsupportedContentType) -> Response[dict[str, Any]]:
    return envelope(415, message="Unsupported content type: send JSON (content-type: application/json)", error=True)


@app.exception_handler(UnicodeDecodeError)
def _not_utf8(_exc: UnicodeDecodeError) -> Response[dict[str, Any]]:
    return envelope(400, message="Invalid JSON format: the body is not UTF-8", error=True)


@app.exception_handler(ValueError)
def _unreadable_body(exc: ValueError) -> Response[dict[str, Any]]:
    # Powertools parses a body declared multipart/form-data before validation and raises a bare
    # ValueError when it is malformed; the API takes JSON only. Any other ValueError is a bug: re-raised.
    if "multipart" not in str(exc):
        raise exc
    return envelope(400, message="Invalid body: send JSON (content-type: application/json)", error=True)


@app.exception_handler(ValidationFailed)
def _validation_failed(exc: ValidationFailed) -> Response[dict[str, Any]]:
    return envelope(400, message=str(exc), error=True)


@app.exception_handler(DefinitionInvalid)
def _definition_invalid(exc: DefinitionInvalid) -> Response[dict[str, Any]]:
    return envelope(
        400,
        message=f"Invalid flow definition: {len(exc.problems)} problem(s)",
        result={"problems": _problems(exc.problems)},
        error=True,
    )


@app.exception_handler(FlowPushConflict)
def _flow_push_conflict(exc: FlowPushConflict) -> Response[dict[str, Any]]:
    return envelope(
        409,
        message=f"Flow {exc.flow_id!r} changed while this push was stored: version {exc.latest_version} won; "
        "read it and push again",
        result={"flow_id": exc.flow_id, "latest_version": exc.latest_version},
        error=True,
    )


@app.exception_handler(FlowNotFound)
def _flow_not_found(_exc: FlowNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Flow not found", error=True)


@app.exception_handler(ParticipantNotFound)
def _not_found(_exc: ParticipantNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Participant not found", error=True)


@app.exception_handler(StoreError)
def _store_unavailable(exc: StoreError) -> Response[dict[str, Any]]:
    # Throttled, timed out or unreachable: the client may retry (a 500 would say our bug).
    logger.warning("store unavailable", extra={"operation": exc.operation, "code": exc.code})
    return envelope(503, message="Service temporarily unavailable, retry later", error=True)


@app.exception_handler(ParticipantAlreadyEnrolled)
def _conflict(_exc: ParticipantAlreadyEnrolled) -> Response[dict[str, Any]]:
    return envelope(409, message="Participant with this phone number already enrolled", error=True)


# -- the body, before the resolver parses it ------------------------------------------------
def readable_body(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with its body checked and given as plain UTF-8 text, or ``MalformedBody``.

    The resolver's own JSON parsing raises ``RecursionError`` on deeply nested JSON, ``ValueError``
    on an integer of more than 4,300 digits and ``UnicodeDecodeError`` on bytes that are not UTF-8
    (each a 5xx), keeps the last of two equal keys, and reads an empty body as a missing one: here a
    body over ``MAX_API_BODY_BYTES`` is a 413; one that is not UTF-8, nested too deeply, has an
    integer too long or a key twice a 400 (``http_body.parse_json``, the one JSON reader, the CLI's
    too); and a blank body an empty one, which ``_invalid_request`` answers naming the missing
    fields (or the body). Text that is not JSON at all is left to the resolver's own answer."""
    raw = body_bytes(event.get("body"), bool(event.get("isBase64Encoded")), max_bytes=get_settings().max_api_body_bytes)
    text = decode_utf8(raw)
    if text.strip():
        try:
            parse_json(text)
        except NotJson:
            pass  # "Invalid JSON format" from the resolver, as for every request it cannot read
        except MalformedBody as exc:
            raise MalformedBody(f"Invalid JSON format: {str(exc).removeprefix('request body: ')}") from None
    else:
        text = ""
    return {**event, "body": text, "isBase64Encoded": False}


@lambda_entry("enrollment", requires=("inbound_queue_url",), correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        event = readable_body(event)
    except MalformedBody as exc:
        logger.warning("request body refused", extra={"reason": str(exc), "status": exc.status})
        return error_response(exc.status, str(exc))
    return app.resolve(event, context)
