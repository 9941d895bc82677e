"""Daily prompt delivery (docs/behaviour.md, "Daily delivery").

In order: generate (own fallback text on failure); send with the "Done" question; write the prompt
to history and transcript; ``lastPromptSentAt``; ``total_prompts``; the reminder; the intensity poll
at most once per participant-local day; the auto-feedback timer; the feedback timers. The follow-up
timers are armed in the same operation as the delivery, so they exist exactly when the prompt went
out (and are created after the commit).
"""

from __future__ import annotations

import hashlib
import logging
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from promptpipe.config import CoreConfig
from promptpipe.errors import LLMError
from promptpipe.flow import questions
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.effects import one_shot_prompt, one_shot_timer
from promptpipe.flow.hold import skipped_firing
from promptpipe.flow.prompt_generator import PromptGenerationError, generate_habit_prompt
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.sms_fit import daily_prompt_room, fits_room
from promptpipe.flow.timer_names import random_delivery_name, timer_name
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import ScheduledPromptPayload, TimerKind, TimerPayload
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.state import (
    ConversationMessage,
    DailyPromptPending,
    DataKey,
    FeedbackState,
    ScheduleInfo,
)
from promptpipe.rules.quiet_hours import QuietHours
from promptpipe.rules.timezones import zone_or_utc

if TYPE_CHECKING:
    from promptpipe.models.safety import ConversationHold
    from promptpipe.models.study import DecisionPoint, StudyDefinition

logger = logging.getLogger(__name__)

# Fits one SMS segment with the Done question and the intensity poll (tests/unit/test_sms_channel.py).
FALLBACK_PROMPT = "Time for today's habit: take one small, one-minute step toward your goal right now."
AUTO_FEEDBACK_DELAY = timedelta(minutes=5)


@dataclass
class DeliveryResult:
    delivered: bool
    skipped_reason: str | None = None
    prompt: str | None = None
    used_fallback: bool = False
    random_delivery_at: datetime | None = None
    # The generator's model calls (their model and tokens): the study's spend metric (docs/safety.md#budgets).
    llm_calls: list[dict[str, object]] = field(default_factory=list)
    # Skipped because the participant is held for a person: the schedule stays (docs/safety.md).
    held: bool = False
    # The study arm drawn today (docs/studies.md); a no-prompt arm sends nothing, the schedule stays.
    study_arm: str | None = None


def participant_zone(session: ConversationSession, schedule: ScheduleInfo | None) -> ZoneInfo:
    """The intensity poll's "today" is the participant's day (docs/behaviour.md#B-INT-2)."""
    return zone_or_utc(session.participant.timezone, schedule.timezone if schedule else None)


def seeded_rng(*parts: str) -> random.Random:
    """Randomness that a repeated invocation reproduces (same execution id → same choice)."""
    return random.Random(int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16], 16))


