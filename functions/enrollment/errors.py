"""One place mapping what the participants API's routes raise to HTTP, in the envelope: the domain
errors, the resolver's validation and body errors, and routes it does not have (404) or has with
another method (405, ``answers.allowed_methods``)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from pydantic import BaseModel

from functions.enrollment.answers import ApiRouter, allowed_methods, envelope, method_not_allowed
from promptpipe.controller.problems import DefinitionInvalid
from promptpipe.errors import (
    FlowNotFound,
    FlowPushConflict,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StoreError,
    ValidationFailed,
)
from promptpipe.observability import logger
from promptpipe.usecases.flows import problems_json

router = ApiRouter()


@router.exception_handler(NotFoundError)
def _no_route(_exc: Exception) -> Response[dict[str, Any]]:
    allowed = allowed_methods(router.current_event.path)
    if allowed:  # a route of this API, another method
        return method_not_allowed(", ".join(allowed))
    return envelope(404, message="No such route", error=True)


@router.exception_handler(RequestValidationError)
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
    route = router.context.get("_route")
    required: list[str] = []
    for param in getattr(getattr(route, "dependant", None), "body_params", None) or []:
        model = getattr(param, "type_", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            required += [name for name, field in model.model_fields.items() if field.is_required()]
    if not required:
        return "request body is required"
    return "; ".join(f"{name} is required" for name in required)


@router.exception_handler(RequestUnsupportedContentType)
def _unsupported_media(_exc: RequestUnsupportedContentType) -> Response[dict[str, Any]]:
    return envelope(415, message="Unsupported content type: send JSON (content-type: application/json)", error=True)


@router.exception_handler(UnicodeDecodeError)
def _not_utf8(_exc: UnicodeDecodeError) -> Response[dict[str, Any]]:
    return envelope(400, message="Invalid JSON format: the body is not UTF-8", error=True)


@router.exception_handler(ValueError)
def _unreadable_body(exc: ValueError) -> Response[dict[str, Any]]:
    # Powertools parses a body declared multipart/form-data before validation and raises a bare
    # ValueError when it is malformed; the API takes JSON only. Any other ValueError is a bug: re-raised.
    if "multipart" not in str(exc):
        raise exc
    return envelope(400, message="Invalid body: send JSON (content-type: application/json)", error=True)


@router.exception_handler(ValidationFailed)
def _validation_failed(exc: ValidationFailed) -> Response[dict[str, Any]]:
    return envelope(400, message=str(exc), error=True)


@router.exception_handler(DefinitionInvalid)
def _definition_invalid(exc: DefinitionInvalid) -> Response[dict[str, Any]]:
    return envelope(
        400,
        message=f"Invalid flow definition: {len(exc.problems)} problem(s)",
        result={"problems": problems_json(exc.problems)},
        error=True,
    )


@router.exception_handler(FlowPushConflict)
def _flow_push_conflict(exc: FlowPushConflict) -> Response[dict[str, Any]]:
    return envelope(
        409,
        message=f"Flow {exc.flow_id!r} changed while this push was stored: version {exc.latest_version} won; "
        "read it and push again",
        result={"flow_id": exc.flow_id, "latest_version": exc.latest_version},
        error=True,
    )


@router.exception_handler(FlowNotFound)
def _flow_not_found(_exc: FlowNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Flow not found", error=True)


@router.exception_handler(ParticipantNotFound)
def _not_found(_exc: ParticipantNotFound) -> Response[dict[str, Any]]:
    return envelope(404, message="Participant not found", error=True)


@router.exception_handler(StoreError)
def _store_unavailable(exc: StoreError) -> Response[dict[str, Any]]:
    # Throttled, timed out or unreachable: the client may retry (a 500 would say our bug).
    logger.warning("store unavailable", extra={"operation": exc.operation, "code": exc.code})
    return envelope(503, message="Service temporarily unavailable, retry later", error=True)


@router.exception_handler(ParticipantAlreadyEnrolled)
def _conflict(_exc: ParticipantAlreadyEnrolled) -> Response[dict[str, Any]]:
    return envelope(409, message="Participant with this phone number already enrolled", error=True)
