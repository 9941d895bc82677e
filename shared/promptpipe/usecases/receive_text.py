"""The webhook's side of an inbound text: who sent it, opt-out / opt-in / HELP, auto-enrollment,
then the FIFO queue. No model call here (the worker runs the turn), no conversation engine, and no
schedule change: STOP / START commit, confirm, and queue their schedule changes for the worker.

The message is read first, in the normal form every reader shares (``rules/normalise.py``), by the
opt-out reader (``rules/opt_out.py``, docs/compliance.md): an opt-out in any written form — a
keyword, or a plain-language request to stop all messages — is honoured here, before anything else
reads the message, with one confirmation; HELP gets the fixed help reply. Both are recorded in the
transcript and sent after the commit, once, whatever the provider redelivers. An unclear stop
request ("stop texting me at night") goes on to the coach, which asks."""

from __future__ import annotations

import logging

from promptpipe.errors import ParticipantAlreadyEnrolled
from promptpipe.flow.hold import alert_of, crisis_in_opt_out
from promptpipe.flow.lifecycle import (
    change_status,
    fixed_reply,
    opt_out,
    remember_language,
)
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.study_settings import config_for
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage, OutboundKind, OutboundMessage
from promptpipe.models.participant import (
    CONSENT_IMPLIED,
    ConversationParticipant,
    ParticipantStatus,
    engine_consent,
)
from promptpipe.models.state import FlowState, new_state_data
from promptpipe.models.store import Direction
from promptpipe.rules.opt_out import (
    OptKind,
    OptReading,
    keyword_lists,
    provider_keyword,
    read_opt_message,
)
from promptpipe.rules.phone import mask_phone
from promptpipe.rules.text_clipping import clip_inbound_text
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, InboundDecision
from promptpipe.usecases.safety_alerts import alert_team
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

# The provider's keyword kinds, by the name Twilio posts in ``OptOutType``.
_PROVIDER_KINDS = {"STOP": OptKind.OPT_OUT, "START": OptKind.OPT_IN, "HELP": OptKind.HELP}


def read_opt(app: AppContext, text: str) -> OptReading | None:
    """The message read by the opt-out reader with the deployment's keyword lists."""
    return read_opt_message(text, keyword_lists(app.config.opt_keywords))


def receive_text(app: AppContext, message: InboundMessage) -> InboundDecision:
    """Who is it, opt-out / opt-in / HELP, auto-enroll, enqueue."""
    reading = read_opt(app, message.body)
    provider_kind = _PROVIDER_KINDS.get(message.provider_keyword or "")
    if provider_kind is not None and (reading is None or reading.kind is not provider_kind):
        # The provider has acted on it as its keyword (blocked, unblocked, answered): we follow.
        reading = OptReading(provider_kind, reading.language if reading else "", keyword=True)
    if reading is not None and reading.kind is OptKind.UNCLEAR_STOP:
        reading = None  # the coach asks what they want
    participant_id = app.repo.find_id_by_phone(message.from_phone)
    if participant_id is None:
        if not app.config.auto_enroll_new_users or (reading is not None and reading.kind is not OptKind.OPT_IN):
            logger.info("message from unknown number dropped", extra={"phone": mask_phone(message.from_phone)})
            return InboundDecision("unknown_sender")
        participant_id = _auto_enroll(app, message)
        decision = InboundDecision("auto_enrolled", participant_id)
    else:
        decision = InboundDecision("enqueued", participant_id)
    if reading is not None:
        return _opt(app, participant_id, message, reading)
    limit = app.config.max_inbound_message_chars
    update: dict[str, object] = {"opt_out_read": True}  # read above: the worker need not read it again
    if len(message.body) > limit:
        # Clipped before queueing as well: an SQS message holds at most 256 KiB (of UTF-8 bytes).
        update["body"] = clip_inbound_text(message.body, limit)
    message = message.model_copy(update=update)
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
        # Texting in is the participant's own act: consent on record as implied (docs/safety.md#consent).
        consent=engine_consent(now, CONSENT_IMPLIED),
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


