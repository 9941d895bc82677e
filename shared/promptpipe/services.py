"""Application services: one function per use case, called by the thin Lambda handlers.

Each takes typed input, opens at most one session (unit of work), commits once and returns typed
output. Effects happen only after the commit (docs/architecture.md, "Effects after the commit"):
the service brings the touched schedules in line with the committed state, then the handler sends
the messages. A redelivered event finds its record and applies what is left of its effects instead
of running again (``EventRecord``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from promptpipe.clock import Clock
from promptpipe.errors import (
    MessagingError,
    ParticipantAlreadyEnrolled,
    ParticipantNotFound,
    StateConflictRetriesExhausted,
    TimerError,
    ValidationFailed,
)
from promptpipe.flow import routing
from promptpipe.flow.conversation import ConversationFlow, TurnResult, clip_inbound_text
from promptpipe.flow.delivery import DeliveryResult, deliver_daily_prompt
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import Effects, apply_schedule_changes, desired_schedules
from promptpipe.flow.lifecycle import all_timer_names, change_status
from promptpipe.flow.session import ConversationSession, OpContext, SessionFactory
from promptpipe.flow.state_ops import immediate_transition
from promptpipe.flow.steering import controller_view, release_controller_hold
from promptpipe.flow.timer_events import TimerOutcome, handle_timer
from promptpipe.flow.timer_names import daily_schedule_name, participant_prefix, random_delivery_name
from promptpipe.flow.tools.scheduler import DEFAULT_FIXED_TIMEZONE, DEFAULT_RANDOM_TIMEZONE
from promptpipe.models.api import EnrollmentRequest, ParticipantUpdate, StateOverride, StateView
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerPayload, TurnEvent, TurnKind
from promptpipe.models.messaging import InboundMessage, OutboundKind, OutboundMessage
from promptpipe.models.participant import (
    ConversationParticipant,
    ParticipantStatus,
    format_background,
    has_background,
)
from promptpipe.models.state import DataKey, FlowState, ScheduleType, StateData, new_state_data
from promptpipe.models.store import Direction, EventRecord, TranscriptEntry
from promptpipe.phone import canonicalize_phone, mask_phone
from promptpipe.ports import Messenger, ParticipantRepo, SentLedger, StateStore, Timers, TurnQueue

logger = logging.getLogger(__name__)

OPT_OUT_WORDS = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
OPT_IN_WORDS = frozenset({"START", "UNSTOP", "SUBSCRIBE", "RESUME"})
OPT_OUT_CONFIRMATION = "You're unsubscribed and won't get more messages from your habit coach. Reply START to resume."
OPT_IN_CONFIRMATION = "Welcome back! Your habit coach messages are on again."
UNREGISTER_NOTICE = (
    "The study organiser has unregistered you from the habit coach, so you won't get more messages from us. "
    "Thank you for taking part!"
)


def validate_timezone(name: str) -> str:
    if not name:
        return ""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValidationFailed(f"invalid timezone: {name!r} is not an IANA time zone", field="timezone") from exc
    return name


@dataclass
class InboundDecision:
    action: str  # "enqueued" | "opted_out" | "opted_in" | "unknown_sender" | "auto_enrolled" | "ignored"
    participant_id: str | None = None


@dataclass
class EventOutcome:
    """What one event did, for the handler's logs and metrics."""

    participant_id: str
    event_id: str
    replayed: bool = False
    committed_version: int | None = None
    outbound: list[OutboundMessage] = field(default_factory=list)
    turn: TurnResult | None = None
    delivery: DeliveryResult | None = None
    timer: TimerOutcome | None = None
    degraded: bool = False
    # Schedules to bring in line with the committed state (``finish`` applies them after sending).
    schedules: dict[str, ScheduleSpec | None] = field(default_factory=dict)


