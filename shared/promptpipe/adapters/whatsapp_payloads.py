"""The Graph API bodies of the WhatsApp Cloud messages we send: text, reply buttons, templates
(``WhatsAppCloudMessenger`` posts them to ``/{phone_number_id}/messages``)."""

from __future__ import annotations

from typing import Any

from promptpipe.flow.questions import button_id
from promptpipe.models.messaging import Question


def text_payload(to: str, body: str) -> dict[str, Any]:
    """A plain text message; ``to`` in digits without ``+``."""
    return {"messaging_product": "whatsapp", "to": to, "type": "text", "text": {"body": body}}


INTERACTIVE_BODY_LIMIT = 1024  # Meta's limit on an interactive message's body text


def buttons_payload(to: str, question: Question, *, body: str | None = None) -> dict[str, Any]:
    """An interactive reply-button message (body: the question, or ``body``); button ids as in
    ``questions.button_id``."""
    buttons = [
        {"type": "reply", "reply": {"id": button_id(question, option), "title": option.title}}
        for option in question.options
    ]
    return {
        "messaging_product": "whatsapp",
        "to": to,
        "type": "interactive",
        "interactive": {
            "type": "button",
            "body": {"text": body or question.text},
            "action": {"buttons": buttons},
        },
    }


def template_payload(
    to: str, name: str, language: str, parameter: str | None, question: Question | None = None
) -> dict[str, Any]:
    """A template message: the body's ``{{1}}`` filled with ``parameter``; with ``question``, the
    template's quick-reply buttons carry the question's button ids as payloads (a tap comes back
    as a ``button`` message whose payload is the answer id)."""
    components: list[dict[str, Any]] = []
    if parameter is not None:
        components.append({"type": "body", "parameters": [{"type": "text", "text": parameter}]})
    if question is not None:
        for index, option in enumerate(question.options):
            components.append(
                {
                    "type": "button",
                    "sub_type": "quick_reply",
                    "index": str(index),
                    "parameters": [{"type": "payload", "payload": button_id(question, option)}],
                }
            )
    template: dict[str, Any] = {"name": name, "language": {"code": language}}
    if components:
        template["components"] = components
    return {"messaging_product": "whatsapp", "to": to, "type": "template", "template": template}