def provider_answered(app: AppContext, message: InboundMessage, reading: OptReading) -> bool:
    """Whether the provider's own keyword handling has already answered ``message`` (so the project
    sends nothing of its own): only when the deployment says the provider confirms, and only for
    what the provider reads — the kind it posted (Twilio's ``OptOutType``), or else one of its
    single-word keywords."""
    if app.config.keyword_replies_by != "provider" or message.provider != "twilio":
        return False
    if message.provider_keyword:
        return _PROVIDER_KINDS.get(message.provider_keyword) is reading.kind
    return reading.keyword and provider_keyword(message.body) == reading.kind.value


def _opt(app: AppContext, participant_id: str, message: InboundMessage, reading: OptReading) -> InboundDecision:
    """Commit an opt-out, opt-in or help request once, with its transcript rows, then send its one
    reply (none when the provider answered it): STOP means no more messages, the record is kept."""
    config = app.config
    silent = provider_answered(app, message, reading)
    # A crisis inside an opt-out ("STOP. i want to end it all"): the opt-out is honoured all the
    # same, and the study team is told; the participant is held so the console lists them.
    screened = None
    # A help request in words ("I need help", "necesito ayuda") is screened too: it never reaches the worker.
    if reading.kind in (OptKind.OPT_OUT, OptKind.HELP) and config.safety_screen_enabled:
        # Imported here: the screen compiles its patterns at import, and the webhook needs it only
        # for an opt-out (every other text is screened by the worker).
        from promptpipe.rules.safety_screen import screen

        screened = screen(message.body)
    crisis = screened is not None and screened.flagged

    def reply(op: OpContext, kind: OptKind) -> None:
        if silent:
            return
        # a study's own help text and contact for a participant in it (docs/studies.md)
        mine = config_for(config, app.deps.study, op.participant)
        body = fixed_reply(mine, kind, op.participant.language or reading.language)
        op.emit(
            OutboundMessage(
                participant_id=op.participant.id, to=op.participant.phone_number, body=body, kind=OutboundKind.NOTICE
            ),
            on_hold=True,  # the law's keywords are answered before anything else, a hold included
        )

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        participant = session.participant
        status = participant.status
        metadata = {"provider": message.provider, "read_as": reading.kind.value}
        if silent:
            metadata["answered_by"] = "provider"
        session.apply(
            "record_inbound",
            lambda op: op.record(Direction.INBOUND, "message", message.body.strip(), metadata=metadata),
        )
        if crisis and screened is not None:
            crisis_in_opt_out(session, screened)
        remember_language(session, reading.language)
        if reading.kind is OptKind.HELP:
            session.apply("help_reply", lambda op: reply(op, OptKind.HELP))
            return
        if reading.kind is OptKind.OPT_OUT:
            # The one opt-out (flow/lifecycle.py), which the coach's tool runs too.
            opt_out(app.deps, session, reason="participant opted out", language=reading.language, confirm=not silent)
            return
        # START resumes only a participant their own STOP paused (an organiser's pause, completion or
        # withdrawal stands).
        if not (status is ParticipantStatus.PAUSED and participant.opted_out):
            return
        change_status(app.deps, session, ParticipantStatus.ACTIVE, reason="participant opted in")

        def mark(op: OpContext) -> None:
            op.participant.opted_out = False
            op.participant_changed = True

        session.apply("opt_flag", mark)
        session.apply("confirm_opt", lambda op: reply(op, OptKind.OPT_IN))

    # A redelivery (the provider retries only when we did not answer 200) applies what is left;
    # the schedule changes go to the worker; a failed save raises (the provider retries).
    outcome = run_once(
        app, participant_id, message.provider_message_id, work, reply_if_unsaved=False, defer_schedules=True
    )
    apply_effects(app, outcome)
    if crisis and screened is not None:
        alert_team(
            app, alert_of(participant_id, message.from_phone, screened, opted_out=reading.kind is OptKind.OPT_OUT)
        )
    action = {OptKind.OPT_OUT: "opted_out", OptKind.OPT_IN: "opted_in", OptKind.HELP: "help"}[reading.kind]
    return InboundDecision(action, participant_id)
