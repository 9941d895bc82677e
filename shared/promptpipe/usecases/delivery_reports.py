"""A provider's later report on a message it accepted updates that message's own outcome
(docs/reliability.md, "The record under faults").

Not delivered (Twilio status callbacks ``failed`` / ``undelivered``, Meta ``statuses`` ``failed``):
the transcript entry that sent it becomes ``failed`` with the code and its plain meaning, so "not
delivered", the undelivered counts, the calendar strip and the export, which read each message's
outcome, all follow. A daily prompt so reported no longer counts as sent in the list's counter
(``total_prompts``, on the flow state as before: the list stays at three reads a page). The report
is also noted on the day (a ``delivery_failed`` entry), counted (``MessagesNotDelivered``, alarmed)
and logged.

Delivered or read (Twilio ``MessageStatus`` ``delivered`` / ``read``, Meta ``statuses`` the same):
the entry's receipt (``DeliveryOutcome.receipt``, ``receipt_at``), found by key through the
pointer its outcome's write left (``DeliveryLog.record_receipt``: no Query), and only forward: a
``read`` is not undone by a late ``delivered``, and nothing brings back a message reported failed.
The list's counter does not move: a receipt confirms a prompt already counted as sent. Other
reports (``queued``, ``sent``, ...) change nothing.

A message that carried a study decision (docs/studies.md, the decision record's ``delivery``): the
report moves that decision's delivery the same way, only forward (``delivered``, then ``read``) and
``failed`` for good. Looked up only while a study is active, and only for the kinds of message a
decision point sends.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from promptpipe.flow.session import OpContext
from promptpipe.models.decision import DecisionDelivery, delivery_after_report
from promptpipe.models.messaging import DeliveryStatus
from promptpipe.models.metrics import metric
from promptpipe.models.store import PROVIDER_REPORT_DAYS, RECEIPT_ORDER, Direction, Receipt, TranscriptEntry
from promptpipe.observability import publish
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, InboundDecision
from promptpipe.usecases.sending import apply_effects
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

# The messages a decision point sends (models/study.py ``DecisionPointAt``), by transcript kind.
DECISION_MESSAGE_KINDS = frozenset({"daily_prompt", "reminder"})

# How far back a report may refer: providers report within hours (Meta retries a webhook for days).
REPORT_WINDOW = timedelta(days=PROVIDER_REPORT_DAYS)

# The codes a coordinator meets most, in plain words (Twilio error dictionary, Meta Cloud API error codes).
PLAIN_MEANINGS = {
    "30003": "the phone was unreachable (off or out of coverage)",
    "30004": "the message was blocked by the recipient or their carrier",
    "30005": "the number is unknown or no longer in service",
    "30006": "a landline or a carrier that does not take text messages",
    "30007": "the carrier filtered the message as spam",
    "30008": "the carrier reported an unknown error",
    "21610": "the number opted out at the carrier (STOP)",
    "63016": "outside WhatsApp's 24-hour window",
    "131026": "WhatsApp could not deliver it (not on WhatsApp, or an old app)",
    "131047": "outside WhatsApp's 24-hour window",
    "131049": "WhatsApp held it back to limit business messages",
    "131050": "the participant stopped marketing messages on WhatsApp",
}


def plain_meaning(status: DeliveryStatus) -> str:
    code = status.error_code or ""
    return PLAIN_MEANINGS.get(code) or (status.error_title or "").strip()[:200] or "the provider did not say why"


def record_delivery(app: AppContext, status: DeliveryStatus) -> InboundDecision:
    if status.status in RECEIPT_ORDER:
        return _record_receipt(app, status, "read" if status.status == "read" else "delivered")
    if not status.failed:
        return InboundDecision("status_ignored")
    participant_id = app.repo.find_id_by_phone(status.recipient) if status.recipient else None
    if participant_id is None:
        logger.warning("delivery failure for an unknown recipient", extra={"error_code": status.error_code})
        return InboundDecision("delivery_failed")
    entry = _the_message(app, participant_id, status)
    counted = entry is not None and entry.delivered  # it still counts as sent: this report changes that
    if entry is not None and entry.delivery is not None and app.deliveries is not None:
        outcome = entry.delivery.model_copy(
            update={
                "status": "failed",
                "code": status.error_code or "",
                "reason": f"undelivered: {plain_meaning(status)}",
                "at": status.at,
            }
        )
        app.deliveries.record_outcomes(participant_id, entry.at, {entry.seq: outcome})
    _record_decision_delivery(app, participant_id, entry, DecisionDelivery.FAILED)
    metadata: dict[str, Any] = {
        "provider": status.provider,
        "provider_message_id": status.provider_message_id,
        "status": status.status,
        "error_code": status.error_code,
        "error_title": status.error_title,
        "meaning": plain_meaning(status),
        **({"message_kind": entry.kind, "message_seq": entry.seq} if entry is not None else {}),
    }
    prompt_reported = counted and entry is not None and entry.kind == "daily_prompt"

    def record(op: OpContext) -> None:
        op.record(Direction.SYSTEM, "delivery_failed", "", metadata=metadata)
        if prompt_reported:  # the list's counter counts delivered prompts only
            profile = op.data.profile()
            profile.total_prompts = max(0, profile.total_prompts - 1)
            op.data.set_profile(profile)

    outcome_of_event: EventOutcome = run_once(
        app,
        participant_id,
        f"status:{status.provider_message_id}:{status.status}",
        lambda session, _outcome: session.apply("record_delivery_failure", record),
        reply_if_unsaved=False,
        defer_schedules=True,
    )
    apply_effects(app, outcome_of_event)
    if not outcome_of_event.replayed:
        publish([metric("MessagesNotDelivered")])
    logger.warning(
        "message not delivered",
        extra={"participant_id": participant_id, "error_code": status.error_code, "status": status.status},
    )
    return InboundDecision("delivery_failed", participant_id)


def _record_receipt(app: AppContext, status: DeliveryStatus, receipt: Receipt) -> InboundDecision:
    participant_id = app.repo.find_id_by_phone(status.recipient) if status.recipient else None
    if participant_id is None:
        return InboundDecision("status_ignored")
    if not app.deliveries.record_receipt(participant_id, status.provider_message_id, receipt, status.at):
        logger.info("receipt for a message not in the record", extra={"participant_id": participant_id})
        return InboundDecision("status_ignored", participant_id)
    if app.deps.study is not None:
        _record_decision_delivery(
            app, participant_id, _the_message(app, participant_id, status), DecisionDelivery(receipt)
        )
    return InboundDecision(f"delivery_{receipt}", participant_id)


def _record_decision_delivery(
    app: AppContext, participant_id: str, entry: TranscriptEntry | None, reported: DecisionDelivery
) -> None:
    """The decision whose message ``entry`` is, moved to what the provider reported (monotonic)."""
    if app.deps.study is None or entry is None or entry.outbound is None or entry.kind not in DECISION_MESSAGE_KINDS:
        return
    message_id = entry.outbound.message_id
    log = app.decisions
    record = next((r for r in log.for_participant(participant_id) if r.message_id == message_id), None)
    if record is None:
        return
    delivery = delivery_after_report(record.delivery, reported)
    if delivery is not None:
        log.update(record.model_copy(update={"delivery": delivery}))


def _the_message(app: AppContext, participant_id: str, status: DeliveryStatus) -> TranscriptEntry | None:
    if app.deliveries is None:
        return None
    return app.deliveries.find_sent(participant_id, status.provider_message_id, status.at - REPORT_WINDOW)
