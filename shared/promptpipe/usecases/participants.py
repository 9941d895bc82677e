"""The participants API: enroll, read, update (profile, time zone, status), delete, history, the
operator's view of the state and its override."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from promptpipe.errors import (
    EffectsPending,
    MessagingError,
    ParticipantAlreadyEnrolled,
    QueueError,
    TimerError,
    ValidationFailed,
)
from promptpipe.flow.lifecycle import all_timer_names, change_status
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.state_ops import immediate_transition
from promptpipe.models.api import EnrollmentRequest, ParticipantUpdate, StateOverride, StateView
from promptpipe.models.audit import Actor, AuditAction
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.llm_routes import LLMRoute
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.participant import (
    UNRECORDED_VERSION,
    ConsentRecord,
    ConversationParticipant,
    ParticipantStatus,
    format_background,
    has_background,
)
from promptpipe.models.state import DataKey, FlowState, ScheduleType, StateData, new_state_data
from promptpipe.models.store import Direction, TranscriptEntry
from promptpipe.rules.opt_words import primary_language
from promptpipe.rules.phone import canonicalize_phone, mask_phone
from promptpipe.rules.timezones import validate_iana_zone
from promptpipe.usecases import audit
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.outcomes import EventOutcome, UpdateOutcome
from promptpipe.usecases.prompt_time import set_prompt_time
from promptpipe.usecases.schedules import apply_committed_schedules, delete_live_schedules, repair_pending
from promptpipe.usecases.write_once import run_once

logger = logging.getLogger(__name__)

UNREGISTER_NOTICE = (
    "The study organiser has unregistered you from the habit coach, so you won't get more messages from us. "
    "Thank you for taking part!"
)


def greeting_event_id(participant_id: str) -> str:
    return f"greeting-{participant_id}"


def validate_timezone(name: str) -> str:
    if not name:
        return ""
    try:
        return validate_iana_zone(name)
    except ValueError as exc:
        raise ValidationFailed(str(exc), field="timezone") from exc


class Enrollment(NamedTuple):
    """What an enrolment request got: the participant, and whether this request created it (a
    retry of the request that did gets the same participant, ``created`` False). A named tuple:
    immutable and typed without the methods a dataclass generates at import (cold start,
    docs/benchmarks.md)."""

    participant: ConversationParticipant
    created: bool


def enrollment_fingerprint(phone: str, timezone: str, request: EnrollmentRequest, idempotency_key: str | None) -> str:
    """The request as enrolled (canonical phone and zone, the other fields as given) with its
    idempotency key, hashed: stored on the phone claim, compared when the number is already claimed."""
    fields = request.model_dump(mode="json", exclude={"by"}) | {"phone_number": phone, "timezone": timezone}
    if not fields.get("language"):
        fields.pop("language", None)  # unset: the fingerprint of a request from before the field
    canonical = json.dumps({"request": fields, "idempotency_key": idempotency_key or ""}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def enrollment(
    app: AppContext, request: EnrollmentRequest, *, idempotency_key: str | None = None, actor: Actor | None = None
) -> Enrollment:
    """Create the participant and queue their greeting. The same request again (same body, same
    ``idempotency_key`` or none) gets the participant it created, and its greeting queued again:
    the greeting's own event id lets it out once (docs/behaviour.md#B-API-8). Another
    request for an enrolled number is ``ParticipantAlreadyEnrolled``."""
    if app.deps.config.consent_required and request.consent is None:
        raise ValidationFailed(
            "consent is required: give consent with at, version and method (docs/safety.md#consent)", field="consent"
        )
    phone = canonicalize_phone(request.phone_number, app.deps.config.default_phone_region)
    timezone = validate_timezone(request.timezone)
    fingerprint = enrollment_fingerprint(phone, timezone, request, idempotency_key)
    now = app.clock.now()
    participant = ConversationParticipant(
        id=app.deps.ids.participant_id(),
        phone_number=phone,
        name=request.name,
        gender=request.gender,
        ethnicity=request.ethnicity,
        background=request.background,
        timezone=timezone,
        language=primary_language(request.language),
        enrolled_at=now,
        created_at=now,
        updated_at=now,
        consent=request.consent,
        test_participant=request.test_participant,
    )
    background = format_background(participant) if has_background(participant) else ""
    flow = FlowState(participant_id=participant.id, state_data=new_state_data(background))
    try:
        app.repo.create(participant, flow, enrollment=fingerprint)
    except ParticipantAlreadyEnrolled as exc:
        if exc.participant_id is None or exc.enrollment != fingerprint:
            raise  # another request (or an enrolment older than fingerprints): a conflict
        # A retry of the request that enrolled them (its answer was lost): the same participant.
        existing = app.repo.get(exc.participant_id)
        _queue_greeting(app, existing.id)
        logger.info("enrolment retried; answering with its participant", extra={"participant_id": existing.id})
        return Enrollment(existing, created=False)
    _queue_greeting(app, participant.id)
    audit.record(app, actor, AuditAction.ENROL, participant.id)
    logger.info("participant enrolled", extra={"participant_id": participant.id, "phone": mask_phone(phone)})
    return Enrollment(participant, created=True)


def _queue_greeting(app: AppContext, participant_id: str) -> None:
    """Queued at each enrolment of the request, a retry too: the first attempt may have landed
    without queueing it. The event id is the participant's, so it is answered once (the queue's
    deduplication within minutes, the worker's event record and claimed id after)."""
    try:
        app.queue.enqueue(
            TurnEvent(
                kind=TurnKind.GREETING,
                participant_id=participant_id,
                event_id=greeting_event_id(participant_id),
                enqueued_at=app.clock.now(),
            )
        )
    except QueueError:  # enrollment stands even if the greeting cannot be queued (docs/behaviour.md#B-GREET-1)
        logger.exception("greeting could not be queued", extra={"participant_id": participant_id})


