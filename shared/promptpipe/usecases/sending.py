"""Effects after the commit (docs/architecture.md#effects): send an event's messages, then bring its
schedules in line with the committed state; resume a redelivered event; reconcile live schedules
with what the state wants."""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime
from typing import TYPE_CHECKING

from promptpipe.errors import EffectsPending, MessagingError, ParticipantNotFound, StoreError, TimerError
from promptpipe.flow.effects import Effects, apply_schedule_changes, desired_schedules
from promptpipe.flow.send_rule import skip_reason
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.messaging import OutboundMessage
from promptpipe.models.state import StateData
from promptpipe.models.store import DeliveryOutcome, EventRecord
from promptpipe.usecases.carrier_opt_out import OPTED_OUT_CODES, CarrierOptOut, opt_out_reason
from promptpipe.usecases.outcomes import DriftedSchedule, EventOutcome, ReconcileReport

if TYPE_CHECKING:
    from promptpipe.flow.session import ConversationSession
    from promptpipe.services import PromptPipe

logger = logging.getLogger(__name__)


class Sending:
    def __init__(self, app: PromptPipe) -> None:
        self.app = app

    def finish(self, outcome: EventOutcome) -> int:
        """Apply a processed event's effects, after its commit: send its messages, record their
        outcomes, then bring its schedules in line with the committed state. Returns the number of
        messages sent.

        Each message first passes the send rule (``flow/send_rule.py``) against the committed state
        the event loaded: a participant who opted out, was paused or was deleted after the message
        was decided gets nothing. The outcomes of all the event's messages (sent, failed, skipped)
        are written to their transcript entries in one write. A refusal that says the number opted
        out at the carrier (Twilio 21610) skips the event's other messages and commits the opt-out as
        its own event (``usecases/carrier_opt_out.py``).

        Any failure raises (the event is redelivered) after recording, for this event, which
        messages already have their outcome. A redelivered event (``replayed``) sends only what such
        a record says is missing: no record means the earlier delivery finished, so nothing is sent
        twice; a split SMS refused part-way resumes after the parts the record says were accepted.
        Schedules are re-applied either way (each change is idempotent); when they fail, the
        participant's pending-effects marker makes the next event or the sweep re-apply them. The
        reply goes first, so a scheduler outage never holds it back.
        """
        ledger = self.app.ledger
        pending = list(outcome.outbound)
        already: set[str] = set()
        parts: dict[str, list[str]] = {}  # a split SMS sent part-way: its parts already accepted
        if outcome.replayed and pending:
            recorded = ledger.partial(outcome.participant_id, outcome.event_id) if ledger else None
            already = recorded or set()
            pending = [] if recorded is None else [m for m in pending if m.message_id not in recorded]
            if recorded is not None and ledger is not None:
                parts = ledger.accepted_parts(outcome.participant_id, outcome.event_id)
        results: dict[str, DeliveryOutcome] = {}
        opted_out: str | None = None  # the message whose refusal says the number opted out, until committed
        try:
            try:
                for decided in pending:
                    if opted_out is not None:  # the rest of the event would be refused the same way
                        results[decided.message_id] = DeliveryOutcome(
                            status="skipped", reason=opt_out_reason(results[opted_out].code), at=self.app.clock.now()
                        )
                        continue
                    accepted = parts.get(decided.message_id)
                    message = decided.model_copy(update={"parts_accepted": accepted}) if accepted else decided
                    try:
                        results[message.message_id] = result = self._deliver(message, outcome)
                    except MessagingError as exc:
                        parts[message.message_id] = exc.accepted_parts
                        results[message.message_id] = _failed(exc, self.app.clock.now())
                        raise
                    if result.status == "failed" and result.code in OPTED_OUT_CODES:
                        opted_out = message.message_id
            finally:
                self._record_outcomes(outcome, results)
            if opted_out is not None:
                CarrierOptOut(self.app).record(outcome.participant_id, outcome.event_id, results[opted_out].code)
                opted_out = None
            if outcome.schedules:
                self.apply_committed_schedules(outcome.participant_id, outcome.schedules)
        except BaseException:  # a crash mid-way too: record which messages have their outcome
            # A refusal whose opt-out did not commit is not final: the redelivery sends it again,
            # is refused again, and records the opt-out then.
            final = {mid for mid, result in results.items() if _final(result) and mid != opted_out}
            if ledger is not None and (outcome.outbound or outcome.schedules):
                unfinished = {mid: ids for mid, ids in parts.items() if ids and mid not in final}
                try:
                    ledger.record_partial(
                        outcome.participant_id, outcome.event_id, sorted(already | final), parts=unfinished
                    )
                except StoreError:  # best effort: at worst the redelivery sends nothing
                    logger.exception("could not record the messages already sent")
            raise
        if outcome.pending_effects:
            self.repair_pending(outcome.participant_id, outcome.pending_effects, applied=outcome.schedules.keys())
        return sum(1 for result in results.values() if result.delivered)

    def _deliver(self, message: OutboundMessage, outcome: EventOutcome) -> DeliveryOutcome:
        """Send one message if the send rule allows it; its outcome. A failure that a retry may
        cure raises ``MessagingError``; a refusal for good is a failed outcome."""
        reason = skip_reason(outcome.decided_status, outcome.recipient)
        if reason is not None:
            logger.info(
                "message not sent",
                extra={"participant_id": outcome.participant_id, "message_id": message.message_id, "reason": reason},
            )
            return DeliveryOutcome(status="skipped", reason=reason, at=self.app.clock.now())
        try:
            result = self.app.messenger.send(message)
        except MessagingError as exc:
            if not exc.undeliverable:
                raise
            logger.warning(
                "message refused by the provider for good",
                extra={"participant_id": outcome.participant_id, "message_id": message.message_id, "code": exc.code},
            )
            return _failed(exc, self.app.clock.now())
        now = self.app.clock.now()
        if result.skipped:
            return DeliveryOutcome(status="skipped", reason=result.skipped, at=now)
        parts = result.part_ids if len(result.part_ids) > 1 else []  # one part: its id is the provider id
        return DeliveryOutcome(status="sent", provider_id=result.provider_message_id, parts=parts, at=now)

    def _record_outcomes(self, outcome: EventOutcome, results: dict[str, DeliveryOutcome]) -> None:
        """One write for every outcome of the event's messages that has a transcript entry. Best
        effort: a failed write leaves them ``pending`` (not shown as sent), and does not make the
        event redelivered."""
        by_seq = {outcome.seqs[mid]: result for mid, result in results.items() if mid in outcome.seqs}
        deliveries = self.app.deliveries
        if not by_seq or outcome.committed_at is None or deliveries is None:
            return
        try:
            deliveries.record_outcomes(outcome.participant_id, outcome.committed_at, by_seq)
        except StoreError:
            logger.warning("delivery outcomes not recorded", extra={"participant_id": outcome.participant_id})

    def apply_schedule_specs(self, schedules: dict[str, ScheduleSpec | None]) -> int:
        """Create-or-update or delete each touched schedule. Every one is tried; if any failed,
        ``TimerError`` is raised afterwards (the event is redelivered and tries again)."""
        return apply_schedule_changes(self.app.timers, schedules)

    def apply_committed_schedules(self, participant_id: str, schedules: dict[str, ScheduleSpec | None]) -> int:
        """``apply_schedule_specs`` for a committed state: when a change fails, the participant's
        pending-effects marker is written before ``TimerError`` is raised, so the next event for
        them, or the sweep, re-applies it from the state: ``EffectsPending`` is raised then (a failed
        marker write raises ``StoreError``; no marker store: the ``TimerError`` itself)."""
        try:
            return self.apply_schedule_specs(schedules)
        except TimerError as exc:
            if self.app.pending_effects is None:
                raise
            self.app.pending_effects.mark(participant_id)
            logger.warning("schedule changes pending after a failure", extra={"participant_id": participant_id})
            raise EffectsPending(str(exc)) from exc

    def repair_pending(self, participant_id: str, token: str, applied: Collection[str] = ()) -> bool:
        """Bring a marked participant's schedules in line with their state (every wanted schedule
        re-put, orphans deleted), then clear the marker; ``False`` (marker kept) when the scheduler
        still fails."""
        try:
            # A failed change may have been an update: re-put what the state wants, except what the
            # calling event has just applied itself.
            self.reconcile(participant_id, refresh=True, applied=applied)
        except TimerError:
            logger.warning("pending schedule changes still failing", extra={"participant_id": participant_id})
            return False
        if self.app.pending_effects is not None:
            self.app.pending_effects.clear(participant_id, token)
        return True

    def sweep_pending(self, limit: int = 100) -> list[str]:
        """The periodic sweep: repair every participant with a pending-effects marker (up to
        ``limit``, oldest first); returns the ids repaired."""
        if self.app.pending_effects is None:
            return []
        return [pid for pid, token in self.app.pending_effects.pending(limit) if self.repair_pending(pid, token)]

    def delete_live_schedules(self, participant_id: str, known: list[str]) -> None:
        names = set(known) | set(self.app.timers.list_names(participant_prefix(participant_id)))
        self.apply_schedule_specs(dict.fromkeys(sorted(names)))

    def resume(self, session: ConversationSession, record: EventRecord) -> Effects:
        """The effects of an already committed event, for its redelivery: its messages read back
        from the transcript, its schedules as the state wants them now."""
        loaded = session.loaded
        messages = self.app.store.load_outbound(session.participant.id, record) if record.messages else []
        desired = desired_schedules(loaded.participant, session.data, self.app.prep_minutes, self.app.clock.now())
        return Effects(
            participant_id=session.participant.id,
            event_id=record.event_id,
            messages=messages,
            schedules={name: desired.get(name) for name in record.schedules},
            decided_status=record.status,
            recipient=loaded.participant,
            committed_at=record.committed_at,
            seqs={ref.id: ref.seq for ref in record.messages},
        )

    def reconcile(
        self, participant_id: str, *, refresh: bool = False, applied: Collection[str] = ()
    ) -> ReconcileReport:
        """Make the live schedules of one participant equal to what their state wants: delete
        orphans, re-create missing ones (a one-shot whose time has passed is not re-created), and
        rewrite each live one whose specification (expression, zone, flexible window, target, role,
        payload, ...) differs from what putting the state's ``ScheduleSpec`` would write now: one
        GetSchedule per live wanted schedule (docs/architecture.md#effects).
        ``refresh``: re-put the live ones the state wants without reading them (a failed update left
        them stale), except those in ``applied`` (just put by the calling event)."""
        report = ReconcileReport(participant_id=participant_id)
        live = set(self.app.timers.list_names(participant_prefix(participant_id)))
        report.live = len(live)
        try:
            loaded = self.app.store.load(participant_id)
        except ParticipantNotFound:
            desired: dict[str, ScheduleSpec] = {}
        else:
            data = StateData(dict(loaded.flow.state_data))
            desired = desired_schedules(loaded.participant, data, self.app.prep_minutes)
        report.desired = len(desired)
        now = self.app.clock.now()
        changes: dict[str, ScheduleSpec | None] = {}
        for name in sorted(live - desired.keys()):
            changes[name] = None
            report.deleted_orphans.append(name)
        wanted = desired.keys() - (live & set(applied)) if refresh else desired.keys()
        for name in sorted(wanted):
            spec = desired[name]
            if spec.at is not None and spec.at <= now:
                if refresh or name not in live:  # a live one firing now is left to fire
                    report.skipped_past.append(name)
                continue
            if name in live and not refresh:
                fields = self._drift(spec)
                if fields is None:  # gone since the listing (a one-shot that fired): re-create
                    live.discard(name)
                elif not fields:
                    continue
                else:
                    report.updated_drifted.append(DriftedSchedule(name=name, fields=fields))
            changes[name] = spec
            if name not in live:
                report.created_missing.append(name)
        self.apply_schedule_specs(changes)
        if report.repairs:
            logger.warning(
                "schedules repaired",
                extra={
                    "participant_id": participant_id,
                    "deleted_orphans": len(report.deleted_orphans),
                    "created_missing": len(report.created_missing),
                    "updated_drifted": len(report.updated_drifted),
                },
            )
        return report

    def _drift(self, spec: ScheduleSpec) -> list[str] | None:
        """The fields in which the live schedule differs from what putting ``spec`` would write now
        ([] when equal); ``None`` when the schedule no longer exists."""
        live = self.app.timers.describe(spec.name)
        return None if live is None else self.app.timers.planned(spec).differences(live)

    def reconcile_all(self) -> list[ReconcileReport]:
        """Every enrolled participant, and every participant id that still has live schedules."""
        ids: set[str] = {name.split("-", 1)[0] for name in self.app.timers.list_names("")}
        token: str | None = None
        while True:
            page, token = self.app.repo.list(limit=100, next_token=token)
            ids.update(p.id for p in page)
            if token is None:
                break
        return [self.app.reconcile(pid) for pid in sorted(ids)]


def _failed(exc: MessagingError, now: datetime) -> DeliveryOutcome:
    """A refused send; ``reason`` says whether a retry may still cure it."""
    return DeliveryOutcome(
        status="failed",
        code=exc.code or "",
        reason="undeliverable" if exc.undeliverable else "retried",
        parts=exc.accepted_parts,
        at=now,
    )


def _final(result: DeliveryOutcome) -> bool:
    return result.status != "failed" or result.reason == "undeliverable"
