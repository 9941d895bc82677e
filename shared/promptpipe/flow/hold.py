"""The one hold and the safety net's turn (docs/safety.md).

A hold (``ConversationHold`` in the flow state) says the conversation waits for a person: a safety
flag, the flow controller's hand-off, a staff member. It works the same in intake and feedback.
While it lasts no model is called (``ConversationFlow.handle_message`` answers held turns here, the
daily prompt is skipped before it is generated), the schedules are kept and their firings are
skipped and recorded, and nothing is sent but the hold's own reply (``OpContext.emit`` is the one
guard). A coordinator releases it (``POST …/state`` with ``release_hold``, or the console).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from promptpipe.config import CoreConfig
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.study_settings import ANY_REGION
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.metrics import metric
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.models.state import ConversationMessage
from promptpipe.models.store import Direction
from promptpipe.rules.phone import region_of

if TYPE_CHECKING:  # the screen compiles its patterns at import: the daily prompt and timers never load it
    from promptpipe.models.alerts import SafetyAlert
    from promptpipe.rules.safety_screen import SafetyReading

logger = logging.getLogger(__name__)

# At most one holding reply a day, however many messages a held participant sends.
HOLD_REPLY_EVERY = timedelta(hours=24)

_LOCAL = {
    "en": "call your local emergency number",
    "es": "llama a tu número local de emergencias",
}
SAFETY_REPLY = {
    "en": (
        "It sounds like you are going through something really hard, and your safety matters. "
        "Please reach out now: {resources}. This number is not watched around the clock, so we may "
        "not see your messages right away. We have let a member of our study team know, and they "
        "will contact you. Your daily messages are paused until then."
    ),
    "es": (
        "Parece que estás pasando por algo muy difícil, y tu seguridad importa. Por favor, busca "
        "ayuda ahora: {resources}. Este número no se vigila las 24 horas, así que puede que no "
        "veamos tus mensajes enseguida. Ya avisamos a una persona del equipo del estudio, que se "
        "pondrá en contacto contigo. Tus mensajes diarios quedan en pausa hasta entonces."
    ),
}
HOLD_REPLY = {
    HoldReason.SAFETY: {
        "en": (
            "We got your message. A member of our study team will contact you; this number is not "
            "watched around the clock. If you need help now: {resources}."
        ),
        "es": (
            "Recibimos tu mensaje. Una persona del equipo del estudio se pondrá en contacto contigo; "
            "este número no se vigila las 24 horas. Si necesitas ayuda ahora: {resources}."
        ),
    },
    None: {
        "en": "Thanks for your message! A member of our team will follow up with you personally soon.",
        "es": "¡Gracias por tu mensaje! Una persona de nuestro equipo te escribirá pronto.",
    },
}


def resources(config: CoreConfig, phone: str, language: str) -> str:
    """The study's configured resources for the region of ``phone``, in ``language`` (English when
    the region lists none in it), else those for every region (``ANY_REGION``: a study's own);
    "your local emergency number" for a region not configured."""
    region = region_of(phone) or ""
    texts = config.safety_resources.get(region) or config.safety_resources.get(ANY_REGION) or {}
    return texts.get(language) or texts.get("en") or _LOCAL.get(language, _LOCAL["en"])


def _language(language: str | None) -> str:
    return language if language in SAFETY_REPLY else "en"


def safety_reply(config: CoreConfig, phone: str, language: str | None) -> str:
    language = _language(language)
    return SAFETY_REPLY[language].format(resources=resources(config, phone, language))


def hold_reply(config: CoreConfig, hold: ConversationHold, phone: str, language: str | None) -> str:
    language = _language(language)
    texts = HOLD_REPLY.get(hold.reason) or HOLD_REPLY[None]
    return texts[language].format(resources=resources(config, phone, language))


def place(reason: HoldReason, set_by: str, *, detail: str = "") -> Any:
    """The operation putting the participant on hold. A hold already there stays (its start and
    who set it), except that a safety flag overrides any other reason: it is what a person must
    see first."""

    def apply(op: OpContext) -> None:
        current = op.data.hold()
        if current is not None and (current.reason is HoldReason.SAFETY or reason is not HoldReason.SAFETY):
            return
        op.data.set_hold(
            # The placing event's own message (the safety reply, the hand-off's holding message)
            # counts as the day's holding reply.
            ConversationHold(
                reason=reason, since=op.now, set_by=set_by, event_id=op.event_id, detail=detail, replied_at=op.now
            )
        )

    return apply


def release(op: OpContext) -> ConversationHold | None:
    """Ends the hold (a coordinator's release). Returns the hold that ended, if any."""
    current = op.data.hold()
    op.data.set_hold(None)
    return current


def alert_of(participant_id: str, phone: str, reading: SafetyReading, *, opted_out: bool = False) -> SafetyAlert:
    from promptpipe.models.alerts import SafetyAlert  # here: only a flagged message is alerted (cold start)

    return SafetyAlert(
        participant_id=participant_id,
        category=reading.category.value if reading.category else "",
        language=reading.language or "",
        region=region_of(phone) or "",
        opted_out=opted_out,
    )


def _notice(op: OpContext, body: str) -> OutboundMessage:
    return op.message(body, OutboundKind.NOTICE)


def flag_turn(
    config: CoreConfig, session: ConversationSession, reading: SafetyReading, user: ConversationMessage
) -> tuple[str | None, dict[str, Any]]:
    """A flagged message: the participant is held (reason ``safety``), the fixed safety reply goes
    out in their language (not to a participant who is not active: they opted out or were paused),
    and the metrics say so. Returns (the reply or None, the audit)."""
    category = reading.category.value if reading.category else ""
    session.apply("safety_hold", place(HoldReason.SAFETY, "safety screen", detail=category))
    reply: str | None = None
    if session.participant.is_active:
        reply = safety_reply(config, session.participant.phone_number, reading.language)
        body = reply

        def send(op: OpContext) -> None:
            assistant = ConversationMessage(role="assistant", content=body, timestamp=op.now)
            op.data.append_history(user, assistant)
            op.emit(
                op.message(body, OutboundKind.NOTICE),
                metadata={"safety": category},
                on_hold=True,
            )
            hold = op.data.hold()
            if hold is not None:
                op.data.set_hold(hold.model_copy(update={"replied_at": op.now}))

        session.apply("safety_reply", send)
    session.metrics.append(metric("SafetyFlag", 1, "Count"))  # alarmed in the stack
    session.metrics.append(metric("NeedsPerson", 1, "Count"))
    logger.warning(
        "safety flag: the participant is held for a person",
        extra={"participant_id": session.participant.id, "category": category, "language": reading.language},
    )
    return reply, {"safety": {"category": category, "language": reading.language or ""}}


def crisis_in_opt_out(session: ConversationSession, reading: SafetyReading) -> None:
    """A crisis inside an opt-out ("STOP. i want to end it all", "ya no quiero seguir"): the opt-out
    is honoured all the same (the caller opts them out; only its confirmation goes out, no safety
    reply), and the participant is held (reason ``safety``) so the console lists them; the caller
    alerts the team after the commit. The webhook and the worker both read an opt-out this way."""
    category = reading.category.value if reading.category else ""
    session.apply("safety_hold", place(HoldReason.SAFETY, "safety screen (opt-out)", detail=category))
    session.metrics.append(metric("SafetyFlag", 1, "Count"))  # alarmed in the stack


def held_turn(
    config: CoreConfig, session: ConversationSession, hold: ConversationHold, reading: SafetyReading | None, user: Any
) -> tuple[str | None, dict[str, Any]]:
    """A message from a held participant: recorded (the transcript already has it; the history gets
    it, so the coach knows on release), no model, and the hold's reply at most once a day."""
    language = reading.language if reading is not None else None
    due = hold.replied_at is None or session.now - hold.replied_at >= HOLD_REPLY_EVERY
    reply = hold_reply(config, hold, session.participant.phone_number, language) if due else None

    def apply(op: OpContext) -> None:
        op.data.append_history(user)
        current = op.data.hold()
        if reply is None or current is None or not op.participant.is_active:
            return
        op.emit(_notice(op, reply), metadata={"hold": current.reason.value}, on_hold=True)
        op.data.set_hold(current.model_copy(update={"replied_at": op.now}))

    session.apply("held_message", apply)
    return reply, {"skipped": f"on hold ({hold.reason.value})"}


def asked_turn(
    config: CoreConfig, session: ConversationSession, user: ConversationMessage, *, language: str | None
) -> tuple[str | None, dict[str, Any]]:
    """A participant who asks, in so many words, to talk to a person (``rules/ask_person.py``): held
    (reason ``asked``) before any model reads the message, and told a person will follow up (the
    hold's own reply, in their language). The coach's tool holds them for a request in other words."""
    session.apply("asked_hold", place(HoldReason.ASKED, "participant asked for a person"))
    hold = session.data.hold()
    reply = hold_reply(config, hold, session.participant.phone_number, language) if hold is not None else None

    def apply(op: OpContext) -> None:
        op.data.append_history(user)
        if reply is None:
            return
        op.data.append_history(ConversationMessage(role="assistant", content=reply, timestamp=op.now))
        op.emit(_notice(op, reply), metadata={"hold": HoldReason.ASKED.value}, on_hold=True)

    session.apply("asked_reply", apply)
    session.metrics.append(metric("NeedsPerson", 1, "Count"))
    return reply, {"hold": HoldReason.ASKED.value}


def skipped_firing(what: str, hold: ConversationHold, **metadata: Any) -> Any:
    """The record of a scheduled firing skipped because of the hold (the schedule itself stays)."""

    def apply(op: OpContext) -> None:
        op.record(
            Direction.SYSTEM,
            "skipped",
            f"{what} skipped: on hold ({hold.reason.value})",
            metadata={**metadata, "hold": hold.reason.value},
        )

    return apply
