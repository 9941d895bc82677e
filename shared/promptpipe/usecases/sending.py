"""Effects after the commit (docs/architecture.md#effects): send an event's messages, then bring its
schedules in line with the committed state; resume a redelivered event; reconcile live schedules
with what the state wants."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from promptpipe.errors import ParticipantNotFound, StoreError
from promptpipe.flow.effects import Effects, apply_schedule_changes, desired_schedules
from promptpipe.flow.timer_names import participant_prefix
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.state import StateData
from promptpipe.models.store import EventRecord
from promptpipe.usecases.outcomes import EventOutcome, ReconcileReport

if TYPE_CHECKING:
    from promptpipe.flow.session import ConversationSession
    from promptpipe.services import PromptPipe

logger = logging.getLogger(__name__)


class Sending:
    def __init__(self, app: PromptPipe) -> None:
        self.app = app

    def finish(self, outcome: EventOutcome) -> int:
        """Apply a processed event's effects, after its commit: send its messages, then bring its
        schedules in line with the committed state. Returns the number of messages sent.

        Any failure raises (the event is redelivered) after recording, for this event, which
        messages already went out. A redelivered event (``replayed``) sends only what such a record
        says is missing: no record means the earlier delivery finished, so nothing is sent twice.
        Schedules are re-applied either way (each change is idempotent). The reply goes first, so
        a scheduler outage never holds it back.
        """
        ledger = self.app.ledger
        pending = list(outcome.outbound)
        already: set[str] = set()
        if outcome.replayed and pending:
            recorded = ledger.partial(outcome.participant_id, outcome.event_id) if ledger else None
            already = recorded or set()
            pending = [] if recorded is None else [m for m in pending if m.message_id not in recorded]
        sent: list[str] = []
        try:
            for message in pending:
                self.app.messenger.send(message)
                sent.append(message.message_id)
            if outcome.schedules:
                self.apply_schedule_specs(outcome.schedules)
        except BaseException:  # a crash mid-way too: record what already went out
            if ledger is not None and (outcome.outbound or outcome.schedules):
                try:
                    ledger.record_partial(outcome.participant_id, outcome.event_id, sorted(already | set(sent)))
                except StoreError:  # best effort: at worst the redelivery sends nothing
                    logger.exception("could not record the messages already sent")
            raise
        return len(sent)

    def apply_schedule_specs(self, schedules: dict[str, ScheduleSpec | None]) -> int:
        """Create-or-update or delete each touched schedule. Every one is tried; if any failed,
        ``TimerError`` is raised afterwards (the event is redelivered and tries again)."""
        return apply_schedule_changes(self.app.timers, schedules)

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
        )

    def reconcile(self, participant_id: str) -> ReconcileReport:
        """Make the live schedules of one participant equal to what their state wants: delete
        orphans, re-create missing ones (a one-shot whose time has passed is not re-created)."""
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
        for name in sorted(desired.keys() - live):
            spec = desired[name]
            if spec.at is not None and spec.at <= now:
                report.skipped_past.append(name)
                continue
            changes[name] = spec
            report.created_missing.append(name)
        self.apply_schedule_specs(changes)
        if report.repairs:
            logger.warning(
                "schedules repaired",
                extra={
                    "participant_id": participant_id,
                    "deleted_orphans": len(report.deleted_orphans),
                    "created_missing": len(report.created_missing),
                },
            )
        return report

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
