"""A study's decision points inside the engine (docs/studies.md#declaring-a-study).

Each function here returns or runs an operation on the session, so a decision, its end-of-day
check-in and the study's end are committed with the event that made them, and a conflict's replay
re-decides from the fresh state (the draw is seeded: the same arm). What each participant's state
keeps (``DataKey.STUDY``, ``StudyProgress``): the last decision of each decision point (its study day
and arm), the open check-in, and whether the study's end was handled.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from pydantic import Field

from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import one_shot_timer
from promptpipe.flow.lifecycle import change_status
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.timer_names import timer_name
from promptpipe.lazy_model import LazyModel
from promptpipe.models.decision import (
    DecisionDelivery,
    DecisionRecord,
    ProximalOutcomeValue,
    UnavailableReason,
    decision_id,
)
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.state import DataKey, StateData
from promptpipe.models.study import Arm, DecisionPoint, DecisionPointAt, StudyDefinition
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.randomise import draw
from promptpipe.rules.timezones import zone_or_utc

# A check-in whose time has passed when the day's decision is made goes this long after it.
LATE_CHECK_IN_DELAY = timedelta(hours=1)
# Participant fields a stratum may name (besides the habit profile's).
_STRATA_FIELDS = ("gender", "ethnicity", "language", "timezone")


class DayDecision(LazyModel):
    day: int
    arm: str | None = None


class CheckIn(LazyModel):
    decision_id: str
    decided_at: datetime
    due_at: datetime
    sent_at: datetime | None = None


class StudyProgress(LazyModel):
    decided: dict[str, DayDecision] = Field(default_factory=dict)
    check_in: CheckIn | None = None
    closed: bool = False


def progress(data: StateData) -> StudyProgress:
    # unreadable: start afresh rather than stop the participant's prompts (reported, as any corrupt value)
    return data.read_record(DataKey.STUDY, StudyProgress.model_validate_json, StudyProgress())


def _save(data: StateData, value: StudyProgress) -> None:
    data.set(DataKey.STUDY, value.model_dump_json(exclude_none=True))


def zone_of(participant: ConversationParticipant) -> ZoneInfo:
    return zone_or_utc(participant.timezone)


def study_day(participant: ConversationParticipant, now: datetime) -> int:
    """1 on the participant's local day of enrolment."""
    zone = zone_of(participant)
    return (now.astimezone(zone).date() - participant.enrolled_at.astimezone(zone).date()).days + 1


def in_study(study: StudyDefinition | None, participant: ConversationParticipant) -> StudyDefinition | None:
    """The study, for a participant it applies to (test participants are kept out of it)."""
    return None if study is None or participant.test_participant else study


def point_at(study: StudyDefinition, at: DecisionPointAt) -> DecisionPoint | None:
    return next((p for p in study.decision_points if p.at is at), None)


def unavailable_reason(participant: ConversationParticipant, data: StateData) -> UnavailableReason | None:
    """The availability rule: not available when opted out, paused (or otherwise not active), or on hold."""
    if participant.opted_out:
        return UnavailableReason.OPTED_OUT
    if participant.status is ParticipantStatus.COMPLETED and progress(data).closed:
        return UnavailableReason.STUDY_ENDED
    if not participant.is_active:
        return UnavailableReason.PAUSED
    if data.hold() is not None:
        return UnavailableReason.ON_HOLD
    return None


def _profile(participant: ConversationParticipant, data: StateData) -> dict[str, object]:
    values: dict[str, object] = {name: getattr(participant, name) for name in _STRATA_FIELDS}
    if data.has_profile():
        values |= data.profile().model_dump(mode="json")
    return values


def day_arm(study: StudyDefinition, point: DecisionPoint, session: ConversationSession) -> tuple[Arm, bool]:
    """The arm of today's decision at ``point``: the one already decided today, or the one the draw
    gives (the same draw the decision will record). ``True`` when today is already decided."""
    day = study_day(session.participant, session.now)
    decided = progress(session.data).decided.get(point.name)
    if decided is not None and decided.day == day:
        arm = next((a for a in point.arms if a.name == decided.arm), None)
        if arm is not None:
            return arm, True
    arm, _ = draw(study.id, session.participant.id, point, day, _profile(session.participant, session.data))
    return arm, False


