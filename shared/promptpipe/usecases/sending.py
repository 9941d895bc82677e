"""Effects after the commit (docs/architecture.md#effects): send an event's messages, then bring its
schedules in line with the committed state (``usecases/schedules.py``)."""

from __future__ import annotations

import logging
from datetime import datetime

from promptpipe.errors import MessagingError, ParticipantNotFound, StoreError
from promptpipe.flow.send_rule import skip_reason
from promptpipe.models.decision import DecisionDelivery
from promptpipe.models.effects import MessageRef
from promptpipe.models.messaging import OutboundKind, OutboundMessage, SendResult
from promptpipe.models.metrics import metric
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.store import DeliveryOutcome, EventRecord, PartialDelivery
from promptpipe.observability import publish
from promptpipe.ports import PartCheck
from promptpipe.usecases.carrier_opt_out import OPTED_OUT_CODES, opt_out_reason, record_carrier_opt_out
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.hold_alerts import publish_hold_alert
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.schedules import apply_committed_schedules, repair_pending

logger = logging.getLogger(__name__)


def apply_effects(app: AppContext, outcome: EventOutcome) -> int:
    """Apply a processed event's effects, after its commit: send its messages, record their
    outcomes, publish the alert of a hold it placed (``usecases/hold_alerts.py``: a failure raises,
    the redelivery publishes it), then bring its schedules in line with the committed state.
    Returns the number of messages sent.

    Each message first passes the send rule (``flow/send_rule.py``) against the committed state
    the event loaded (read again before each message after the first, and before each part of a
    message after its first: a participant who opted out, was paused or was deleted after the
    message was decided gets nothing more; a message stopped between its parts is ``skipped``
    with the parts that went). The outcomes of all the event's messages (sent, failed, skipped)
    are written to their transcript entries in one write. A refusal that says the number opted
    out at the carrier (Twilio 21610) skips the event's other messages and commits the opt-out as
    its own event (``usecases/carrier_opt_out.py``).

    Any failure raises (the event is redelivered) after recording, for this event, which
    messages already have their outcome. A redelivered event (``replayed``) sends only what such
    a record says is missing: no record means the earlier delivery finished, so nothing is sent
    twice; a split SMS refused part-way resumes after the parts the record says were accepted.
    Each message it resumes goes onto that record before it is sent (one put), so a third copy of
    the event finds it sent: never twice, and after a crash in between, at most once.
    Schedules are re-applied either way (each change is idempotent); when they fail, the
    participant's pending-effects marker makes the next event or the sweep re-apply them. The
    reply goes first, so a scheduler outage never holds it back.
    """
    # recorded: a redelivery's sent record (its earlier delivery failed); parts: a split SMS sent
    # part-way, its parts already accepted
    recorded, parts = _sent_record(app, outcome)
    already = recorded or set()
    pending = list(outcome.outbound)
    if outcome.replayed:  # only what its sent record says is missing; no record: it finished
        pending = [m for m in pending if recorded is not None and m.message_id not in recorded]
    said: PartialDelivery | None = None  # what a resumed delivery last wrote to its sent record
    results: dict[str, DeliveryOutcome] = {}
    opted_out: str | None = None  # the message whose refusal says the number opted out, until committed
    try:
        try:
            for decided in pending:
                if opted_out is not None:  # the rest of the event would be refused the same way
                    results[decided.message_id] = DeliveryOutcome(
                        status="skipped", reason=opt_out_reason(results[opted_out].code), at=app.clock.now()
                    )
                    continue
                mid = decided.message_id
                accepted = parts.get(mid)
                message = decided.model_copy(update={"parts_accepted": accepted}) if accepted else decided
                if results:  # a STOP may have landed since the last send: the rule reads it again
                    outcome.recipient = _committed_recipient(app, outcome)
                if recorded is not None:  # a resumed delivery: on the record before it leaves
                    said = _record_ahead(app, outcome, _delivered(outcome, already | {mid}, results, parts, None))
                try:
                    results[message.message_id] = result = _deliver(app, message, outcome)
                except MessagingError as exc:
                    parts[message.message_id] = exc.accepted_parts
                    results[message.message_id] = _failed(exc, app.clock.now())
                    raise
                if result.status == "failed" and result.code in OPTED_OUT_CODES:
                    opted_out = message.message_id
        finally:
            _record_outcomes(app, outcome, results)
            _record_decision_deliveries(app, outcome, results)
            _count_not_delivered(results)
        if opted_out is not None:
            record_carrier_opt_out(app, outcome.participant_id, outcome.event_id, results[opted_out].code)
            opted_out = None
        if said is not None:  # messages skipped after a carrier opt-out: on the record too
            _record_delivered(app, outcome, _delivered(outcome, already, results, parts, None), unless=said)
        if outcome.hold_alert is not None:  # after the reply, before the schedules; a failure raises
            publish_hold_alert(app, outcome.hold_alert)
        if outcome.schedules:
            apply_committed_schedules(app, outcome.participant_id, outcome.schedules)
    except BaseException:  # a crash mid-way too: record which messages have their outcome
        if outcome.outbound or outcome.schedules:
            _record_delivered(app, outcome, _delivered(outcome, already, results, parts, opted_out))
        raise
    if outcome.pending_effects:
        repair_pending(app, outcome.participant_id, outcome.pending_effects, applied=outcome.schedules.keys())
    return sum(1 for result in results.values() if result.delivered)