@dataclass
class ReconcileReport:
    """What ``reconcile`` found and repaired for one participant."""

    participant_id: str
    desired: int = 0
    live: int = 0
    deleted_orphans: list[str] = field(default_factory=list)
    created_missing: list[str] = field(default_factory=list)
    skipped_past: list[str] = field(default_factory=list)

    @property
    def repairs(self) -> int:
        return len(self.deleted_orphans) + len(self.created_missing)


@dataclass
class PromptPipe:
    """The application: ports wired once by a composition root (``promptpipe.wiring``)."""

    deps: FlowDeps
    repo: ParticipantRepo
    store: StateStore
    messenger: Messenger
    queue: TurnQueue | None
    sessions: SessionFactory
    ledger: SentLedger | None = None
    _flow: ConversationFlow | None = None

    @property
    def clock(self) -> Clock:
        return self.deps.clock

    @property
    def timers(self) -> Timers:
        return self.deps.timers

    @property
    def prep_minutes(self) -> int:
        return self.deps.settings.scheduler_prep_time_minutes

    @property
    def flow(self) -> ConversationFlow:
        if self._flow is None:
            self._flow = ConversationFlow(self.deps)
        return self._flow

    # ===================================================================== enrollment API ==
    def enroll(self, request: EnrollmentRequest) -> ConversationParticipant:
        phone = canonicalize_phone(request.phone_number, self.deps.settings.default_phone_region)
        timezone = validate_timezone(request.timezone)
        now = self.clock.now()
        participant = ConversationParticipant(
            id=self.deps.ids.participant_id(),
            phone_number=phone,
            name=request.name,
            gender=request.gender,
            ethnicity=request.ethnicity,
            background=request.background,
            timezone=timezone,
            enrolled_at=now,
            created_at=now,
            updated_at=now,
        )
        background = format_background(participant) if has_background(participant) else ""
        self.repo.create(participant, FlowState(participant_id=participant.id, state_data=new_state_data(background)))
        if self.queue is not None:
            try:
                self.queue.enqueue(
                    TurnEvent(
                        kind=TurnKind.GREETING,
                        participant_id=participant.id,
                        event_id=f"greeting-{participant.id}",
                        enqueued_at=now,
                    )
                )
            except Exception:  # enrollment stands even if the greeting cannot be queued (docs/behaviour.md#B-GREET-1)
                logger.exception("greeting could not be queued", extra={"participant_id": participant.id})
        logger.info("participant enrolled", extra={"participant_id": participant.id, "phone": mask_phone(phone)})
        return participant

    def get_participant(self, participant_id: str) -> ConversationParticipant:
        return self.repo.get(participant_id)

    def list_participants(
        self, *, limit: int, next_token: str | None
    ) -> tuple[list[ConversationParticipant], str | None]:
        return self.repo.list(limit=limit, next_token=next_token)

    def update_participant(self, participant_id: str, update: ParticipantUpdate) -> ConversationParticipant:
        fields = update.model_dump(exclude_unset=True, exclude_none=True)
        if "timezone" in fields:
            validate_timezone(fields["timezone"])
        session = self.sessions.open(participant_id, f"update-{self.clock.now().isoformat()}")
        status = fields.pop("status", None)
        profile_fields = fields  # what is left: the participant's own fields

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

        if profile_fields:
            session.apply("update_participant", apply)
        if status is not None and change_status(
            self.deps, session, ParticipantStatus(status), reason="updated through the API"
        ):

            def clear_opt_out(op: OpContext) -> None:
                op.participant.opted_out = False  # the organiser decides from now on

            session.apply("clear_opt_out", clear_opt_out)
        if session.dirty:
            self.apply_schedules(session.commit())
            # The commit stamps the stored participant's updated_at; answer with what was stored.
            return session.participant.model_copy(update={"updated_at": session.now})
        return session.participant

    def delete_participant(self, participant_id: str, *, keep_transcript: bool = True) -> None:
        """Remove participant, claim and state, then every schedule of theirs, then tell them.

        The items go first: a turn still in flight then fails its commit instead of creating a
        schedule after the clean-up (one that committed just before is caught by the self-removal
        of orphan firings and by reconcile). The transcript is kept by default (studies need the
        record); ``keep_transcript=False`` erases it.
        """
        loaded = self.store.load(participant_id)
        participant = loaded.participant
        self.repo.delete(participant_id, keep_transcript=keep_transcript)
        known = all_timer_names(participant_id, StateData(dict(loaded.flow.state_data)))
        try:
            self._delete_live_schedules(participant_id, known)
        except TimerError:
            logger.exception(
                "schedules of a deleted participant not all removed; reconcile will",
                extra={"participant_id": participant_id},
            )
        if participant.is_active:
            try:
                self.messenger.send(
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

    def history(
        self, participant_id: str, *, limit: int, next_token: str | None, include_audit: bool
    ) -> tuple[list[TranscriptEntry], str | None]:
        entries, token = self.store.list_transcript(participant_id, limit=limit, next_token=next_token)
        if not entries and next_token is None:
            self.repo.get(participant_id)  # 404 unless the participant exists (a deleted one's kept
            # transcript stays readable: studies export it after unregistering a participant)
        if not include_audit:
            entries = [e.model_copy(update={"metadata": {}}) for e in entries]
        return entries, token

    def state_view(self, participant_id: str) -> StateView:
        loaded = self.store.load(participant_id)
        data = StateData(dict(loaded.flow.state_data))
        try:
            profile = data.profile().to_json_dict()
        except ValueError:
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
        )

    def override_state(self, participant_id: str, override: StateOverride) -> StateView:
        """Operator override: sub-state, debug mode and/or the participant's model routes, with the
        reason in the transcript."""
        if override.sub_state is None and override.debug_mode is None and override.llm_routes is None:
            raise ValidationFailed("give sub_state, debug_mode and/or llm_routes", field="sub_state")
        session = self.sessions.open(participant_id, f"override-{self.clock.now().isoformat()}")
        if override.sub_state is not None:
            session.apply("override_sub_state", immediate_transition(override.sub_state))
            target = override.sub_state
            session.apply("release_controller_hold", lambda op: release_controller_hold(op.data, target))
        debug = override.debug_mode
        if override.llm_routes is not None:
            routes = dict(override.llm_routes)
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
            op.record(Direction.SYSTEM, "override", f"operator override ({', '.join(changes)}): {override.reason}")

        session.apply("override", record)
        self.apply_schedules(session.commit(record_event=False))
        return self.state_view(participant_id)

    # ========================================================================== inbound ==
    def receive_inbound(self, message: InboundMessage) -> InboundDecision:
        """Webhook side: who is it, opt-out/in, auto-enroll, enqueue. No LLM here."""
        participant_id = self.repo.find_id_by_phone(message.from_phone)
        keyword = message.body.strip().upper()
        if participant_id is None:
            if not self.deps.settings.auto_enroll_new_users or keyword in OPT_OUT_WORDS:
                logger.info("message from unknown number dropped", extra={"phone": mask_phone(message.from_phone)})
                return InboundDecision("unknown_sender")
            participant_id = self._auto_enroll(message)
            decision = InboundDecision("auto_enrolled", participant_id)
        else:
            decision = InboundDecision("enqueued", participant_id)
        if keyword in OPT_OUT_WORDS or keyword in OPT_IN_WORDS:
            return self._opt(participant_id, message, opt_out=keyword in OPT_OUT_WORDS)
        if self.queue is None:
            raise RuntimeError("no inbound queue configured")
        limit = self.deps.settings.max_inbound_message_chars
        if len(message.body) > limit:
            # Clipped before queueing as well: an SQS message holds at most 256 KiB (of UTF-8 bytes).
            message = message.model_copy(update={"body": clip_inbound_text(message.body, limit)})
        self.queue.enqueue(
            TurnEvent(
                kind=TurnKind.MESSAGE,
                participant_id=participant_id,
                event_id=message.provider_message_id,
                message=message,
                enqueued_at=self.clock.now(),
            )
        )
        return decision

    def _auto_enroll(self, message: InboundMessage) -> str:
        now = self.clock.now()
        participant = ConversationParticipant(
            id=self.deps.ids.participant_id(),
            phone_number=message.from_phone,
            enrolled_at=now,
            created_at=now,
            updated_at=now,
        )
        try:
            self.repo.create(participant, FlowState(participant_id=participant.id, state_data=new_state_data()))
        except ParticipantAlreadyEnrolled:  # a concurrent webhook enrolled them first
            existing = self.repo.find_id_by_phone(message.from_phone)
            if existing is None:
                raise
            return existing
        logger.info("auto-enrolled a new participant", extra={"participant_id": participant.id})
        return participant.id

    def _opt(self, participant_id: str, message: InboundMessage, *, opt_out: bool) -> InboundDecision:
        session = self.sessions.open(participant_id, message.provider_message_id)
        record = session.already_processed()
        if record is not None:
            # The provider redelivers only when we did not answer 200: apply what is left.
            effects = self.resume(session, record)
            self.finish(outcome_of_effects(effects, replayed=True))
            return InboundDecision("opted_out" if opt_out else "opted_in", participant_id)
        participant = session.participant
        status = participant.status
        target = ParticipantStatus.PAUSED if opt_out else ParticipantStatus.ACTIVE
        session.apply(
            "record_inbound",
            lambda op: op.record(
                Direction.INBOUND, "message", message.body.strip(), metadata={"provider": message.provider}
            ),
        )
        # STOP pauses an active participant; START resumes only a participant their own STOP paused
        # (an organiser's pause, completion or withdrawal stands).
        confirm = (opt_out and status is ParticipantStatus.ACTIVE) or (
            not opt_out and status is ParticipantStatus.PAUSED and participant.opted_out
        )
        if confirm:
            change_status(
                self.deps, session, target, reason="participant opted out" if opt_out else "participant opted in"
            )

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
                    )
                ),
            )
        effects = session.commit()  # a concurrent first delivery returns none: it applies them
        self.finish(outcome_of_effects(effects, replayed=False))
        return InboundDecision("opted_out" if opt_out else "opted_in", participant_id)

    # =========================================================================== events ==
    def _run_event(
        self,
        participant_id: str,
        event_id: str,
        work: Callable[[ConversationSession, EventOutcome], None],
        *,
        firing_schedules: tuple[str, ...] = (),
    ) -> EventOutcome:
        """Open, work, commit; the caller applies the effects with ``finish``. ``firing_schedules``:
        the schedule(s) that may have fired this event, removed when their participant no longer
        exists (an orphan fires once, then is gone)."""
        outcome = EventOutcome(participant_id=participant_id, event_id=event_id)
        try:
            session = self.sessions.open(participant_id, event_id)
        except ParticipantNotFound:
            logger.info("event for a participant that no longer exists", extra={"participant_id": participant_id})
            if firing_schedules:
                self._apply_schedule_specs(dict.fromkeys(firing_schedules))
            return outcome
        record = session.already_processed()
        if record is not None:
            effects = self.resume(session, record)
            outcome.replayed, outcome.outbound, outcome.schedules = True, effects.messages, effects.schedules
            return outcome
        work(session, outcome)
        if not session.dirty:
            return outcome
        try:
            effects = session.commit()
            outcome.committed_version = session.committed_version
            if session.duplicate_of is not None:
                # A concurrent delivery of this event committed first; it applies the effects.
                outcome.replayed = True
        except ParticipantNotFound:
            logger.info("participant deleted during the event", extra={"participant_id": participant_id})
            return outcome
        except StateConflictRetriesExhausted:
            raise
        except Exception:
            # A failed save is logged; the reply still goes out (docs/behaviour.md, save failures).
            # Nothing else does: no schedule is created for a state that did not land.
            logger.exception(
                "state commit failed; delivering the reply anyway", extra={"participant_id": participant_id}
            )
            outcome.outbound, outcome.degraded = session.uncommitted_messages(), True
            return outcome
        outcome.outbound, outcome.schedules = effects.messages, effects.schedules
        return outcome

    def resume(self, session: ConversationSession, record: EventRecord) -> Effects:
        """The effects of an already committed event, for its redelivery: its messages read back
        from the transcript, its schedules as the state wants them now."""
        loaded = session.loaded
        messages = self.store.load_outbound(session.participant.id, record) if record.messages else []
        desired = desired_schedules(loaded.participant, session.data, self.prep_minutes, self.clock.now())
        return Effects(
            participant_id=session.participant.id,
            event_id=record.event_id,
            messages=messages,
            schedules={name: desired.get(name) for name in record.schedules},
        )

    # ========================================================================== effects ==
    def finish(self, outcome: EventOutcome) -> int:
        """Apply a processed event's effects, after its commit: send its messages, then bring its
        schedules in line with the committed state. Returns the number of messages sent.

        Any failure raises (the event is redelivered) after recording, for this event, which
        messages already went out. A redelivered event (``replayed``) sends only what such a record
        says is missing: no record means the earlier delivery finished, so nothing is sent twice.
        Schedules are re-applied either way (each change is idempotent). The reply goes first, so
        a scheduler outage never holds it back.
        """
        pending = list(outcome.outbound)
        already: set[str] = set()
        if outcome.replayed and pending:
            recorded = self.ledger.partial(outcome.participant_id, outcome.event_id) if self.ledger else None
            already = recorded or set()
            pending = [] if recorded is None else [m for m in pending if m.message_id not in recorded]
        sent: list[str] = []
        try:
            for message in pending:
                self.messenger.send(message)
                sent.append(message.message_id)
            if outcome.schedules:
                self._apply_schedule_specs(outcome.schedules)
        except BaseException:  # a crash mid-way too: record what already went out
            if self.ledger is not None and (outcome.outbound or outcome.schedules):
                try:
                    self.ledger.record_partial(outcome.participant_id, outcome.event_id, sorted(already | set(sent)))
                except Exception:  # best effort: at worst the redelivery sends nothing
                    logger.exception("could not record the messages already sent")
            raise
        return len(sent)

    def apply_schedules(self, effects: Effects) -> int:
        """Create-or-update or delete each touched schedule. Every one is tried; if any failed,
        ``TimerError`` is raised afterwards (the event is redelivered and tries again)."""
        return self._apply_schedule_specs(effects.schedules)

    def _apply_schedule_specs(self, schedules: dict[str, ScheduleSpec | None]) -> int:
        return apply_schedule_changes(self.timers, schedules)

    def _delete_live_schedules(self, participant_id: str, known: list[str]) -> None:
        names = set(known) | set(self.timers.list_names(participant_prefix(participant_id)))
        self._apply_schedule_specs(dict.fromkeys(sorted(names)))

    def reconcile(self, participant_id: str) -> ReconcileReport:
        """Make the live schedules of one participant equal to what their state wants: delete
        orphans, re-create missing ones (a one-shot whose time has passed is not re-created)."""
        report = ReconcileReport(participant_id=participant_id)
        live = set(self.timers.list_names(participant_prefix(participant_id)))
        report.live = len(live)
        try:
            loaded = self.store.load(participant_id)
        except ParticipantNotFound:
            desired: dict[str, ScheduleSpec] = {}
        else:
            desired = desired_schedules(loaded.participant, StateData(dict(loaded.flow.state_data)), self.prep_minutes)
        report.desired = len(desired)
        now = self.clock.now()
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
        self._apply_schedule_specs(changes)
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
        ids: set[str] = {name.split("-", 1)[0] for name in self.timers.list_names("")}
        token: str | None = None
        while True:
            page, token = self.repo.list(limit=100, next_token=token)
            ids.update(p.id for p in page)
            if token is None:
                break
        return [self.reconcile(pid) for pid in sorted(ids)]

    def process_turn(self, event: TurnEvent) -> EventOutcome:
        """Worker side: one conversation turn (or the greeting). ``LLMError`` propagates (retry)."""

        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            if event.kind is TurnKind.GREETING:
                outcome.turn = self.flow.handle_greeting(session)
            else:
                if event.message is None:
                    raise ValidationFailed("message turn without a message", field="message")
                outcome.turn = self.flow.handle_message(session, event.message)

        return self._run_event(event.participant_id, event.event_id, work)

    def run_scheduled_prompt(self, payload: ScheduledPromptPayload, *, event_id: str) -> EventOutcome:
        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            outcome.delivery = deliver_daily_prompt(
                self.deps, session, payload.model_copy(update={"execution_id": payload.execution_id or event_id})
            )

        names = (
            daily_schedule_name(payload.participant_id, payload.schedule_id),
            random_delivery_name(payload.participant_id, payload.schedule_id),
        )
        outcome = self._run_event(payload.participant_id, event_id, work, firing_schedules=names)
        delivery = outcome.delivery
        if delivery is not None and not delivery.delivered and delivery.random_delivery_at is None:
            # Not wanted by the state (its registry entry is gone, or the participant is not
            # active): an orphan. Remove the schedules it may fire through.
            self._apply_schedule_specs(dict.fromkeys(names))
        return outcome

    def run_timer(self, payload: TimerPayload, *, event_id: str) -> EventOutcome:
        def work(session: ConversationSession, outcome: EventOutcome) -> None:
            outcome.timer = handle_timer(self.deps, session, payload)

        return self._run_event(payload.participant_id, event_id, work, firing_schedules=(payload.timer_id,))


