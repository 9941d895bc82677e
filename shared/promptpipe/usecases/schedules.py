"""The schedules after a commit (docs/architecture.md#effects): apply an event's schedule changes,
mark a participant whose changes failed (the pending-effects marker) and repair them later, and
reconcile the live schedules with what the state wants."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import TYPE_CHECKING

from promptpipe.errors import EffectsPending, ParticipantNotFound, TimerError
from promptpipe.flow.effects import apply_schedule_changes, desired_schedules
from promptpipe.flow.timer_names import SWEEP_SCHEDULE_PREFIX, participant_prefix
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.state import StateData
from promptpipe.usecases.context import AppContext

if TYPE_CHECKING:
    from promptpipe.usecases.reconcile_report import ReconcileReport

logger = logging.getLogger(__name__)


def apply_schedule_specs(app: AppContext, schedules: dict[str, ScheduleSpec | None]) -> int:
    """Create-or-update or delete each touched schedule. Every one is tried; if any failed,
    ``TimerError`` is raised afterwards (the event is redelivered and tries again)."""
    return apply_schedule_changes(app.timers, schedules)


def apply_committed_schedules(app: AppContext, participant_id: str, schedules: dict[str, ScheduleSpec | None]) -> int:
    """``apply_schedule_specs`` for a committed state: when a change fails, the participant's
    pending-effects marker is written before ``TimerError`` is raised, so the next event for
    them, or the sweep, re-applies it from the state: ``EffectsPending`` is raised then (a failed
    marker write raises ``StoreError``)."""
    try:
        return apply_schedule_specs(app, schedules)
    except TimerError as exc:
        app.pending_effects.mark(participant_id)
        logger.warning("schedule changes pending after a failure", extra={"participant_id": participant_id})
        raise EffectsPending(str(exc)) from exc


def repair_pending(app: AppContext, participant_id: str, token: str, applied: Collection[str] = ()) -> bool:
    """Bring a marked participant's schedules in line with their state (every wanted schedule
    re-put, orphans deleted), then clear the marker; ``False`` (marker kept) when the scheduler
    still fails."""
    try:
        # A failed change may have been an update: re-put what the state wants, except what the
        # calling event has just applied itself.
        reconcile(app, participant_id, refresh=True, applied=applied)
    except TimerError:
        logger.warning("pending schedule changes still failing", extra={"participant_id": participant_id})
        return False
    app.pending_effects.clear(participant_id, token)
    return True


def sweep_pending_effects(app: AppContext, limit: int = 100) -> list[str]:
    """The periodic sweep: repair every participant with a pending-effects marker (up to
    ``limit``, oldest first); returns the ids repaired."""
    return [pid for pid, token in app.pending_effects.pending(limit) if repair_pending(app, pid, token)]


def delete_live_schedules(app: AppContext, participant_id: str, known: list[str]) -> None:
    names = set(known) | set(app.timers.list_names(participant_prefix(participant_id)))
    apply_schedule_specs(app, dict.fromkeys(sorted(names)))


def reconcile(
    app: AppContext, participant_id: str, *, refresh: bool = False, applied: Collection[str] = ()
) -> ReconcileReport:
    """Make the live schedules of one participant equal to what their state wants: delete
    orphans, re-create missing ones (a one-shot whose time has passed is not re-created), and
    rewrite each live one whose specification (expression, zone, flexible window, target, role,
    payload, ...) differs from what putting the state's ``ScheduleSpec`` would write now: one
    GetSchedule per live wanted schedule (docs/architecture.md#effects).
    ``refresh``: re-put the live ones the state wants without reading them (a failed update left
    them stale), except those in ``applied`` (just put by the calling event)."""
    # Here, not at import: no ordinary first event reconciles (cold start, docs/benchmarks.md).
    from promptpipe.usecases.reconcile_report import DriftedSchedule, ReconcileReport

    report = ReconcileReport(participant_id=participant_id)
    live = set(app.timers.list_names(participant_prefix(participant_id)))
    report.live = len(live)
    try:
        loaded = app.store.load(participant_id)
    except ParticipantNotFound:
        desired: dict[str, ScheduleSpec] = {}
    else:
        data = StateData(dict(loaded.flow.state_data))
        desired = desired_schedules(loaded.participant, data, app.prep_minutes)
    report.desired = len(desired)
    now = app.clock.now()
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
            fields = _drift(app, spec)
            if fields is None:  # gone since the listing (a one-shot that fired): re-create
                live.discard(name)
            elif not fields:
                continue
            else:
                report.updated_drifted.append(DriftedSchedule(name=name, fields=fields))
        changes[name] = spec
        if name not in live:
            report.created_missing.append(name)
    apply_schedule_specs(app, changes)
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


def _drift(app: AppContext, spec: ScheduleSpec) -> list[str] | None:
    """The fields in which the live schedule differs from what putting ``spec`` would write now
    ([] when equal); ``None`` when the schedule no longer exists."""
    live = app.timers.describe(spec.name)
    return None if live is None else app.timers.planned(spec).differences(live)


def reconcile_all(app: AppContext) -> list[ReconcileReport]:
    """Every enrolled participant, and every participant id that still has live schedules."""
    ids: set[str] = {
        name.split("-", 1)[0] for name in app.timers.list_names("") if not name.startswith(SWEEP_SCHEDULE_PREFIX)
    }
    token: str | None = None
    while True:
        page, token = app.repo.list(limit=100, next_token=token)
        ids.update(p.id for p in page)
        if token is None:
            break
    return [reconcile(app, pid) for pid in sorted(ids)]
