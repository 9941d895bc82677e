"""What happens when a one-shot timer fires (docs/behaviour.md, "Timers").

Every kind checks that the stored timer id and its guard values still match, inside the operation,
so a stale, duplicated or concurrently-overtaken firing changes nothing. A firing that matches the
one-shot the state still lists in ``pendingTimers`` removes it from there (the scheduler deletes a
completed one-shot itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import one_shot_timer
from promptpipe.flow.schedule_pause import resume_schedules
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.state_ops import write_sub_state
from promptpipe.flow.timer_names import timer_name
from promptpipe.models.events import TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.state import DataKey, FeedbackState, StateData, SubState
from promptpipe.models.store import Direction
from promptpipe.rules.quiet_hours import QuietHours
from promptpipe.rules.timezones import participant_zone_name

# docs/behaviour.md#B-REM-3 quotes this text.
REMINDER_TEXT = (
    "Friendly check-in: we haven't heard back after today's habit prompt. Reply with a quick update when you're ready!"
)
FEEDBACK_NUDGE_TEXT = "Hi! How did today's habit suggestion go? A quick word is plenty."
FEEDBACK_FOLLOWUP_TEXT = "Just checking in once more about today's habit — no pressure, any update helps."


@dataclass
class TimerOutcome:
    kind: TimerKind
    applied: bool = False
    detail: str = ""
    target: str | None = None  # delayed transitions: the sub-state moved to


def _nudged_for_current_prompt(op: OpContext) -> bool:
    """docs/behaviour.md#B-FBT-2: a feedback nudge already went out for this prompt (so no reminder too)."""
    return op.data.get(DataKey.FEEDBACK_STATE) in (FeedbackState.WAITING_FOLLOWUP, FeedbackState.FOLLOWUP_SENT)


def _reminder_due(op: OpContext, payload: TimerPayload) -> bool:
    """The reminder is still the one the state waits for: its prompt pending, unanswered."""
    pending = op.data.daily_prompt_pending()
    return not (
        pending is None
        or payload.expected_sent_at is None
        or pending.sent_at != payload.expected_sent_at
        or op.data.get(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID) != payload.timer_id
    )


