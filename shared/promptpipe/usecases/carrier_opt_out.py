"""A carrier-level opt-out (docs/architecture.md#carrier-opt-outs): the provider refuses a send
because the recipient unsubscribed at the carrier (Twilio 21610: they texted STOP to the carrier,
which never reached us). The participant is opted out exactly as by an inbound STOP: paused with
``opted_out``, every timer stopped, a status change in the transcript that gives the code.

It is its own event on the participant (id ``opt-out-<the refused event's id>``), committed with
the state's conditional write: a redelivery of the refused event finds it already processed and only
re-applies its schedule changes; a later refusal finds the participant no longer active and records
nothing. Meta's Cloud API has no error code that means "the recipient opted out" (131026, message
undeliverable, also covers numbers not on WhatsApp; 131050 blocks marketing templates only), so only
Twilio's code counts here.
"""

from __future__ import annotations

import logging

from promptpipe.flow.lifecycle import change_status
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.models.participant import ParticipantStatus
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.schedules import apply_committed_schedules
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

# Provider codes that mean the recipient opted out of our messages at the carrier.
OPTED_OUT_CODES = frozenset({"21610"})  # Twilio: "Attempt to send to unsubscribed recipient"


def opt_out_reason(code: str) -> str:
    return f"carrier reports the number opted out ({code})"


def opt_out_event_id(refused_event_id: str) -> str:
    return f"opt-out-{refused_event_id}"


def record_carrier_opt_out(app: AppContext, participant_id: str, refused_event_id: str, code: str) -> bool:
    """Commit the opt-out (if the participant is still active), then hand its schedule changes
    on. Returns whether an opt-out is committed for this refusal (now or by an earlier delivery).
    Store failures raise (the refused event is redelivered and tries again)."""

    def work(session: ConversationSession, _outcome: EventOutcome) -> None:
        if session.participant.status is not ParticipantStatus.ACTIVE:
            logger.info(
                "carrier opt-out for a participant not active: nothing to change",
                extra={"participant_id": participant_id, "code": code},
            )
            return
        change_status(app.deps, session, ParticipantStatus.PAUSED, reason=opt_out_reason(code))

        def mark(op: OpContext) -> None:
            op.participant.opted_out = True
            op.participant_changed = True

        session.apply("opt_flag", mark)

    # As after a STOP: the schedule changes go through the queue where the config says so (the
    # public webhook holds no Scheduler rights; the worker re-derives each schedule from the state),
    # else directly (the functions that hold them), with the pending-effects marker.
    outcome = run_once(
        app,
        participant_id,
        opt_out_event_id(refused_event_id),
        work,
        reply_if_unsaved=False,
        defer_schedules=app.config.schedule_changes_via_queue,
    )
    if not outcome.replayed and outcome.committed_version is None:
        return False  # gone, or no longer active: nothing committed
    if not outcome.replayed:
        logger.warning("participant opted out at the carrier", extra={"participant_id": participant_id, "code": code})
    if outcome.schedules:
        apply_committed_schedules(app, participant_id, outcome.schedules)
    return True
