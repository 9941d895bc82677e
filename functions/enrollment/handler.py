"""Participants API (API Gateway HTTP API, IAM-authorised): enrollment and management.

Each route parses and validates, calls one service function, and maps the result into the
``{"status", "message", "result"}`` envelope (docs/behaviour.md#B-API-1). Domain errors map to HTTP in one place.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from promptpipe.controller.catalog import FlowCatalog
from promptpipe.controller.definition import DefinitionInvalid, Problem
from promptpipe.errors import (
    ConfigurationError,
    FlowNotFound,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    ValidationFailed,
)
from promptpipe.http_body import MalformedBody, body_bytes, check_json_depth, decode_utf8, error_response
from promptpipe.models.api import EnrollmentRequest, ParticipantUpdate, StateOverride
from promptpipe.observability import counts_errors, logger, metrics, tracer
from promptpipe.settings import get_settings
from promptpipe.wiring import get_app

app = APIGatewayHttpResolver(enable_validation=True)
BASE = "/conversation/participants"
FLOWS = "/conversation/flows"

# The error answers, documented in the OpenAPI document (all in the {"status": "error"} envelope).
_ENVELOPE = {
    "application/json": {
        "schema": {
            "type": "object",
            "properties": {"status": {"type": "string", "enum": ["ok", "error"]}, "message": {"type": "string"}},
        }
    }
}
BAD_REQUEST = {
    400: {"description": "Invalid request: the message names the field", "content": _ENVELOPE},
    413: {"description": "Request body over MAX_API_BODY_BYTES (64 KiB by default)", "content": _ENVELOPE},
}
NOT_FOUND = {404: {"description": "Participant not found", "content": _ENVELOPE}}
CONFLICT = {409: {"description": "Phone number already enrolled", "content": _ENVELOPE}}
OK = {200: {"description": "OK: the envelope with the result", "content": _ENVELOPE}}
CREATED = {201: {"description": "Enrolled: the envelope with the participant", "content": _ENVELOPE}}


def envelope(
    status_code: int, *, message: str | None = None, result: Any = None, error: bool = False
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"status": "error" if error else "ok"}
    if message is not None:
        body["message"] = message
    if result is not None:
        body["result"] = result
    return Response(status_code=status_code, content_type=content_types.APPLICATION_JSON, body=body)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json")


@app.post(BASE, status_code=201, responses={**CREATED, **BAD_REQUEST, **CONFLICT})
def enroll(request: EnrollmentRequest) -> Response[dict[str, Any]]:
    participant = get_app().enroll(request)
    return envelope(201, message="Conversation participant enrolled successfully", result=_dump(participant))


@app.get(BASE, responses={**OK, **BAD_REQUEST})
def list_participants(
    limit: Annotated[int, Query(ge=1, le=100)] = 50, next_token: Annotated[str | None, Query()] = None
) -> Response[dict[str, Any]]:
    participants, token = get_app().list_participants(limit=limit, next_token=next_token)
    return envelope(200, result={"participants": [_dump(p) for p in participants], "next_token": token})


@app.get(f"{BASE}/<participant_id>", responses={**OK, **NOT_FOUND})
def get_participant(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=_dump(get_app().get_participant(participant_id)))


@app.put(f"{BASE}/<participant_id>", responses={**OK, **BAD_REQUEST, **NOT_FOUND})
def update_participant(participant_id: str, update: ParticipantUpdate) -> Response[dict[str, Any]]:
    participant = get_app().update_participant(participant_id, update)
    return envelope(200, message="Participant updated successfully", result=_dump(participant))


@app.delete(f"{BASE}/<participant_id>", responses={**OK, **NOT_FOUND})
def delete_participant(
    participant_id: str, keep_transcript: Annotated[bool, Query()] = True
) -> Response[dict[str, Any]]:
    get_app().delete_participant(participant_id, keep_transcript=keep_transcript)
    return envelope(200, message="Participant deleted successfully")


@app.get(f"{BASE}/<participant_id>/history", responses={**OK, **BAD_REQUEST, **NOT_FOUND})
def history(
    participant_id: str,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query()] = None,
    include_audit: Annotated[bool, Query()] = True,
) -> Response[dict[str, Any]]:
    entries, token = get_app().history(participant_id, limit=limit, next_token=next_token, include_audit=include_audit)
    return envelope(200, result={"messages": [_dump(e) for e in entries], "next_token": token})


@app.get(f"{BASE}/<participant_id>/state", responses={**OK, **NOT_FOUND})
def get_state(participant_id: str) -> Response[dict[str, Any]]:
    return envelope(200, result=_dump(get_app().state_view(participant_id)))


@app.post(f"{BASE}/<participant_id>/state", responses={**OK, **BAD_REQUEST, **NOT_FOUND})
def override_state(participant_id: str, override: StateOverride) -> Response[dict[str, Any]]:
    return envelope(200, message="State updated", result=_dump(get_app().override_state(participant_id, override)))


# -- flow definitions (docs/controller.md) ------------------------------------------------------
FLOW_NOT_FOUND = {404: {"description": "Flow (or version) not found", "content": _ENVELOPE}}
FlowBody = Annotated[dict[str, Any], Body(description="A flow definition (docs/controller.md)")]


def _flows() -> FlowCatalog:
    flows = get_app().deps.flows
    if flows is None:
        raise ConfigurationError("the flow catalog is not configured")
    return flows


def _problems(problems: list[Problem]) -> list[dict[str, str]]:
    return [p.model_dump() for p in problems]


@app.post(f"{FLOWS}/validate", responses={**OK, **BAD_REQUEST})
def validate_flow(definition: FlowBody) -> Response[dict[str, Any]]:
    parsed, problems = FlowCatalog.validate(definition)
    return envelope(200, result={"valid": parsed is not None, "problems": _problems(problems)})


@app.get(f"{FLOWS}/<flow_id>", responses={**OK, **BAD_REQUEST, **FLOW_NOT_FOUND})
def get_flow(flow_id: str, version: Annotated[int | None, Query(ge=1)] = None) -> Response[dict[str, Any]]:
    flows = _flows()
    definition = flows.latest(flow_id) if version is None else flows.get(flow_id, version)
    return envelope(200, result=definition.to_json_dict())


@app.put(f"{FLOWS}/<flow_id>", responses={**OK, **BAD_REQUEST})
def put_flow(flow_id: str, definition: FlowBody) -> Response[dict[str, Any]]:
    caller = (app.current_event.request_context.authorizer.iam.user_arn or "") if _has_iam() else ""
    stored = _flows().push(definition, flow_id=flow_id, created_by=caller)
    return envelope(200, message=f"Flow stored as version {stored.version}", result=stored.to_json_dict())


@app.get(f"{FLOWS}/<flow_id>/versions", responses={**OK, **FLOW_NOT_FOUND})
def flow_versions(flow_id: str) -> Response[dict[str, Any]]:
    versions = _flows().versions(flow_id)
    return envelope(200, result={"flow_id": flow_id, "versions": [_dump(v) for v in versions]})


def _has_iam() -> bool:
    try:
        return app.current_event.request_context.authorizer.iam is not None
    except (AttributeError, KeyError, TypeError):
        return False


# -- one place mapping domain errors to HTTP ------------------------------------------------
@app.not_found
def _no_route(_exc: Exception) -> Response[dict[str, Any]]:
    return envelope(404, message="No such route or method", error=True)


@app.exception_handler(RequestValidationError)
def _invalid_request(exc: RequestValidationError) -> Response[dict[str, Any]]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return envelope(400, message="Invalid JSON format", error=True)
    details = []
    for e in errors:
        loc = ".".join(str(part) for part in e.get("loc", ()) if part not in ("body", "query", "path"))
        if e.get("type") == "missing":
            details.append(f"{loc} is required")
        else:
            details.append(f"{loc}: {e.get('msg', 'invalid value')}")
    return envelope(400, message="; ".join(details) or "invalid request", error=True)


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


@app.exception_handler(FlowNotFound)
def _flow_not_found(_exc: FlowNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Flow not found", error=True)


@app.exception_handler(ParticipantNotFound)
def _not_found(_exc: ParticipantNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Participant not found", error=True)


@app.exception_handler(ParticipantAlreadyEnrolled)
def _conflict(_exc: ParticipantAlreadyEnrolled) -> Response[dict[str, Any]]:
    return envelope(409, message="Participant with this phone number already enrolled", error=True)


# -- the body, before the resolver parses it ------------------------------------------------
def readable_body(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with its body checked and given as plain UTF-8 text, or ``MalformedBody``.

    The resolver's own JSON parsing raises ``RecursionError`` on deeply nested JSON and
    ``UnicodeDecodeError`` on bytes that are not UTF-8 (both a 5xx), and reads an empty body as a
    missing one (answered ``" is required"``): here a body over ``MAX_API_BODY_BYTES`` is a 413, one
    that is not UTF-8 or nested too deeply a 400, and an empty POST/PUT body the empty object ``{}``,
    so the answer names the missing fields."""
    raw = body_bytes(event.get("body"), bool(event.get("isBase64Encoded")), max_bytes=get_settings().max_api_body_bytes)
    text = decode_utf8(raw)
    if text.strip():
        check_json_depth(text)
    else:
        method = (event.get("requestContext") or {}).get("http", {}).get("method", "")
        text = "{}" if method in ("POST", "PUT") else ""
    return {**event, "body": text, "isBase64Encoded": False}


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
@counts_errors("enrollment")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        event = readable_body(event)
    except MalformedBody as exc:
        logger.warning("request body refused", extra={"reason": str(exc), "status": exc.status})
        return error_response(exc.status, str(exc))
    return app.resolve(event, context)
