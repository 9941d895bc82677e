"""Inbound webhooks (public routes; every request's signature is checked here).

``POST /webhooks/twilio``: Twilio SMS/WhatsApp form posts, ``X-Twilio-Signature`` checked against
the public URL; answers empty TwiML at once. ``GET /webhooks/whatsapp``: Meta's verification
handshake. ``POST /webhooks/whatsapp``: Meta WhatsApp Cloud payloads, ``X-Hub-Signature-256`` over
the raw body. Both normalise to ``InboundMessage`` and hand it to ``usecases.receive_inbound``: text
goes to ``usecases.receive_text`` (opt-out/in, auto-enroll, enqueue on the FIFO queue); media, reactions, edits,
deletions and number changes are recorded (and media answered once a day) without a model call.
Delivery reports (Twilio status callbacks, Meta statuses) record failures. A well-formed post is
never answered 4xx, even from a sender known only by a business-scoped user id. No LLM here: the
worker does that.

Three routes, so a table (``ROUTES``) dispatches them rather than Powertools' resolver, whose import
is a tenth of the function's cold-start floor (``channels.http_event``, docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.common import lambda_entry
from promptpipe.channels.http_event import HttpRequest
from promptpipe.channels.parsing import SenderWithoutPhone, parse_meta_payload, parse_twilio_form
from promptpipe.channels.signatures import verify_meta_handshake, verify_meta_signature, verify_twilio_signature
from promptpipe.errors import ConfigurationError, ValidationFailed
from promptpipe.models.messaging import DeliveryStatus, InboundMessage
from promptpipe.observability import count, logger
from promptpipe.rules.http_body import (
    PAYLOAD_TOO_LARGE,
    HttpAnswer,
    MalformedBody,
    body_bytes,
    error_response,
    http_answer,
    parse_json,
)
from promptpipe.settings import get_settings
from promptpipe.usecases.outcomes import InboundDecision
from promptpipe.usecases.receive_inbound import receive_inbound, record_delivery
from promptpipe.wiring import channel_credential, get_app

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
WEBHOOK_NOT_CONFIGURED = "not_configured"


def signing_secret(name: str) -> str | HttpAnswer:
    """The channel's signing secret, or the 503 of a deployment without it (missing, or its secret
    unreadable): an ERROR and the alarmed ``WebhookMisconfigured`` metric, since the providers only
    retry and then give up, and nothing else would show the deployment is broken."""
    try:
        secret = channel_credential(name)
        problem = "" if secret else "missing"
    except ConfigurationError as exc:  # the channel secret cannot be read, or is not a JSON object
        secret, problem = None, str(exc)
    if secret:
        return secret
    count("WebhookMisconfigured")
    logger.error("webhook signing secret not configured", extra={"setting": name, "problem": problem})
    return error_response(503, WEBHOOK_NOT_CONFIGURED)


def reject(reason: str, status: int = 403) -> HttpAnswer:
    """Refuse (or, with 200, acknowledge and drop) a request; the error envelope of the API."""
    count("WebhookRejected", reason=reason.split(":", 1)[0])
    logger.warning("webhook rejected", extra={"reason": reason, "status": status})
    return error_response(status, reason)


def _checks_disabled() -> bool:
    return get_settings().local_dev_disable_signature_check


def public_url(request: HttpRequest) -> str:
    """The URL Twilio signed: the configured public base (the stack always sets it), else the domain
    API Gateway received the request on. A client header (X-Forwarded-Host) never names the host,
    unless WEBHOOK_TRUSTED_PROXY says a proxy we run sets it."""
    query = f"?{request.raw_query_string}" if request.raw_query_string else ""
    settings = get_settings()
    if settings.public_webhook_base_url:
        return settings.public_webhook_base_url.rstrip("/") + "/webhooks/twilio" + query
    host = request.domain_name
    if settings.webhook_trusted_proxy:
        host = request.headers.get("x-forwarded-host") or host
    return f"https://{host}{request.path}{query}"


def accept(message: InboundMessage) -> InboundDecision:
    """Hand a verified message to the application; log its correlation keys (never its body)."""
    decision = receive_inbound(get_app(), message)
    if decision.action == "opted_out":
        count("OptOuts")
    if message.kind.value != "text":
        count("InboundNonText", kind=message.kind.value)
    logger.info(
        "inbound message accepted",
        extra={
            "provider": message.provider,
            "provider_message_id": message.provider_message_id,
            "kind": message.kind.value,
            "action": decision.action,
            "participant_id": decision.participant_id,
        },
    )
    return decision


def delivery_report(status: DeliveryStatus) -> None:
    """A provider's status report: failures are recorded against the participant."""
    decision = record_delivery(get_app(), status)
    if decision.action == "delivery_failed":
        count("DeliveryFailures", code=status.error_code or "none")


def ignore_sender_without_phone() -> None:
    count("WebhookIgnored", reason="sender_without_phone")
    logger.info("message from a sender without a phone number ignored")