def _sent_record(app: AppContext, outcome: EventOutcome) -> tuple[set[str] | None, dict[str, list[str]]]:
    """A redelivered event's sent record: the messages that have their outcome (``None``: no
    record, the earlier delivery finished) and the parts accepted of a split SMS sent part-way."""
    if not (outcome.replayed and outcome.outbound):
        return None, {}
    recorded = app.ledger.partial(outcome.participant_id, outcome.event_id)
    if recorded is None:
        return None, {}
    return recorded, app.ledger.accepted_parts(outcome.participant_id, outcome.event_id)


def _delivered(
    outcome: EventOutcome,
    already: set[str],
    results: dict[str, DeliveryOutcome],
    parts: dict[str, list[str]],
    opted_out: str | None,
) -> PartialDelivery:
    """What the event's sent record is to say: the messages with their final outcome (those of
    earlier deliveries too), the parts accepted of a message not finished, the event's record."""
    # A refusal whose opt-out did not commit is not final: the redelivery sends it again,
    # is refused again, and records the opt-out then.
    final = {mid for mid, result in results.items() if _final(result) and mid != opted_out}
    unfinished = {mid: ids for mid, ids in parts.items() if ids and mid not in final}
    return PartialDelivery(sent=sorted(already | final), parts=unfinished, record=_record_of(outcome))


def _record_ahead(app: AppContext, outcome: EventOutcome, delivered: PartialDelivery) -> PartialDelivery:
    """A resumed message goes onto the event's sent record before it is sent, so that a later copy
    of the event (a third) never sends it again, even after a crash in between (then it is lost:
    at most once, as in a first delivery's crash window). A send that fails after all is taken off
    the record again (``apply_effects``' failure path); a record that cannot be written raises
    before the send: the event is redelivered."""
    app.ledger.record_partial(outcome.participant_id, outcome.event_id, delivered)
    return delivered


def _record_delivered(
    app: AppContext, outcome: EventOutcome, delivered: PartialDelivery, unless: PartialDelivery | None = None
) -> None:
    """Write the event's sent record (``SentLedger.record_partial``: one put, the same item each
    time), ``unless`` it says that already. Best effort: at worst the redelivery sends nothing."""
    if delivered == unless:
        return
    try:
        app.ledger.record_partial(outcome.participant_id, outcome.event_id, delivered)
    except StoreError:
        logger.exception("could not record the messages already sent")


_DELIVERY = {"sent": DecisionDelivery.SENT, "failed": DecisionDelivery.FAILED, "skipped": DecisionDelivery.NOT_SENT}


def _record_decision_deliveries(app: AppContext, outcome: EventOutcome, results: dict[str, DeliveryOutcome]) -> None:
    """The delivery of each decision's prompt, from its send result (best effort, as the transcript's).
    A redelivered event resuming its messages carries no decisions (its first delivery committed
    them): those of the messages it sent now are read back, so a send that failed as a retry may cure
    (``failed``, ``retried``) and then went out moves on to ``sent`` (docs/studies.md)."""
    log = app.decisions
    records = outcome.decisions
    if outcome.replayed and app.deps.study is not None and _carries_decisions(outcome, results):
        # the rare resume path of a prompt or reminder: one Query
        try:
            records = [r for r in log.for_participant(outcome.participant_id) if r.message_id in results]
        except StoreError:
            logger.exception("could not read the decisions of a resumed event")
            return
    for record in records:
        result = results.get(record.message_id or "")
        if result is None:
            continue
        delivery = _DELIVERY.get(result.status, DecisionDelivery.PENDING)
        sent_at = result.at if result.status == "sent" else None
        try:
            log.update(record.model_copy(update={"delivery": delivery, "sent_at": sent_at}))
        except StoreError:  # best effort: the record stays pending (never counted as sent)
            logger.exception("could not record a decision's delivery", extra={"participant_id": record.participant_id})


def _carries_decisions(outcome: EventOutcome, results: dict[str, DeliveryOutcome]) -> bool:
    """A message of the kinds a decision sends (a daily prompt, a reminder) had a send result."""
    decided = (OutboundKind.DAILY_PROMPT, OutboundKind.REMINDER)
    return any(m.kind in decided and m.message_id in results for m in outcome.outbound)


def _committed_recipient(app: AppContext, outcome: EventOutcome) -> ConversationParticipant | None:
    """The participant as committed now (one read, for an event's second message and later: a
    STOP or a pause committed while the first went out is honoured); ``None``: deleted."""
    try:
        return app.repo.get(outcome.participant_id)
    except ParticipantNotFound:
        return None