def decide(
    op: OpContext,
    study: StudyDefinition,
    point: DecisionPoint,
    *,
    day: int | None = None,
    message_id: str | None = None,
    reason: UnavailableReason | None = None,
) -> DecisionRecord | None:
    """Record the decision of ``day`` (default: today) at ``point``, once: available or not (the
    availability rule, or ``reason`` given), the arm drawn when available. Arms the day's check-in
    for an available participant, whatever the arm. ``None``: that day is already decided."""
    state = progress(op.data)
    day = day if day is not None else study_day(op.participant, op.now)
    last = state.decided.get(point.name)
    if last is not None and last.day == day:  # a second firing the same day; the sweep fills only missing days
        return None
    reason = reason or unavailable_reason(op.participant, op.data)
    zone = zone_of(op.participant)
    arm: Arm | None = None
    chances = {a.name: a.probability for a in point.arms}
    if reason is None:
        arm, chances = draw(study.id, op.participant.id, point, day, _profile(op.participant, op.data))
    sends = arm is not None and arm.framing is not None and message_id is not None
    record = DecisionRecord(
        decision_id=decision_id(op.participant.id, point.name, day),
        study_id=study.id,
        participant_id=op.participant.id,
        decision_point=point.name,
        study_day=day,
        decided_at=op.now,
        decided_at_local=op.now.astimezone(zone),
        available=reason is None,
        unavailable_reason=reason,
        probabilities=chances,
        arm=arm.name if arm else None,
        intended_send_at=op.now if sends else None,
        delivery=DecisionDelivery.PENDING if sends else DecisionDelivery.NOT_SENT,
        message_id=message_id if sends else None,
    )
    op.decide(record)
    if last is None or day > last.day:
        state.decided[point.name] = DayDecision(day=day, arm=record.arm)
    today = day == study_day(op.participant, op.now)
    if record.available and today and point.at is DecisionPointAt.DAILY_PROMPT:
        state.check_in = _arm_check_in(op, study, record, zone)
    _save(op.data, state)
    return record


def send_reminder(
    op: OpContext, study: StudyDefinition | None, prompt_sent_at: datetime, default: str, metadata: dict[str, object]
) -> bool:
    """Inside a reminder's firing (the participant active, not held): send it, shaped by the study
    when it declares a decision point at the reminder. The decision belongs to the study day of the
    prompt it follows (a reminder after local midnight included), is drawn as the daily prompt's
    and recorded in this commit. A framing arm's ``framing`` is the reminder as sent (no model words
    a reminder); the no-prompt arm withholds it. A day already on record (a second reminder, or the
    sweep wrote it first as not available) follows that record and records nothing: never a reminder
    without its decision. Without such a point, ``default``. Returns whether a reminder went out."""
    study = in_study(study, op.participant)
    point = point_at(study, DecisionPointAt.REMINDER) if study is not None else None
    if study is None or point is None:
        op.emit(op.message(default, OutboundKind.REMINDER), metadata=metadata)
        return True
    day = study_day(op.participant, prompt_sent_at)
    decided = progress(op.data).decided.get(point.name)
    if decided is not None and decided.day >= day:
        arm = next((a for a in point.arms if a.name == decided.arm), None) if decided.day == day else None
        if arm is None or arm.framing is None:
            return False
        op.emit(op.message(arm.framing, OutboundKind.REMINDER), metadata=metadata)
        return True
    arm, _ = draw(study.id, op.participant.id, point, day, _profile(op.participant, op.data))
    if arm.framing is None:
        decide(op, study, point, day=day)
        return False
    op.emit(op.message(arm.framing, OutboundKind.REMINDER), metadata=metadata)
    decide(op, study, point, day=day, message_id=op.outbound[-1].message_id if op.outbound else None)
    return True