def raw_body(request: HttpRequest) -> bytes:
    """The request body exactly as sent (base64-decoded when API Gateway encoded it), not decoded as
    text: a body that is not UTF-8 must fail the signature check or parsing, not raise (a 5xx).
    ``handler`` has already refused bodies over the cap or not base64."""
    return body_bytes(request.body, request.is_base64_encoded, max_bytes=get_settings().max_webhook_body_bytes)


def twilio_webhook(request: HttpRequest) -> HttpAnswer:
    # Twilio posts URL-encoded ASCII; stray undecodable bytes become U+FFFD instead of raising.
    body = raw_body(request).decode("utf-8", "replace")
    params = parse_qsl(body, keep_blank_values=True)
    if not _checks_disabled():
        token = signing_secret("twilio_auth_token")
        if isinstance(token, dict):
            return token
        if not verify_twilio_signature(public_url(request), params, request.headers.get("x-twilio-signature"), token):
            return reject("bad_signature")
    try:
        parsed = parse_twilio_form(body, get_app().clock.now(), get_settings().default_phone_region)
    except SenderWithoutPhone:
        ignore_sender_without_phone()
        return http_answer(200, EMPTY_TWIML, "text/xml")
    except ValidationFailed as exc:
        return reject(f"malformed:{exc.field or 'body'}", 400)
    if isinstance(parsed, DeliveryStatus):
        delivery_report(parsed)
    else:
        accept(parsed)
    return http_answer(200, EMPTY_TWIML, "text/xml")


def whatsapp_verify(request: HttpRequest) -> HttpAnswer:
    token = channel_credential("whatsapp_verify_token")
    challenge = verify_meta_handshake(request.query, token) if token else None
    if challenge is None:
        return reject("bad_verify_token")
    return http_answer(200, challenge, "text/plain")


def whatsapp_webhook(request: HttpRequest) -> HttpAnswer:
    raw_bytes = raw_body(request)
    if not _checks_disabled():
        secret = signing_secret("whatsapp_app_secret")
        if isinstance(secret, dict):
            return secret
        if not verify_meta_signature(raw_bytes, request.headers.get("x-hub-signature-256"), secret):
            return reject("bad_signature")
    try:
        # Not UTF-8, not JSON or nested too deeply: Meta never sends that, so it is a 400.
        payload = parse_json(raw_bytes) if raw_bytes.strip() else {}
    except MalformedBody as exc:
        return reject(f"malformed_json: {exc}", 400)
    try:
        if not isinstance(payload, dict):
            raise ValidationFailed("payload must be a JSON object")
        rejected: list[ValidationFailed] = []
        statuses: list[DeliveryStatus] = []
        messages = parse_meta_payload(
            payload, get_app().clock.now(), get_settings().default_phone_region, rejected=rejected, statuses=statuses
        )
        for problem in rejected:  # the rest of the batch still goes through
            if isinstance(problem, SenderWithoutPhone):
                ignore_sender_without_phone()
                continue
            count("WebhookRejected", reason="malformed_message")
            logger.warning("malformed WhatsApp message skipped", extra={"field": problem.field})
    except ValidationFailed:
        # Signed JSON of a shape we cannot use (a field Meta added, say): answer 200 so Meta does not
        # retry it for days; nothing is enqueued.
        return reject("malformed", 200)
    steps: list[Callable[[], object]] = [partial(accept, message) for message in messages]
    steps += [partial(delivery_report, status) for status in statuses]
    _each_of_the_batch(steps)
    return http_answer(200, {"received": len(messages)})


def _each_of_the_batch(steps: list[Callable[[], object]]) -> None:
    """Run every message's and status's step, even after one raised, then raise the first error
    (a 5xx: Meta retries the whole POST, and what was taken is taken once, by its provider id). One
    message that fails must not leave the messages after it untaken until the retries run out."""
    first: Exception | None = None
    for step in steps:
        try:
            step()
        except Exception as exc:  # re-raised below, after the rest of the batch
            if first is None:
                first = exc
            logger.exception("webhook batch item failed; the rest of the batch goes on")
    if first is not None:
        raise first


ROUTES: dict[tuple[str, str], Callable[[HttpRequest], HttpAnswer]] = {
    ("POST", "/webhooks/twilio"): twilio_webhook,
    ("GET", "/webhooks/whatsapp"): whatsapp_verify,
    ("POST", "/webhooks/whatsapp"): whatsapp_webhook,
}


@lambda_entry("webhook", requires=("inbound_queue_url",), correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:  # the size cap first: a body over it is never decoded, hashed or parsed
        body_bytes(
            event.get("body"), bool(event.get("isBase64Encoded")), max_bytes=get_settings().max_webhook_body_bytes
        )
    except MalformedBody as exc:
        reason = "too_large" if exc.status == PAYLOAD_TOO_LARGE else "malformed_body"
        count("WebhookRejected", reason=reason)
        logger.warning("webhook rejected", extra={"reason": reason, "status": exc.status})
        return error_response(exc.status, str(exc))
    request = HttpRequest.from_event(event)
    route = ROUTES.get((request.method, request.path))
    if route is None:
        return error_response(404, "not_found")
    return route(request)