def apply_participant_update(
    app: AppContext, participant_id: str, update: ParticipantUpdate, *, actor: Actor | None = None
) -> UpdateOutcome:
    fields = update.model_dump(exclude_unset=True, exclude_none=True, exclude={"by", "reason"})
    if "timezone" in fields:
        validate_timezone(fields["timezone"])
    status = fields.pop("status", None)
    prompt_time = fields.pop("preferred_time", None)  # the coach's profile and the daily schedule, not a field
    consent_fields = {name: fields.pop(name) for name in ("consent", "withdrawal") if name in fields}
    profile_fields = fields  # what is left: the participant's own fields
    opened: list[ConversationSession] = []
    previous: list[ParticipantStatus] = []

    def apply(op: OpContext) -> None:
        old_zone = op.participant.timezone
        for name, value in profile_fields.items():
            setattr(op.participant, name, value)
        op.participant_changed = True
        new_zone = op.participant.timezone
        if new_zone and new_zone != old_zone:
            _rezone_schedules(op, old_zone, new_zone)
        if {"name", "gender", "ethnicity", "background"} & profile_fields.keys():
            # Unlike the original, the stored background follows the participant's edits.
            op.data.set(
                DataKey.PARTICIPANT_BACKGROUND,
                format_background(op.participant) if has_background(op.participant) else "",
            )

    def clear_opt_out(op: OpContext) -> None:
        op.participant.opted_out = False  # the organiser decides from now on

    def work(session: ConversationSession, _outcome: EventOutcome) -> None:
        nonlocal status
        opened.append(session)
        status = _status_with_withdrawal(status, update)  # after the open: a missing participant is a 404 first
        previous.append(session.participant.status)
        if profile_fields:
            session.apply("update_participant", apply)
        if prompt_time is not None:  # after a zone change: the schedule moves in its new zone
            prep, flows = app.deps.config.scheduler_prep_time_minutes, app.deps.flows
            session.apply("set_prompt_time", lambda op: set_prompt_time(op, prompt_time, prep, flows))
        withdrawing = status == ParticipantStatus.WITHDRAWN.value
        if consent_fields or withdrawing:
            session.apply("record_consent", _record_consent(update, withdrawing=withdrawing))
        if status is not None and change_status(
            app.deps, session, ParticipantStatus(status), reason="updated through the API"
        ):
            session.apply("clear_opt_out", clear_opt_out)

    # An API change: its id is made up here and redelivered by nobody (``replay=False``).
    outcome = run_once(app, participant_id, f"update-{app.clock.now().isoformat()}", work, replay=False)
    session, previous_status = opened[0], previous[0]
    pending = _apply_committed(app, participant_id, outcome.schedules) if session.dirty else False
    if not pending and outcome.pending_effects is not None:  # an earlier try's changes failed: repair
        pending = not repair_pending(app, participant_id, outcome.pending_effects, applied=outcome.schedules.keys())
    if status is not None and ParticipantStatus.WITHDRAWN in {ParticipantStatus(status), previous_status}:
        _follow_retention(app, participant_id, session.expires_at)
    changed = [*profile_fields, *(["preferred_time"] if prompt_time is not None else []), *consent_fields]
    moved = status if status is not None and status != previous_status.value else None  # a status kept is no action
    _audit_update(app, actor, participant_id, moved, fields=changed, reason=update.reason or "")
    if session.dirty:
        # The commit stamps the stored participant's updated_at; answer with what was stored.
        return UpdateOutcome(session.participant.model_copy(update={"updated_at": session.now}), pending)
    return UpdateOutcome(session.participant, pending)