def reminder_held(op: OpContext, study: StudyDefinition | None, prompt_sent_at: datetime) -> None:
    """A due reminder that fires while the participant is held: the row of its day at the
    reminder's decision point, not available (``on_hold``), as the daily prompt records it."""
    study = in_study(study, op.participant)
    point = point_at(study, DecisionPointAt.REMINDER) if study is not None else None
    if study is None or point is None:
        return
    day = study_day(op.participant, prompt_sent_at)
    decided = progress(op.data).decided.get(point.name)
    if decided is None or decided.day < day:
        decide(op, study, point, day=day)


def _arm_check_in(op: OpContext, study: StudyDefinition, record: DecisionRecord, zone: ZoneInfo) -> CheckIn:
    hour, minute = (int(part) for part in study.proximal_outcome.check_in_at.split(":"))
    local = record.decided_at_local
    at = datetime.combine(local.date(), time(hour, minute), tzinfo=zone)
    if at <= op.now:
        at = op.now + LATE_CHECK_IN_DELAY
    name = timer_name(TimerKind.STUDY_CHECK_IN, op.participant.id)
    payload = TimerPayload(
        participant_id=op.participant.id,
        kind=TimerKind.STUDY_CHECK_IN,
        timer_id=name,
        expected_sent_at=record.decided_at,
        due_at=at,
    )
    op.arm(one_shot_timer(name, at, payload))
    return CheckIn(decision_id=record.decision_id, decided_at=record.decided_at, due_at=at)


def send_check_in(study: StudyDefinition, payload: TimerPayload) -> Callable[[OpContext], bool]:
    """The operation of a check-in firing: sent when it is still the one the state holds (and the
    participant active; a hold is checked by the timer's guard)."""

    def apply(op: OpContext) -> bool:
        state = progress(op.data)
        check_in = state.check_in
        if check_in is None or check_in.due_at != payload.due_at or check_in.sent_at is not None:
            return False
        if not op.participant.is_active:
            return False
        op.emit(
            op.message(study.proximal_outcome.check_in_text, OutboundKind.NOTICE),
            metadata={"study_check_in": check_in.decision_id},
        )
        state.check_in = check_in.model_copy(update={"sent_at": op.now})
        _save(op.data, state)
        return True

    return apply


def read_check_in_answer(
    study: StudyDefinition, session: ConversationSession, text: str
) -> tuple[str, ProximalOutcomeValue] | None:
    """A participant's message that answers the open check-in within the window: ``done`` when it
    says they did it, ``replied`` otherwise. Closes the check-in (an operation); the caller fills the
    record in after the commit. ``None``: no check-in open, or its window closed."""
    check_in = progress(session.data).check_in
    if check_in is None or check_in.sent_at is None:
        return None
    if session.now > check_in.decided_at + timedelta(hours=study.proximal_outcome.window_hours):
        return None
    value = ProximalOutcomeValue.DONE if read_outcome(text, asked=True) == "done" else ProximalOutcomeValue.REPLIED
    answered = check_in.decision_id

    def close(op: OpContext) -> None:
        state = progress(op.data)
        if state.check_in is not None and state.check_in.decision_id == answered:
            state.check_in = None
            _save(op.data, state)

    session.apply("study_check_in_answered", close)
    return answered, value


def study_over(study: StudyDefinition, participant: ConversationParticipant, now: datetime) -> bool:
    return study_day(participant, now) > study.duration_days


def end_study(deps: FlowDeps, study: StudyDefinition, session: ConversationSession) -> bool:
    """The study's end for this participant, once: an active participant gets the closing message
    and is completed (every schedule stops, after the commit); one paused or opted out gets nothing.
    Returns whether it ran."""
    if progress(session.data).closed:
        return False
    active = session.participant.is_active

    def close(op: OpContext) -> None:
        state = progress(op.data)
        if state.closed:
            return
        if op.participant.is_active:
            op.emit(op.message(study.closing_message, OutboundKind.NOTICE), metadata={"study_end": study.id})
        state.closed = True
        state.check_in = None
        op.disarm(timer_name(TimerKind.STUDY_CHECK_IN, op.participant.id))
        _save(op.data, state)

    session.apply("study_end", close)
    if active:
        change_status(deps, session, ParticipantStatus.COMPLETED, reason=f"study {study.id} ended")
    return True
