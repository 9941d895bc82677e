"""Every inbound message is in the record once, whatever fails after the webhook (docs/reliability.md,
"The record under faults").

- ``accept``: at the worker's first receive, before the model, the participant's message is written
  to the transcript with the state ``awaiting reply`` (one write; a redelivery finds it there). The
  turn's commit writes its own inbound entry and removes that one in the same transaction
  (``ConversationSession.accepted``, ``StateCommit.accepted``): the record holds the message once.
- ``model_unavailable``: the model did not answer (the turn raises and SQS retries it, then
  dead-letters it). The entry is marked ``not answered: model unavailable`` and the participant gets
  one short fixed reply, once: the mark is conditional on ``awaiting reply``, so a redelivery, or a
  redrive that meets the outage again, sends nothing more. The sweep (``usecases/redrive.py``)
  redrives the dead-lettered turn once the model answers again.
- ``record_unsaved``: the turn's commit failed for good (the degraded save): the reply still goes
  out, and the turn's entries are written on their own, the message marked as answered but not saved.
- ``discard``: a copy of a message answered before (its id claimed) leaves no second entry.
"""

from __future__ import annotations

import logging

from promptpipe.errors import MessagingError, ParticipantNotFound, StoreError
from promptpipe.flow.send_rule import skip_reason
from promptpipe.flow.session import ConversationSession
from promptpipe.models.events import TurnEvent
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.store import DeliveryOutcome, Direction, InboundState, TranscriptEntry, accepted_seq
from promptpipe.rules.text_clipping import clip_inbound_text
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome

logger = logging.getLogger(__name__)

MODEL_UNAVAILABLE_REPLY = "Sorry, I can't answer right now; I'll get back to you."


def accept(app: AppContext, session: ConversationSession, event: TurnEvent) -> bool:
    """Write the event's message as ``awaiting reply`` (before the model); the session's commit
    replaces it. ``True`` when this receive wrote it (the first)."""
    message = event.message
    if app.inbound is None or message is None:
        return False
    entry = TranscriptEntry(
        participant_id=event.participant_id,
        at=message.received_at,
        seq=accepted_seq(event.event_id),
        direction=Direction.INBOUND,
        kind="message",
        content=clip_inbound_text(message.body, app.config.max_inbound_message_chars),
        event_id=event.event_id,
        metadata={"provider": message.provider, "provider_message_id": message.provider_message_id},
        state=InboundState.AWAITING_REPLY,
    )
    session.accepted = entry
    return app.inbound.accept(entry)


def model_unavailable(app: AppContext, session: ConversationSession) -> None:
    """The model failed the turn: mark the message ``not answered`` and, the first time only,
    tell the participant we will get back to them (the send rule first). Best effort: the turn
    is retried either way."""
    accepted = session.accepted
    inbound = app.inbound
    if accepted is None or inbound is None:
        return
    pid = accepted.participant_id
    try:
        first = inbound.mark(
            pid, accepted.at, accepted.seq, InboundState.MODEL_UNAVAILABLE, expect=InboundState.AWAITING_REPLY
        )
    except StoreError:
        logger.warning("could not mark a message not answered", extra={"participant_id": pid})
        return
    logger.warning("model unavailable; the turn is retried", extra={"participant_id": pid, "told": first})
    if first:
        _tell_the_participant(app, session)


def _tell_the_participant(app: AppContext, session: ConversationSession) -> None:
    accepted = session.accepted
    inbound = app.inbound
    assert accepted is not None and inbound is not None  # checked by the caller
    pid = accepted.participant_id
    try:
        recipient = app.repo.get(pid)  # as committed now: a STOP since the load is honoured
    except ParticipantNotFound:
        return
    now = app.clock.now()
    reason = skip_reason(ParticipantStatus.ACTIVE, recipient)
    message = OutboundMessage(
        participant_id=pid,
        to=recipient.phone_number,
        body=MODEL_UNAVAILABLE_REPLY,
        kind=OutboundKind.NOTICE,
        message_id=f"{accepted.event_id}#unavailable",
    )
    if reason is not None:
        delivery = DeliveryOutcome(status="skipped", reason=reason, at=now)
    else:
        try:
            result = app.messenger.send(message)
        except MessagingError as exc:
            logger.warning("the model-unavailable reply failed", extra={"participant_id": pid, "code": exc.code})
            delivery = DeliveryOutcome(status="failed", code=exc.code or "", reason="retried", at=now)
        else:
            delivery = DeliveryOutcome(status="sent", provider_id=result.provider_message_id, at=now)
    entry = TranscriptEntry(
        participant_id=pid,
        at=now,
        seq=f"unavailable#{accepted.event_id}",
        direction=Direction.OUTBOUND,
        kind=OutboundKind.NOTICE.value,
        content=MODEL_UNAVAILABLE_REPLY,
        event_id=accepted.event_id,
        metadata={"module": "model_unavailable"},
        outbound=message,
        delivery=delivery,
    )
    try:
        inbound.write_unsaved([entry])
    except StoreError:
        logger.warning("the model-unavailable reply was not recorded", extra={"participant_id": pid})


def record_unsaved(app: AppContext, session: ConversationSession, outcome: EventOutcome) -> None:
    """The degraded save: the turn's entries written on their own (best effort), its message marked
    answered but not saved in place of the accepted one; the replies' outcomes then land on their
    entries as usual."""
    if app.inbound is None:
        return
    accepted = session.accepted
    entries = [
        entry.model_copy(update={"state": InboundState.ANSWERED_NOT_SAVED})
        if accepted is not None and entry.direction is Direction.INBOUND and entry.kind == accepted.kind
        else entry
        for entry in session.transcript
    ]
    try:
        app.inbound.write_unsaved(entries)
        if accepted is not None:
            app.inbound.discard(accepted.participant_id, accepted.at, accepted.seq)
    except StoreError:
        logger.warning("the unsaved turn was not recorded either", extra={"participant_id": outcome.participant_id})
        return
    outcome.committed_at, outcome.seqs = session.now, session.message_seqs


def discard(app: AppContext, session: ConversationSession) -> None:
    """This receive wrote the message, but the turn was answered before (a late copy): remove it."""
    accepted = session.accepted
    if app.inbound is None or accepted is None:
        return
    try:
        app.inbound.discard(accepted.participant_id, accepted.at, accepted.seq)
    except StoreError:
        logger.warning("a late copy's entry was not removed", extra={"participant_id": accepted.participant_id})