_STATUS_ACTIONS = {
    ParticipantStatus.PAUSED.value: AuditAction.PAUSE,
    ParticipantStatus.ACTIVE.value: AuditAction.RESUME,
    ParticipantStatus.WITHDRAWN.value: AuditAction.WITHDRAW,
}


def _audit_update(
    app: AppContext, actor: Actor | None, participant_id: str, status: str | None, *, fields: list[str], reason: str
) -> None:
    """The update's audit: its status change (pause, resume, withdraw) and its edit (the names of
    the fields given), each a record with the reason."""
    action = _STATUS_ACTIONS.get(status or "")
    if action is not None:
        audit.record(app, actor, action, participant_id, reason=reason)
    withdrawing = action is AuditAction.WITHDRAW
    edited = [name for name in fields if not (withdrawing and name in ("consent", "withdrawal"))]
    if edited:
        audit.record(app, actor, AuditAction.EDIT, participant_id, reason=reason, fields=edited)


def _status_with_withdrawal(status: str | None, update: ParticipantUpdate) -> str | None:
    """A withdrawal given alone withdraws; given with another status it contradicts it."""
    if update.withdrawal is None:
        return status
    if status not in (None, ParticipantStatus.WITHDRAWN.value):
        raise ValidationFailed("a withdrawal sets the status to withdrawn: leave status out", field="withdrawal")
    return ParticipantStatus.WITHDRAWN.value


def _record_consent(update: ParticipantUpdate, *, withdrawing: bool) -> Callable[[OpContext], None]:
    """Consent and withdrawal on the participant item (docs/safety.md#consent). A withdrawal
    through a status change alone is recorded at the request's time, with method ``api``, under the
    version consented to; a participant already withdrawn keeps their first record."""

    def apply(op: OpContext) -> None:
        if update.consent is not None:
            op.participant.consent = update.consent
            if not withdrawing:
                op.participant.withdrawal = None  # a new consent supersedes an earlier withdrawal
        if withdrawing and (update.withdrawal is not None or op.participant.withdrawal is None):
            version = op.participant.consent.version if op.participant.consent else UNRECORDED_VERSION
            op.participant.withdrawal = update.withdrawal or ConsentRecord(at=op.now, version=version, method="api")
        op.participant_changed = True

    return apply


def _apply_committed(app: AppContext, participant_id: str, schedules: dict[str, ScheduleSpec | None]) -> bool:
    """The schedule changes of a committed update; ``True`` when they failed and are pending
    (marked, re-applied by the next event or the sweep): the caller is told, not failed."""
    try:
        apply_committed_schedules(app, participant_id, schedules)
    except EffectsPending:
        return True
    return False


def _follow_retention(app: AppContext, participant_id: str, expires_at: datetime | None) -> None:
    """After a withdrawal (or a re-activation) committed the flow state's expiry, the items no
    commit rewrites (transcript, phone claim) follow it (docs/retention.md). Run on a repeated
    withdrawal too, so a retry completes what a failure here left."""
    if app.deps.config.retention_days_after_delete:
        app.repo.expire(participant_id, expires_at)