def deliver_daily_prompt(
    deps: FlowDeps, session: ConversationSession, payload: ScheduledPromptPayload
) -> DeliveryResult:
    participant = session.participant
    if not participant.is_active:
        return DeliveryResult(False, f"participant {participant.status}")
    schedule = next((s for s in session.data.schedules() if s.id == payload.schedule_id), None)
    if schedule is None:
        return DeliveryResult(False, "schedule no longer registered")
    study = None if participant.test_participant else deps.study  # as ``flow/study.py::in_study``
    point = None
    if study is not None:
        # Here, not at import: a deployment without a study never loads the study engine
        # (tests/unit/test_cold_start.py).
        from promptpipe.flow.study import day_arm, decide, end_study, point_at, study_over
        from promptpipe.models.study import DecisionPointAt

        point = point_at(study, DecisionPointAt.DAILY_PROMPT)
        if study_over(study, participant, session.now):
            end_study(deps, study, session)  # the closing message, once; every schedule stops
            return DeliveryResult(False, f"study {study.id} ended")
    hold = session.data.hold()
    if hold is not None:  # before the model writes a prompt: nothing is generated, nothing sent
        return _skipped_on_hold(session, payload, hold, study, point)
    if payload.kind == "random_window" and payload.window_minutes > 0:
        return _arm_random_delivery(deps, session, payload)
    arm = day_arm(study, point, session)[0] if study is not None and point is not None else None
    if study is not None and point is not None and arm is not None and arm.framing is None:
        # The no-prompt arm: the decision and its check-in, nothing else.
        session.apply("study_decision", lambda op: decide(op, study, point))
        return DeliveryResult(False, f"study arm {arm.name}: no prompt", study_arm=arm.name)
    framing, arm_name = (arm.framing, arm.name) if arm is not None else (None, None)

    now = session.now
    config = deps.config
    zone = participant_zone(session, schedule)
    today = now.astimezone(zone).date().isoformat()
    sms = config.sms_channel
    text, used_fallback, llm_calls = _generate(deps, session, _sms_room(session, today) if sms else None, framing)
    follow = _follow_up_timers(config, participant.id, now, zone)
    follow_ups, reminder_due = follow.specs, follow.reminder_due
    reminder_name, autofb_name, fb_name = follow.reminder, follow.auto_feedback, follow.feedback
    schedule_id = schedule.id
    random_name = random_delivery_name(participant.id, schedule_id)

    def deliver(op: OpContext) -> None:
        # Re-checked on replay: a pause, a STOP or a deleted schedule committed meanwhile wins.
        if not op.participant.is_active or all(s.id != schedule_id for s in op.data.schedules()):
            return
        fired = op.data.pending_timers().get(random_name)
        if fired is not None and fired.at is not None and fired.at <= now:
            op.forget_fired(random_name)  # this is that random-window delivery
        for spec in follow_ups:
            op.arm(spec)
        to = op.participant.phone_number
        # On SMS the day's intensity poll rides in the prompt's message, one combined question line
        # (docs/behaviour.md#B-SMS-1), decided here from the committed state: only when the poll is
        # still due today and the three still fit one segment; else it goes on its own, as before.
        poll = questions.intensity_question(op.data.profile().intensity.value)
        poll_due = op.data.get(DataKey.LAST_INTENSITY_PROMPT_DATE) != today
        poll_in_prompt = sms and poll_due and fits_room(text, daily_prompt_room(questions.DONE_QUESTION, poll))
        op.emit(
            OutboundMessage(
                participant_id=op.participant.id,
                to=to,
                body=text,
                kind=OutboundKind.DAILY_PROMPT,
                question=questions.DONE_QUESTION,
                follow_up=poll if poll_in_prompt else None,
            ),
            metadata={
                "module": "daily_prompt",
                "schedule_id": schedule_id,
                "used_fallback": used_fallback,
                "llm_calls": llm_calls,
                "state_version": op.version,
                **({"reminder_quiet_hours": follow.reminder_quiet_hours} if follow.reminder_quiet_hours else {}),
            },
        )
        if study is not None and point is not None:  # the decision, with the message it decided
            decide(op, study, point, message_id=op.outbound[-1].message_id if op.outbound else None)
        op.data.append_history(ConversationMessage(role="assistant", content=text, timestamp=now))
        op.data.set_time(DataKey.LAST_PROMPT_SENT_AT, now)
        profile = op.data.profile()
        profile.total_prompts += 1
        profile.updated_at = now
        op.data.set_profile(profile)
        if reminder_name:
            op.data.set_daily_prompt_pending(DailyPromptPending(sent_at=now, to=to, reminder_due_at=reminder_due))
            op.data.set(DataKey.DAILY_PROMPT_REMINDER_TIMER_ID, reminder_name)
        _poll_intensity_once_a_day(op, profile.intensity.value, today, inline=poll_in_prompt)
        if autofb_name:
            op.data.set(DataKey.AUTO_FEEDBACK_TIMER_ID, autofb_name)
        _arm_feedback_state(op, fb_name)

    session.apply("deliver_daily_prompt", deliver)
    return DeliveryResult(True, prompt=text, used_fallback=used_fallback, llm_calls=llm_calls, study_arm=arm_name)


