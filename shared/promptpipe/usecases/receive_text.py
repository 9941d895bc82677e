"""The webhook's side of an inbound text: who sent it, opt-out and opt-in keywords, auto-enrollment,
then the FIFO queue. No model call here (the worker runs the turn), no conversation engine, and no
schedule change: STOP / START commit, confirm, and queue their schedule changes for the worker."""

from __future__ import annotations

import logging

from promptpipe.errors import ParticipantAlreadyEnrolled
from promptpipe.flow.hold import alert_of, place
from promptpipe.flow.lifecycle import change_status
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage, OutboundKind, OutboundMessage
from promptpipe.models.metrics import metric
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import HoldReason
from promptpipe.models.state import FlowState, new_state_data
from promptpipe.models.store import Direction
from promptpipe.rules.phone import mask_phone
from promptpipe.rules.safety_screen import screen
from promptpipe.rules.text_clipping import clip_inbound_text
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, InboundDecision
from promptpipe.usecases.safety_alerts import alert_team
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

OPT_OUT_WORDS = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
OPT_IN_WORDS = frozenset({"START", "UNSTOP", "SUBSCRIBE", "RESUME"})
OPT_OUT_CONFIRMATION = "You're unsubscribed and won't get more messages from your habit coach. Reply START to resume."
OPT_IN_CONFIRMATION = "Welcome back! Your habit coach messages are on again."


def receive_text(app: AppContext, message: InboundMessage) -> InboundDecision:
    """Who is it, opt-out/in, auto-enroll, enqueue."""
    participant_id = app.repo.find_id_by_phone(message.from_phone)
    keyword = message.body.strip().upper()
    if participant_id is None:
        if not app.config.auto_enroll_new_users or keyword in OPT_OUT_WORDS:
            logger.info("message from unknown number dropped", extra={"phone": mask_phone(message.from_phone)})
            return InboundDecision("unknown_sender")
        participant_id = _auto_enroll(app, message)
        decision = InboundDecision("auto_enrolled", participant_id)
    else:
        decision = InboundDecision("enqueued", participant_id)
    if keyword in OPT_OUT_WORDS or keyword in OPT_IN_WORDS:
        return _opt(app, participant_id, message, opt_out=keyword in OPT_OUT_WORDS)
    if app.queue is None:
        raise RuntimeError("no inbound queue configured")
    limit = app.config.max_inbound_message_chars
    if len(message.body) > limit:
        # Clipped before queueing as well: an SQS message holds at most 256 KiB (of UTF-8 bytes).
        message = message.model_copy(update={"body": clip_inbound_text(message.body, limit)})
    app.queue.enqueue(
        TurnEvent(
            kind=TurnKind.MESSAGE,
            participant_id=participant_id,
            event_id=message.provider_message_id,
            message=message,
            enqueued_at=app.clock.now(),
        )
    )
    return decision


def _auto_enroll(app: AppContext, message: InboundMessage) -> str:
    now = app.clock.now()
    participant = ConversationParticipant(
        id=app.deps.ids.participant_id(),
        phone_number=message.from_phone,
        enrolled_at=now,
        created_at=now,
        updated_at=now,
    )
    try:
        app.repo.create(participant, FlowState(participant_id=participant.id, state_data=new_state_data()))
    except ParticipantAlreadyEnrolled:  # a concurrent webhook enrolled them first
        existing = app.repo.find_id_by_phone(message.from_phone)
        if existing is None:
            raise
        return existing
    logger.info("auto-enrolled a new participant", extra={"participant_id": participant.id})
    return participant.id


def _opt(app: AppContext, participant_id: str, message: InboundMessage, *, opt_out: bool) -> InboundDecision:
    # A crisis inside an opt-out ("STOP. i want to end it all"): the opt-out is honoured all the
    # same, and the study team is told; the participant is held so the console lists them.
    reading = screen(message.body) if opt_out and app.config.safety_screen_enabled else None
    crisis = reading is not None and reading.flagged

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        participant = session.participant
        status = participant.status
        target = ParticipantStatus.PAUSED if opt_out else ParticipantStatus.ACTIVE
        session.apply(
            "record_inbound",
            lambda op: op.record(
                Direction.INBOUND, "message", message.body.strip(), metadata={"provider": message.provider}
            ),
        )
        if crisis and reading is not None:
            category = reading.category.value if reading.category else ""
            session.apply("safety_hold", place(HoldReason.SAFETY, "safety screen (opt-out)", detail=category))
            session.metrics.append(metric("SafetyFlag", 1, "Count"))
        # STOP pauses an active participant; START resumes only a participant their own STOP paused
        # (an organiser's pause, completion or withdrawal stands).
        confirm = (opt_out and status is ParticipantStatus.ACTIVE) or (
            not opt_out and status is ParticipantStatus.PAUSED and participant.opted_out
        )
        if not confirm:
            return

        change_status(app.deps, session, target, reason="participant opted out" if opt_out else "participant opted in")

        def mark(op: OpContext) -> None:
            op.participant.opted_out = opt_out
            op.participant_changed = True

        session.apply("opt_flag", mark)
        body = OPT_OUT_CONFIRMATION if opt_out else OPT_IN_CONFIRMATION
        session.apply(
            "confirm_opt",
            lambda op: op.emit(
                OutboundMessage(
                    participant_id=op.participant.id,
                    to=op.participant.phone_number,
                    body=body,
                    kind=OutboundKind.NOTICE,
                ),
                on_hold=True,  # an opt-out is honoured before anything else, a hold included
            ),
        )

    # A redelivery (the provider retries only when we did not answer 200) applies what is left;
    # the schedule changes go to the worker; a failed save raises (the provider retries).
    outcome = run_once(
        app, participant_id, message.provider_message_id, work, reply_if_unsaved=False, defer_schedules=True
    )
    apply_effects(app, outcome)
    if crisis and reading is not None:
        phone = message.from_phone
        alert_team(app, alert_of(participant_id, phone, reading, opted_out=True))
    return InboundDecision("opted_out" if opt_out else "opted_in", participant_id)