def outcome_of_effects(effects: Effects, *, replayed: bool) -> EventOutcome:
    """An event's effects as the outcome ``PromptPipe.finish`` applies."""
    return EventOutcome(
        participant_id=effects.participant_id,
        event_id=effects.event_id,
        replayed=replayed,
        outbound=effects.messages,
        schedules=effects.schedules,
    )


def _rezone_schedules(op: OpContext, old_zone: str, new_zone: str) -> None:
    """Daily schedules in the participant's old zone (or, when they had none, in the scheduler's
    default zone for the type) follow the participant to the new zone; their names stay, so the
    update replaces them in place after the commit."""
    registry = op.data.schedules()
    moved = False
    for index, schedule in enumerate(registry):
        default = DEFAULT_FIXED_TIMEZONE if schedule.type is ScheduleType.FIXED else DEFAULT_RANDOM_TIMEZONE
        if schedule.timezone == (old_zone or default):
            registry[index] = schedule.model_copy(update={"timezone": new_zone})
            op.touch_schedule(schedule.timer_id)
            moved = True
    if moved:
        op.data.set_schedules(registry)


def event_id_for_schedule(
    name_or_kind: str, execution_id: str | None, scheduled_time: str | None, fallback: datetime
) -> str:
    """Scheduler execution ids are the idempotency keys; local runs fall back to name + time."""
    if execution_id and not execution_id.startswith("<aws."):
        return f"{name_or_kind}:{execution_id}"
    when = scheduled_time if scheduled_time and not scheduled_time.startswith("<aws.") else fallback.isoformat()
    return f"{name_or_kind}:{when}"


def outcome_log_fields(outcome: EventOutcome) -> dict[str, Any]:
    return {
        "participant_id": outcome.participant_id,
        "event_id": outcome.event_id,
        "replayed": outcome.replayed,
        "committed_version": outcome.committed_version,
        "messages": len(outcome.outbound),
        "degraded": outcome.degraded,
    }
