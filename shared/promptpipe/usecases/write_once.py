"""The write-once runner: every use case that changes a participant's state runs through ``run_once``.

open the participant's session → a redelivered event replays (its effects are read back, nothing
runs again) → the work → one commit → an ``EventOutcome`` whose effects the caller applies after
the commit (``apply_effects``). A failed or conflicting commit is handled here, the same way for
every use case (docs/reliability.md):

- the participant is gone (before the event, or deleted during it): nothing is committed and nothing
  sent; the schedules that fired the event, if any, are removed (an orphan fires once, then is gone);
- a concurrent delivery of the event committed first, or one long ago: replayed, nothing to send;
- the state kept changing under us (``StateConflictRetriesExhausted``): raised, the event is redelivered;
- the write failed (``StoreError``) but landed all the same (its answer was lost): the effects apply;
- the write failed for good: ``reply_if_unsaved`` delivers the decided messages anyway, flagged
  ``degraded`` and with no schedule change (a turn's reply, docs/behaviour.md, save failures);
  otherwise ``StoreError`` is raised and the event is redelivered (the webhook: the provider retries).

``defer_schedules`` is for the public webhook, which holds no Scheduler rights
(docs/architecture.md#the-stack-rights-and-alarms): schedule changes go to the worker through the
queue (it re-derives each from the committed state) and the participant's pending-effects marker is
left for the worker's events to repair.

``replay=False`` is the operator's write through the API (a participant update, a state override):
its id is made up at the request (``update-<time>``, ``override-<time>``) and nobody redelivers it,
so it is neither looked up as a replay nor claimed, and two writes in the same instant (a fixed
clock) both run. With ``record_event=False`` it leaves no event record in the state either. A
participant who is not there (before the write, or deleted during it) is the caller's
``ParticipantNotFound`` (a 404): there is no firing to clean up, and the operator is answered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from promptpipe.errors import ParticipantNotFound, StateConflictRetriesExhausted, StoreError
from promptpipe.flow.effects import Effects, desired_schedules
from promptpipe.flow.session import ConversationSession
from promptpipe.flow.study_settings import model_prices
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.store import EventRecord
from promptpipe.observability import publish
from promptpipe.usecases import inbound_record
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.hold_alerts import new_hold_alert, still_pending
from promptpipe.usecases.outcome_metrics import outcome_metrics
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.schedules import apply_schedule_specs

logger = logging.getLogger(__name__)

Work = Callable[[ConversationSession, EventOutcome], None]


def run_once(
    app: AppContext,
    participant_id: str,
    event_id: str,
    work: Work,
    *,
    firing_schedules: tuple[str, ...] = (),
    reply_if_unsaved: bool = True,
    defer_schedules: bool = False,
    replay: bool = True,
    record_event: bool = True,
) -> EventOutcome:
    """Open, replay or work, commit once, publish the event's metrics (``outcome_metrics``); the
    caller applies the outcome's effects with ``apply_effects``. ``firing_schedules``: the
    schedule(s) that may have fired this event. ``replay=False`` (with ``record_event``): an
    operator's write, see the module's docstring."""
    outcome = _run_once(
        app,
        participant_id,
        event_id,
        work,
        firing_schedules=firing_schedules,
        reply_if_unsaved=reply_if_unsaved,
        defer_schedules=defer_schedules,
        replay=replay,
        record_event=record_event,
    )
    publish(outcome_metrics(outcome, model_prices(app.deps.study)))  # a study's own prices (docs/studies.md)
    return outcome


def _run_once(
    app: AppContext,
    participant_id: str,
    event_id: str,
    work: Work,
    *,
    firing_schedules: tuple[str, ...],
    reply_if_unsaved: bool,
    defer_schedules: bool,
    replay: bool,
    record_event: bool,
) -> EventOutcome:
    outcome = EventOutcome(participant_id=participant_id, event_id=event_id)
    try:
        session = app.sessions.open(participant_id, event_id)
    except ParticipantNotFound:
        if not replay:
            raise
        logger.info("event for a participant that no longer exists", extra={"participant_id": participant_id})
        if firing_schedules:
            apply_schedule_specs(app, dict.fromkeys(firing_schedules))
        return outcome
    if not defer_schedules:
        outcome.pending_effects = session.loaded.pending_effects
    record = session.already_processed() if replay else None
    if record is not None:
        outcome.replayed = True
        outcome.take(resume(app, session, record))
        _take_hold_alert(outcome, session)
        return _deferred(app, outcome) if defer_schedules else outcome
    work(session, outcome)
    outcome.metrics = session.metrics
    if not session.dirty:
        return outcome
    try:
        effects = session.commit(record_event=record_event, claim_event=replay)
        outcome.committed_version = session.committed_version
        if session.duplicate_of is not None or session.answered_before:
            # A concurrent delivery of this event committed first (it applies the effects), or
            # one long ago (its id is claimed): nothing to send.
            outcome.replayed = True
            kept = app.ledger.unfinished(participant_id, event_id) if session.answered_before and app.ledger else None
            if kept is not None:
                # Its delivery failed and its record has left the state item's window since (any
                # number of later commits): resume it from the record kept with the failure.
                outcome.take(resume(app, session, kept))
                _take_hold_alert(outcome, session)
                return _deferred(app, outcome) if defer_schedules else outcome
    except ParticipantNotFound:
        if not replay:
            raise
        logger.info("participant deleted during the event", extra={"participant_id": participant_id})
        return outcome
    except StateConflictRetriesExhausted:
        raise
    except StoreError:  # a bug (a TypeError while building the items) propagates instead
        landed = session.landed_after_all()  # a lost answer, not a failed write?
        if landed is None:
            if not reply_if_unsaved:
                raise
            # A failed save is logged; the reply still goes out (docs/behaviour.md, save failures).
            # Nothing else does: no schedule is created for a state that did not land.
            logger.exception(
                "state commit failed; delivering the reply anyway", extra={"participant_id": participant_id}
            )
            outcome.outbound, outcome.degraded = session.uncommitted_messages(), True
            outcome.decided_status, outcome.recipient = session.participant.status, session.participant
            # The turn's message and reply still reach the transcript, marked not saved.
            inbound_record.record_unsaved(app, session, outcome)
            return outcome
        logger.info("the commit landed although its answer failed", extra={"participant_id": participant_id})
        effects, outcome.committed_version = landed, session.committed_version
    outcome.take(effects)
    _take_hold_alert(outcome, session)
    # The study decisions that landed with this commit: their delivery is filled in after the sends.
    outcome.decisions = [] if outcome.replayed else session.decisions
    return _deferred(app, outcome) if defer_schedules else outcome


def _take_hold_alert(outcome: EventOutcome, session: ConversationSession) -> None:
    """The alert of the hold this event placed, from the committed state: on the first run, and on a
    redelivery while the marker it loaded says it is still to be published (``usecases/hold_alerts.py``)."""
    if outcome.replayed and session.duplicate_of is not None:
        return  # a concurrent delivery committed first: it applies the effects
    alert = new_hold_alert(outcome.participant_id, outcome.event_id, session.data.hold())
    outcome.hold_alert = still_pending(alert, session.loaded.needs_person) if outcome.replayed else alert


def resume(app: AppContext, session: ConversationSession, record: EventRecord) -> Effects:
    """The effects of an already committed event, for its redelivery: its messages read back
    from the transcript, its schedules as the state wants them now."""
    loaded = session.loaded
    messages = app.store.load_outbound(session.participant.id, record) if record.messages else []
    desired = desired_schedules(loaded.participant, session.data, app.prep_minutes, app.clock.now())
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


def _deferred(app: AppContext, outcome: EventOutcome) -> EventOutcome:
    """Hand the outcome's schedule changes to the worker (``TurnKind.SCHEDULES``) and keep the
    rest, the messages, to send now. The worker re-derives each schedule from the state."""
    if not outcome.schedules:
        return outcome
    app.queue.enqueue(
        TurnEvent(
            kind=TurnKind.SCHEDULES,
            participant_id=outcome.participant_id,
            event_id=outcome.event_id,
            schedules=sorted(outcome.schedules),
            enqueued_at=app.clock.now(),
        )
    )
    outcome.schedules = {}
    return outcome