@dataclass
class _FollowUps:
    specs: list[ScheduleSpec]
    reminder: str = ""
    reminder_due: datetime | None = None
    # What quiet hours did to the reminder (docs/quiet-hours.md): "moved", "dropped" or "" (nothing);
    # recorded in the prompt's audit so the console and the export can show the delay.
    reminder_quiet_hours: str = ""
    auto_feedback: str = ""
    feedback: str = ""


def _follow_up_timers(config: CoreConfig, participant_id: str, now: datetime, zone: ZoneInfo) -> _FollowUps:
    """The one-shots that follow a prompt sent at ``now``, each guarded by that prompt's identity.

    Nudges (the reminder, the feedback timeout) keep out of the participant's quiet hours: moved to
    the end of the window, or dropped when stale by then — after the next daily prompt
    (docs/quiet-hours.md). Auto-feedback only moves the conversation on: not a message, not moved.
    """
    follow = _FollowUps(specs=[])
    quiet = QuietHours.from_settings(config)

    def timer(kind: TimerKind, at: datetime) -> str:
        name = timer_name(kind, participant_id)
        payload = TimerPayload(participant_id=participant_id, kind=kind, timer_id=name, expected_sent_at=now, due_at=at)
        follow.specs.append(one_shot_timer(name, at, payload))
        return name

    def outside_quiet_hours(due: datetime) -> datetime | None:
        return quiet.adjust(due, zone.key, stale_after=now + timedelta(days=1))

    if config.daily_prompt_reminder_delay > timedelta(0):
        follow.reminder_due = outside_quiet_hours(now + config.daily_prompt_reminder_delay)
        if follow.reminder_due is None:
            follow.reminder_quiet_hours = "dropped"
        elif follow.reminder_due != now + config.daily_prompt_reminder_delay:
            follow.reminder_quiet_hours = "moved"
        if follow.reminder_due is not None:
            follow.reminder = timer(TimerKind.DAILY_PROMPT_REMINDER, follow.reminder_due)
    if config.auto_feedback_after_prompt_enabled:
        follow.auto_feedback = timer(TimerKind.AUTO_FEEDBACK, now + AUTO_FEEDBACK_DELAY)
    feedback_due = outside_quiet_hours(now + config.feedback_initial_timeout)
    if config.feedback_timers_enabled and feedback_due is not None:
        follow.feedback = timer(TimerKind.FEEDBACK_TIMEOUT, feedback_due)
    return follow


def _poll_intensity_once_a_day(op: OpContext, intensity: str, today: str, *, inline: bool) -> None:
    """At most one intensity poll per participant-local day (docs/behaviour.md#SC-8); ``inline``:
    it already went out inside the prompt's message."""
    if op.data.get(DataKey.LAST_INTENSITY_PROMPT_DATE) == today:
        return
    if not inline:
        op.emit(op.message("", OutboundKind.INTENSITY_POLL, question=questions.intensity_question(intensity)))
    op.data.set(DataKey.LAST_INTENSITY_PROMPT_DATE, today)
    sent_at = op.data.get(DataKey.LAST_PROMPT_SENT_AT)
    op.data.mark_question("intensity_asked", sent_at)
    if inline:  # asked in the combined line: its numbers answer it too (questions.parse_answers)
        op.data.mark_question(questions.COMBINED_MARK, sent_at)


