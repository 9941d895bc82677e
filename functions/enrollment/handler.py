"""Participants API (API Gateway HTTP API, IAM-authorised): enrollment and management.

Each route parses and validates, calls one use case, and maps the result into the
``{"status", "message", "result"}`` envelope (docs/behaviour.md#B-API-1). The routes live in one
Powertools router each: the participants (``participants.py``), their conversation state, model
routes and reconcile (``state.py``), the flow definitions (``flows.py``); domain errors, and routes
asked with a wrong method, map to HTTP in one place (``errors.py``). This module builds the resolver
from them and checks the body before the resolver reads it.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.common import lambda_entry
from functions.enrollment import coordination, errors, flows, participants, state
from functions.enrollment.answers import BASE, FLOWS, envelope
from promptpipe.observability import logger
from promptpipe.rules.http_body import MalformedBody, NotJson, body_bytes, decode_utf8, error_response, parse_json
from promptpipe.settings import get_settings

__all__ = ["BASE", "FLOWS", "app", "handler", "readable_body"]

app = APIGatewayHttpResolver(enable_validation=True)


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
# In the order of the OpenAPI document's paths.
for router in (participants.router, state.router, flows.router, coordination.router, errors.router):
    app.include_router(router)


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
