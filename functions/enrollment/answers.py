"""What every route of the participants API answers with: the ``{"status", "message", "result"}``
envelope (docs/behaviour.md#B-API-1), the answers each route documents in the OpenAPI document, and
the routers the routes are declared on.

``ApiRouter`` is Powertools' ``Router`` that also notes each route's path and method as it is
declared, so that the resolver's not-found handler (``errors.py``) tells a route asked with another
method (405, with ``Allow``) from no route at all (404): Powertools answers both with its not-found
handler and lists its routes through no public API. This is the one shim; nothing else is written
twice.
"""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from promptpipe.errors import error_body
from promptpipe.models.api import (
    ErrorEnvelope,
    MessageEnvelope,
    ParticipantEnvelope,
    StateViewEnvelope,
)

BASE = "/conversation/participants"
FLOWS = "/conversation/flows"
_METHOD_ORDER = ("GET", "POST", "PUT", "DELETE", "PATCH")
_declared: dict[str, set[str]] = {}  # every route's rule -> its methods, as the routers declare them


class ApiRouter(Router):
    """A ``Router`` that notes each route's rule and method (``allowed_methods``)."""

    def route(self, rule: str, method: Any, *args: Any, **kwargs: Any) -> Any:
        methods = [method] if isinstance(method, str) else list(method)
        _declared.setdefault(rule.rstrip("/"), set()).update(m.upper() for m in methods)
        return super().route(rule, method, *args, **kwargs)


def _pattern(rule: str) -> re.Pattern[str]:
    """A rule's path pattern: each ``<name>`` one path segment, as the resolver matches it."""
    parts = re.split(r"<[^>]+>", rule)
    return re.compile("[^/]+".join(re.escape(part) for part in parts) + "/?")


def allowed_methods(path: str) -> list[str]:
    """The methods of the routes whose rule matches ``path`` (a literal rule before one with a
    parameter, as the resolver prefers it: ``/flows/validate`` is not the flow ``validate``)."""
    matching = [rule for rule in _declared if _pattern(rule).fullmatch(path)]
    literal = [rule for rule in matching if "<" not in rule]
    methods = set().union(*(_declared[rule] for rule in literal or matching))
    return [m for m in _METHOD_ORDER if m in methods]


def envelope(
    status_code: int, *, message: str | None = None, result: Any = None, error: bool = False
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = dict(error_body(message or "")) if error else {"status": "ok"}
    if message is not None and not error:
        body["message"] = message
    if result is not None:
        body["result"] = result
    return Response(status_code=status_code, content_type=content_types.APPLICATION_JSON, body=body)


def method_not_allowed(allowed: str) -> Response[dict[str, Any]]:
    response = envelope(405, message=f"Method not allowed here; allowed: {allowed}", error=True)
    response.headers["Allow"] = allowed
    return response


def dump(model: Any) -> Any:
    return model.model_dump(mode="json")


# The answers, documented in the OpenAPI document with their models (all in the envelope).
def answer(description: str, model: Any) -> OpenAPIResponse:
    return {"description": description, "content": {"application/json": {"model": model}}}


BAD_REQUEST = {400: answer("Invalid request: the message names the field", ErrorEnvelope)}
NOT_FOUND = {404: answer("Participant not found", ErrorEnvelope)}
PARTICIPANT = {200: answer("The participant", ParticipantEnvelope)}
STATE = {200: answer("The conversation state", StateViewEnvelope)}
DONE = {200: answer("Done: a message, no result", MessageEnvelope)}
# docs/architecture.md, "Effects that failed": the change is stored, its schedules are retried.
EFFECTS_PENDING = "Stored; its schedule changes failed and are being retried (effects_pending)"
PENDING_PARTICIPANT = {202: answer(f"{EFFECTS_PENDING}: the participant", ParticipantEnvelope)}
PENDING_STATE = {202: answer(f"{EFFECTS_PENDING}: the conversation state", StateViewEnvelope)}