def delete_participant(
    app: AppContext,
    participant_id: str,
    *,
    keep_transcript: bool = True,
    actor: Actor | None = None,
    reason: str = "",
) -> None:
    """Remove participant, claim and state, then every schedule of theirs, then tell them.

    The items go first: a turn still in flight then fails its commit instead of creating a
    schedule after the clean-up (one that committed just before is caught by the self-removal
    of orphan firings and by reconcile). The transcript is kept by default (studies need the
    record); ``keep_transcript=False`` erases it.
    """
    loaded = app.store.load(participant_id)
    participant = loaded.participant
    app.repo.delete(participant_id, keep_transcript=keep_transcript)
    known = all_timer_names(participant_id, StateData(dict(loaded.flow.state_data)))
    try:
        delete_live_schedules(app, participant_id, known)
    except TimerError:
        logger.exception(
            "schedules of a deleted participant not all removed; reconcile will",
            extra={"participant_id": participant_id},
        )
    if participant.is_active:
        try:
            app.messenger.send(
                OutboundMessage(
                    participant_id=participant_id,
                    to=participant.phone_number,
                    body=UNREGISTER_NOTICE,
                    kind=OutboundKind.NOTICE,
                    message_id=f"unregister-{participant_id}",
                )
            )
        except MessagingError:
            logger.warning("unregister notice not delivered", extra={"participant_id": participant_id})
    if keep_transcript:
        audit.record(app, actor, AuditAction.DELETE, participant_id, reason=reason)
    else:
        # An erasure: the earlier records' reasons (free text) go with the data; the records stay.
        app.audit.redact(participant_id)
        audit.record(app, actor, AuditAction.ERASURE, participant_id, reason=reason)


def history(
    app: AppContext, participant_id: str, *, limit: int, next_token: str | None, include_audit: bool
) -> tuple[list[TranscriptEntry], str | None]:
    entries, token = app.store.list_transcript(participant_id, limit=limit, next_token=next_token)
    if not entries and next_token is None:
        app.repo.get(participant_id)  # 404 unless the participant exists (a deleted one's kept
        # transcript stays readable: studies export it after unregistering a participant)
    if not include_audit:
        entries = [e.model_copy(update={"metadata": {}}) for e in entries]
    return entries, token


def state_view(app: AppContext, participant_id: str) -> StateView:
    # The operator's routes import the conversation engine when first called: the enrollment
    # function's other routes never need it (cold start, docs/benchmarks.md).
    from promptpipe.flow.steering import controller_view

    loaded = app.store.load(participant_id)
    data = StateData(dict(loaded.flow.state_data))
    profile = data.profile().to_json_dict()
    if DataKey.USER_PROFILE.value in data.unreadable_keys:  # read as a new one; the operator sees why
        profile = {"error": "stored profile is unreadable"}
    pending = data.daily_prompt_pending()
    timer_keys = (
        DataKey.DAILY_PROMPT_REMINDER_TIMER_ID,
        DataKey.AUTO_FEEDBACK_TIMER_ID,
        DataKey.STATE_TRANSITION_TIMER_ID,
        DataKey.FEEDBACK_TIMER_ID,
        DataKey.FEEDBACK_FOLLOWUP_TIMER_ID,
    )
    return StateView(
        participant_id=participant_id,
        status=loaded.participant.status,
        current_state=loaded.flow.current_state,
        sub_state=data.sub_state.value,
        debug_mode=loaded.participant.debug_mode,
        profile=profile,
        schedules=[s.to_json_dict() for s in data.schedules()],
        pending_timers={k.value: data.get(k) for k in timer_keys if data.get(k)},
        daily_prompt_pending=pending.to_json_dict() if pending else None,
        version=loaded.flow.version,
        controller=controller_view(data),
        effects_pending=loaded.pending_effects is not None,
        hold=hold.view() if (hold := data.hold()) is not None else None,
    )