def _deliver(app: AppContext, message: OutboundMessage, outcome: EventOutcome) -> DeliveryOutcome:
    """Send one message if the send rule allows it; its outcome. A failure that a retry may
    cure raises ``MessagingError``; a refusal for good is a failed outcome."""
    reason = skip_reason(outcome.decided_status, outcome.recipient, consent_required=app.deps.config.consent_required)
    if reason is not None:
        logger.info(
            "message not sent",
            extra={"participant_id": outcome.participant_id, "message_id": message.message_id, "reason": reason},
        )
        return DeliveryOutcome(status="skipped", reason=reason, at=app.clock.now())
    try:
        result = app.messenger.send(message, before_part=_part_check(app, outcome))
    except MessagingError as exc:
        if not exc.undeliverable:
            raise
        logger.warning(
            "message refused by the provider for good",
            extra={"participant_id": outcome.participant_id, "message_id": message.message_id, "code": exc.code},
        )
        return _failed(exc, app.clock.now())
    now = app.clock.now()
    if result.skipped:
        return DeliveryOutcome(status="skipped", reason=result.skipped, at=now, channel=channel_of(result))
    if result.stopped:  # the send rule stopped it between parts: the rest is skipped, with why
        ids = {"participant_id": outcome.participant_id, "message_id": message.message_id}
        logger.info("message stopped between its parts", extra={**ids, "reason": result.stopped})
        return DeliveryOutcome(
            status="skipped",
            reason=f"{result.stopped} (after part {len(result.part_ids)} of {result.parts})",
            provider_id=result.provider_message_id,
            parts=result.part_ids,
            at=now,
            channel=channel_of(result),
            template=result.template,
            segments=result.segments,
        )
    parts = result.part_ids if len(result.part_ids) > 1 else []  # one part: its id is the provider id
    return DeliveryOutcome(
        status="sent",
        provider_id=result.provider_message_id,
        parts=parts,
        at=now,
        channel=channel_of(result),
        template=result.template,
        segments=result.segments,
    )


def channel_of(result: SendResult) -> str:
    """The channel a send went over: Twilio bills SMS by segment (its WhatsApp sends have none)."""
    if result.segments:
        return "sms"
    if result.provider in ("whatsapp_cloud", "twilio") or result.template:
        return "whatsapp"
    return result.provider


def _part_check(app: AppContext, outcome: EventOutcome) -> PartCheck:
    """The send rule before each part of a message after the first: the participant read again
    (one read per part; only a message sent in parts asks), so a STOP, a pause or a deletion
    committed between two parts stops the rest."""

    def reason_to_stop() -> str | None:
        outcome.recipient = _committed_recipient(app, outcome)
        return skip_reason(outcome.decided_status, outcome.recipient, consent_required=app.deps.config.consent_required)

    return reason_to_stop


def _record_outcomes(app: AppContext, outcome: EventOutcome, results: dict[str, DeliveryOutcome]) -> None:
    """One write for every outcome of the event's messages that has a transcript entry. Best
    effort: a failed write leaves them ``pending`` (not shown as sent), and does not make the
    event redelivered."""
    by_seq = {outcome.seqs[mid]: result for mid, result in results.items() if mid in outcome.seqs}
    deliveries = app.deliveries
    if not by_seq or outcome.committed_at is None:
        return
    try:
        deliveries.record_outcomes(outcome.participant_id, outcome.committed_at, by_seq)
    except StoreError:
        logger.warning("delivery outcomes not recorded", extra={"participant_id": outcome.participant_id})


def _count_not_delivered(results: dict[str, DeliveryOutcome]) -> None:
    """A message the provider refused for good stays failed: counted (``MessagesNotDelivered``,
    alarmed in the stack), as is one a provider reports undelivered later (``record_delivery``).
    A failure a retry may still cure is not counted here: the event is redelivered, and one that
    keeps failing ends in the dead-letter queue, alarmed too."""
    final = sum(1 for result in results.values() if result.status == "failed" and result.reason == "undeliverable")
    if final:
        publish([metric("MessagesNotDelivered", final)])


def _failed(exc: MessagingError, now: datetime) -> DeliveryOutcome:
    """A refused send; ``reason`` says whether a retry may still cure it."""
    return DeliveryOutcome(
        status="failed",
        code=exc.code or "",
        reason="undeliverable" if exc.undeliverable else "retried",
        parts=exc.accepted_parts,
        at=now,
    )


def _record_of(outcome: EventOutcome) -> EventRecord | None:
    """The event's record, kept with its failed delivery: its redelivery resumes from it even
    when the state item's window no longer holds it (any number of later commits)."""
    if outcome.committed_at is None:
        return None  # a degraded reply: nothing was committed, nothing to resume from
    return EventRecord(
        event_id=outcome.event_id,
        committed_at=outcome.committed_at,
        messages=[
            MessageRef(id=m.message_id, seq=outcome.seqs[m.message_id])
            for m in outcome.outbound
            if m.message_id in outcome.seqs
        ],
        schedules=sorted(outcome.schedules),
        status=outcome.decided_status,
    )


def _final(result: DeliveryOutcome) -> bool:
    return result.status != "failed" or result.reason == "undeliverable"
