"""A person of the study team in the conversation (docs/console.md, "A person in the conversation").

A staff message is the coordinator's text, sent to the participant through the same path as every
message: decided in the participant's session, recorded in the transcript (an outbound entry of kind
``staff`` naming the coordinator), committed, then sent (``apply_effects``, after the commit). The
same commit places the one hold (reason ``staff``, docs/safety.md "The hold"): while a person has the
conversation the coach calls no model and sends nothing; a coordinator releases it
(``POST …/state`` with ``release_hold``, the console's Release). A hold already there (a safety flag,
a hand-off) stays as it is: the person answers it.

On WhatsApp, a message outside the 24-hour window goes as the staff template when one is configured;
otherwise it is refused before anything is written, saying why.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from promptpipe.channels.context import last_inbound_at
from promptpipe.errors import MessagingError, ValidationFailed
from promptpipe.flow.hold import place
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.models.api import StaffMessageRequest, StaffMessageSent
from promptpipe.models.audit import Actor, AuditAction
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import ConversationMessage
from promptpipe.usecases import audit
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

# WhatsApp's customer-service window, less the messenger's margin (adapters/messengers.py).
WINDOW = timedelta(hours=24) - timedelta(minutes=10)
OUTSIDE_WINDOW = (
    "This message cannot be sent: on WhatsApp the participant last wrote more than 24 hours ago, and no "
    "staff template is configured (WHATSAPP_STAFF_TEMPLATE_NAME or TWILIO_STAFF_CONTENT_SID). It can be "
    "sent once they write again."
)
NOT_ACTIVE = "This message cannot be sent: the participant is {status}; nothing is sent to them."


def send_staff_message(
    app: AppContext, participant_id: str, request: StaffMessageRequest, *, actor: Actor
) -> StaffMessageSent:
    """Hold the coach, record and send the message; answers its delivery outcome."""
    event_id = f"staff-{app.clock.now().isoformat()}-{secrets.token_hex(4)}"
    message_ids: list[str] = []

    def work(session: ConversationSession, _outcome: EventOutcome) -> None:
        if not session.participant.is_active or session.participant.opted_out:
            status = "opted out (STOP)" if session.participant.opted_out else session.participant.status.value
            raise ValidationFailed(NOT_ACTIVE.format(status=status), field="body")
        outside = session.now - last_inbound_at(session.data) >= WINDOW
        if app.config.whatsapp_channel and outside and not app.config.staff_template:
            raise ValidationFailed(OUTSIDE_WINDOW, field="body")
        # ``set_by`` holds 200 characters: a name of 200 (the request's limit) is cut, not refused
        session.apply("staff_hold", place(HoldReason.STAFF, f"staff: {request.by}"[:200]))

        def send(op: OpContext) -> None:
            message = op.message(request.body, OutboundKind.STAFF)
            # The hold's own guard lets it through (``on_hold``): a person speaks, not the coach.
            op.emit(message, metadata={"staff": request.by}, on_hold=True)
            message_ids.append(op.outbound[-1].message_id)
            # The coach reads it on release, as the study team's words.
            op.data.append_history(ConversationMessage(role="assistant", content=request.body, timestamp=op.now))

        session.apply("staff_message", send)

    outcome = run_once(app, participant_id, event_id, work, replay=False)
    try:
        sent = apply_effects(app, outcome)
    except MessagingError:  # its failure is on its transcript entry; the message was decided and held
        logger.warning("staff message not delivered", extra={"participant_id": participant_id})
        sent = 0
    audit.record(app, actor, AuditAction.STAFF_MESSAGE, participant_id)
    logger.info("staff message sent", extra={"participant_id": participant_id, "sent": sent})
    return StaffMessageSent(message_id=message_ids[0] if message_ids else "", outcome="sent" if sent else "not sent")