def override_state(
    app: AppContext, participant_id: str, override: StateOverride, *, actor: Actor | None = None
) -> StateView:
    """Operator override: sub-state, debug mode and/or the participant's model routes, with the
    reason in the transcript."""
    if (
        override.sub_state is None
        and override.debug_mode is None
        and override.llm_routes is None
        and override.profile is None
        and override.release_hold is None
    ):
        raise ValidationFailed("give sub_state, debug_mode, llm_routes, profile and/or release_hold", field="sub_state")
    from promptpipe.flow import routing  # imported by the operator's routes only (see state_view)
    from promptpipe.flow.hold import release
    from promptpipe.flow.steering import record_operator_facts, release_controller_hold

    facts = override.profile.model_dump(exclude_none=True) if override.profile is not None else {}
    released: list[str] = []
    debug = override.debug_mode

    def work(session: ConversationSession, _outcome: EventOutcome) -> None:
        if facts:  # before the release: the resumed flow starts from them
            flows = app.deps.flows
            session.apply("override_profile", lambda op: record_operator_facts(op.data, facts, op.now, flows))
        if override.sub_state is not None:
            session.apply("override_sub_state", immediate_transition(override.sub_state))
            target = override.sub_state
            session.apply("release_controller_hold", lambda op: release_controller_hold(op.data, target))
        if override.sub_state is not None or override.release_hold:

            def release_the_hold(op: OpContext) -> None:
                # The one hold (docs/safety.md), and the controller's pause with it: the coach resumes.
                ended = release(op)
                released[:] = [ended.reason.value] if ended is not None else []
                release_controller_hold(op.data, op.data.sub_state)

            session.apply("release_hold", release_the_hold)
        if override.llm_routes is not None:
            routes: dict[str, LLMRoute] = {name: route for name, route in override.llm_routes.items()}
            routing.check_participant_routes(app.deps.config, routes, session.data.raw)
            session.apply("override_llm_routes", lambda op: routing.store_participant_routes(op.data.raw, routes))

        def record(op: OpContext) -> None:
            if debug is not None and op.participant.debug_mode != debug:
                op.participant.debug_mode = debug
                op.participant_changed = True
            changes = []
            if override.sub_state is not None:
                changes.append(f"sub_state={override.sub_state.value}")
            if debug is not None:
                changes.append(f"debug_mode={debug}")
            if override.llm_routes is not None:
                changes.append(f"llm_routes={','.join(sorted(override.llm_routes)) or 'cleared'}")
            if facts:
                changes.append(f"profile={','.join(facts)}")
            if released:
                changes.append(f"hold released ({released[0]})")
            op.record(Direction.SYSTEM, "override", f"operator override ({', '.join(changes)}): {override.reason}")

        session.apply("override", record)

    # An operator's write: redelivered by nobody, and it leaves no event record (``replay=False``).
    outcome = run_once(
        app, participant_id, f"override-{app.clock.now().isoformat()}", work, replay=False, record_event=False
    )
    _apply_committed(app, participant_id, outcome.schedules)
    releasing = override.sub_state is not None or bool(override.release_hold)
    only_profile = facts and override.debug_mode is None and override.llm_routes is None
    action = AuditAction.RELEASE if releasing else AuditAction.EDIT if only_profile else AuditAction.OVERRIDE
    changed = [f"profile.{name}" for name in facts]
    changed += [name for name in ("debug_mode", "llm_routes") if getattr(override, name) is not None]
    audit.record(app, actor, action, participant_id, reason=override.reason, fields=changed)
    return state_view(app, participant_id)  # ``effects_pending`` says whether they still are


def get_participant(app: AppContext, participant_id: str) -> ConversationParticipant:
    return app.repo.get(participant_id)


def list_participants(
    app: AppContext, *, limit: int, next_token: str | None
) -> tuple[list[ConversationParticipant], str | None]:
    return app.repo.list(limit=limit, next_token=next_token)


def update_participant(app: AppContext, participant_id: str, update: ParticipantUpdate) -> ConversationParticipant:
    """``apply_participant_update``'s participant as stored."""
    return apply_participant_update(app, participant_id, update).participant


def _rezone_schedules(op: OpContext, old_zone: str, new_zone: str) -> None:
    """Daily schedules in the participant's old zone (or, when they had none, in the scheduler's
    default zone for the type) follow the participant to the new zone; their names stay, so the
    update replaces them in place after the commit."""
    from promptpipe.flow.tools.scheduler import DEFAULT_FIXED_TIMEZONE, DEFAULT_RANDOM_TIMEZONE  # see state_view

    registry = op.data.schedules()
    moved = False
    for index, schedule in enumerate(registry):
        # without a zone of their own, their schedules are in the default zone (random ones made
        # before the one zone rule: UTC)
        defaults = {DEFAULT_FIXED_TIMEZONE} | (
            {DEFAULT_RANDOM_TIMEZONE} if schedule.type is ScheduleType.RANDOM else set()
        )
        if schedule.timezone in ({old_zone} if old_zone else defaults):
            registry[index] = schedule.model_copy(update={"timezone": new_zone})
            op.touch_schedule(schedule.timer_id)
            moved = True
    if moved:
        op.data.set_schedules(registry)


def participants_by_phone(app: AppContext, phone: str) -> list[ConversationParticipant]:
    """``GET /conversation/participants?phone=``: the participant whose phone claim matches (at most
    one), after canonicalising to E.164. Raises ``InvalidPhoneNumber`` (a 400) when the number cannot
    be canonicalised."""
    participant_id = app.repo.find_id_by_phone(canonicalize_phone(phone, app.deps.config.default_phone_region))
    return [app.repo.get(participant_id)] if participant_id else []