def _arm_feedback_state(op: OpContext, feedback_timer: str) -> None:
    if feedback_timer:
        op.data.set(DataKey.FEEDBACK_TIMER_ID, feedback_timer)
        op.data.set(DataKey.FEEDBACK_STATE, FeedbackState.WAITING_INITIAL.value)
        op.data.clear(DataKey.FEEDBACK_FOLLOWUP_TIMER_ID)
    elif op.data.get(DataKey.FEEDBACK_STATE) != FeedbackState.COMPLETED:
        # A feedback chain of an earlier prompt must not silence this prompt's reminder.
        op.data.clear(DataKey.FEEDBACK_STATE)


def _sms_room(session: ConversationSession, today: str) -> int:
    """The characters the SMS prompt may take: one GSM-7 segment less its question line, with the
    day's intensity poll in it when the poll is due (docs/behaviour.md#B-SMS-2)."""
    poll_due = session.data.get(DataKey.LAST_INTENSITY_PROMPT_DATE) != today
    poll = questions.intensity_question(session.data.profile().intensity.value) if poll_due else None
    return daily_prompt_room(questions.DONE_QUESTION, poll)


def _generate(
    deps: FlowDeps, session: ConversationSession, sms_room: int | None, framing: str | None = None
) -> tuple[str, bool, list[dict[str, object]]]:
    """The day's prompt, or our own fallback text when generation fails (docs/behaviour.md#B-DELIV-1).
    ``framing``: the study arm's (docs/studies.md): the model only words it."""
    llm_calls: list[dict[str, object]] = []
    try:
        generated = generate_habit_prompt(deps, session, "scheduled", max_chars=sms_room, framing=framing)
        text, used_fallback = generated.text, False
        for purpose, response in (("prompt_generator", generated.response), ("sms_rewrite", generated.rewrite)):
            if response is not None:
                llm_calls.append(
                    {
                        "purpose": purpose,
                        "model": response.model,
                        "prompt_tokens": response.usage.prompt_tokens,
                        "completion_tokens": response.usage.completion_tokens,
                        "latency_ms": response.latency_ms,
                    }
                )
    except (PromptGenerationError, LLMError) as exc:
        logger.warning("prompt generation failed; sending the fallback prompt", extra={"error": str(exc)})
        text, used_fallback = FALLBACK_PROMPT, True
    return text, used_fallback, llm_calls


def _skipped_on_hold(
    session: ConversationSession,
    payload: ScheduledPromptPayload,
    hold: ConversationHold,
    study: StudyDefinition | None,
    point: DecisionPoint | None,
) -> DeliveryResult:
    session.apply("skipped_on_hold", skipped_firing("daily prompt", hold, schedule_id=payload.schedule_id))
    if study is not None and point is not None:  # the day's row: not available, on hold
        from promptpipe.flow.study import decide  # loaded with the study

        session.apply("study_decision", lambda op: decide(op, study, point))
    return DeliveryResult(False, f"on hold ({hold.reason.value})", held=True)


def _arm_random_delivery(
    deps: FlowDeps, session: ConversationSession, payload: ScheduledPromptPayload
) -> DeliveryResult:
    """Random schedules: the daily trigger picks an instant inside the window and arms a one-shot.

    The choice is seeded by the execution id, so a repeated trigger picks the same instant and the
    deterministic one-shot name replaces rather than duplicates.
    """
    rng = seeded_rng(payload.participant_id, payload.schedule_id, payload.execution_id or session.event_id)
    at = session.now + timedelta(minutes=rng.randint(0, payload.window_minutes))
    spec = one_shot_prompt(
        random_delivery_name(payload.participant_id, payload.schedule_id),
        at,
        payload.model_copy(
            update={"kind": "daily_prompt", "window_minutes": 0, "scheduled_time": None, "execution_id": None}
        ),
    )
    schedule_id = payload.schedule_id

    def arm(op: OpContext) -> None:
        if op.participant.is_active and any(s.id == schedule_id for s in op.data.schedules()):
            op.arm(spec)

    session.apply("arm_random_delivery", arm)
    return DeliveryResult(False, "random delivery armed", random_delivery_at=at)
