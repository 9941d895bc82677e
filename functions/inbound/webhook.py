"""Inbound webhooks (public routes; every request's signature is checked here).

``POST /webhooks/twilio``: Twilio SMS/WhatsApp form posts, ``X-Twilio-Signature`` checked against
the public URL; answers empty TwiML at once. ``GET /webhooks/whatsapp``: Meta's verification
handshake. ``POST /webhooks/whatsapp``: Meta WhatsApp Cloud payloads, ``X-Hub-Signature-256`` over
the raw body. Both normalise to ``InboundMessage`` and hand it to ``InboundEvents.handle``: text goes
to ``receive_inbound`` (opt-out/in, auto-enroll, enqueue on the FIFO queue); media, reactions, edits,
deletions and number changes are recorded (and media answered once a day) without a model call.
Delivery reports (Twilio status callbacks, Meta statuses) record failures. A well-formed post is
never answered 4xx, even from a sender known only by a business-scoped user id. No LLM here: the
worker does that.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qsl

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from promptpipe.adapters.secrets import load_secrets
from promptpipe.adapters.twilio_signature import verify_twilio_signature
from promptpipe.errors import ValidationFailed
from promptpipe.inbound import (
    SenderWithoutPhone,
    parse_meta_payload,
    parse_twilio_form,
    verify_meta_handshake,
    verify_meta_signature,
)
from promptpipe.models.messaging import DeliveryStatus, InboundMessage
from promptpipe.observability import count, counts_errors, logger, metrics, tracer
from promptpipe.services import InboundDecision
from promptpipe.settings import get_settings
from promptpipe.wiring import get_app, inbound_events

app = APIGatewayHttpResolver()
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'


def credential(name: str) -> str | None:
    """A channel credential: the environment (local) or the channel secret (AWS)."""
    value = getattr(get_settings(), name, None)
    return value or load_secrets(get_settings()).get(name)


def reject(reason: str, status: int = 403) -> Response:
    count("WebhookRejected", reason=reason.split(":", 1)[0])
    logger.warning("webhook rejected", extra={"reason": reason})
    return Response(status_code=status, content_type=content_types.TEXT_PLAIN, body=reason)


def _checks_disabled() -> bool:
    return get_settings().local_dev_disable_signature_check


def public_url() -> str:
    """The URL Twilio signed: the configured public base, else what API Gateway received."""
    event = app.current_event
    path = event.raw_path
    query = f"?{event.raw_query_string}" if event.raw_query_string else ""
    base = get_settings().public_webhook_base_url
    if base:
        return base.rstrip("/") + "/webhooks/twilio" + query
    host = event.headers.get("x-forwarded-host") or event.request_context.domain_name
    return f"https://{host}{path}{query}"


def accept(message: InboundMessage) -> InboundDecision:
    """Hand a verified message to the application; log its correlation keys (never its body)."""
    decision = inbound_events().handle(message)
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
    decision = inbound_events().record_delivery(status)
    if decision.action == "delivery_failed":
        count("DeliveryFailures", code=status.error_code or "none")


def ignore_sender_without_phone() -> None:
    count("WebhookIgnored", reason="sender_without_phone")
    logger.info("message from a sender without a phone number ignored")


def raw_body() -> bytes:
    """The request body exactly as sent (base64-decoded when API Gateway encoded it), not decoded as
    text: a body that is not UTF-8 must fail the signature check or parsing, not raise (a 5xx)."""
    event = app.current_event
    body = event.body or ""
    if not event.is_base64_encoded:
        return body.encode("utf-8", "surrogatepass")
    try:
        return base64.b64decode(body)
    except ValueError:  # binascii.Error: not base64 after all
        return b""


@app.post("/webhooks/twilio")
def twilio_webhook() -> Response:
    # Twilio posts URL-encoded ASCII; stray undecodable bytes become U+FFFD instead of raising.
    body = raw_body().decode("utf-8", "replace")
    params = parse_qsl(body, keep_blank_values=True)
    if not _checks_disabled():
        token = credential("twilio_auth_token")
        if not token:
            return reject("not_configured", 503)
        if not verify_twilio_signature(
            public_url(), params, app.current_event.headers.get("x-twilio-signature"), token
        ):
            return reject("bad_signature")
    try:
        parsed = parse_twilio_form(body, get_app().clock.now(), get_settings().default_phone_region)
    except SenderWithoutPhone:
        ignore_sender_without_phone()
        return Response(status_code=200, content_type="text/xml", body=EMPTY_TWIML)
    except ValidationFailed as exc:
        return reject(f"malformed:{exc.field or 'body'}", 400)
    if isinstance(parsed, DeliveryStatus):
        delivery_report(parsed)
    else:
        accept(parsed)
    return Response(status_code=200, content_type="text/xml", body=EMPTY_TWIML)


@app.get("/webhooks/whatsapp")
def whatsapp_verify() -> Response:
    query = app.current_event.query_string_parameters or {}
    token = credential("whatsapp_verify_token")
    challenge = verify_meta_handshake(query, token) if token else None
    if challenge is None:
        return reject("bad_verify_token")
    return Response(status_code=200, content_type=content_types.TEXT_PLAIN, body=challenge)


@app.post("/webhooks/whatsapp")
def whatsapp_webhook() -> Response:
    event = app.current_event
    raw_bytes = raw_body()
    if not _checks_disabled():
        secret = credential("whatsapp_app_secret")
        if not secret:
            return reject("not_configured", 503)
        if not verify_meta_signature(raw_bytes, event.headers.get("x-hub-signature-256"), secret):
            return reject("bad_signature")
    try:
        payload = json.loads(raw_bytes or b"{}")
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
    except (ValueError, ValidationFailed):
        # Signed but unreadable: answer 200 so Meta does not retry it for days; nothing is enqueued.
        return reject("malformed", 200)
    for message in messages:
        accept(message)
    for status in statuses:
        delivery_report(status)
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body={"received": len(messages)})


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
@counts_errors("webhook")
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