def _reminder(deps: FlowDeps, payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        if not _reminder_due(op, payload):
            outcome.detail = "stale: no matching pending prompt"
            return
        op.data.set_daily_prompt_pending(None)
        op.data.clear(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID)
        if _nudged_for_current_prompt(op):
            outcome.detail = "feedback nudge already sent for this prompt"
            return
        # A study's decision point at the reminder (docs/studies.md) may shape or withhold it.
        sent_at = payload.expected_sent_at
        assert sent_at is not None  # _reminder_due: the pending prompt's
        metadata: dict[str, object] = {"timer": payload.timer_id}
        if deps.study is None:  # no study: the reminder as written, and the study engine never loaded
            op.emit(op.message(REMINDER_TEXT, OutboundKind.REMINDER), metadata=metadata)
        else:
            from promptpipe.flow.study import send_reminder

            if not send_reminder(op, deps.study, sent_at, REMINDER_TEXT, metadata):
                outcome.detail = "study arm: no reminder"
                return
        op.data.set_time(DataKey.DAILY_PROMPT_REMINDER_SENT_AT, op.now)
        outcome.applied = True

    return apply


def _auto_feedback(deps: FlowDeps, payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        if op.data.get(DataKey.AUTO_FEEDBACK_TIMER_ID) != payload.timer_id:
            outcome.detail = "stale: timer no longer armed"
            return
        if op.data.sub_state is SubState.FEEDBACK and op.data.sub_state_raw:
            op.data.clear(DataKey.AUTO_FEEDBACK_TIMER_ID)
            outcome.detail = "already in FEEDBACK"
            return
        # Guarded by the identity of the prompt it was armed for, not by elapsed time: the scheduler
        # fires anywhere within the minute, so an elapsed-time guard could drop a real firing.
        armed_for = payload.expected_sent_at or payload.due_at
        last = op.data.get_time(DataKey.LAST_PROMPT_SENT_AT)
        if armed_for is not None and last is not None and armed_for != last:
            # A newer prompt re-armed this timer under the same name: keep its id, or its own
            # firing would look stale and never move the participant.
            outcome.detail = "a newer prompt was sent; its own timer decides"
            return
        op.data.clear(DataKey.AUTO_FEEDBACK_TIMER_ID)
        write_sub_state(op, SubState.FEEDBACK)
        outcome.applied = True

    return apply


def _transition(deps: FlowDeps, payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        pending = op.data.pending_transition()
        if (
            op.data.get(DataKey.STATE_TRANSITION_TIMER_ID) != payload.timer_id
            or pending is None
            or pending.target_state.value != payload.target_state
            or (payload.due_at is not None and pending.due_at != payload.due_at)
        ):
            outcome.detail = "stale: transition no longer pending"
            return
        # This firing is the one-shot itself, which the scheduler deletes once it has run
        # (ActionAfterCompletion=DELETE): forget it without a DeleteSchedule. Only another
        # one-shot the state still lists under that name is deleted.
        op.data.set_pending_transition(None)
        op.data.clear(DataKey.STATE_TRANSITION_TIMER_ID)
        if payload.timer_id in op.data.pending_timers():
            op.disarm(payload.timer_id)
        if op.data.sub_state_raw == pending.target_state.value:
            outcome.detail = f"already in {pending.target_state.value}"
            return
        write_sub_state(op, pending.target_state)
        outcome.applied, outcome.target = True, pending.target_state.value

    return apply


def _for_current_prompt(data: StateData, payload: TimerPayload) -> bool:
    """Feedback timers share one name per participant: a late firing armed for an earlier prompt
    must not act on the current one."""
    return payload.expected_sent_at is None or payload.expected_sent_at == data.get_time(DataKey.LAST_PROMPT_SENT_AT)


@dataclass(frozen=True)
class _FeedbackStep:
    """One timer of the feedback chain: where its id is stored, the state it waits in, and what a
    stale firing reports."""

    timer_key: DataKey
    waiting: FeedbackState
    stale: str


_INITIAL_STEP = _FeedbackStep(
    DataKey.FEEDBACK_TIMER_ID, FeedbackState.WAITING_INITIAL, "stale: feedback already given or timer replaced"
)
_FOLLOWUP_STEP = _FeedbackStep(
    DataKey.FEEDBACK_FOLLOWUP_TIMER_ID,
    FeedbackState.WAITING_FOLLOWUP,
    "stale: feedback already given or follow-up replaced",
)


def _claim_feedback_timer(op: OpContext, payload: TimerPayload, outcome: TimerOutcome, step: _FeedbackStep) -> bool:
    """Whether this firing is still the live timer of ``step`` (its id stored, the chain waiting
    for it, armed for the current prompt) and still has work: it is then taken off the state; a
    stale firing or a prompt already replied to sets ``outcome.detail`` and returns False."""
    if (
        op.data.get(step.timer_key) != payload.timer_id
        or op.data.get(DataKey.FEEDBACK_STATE) != step.waiting
        or not _for_current_prompt(op.data, payload)
    ):
        outcome.detail = step.stale
        return False
    op.data.clear(step.timer_key)
    return not _complete_if_replied(op, outcome)


def _complete_if_replied(op: OpContext, outcome: TimerOutcome) -> bool:
    """A reply after the prompt (in any module) makes feedback nudges pointless: close the chain."""
    data = op.data
    responded, last = data.get_time(DataKey.DAILY_PROMPT_RESPONDED_AT), data.get_time(DataKey.LAST_PROMPT_SENT_AT)
    if responded is None or last is None or responded < last:
        return False
    data.set(DataKey.FEEDBACK_STATE, FeedbackState.COMPLETED.value)
    outcome.detail = "the participant already replied to this prompt"
    return True


def _feedback_timeout(deps: FlowDeps, payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    followup_name = timer_name(TimerKind.FEEDBACK_FOLLOWUP, payload.participant_id)
    delay = deps.config.feedback_followup_delay
    quiet = QuietHours.from_settings(deps.config)

    def apply(op: OpContext) -> None:
        if not _claim_feedback_timer(op, payload, outcome, _INITIAL_STEP):
            return
        reminder_sent = op.data.get_time(DataKey.DAILY_PROMPT_REMINDER_SENT_AT)
        last = op.data.get_time(DataKey.LAST_PROMPT_SENT_AT)
        if reminder_sent and last and reminder_sent >= last:
            op.data.set(DataKey.FEEDBACK_STATE, FeedbackState.FOLLOWUP_SENT.value)
            outcome.detail = "reminder already sent for this prompt"
            return
        op.emit(op.message(FEEDBACK_NUDGE_TEXT, OutboundKind.FEEDBACK_NUDGE))
        # The follow-up nudge keeps out of quiet hours too (docs/quiet-hours.md): moved to the end of
        # the window, or not armed when it would be stale (a day after the prompt) by then.
        prompt_at = payload.expected_sent_at or op.now
        followup_at = quiet.adjust(
            op.now + delay, participant_zone_name(op.participant.timezone), stale_after=prompt_at + timedelta(days=1)
        )
        op.data.set(DataKey.FEEDBACK_STATE, FeedbackState.WAITING_FOLLOWUP.value)
        if followup_at is not None:
            op.data.set(DataKey.FEEDBACK_FOLLOWUP_TIMER_ID, followup_name)
            op.arm(
                one_shot_timer(
                    followup_name,
                    followup_at,
                    TimerPayload(
                        participant_id=payload.participant_id,
                        kind=TimerKind.FEEDBACK_FOLLOWUP,
                        timer_id=followup_name,
                        expected_sent_at=payload.expected_sent_at,
                    ),
                )
            )
        outcome.applied = True

    return apply


def _feedback_followup(payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        if not _claim_feedback_timer(op, payload, outcome, _FOLLOWUP_STEP):
            return
        op.emit(op.message(FEEDBACK_FOLLOWUP_TEXT, OutboundKind.FEEDBACK_NUDGE))
        op.data.set(DataKey.FEEDBACK_STATE, FeedbackState.FOLLOWUP_SENT.value)
        outcome.applied = True

    return apply


def _schedule_resume(payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    def apply(op: OpContext) -> None:
        pause = op.data.schedule_pause()
        # Guarded by the end it was armed for: a pause extended or resumed meanwhile decides itself.
        if pause is None or payload.due_at is None or pause.until != payload.due_at:
            outcome.detail = "stale: no pause ending then"
            return
        resumed = resume_schedules(op)
        outcome.applied = True
        outcome.detail = f"{len(resumed)} daily schedule(s) resumed"

    return apply


def _same_firing(armed: TimerPayload, fired: TimerPayload) -> bool:
    """The firing is of the one-shot the state lists (not of an earlier one of the same name)."""
    context = {"scheduled_time", "execution_id"}
    return armed.model_dump(exclude=context) == fired.model_dump(exclude=context)


# The timers that send a message; the others only move the state (to FEEDBACK, a delayed
# transition), call no model and send nothing, so they apply while the participant is held.
_SENDS = frozenset(
    {TimerKind.DAILY_PROMPT_REMINDER, TimerKind.FEEDBACK_TIMEOUT, TimerKind.FEEDBACK_FOLLOWUP, TimerKind.STUDY_CHECK_IN}
)


def _study_check_in(deps: FlowDeps, payload: TimerPayload, outcome: TimerOutcome) -> Callable[[OpContext], None]:
    """A study's end-of-day check-in (docs/studies.md): sent to every available participant whatever
    the arm, while it is the check-in the state holds."""

    def apply(op: OpContext) -> None:
        if deps.study is None:
            outcome.detail = "no study"
            return
        from promptpipe.flow.study import send_check_in  # loaded with the study (tests/unit/test_cold_start.py)

        outcome.applied = send_check_in(deps.study, payload)(op)

    return apply


def handle_timer(deps: FlowDeps, session: ConversationSession, payload: TimerPayload) -> TimerOutcome:
    outcome = TimerOutcome(kind=payload.kind)
    if not session.participant.is_active:
        outcome.detail = f"participant {session.participant.status}"
        return outcome
    kind = payload.kind
    if kind is TimerKind.DAILY_PROMPT_REMINDER:
        op = _reminder(deps, payload, outcome)
    elif kind is TimerKind.AUTO_FEEDBACK:
        op = _auto_feedback(deps, payload, outcome)
    elif kind is TimerKind.STATE_TRANSITION:
        op = _transition(deps, payload, outcome)
    elif kind is TimerKind.FEEDBACK_TIMEOUT:
        op = _feedback_timeout(deps, payload, outcome)
    elif kind is TimerKind.SCHEDULE_RESUME:
        op = _schedule_resume(payload, outcome)
    elif kind is TimerKind.STUDY_CHECK_IN:
        op = _study_check_in(deps, payload, outcome)
    else:
        op = _feedback_followup(payload, outcome)

    def guarded(ctx: OpContext) -> None:
        outcome.applied, outcome.detail = False, ""  # a replay decides afresh
        spec = ctx.data.pending_timers().get(payload.timer_id)
        if spec is not None and spec.timer is not None and _same_firing(spec.timer, payload):
            ctx.forget_fired(payload.timer_id)
        hold = ctx.data.hold()
        if hold is not None and kind in _SENDS:  # docs/safety.md: skipped and recorded while held
            outcome.detail = f"on hold ({hold.reason.value})"
            ctx.record(
                Direction.SYSTEM,
                "skipped",
                f"{kind.value} skipped: on hold ({hold.reason.value})",
                metadata={"timer_id": payload.timer_id, "kind": kind.value, "hold": hold.reason.value},
            )
            reminder = kind is TimerKind.DAILY_PROMPT_REMINDER and _reminder_due(ctx, payload)
            if reminder and deps.study is not None and payload.expected_sent_at:
                from promptpipe.flow.study import reminder_held  # loaded with the study

                reminder_held(ctx, deps.study, payload.expected_sent_at)  # a study's reminder row: on hold
            return
        op(ctx)
        if outcome.applied:  # the audit record of an effective firing
            ctx.record(
                Direction.SYSTEM,
                "timer",
                f"{kind.value} fired",
                metadata={"timer_id": payload.timer_id, "kind": kind.value, "state_version": ctx.version},
            )

    session.apply(f"timer_{kind.value}", guarded)
    return outcome
