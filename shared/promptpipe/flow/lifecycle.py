"""Participant lifecycle: status changes stop or restore every timer.

Leaving ``active`` clears the timer keys and the pending one-shots, and touches every daily schedule
of the registry: once committed, the effects delete them all (an inactive participant wants none).
Returning to ``active`` touches the registry again, so its schedules are re-created. The registry
itself is kept across a pause.
"""

from __future__ import annotations

from datetime import timedelta

from promptpipe.config import DEFAULT_STUDY_NAME, CoreConfig
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.schedule_pause import resume_schedules
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.state_ops import cancel_pending_transition, clear_timer_key
from promptpipe.flow.study_settings import config_for
from promptpipe.flow.timer_names import random_delivery_name, timer_name
from promptpipe.models.events import TimerKind
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import DataKey, StateData
from promptpipe.models.store import Direction
from promptpipe.rules.opt_words import (
    DEFAULT_HELP_TEXTS,
    DEFAULT_OPT_IN_TEXTS,
    DEFAULT_OPT_OUT_TEXTS,
    FALLBACK_LANGUAGE,
    OptKind,
    fixed_text,
)

_TIMER_KEYS = (
    DataKey.DAILY_PROMPT_REMINDER_TIMER_ID,
    DataKey.AUTO_FEEDBACK_TIMER_ID,
    DataKey.FEEDBACK_TIMER_ID,
    DataKey.FEEDBACK_FOLLOWUP_TIMER_ID,
)


def all_timer_names(participant_id: str, data: StateData) -> list[str]:
    """Every schedule that may exist for a participant: registry, random deliveries, one-shots."""
    names = [s.timer_id for s in data.schedules() if s.timer_id]
    names += [random_delivery_name(participant_id, s.id) for s in data.schedules()]
    names += [timer_name(kind, participant_id) for kind in TimerKind]
    names += list(data.pending_timers())
    return list(dict.fromkeys(names))


def _stop_all_timers(op: OpContext) -> None:
    for key in _TIMER_KEYS:
        clear_timer_key(op, key)
    cancel_pending_transition(op)
    op.data.set_daily_prompt_pending(None)
    for name in list(op.data.pending_timers()):
        op.disarm(name)
    # The daily crons: the state no longer wants them once the participant is not active. Names the
    # state never armed are not touched (reconcile and an orphan's own first firing cover stragglers).
    for schedule in op.data.schedules():
        op.touch_schedule(schedule.timer_id)


def change_status(deps: FlowDeps, session: ConversationSession, status: ParticipantStatus, *, reason: str) -> bool:
    """Set the status; leaving ``active`` cancels everything, returning to it restores schedules.

    Returns whether the status changed. The caller commits the session.
    """
    old = session.participant.status
    if old is status:
        return False

    def apply(op: OpContext) -> None:
        op.participant.status = status
        op.participant_changed = True
        retention = deps.config.retention_days_after_delete
        if status is ParticipantStatus.WITHDRAWN and retention:
            # The clock of a deletion (docs/retention.md): everything of theirs expires this long after.
            op.expires_at = op.expires_at or op.now + timedelta(days=retention)
        elif old is ParticipantStatus.WITHDRAWN:
            op.expires_at = None  # re-activated (or paused, completed): kept again
        if status is not ParticipantStatus.ACTIVE:
            _stop_all_timers(op)
        else:
            resume_schedules(op)  # a pause its timer could not end while they were away ends now
            for schedule in op.data.schedules():
                op.touch_schedule(schedule.timer_id)
        op.record(Direction.SYSTEM, "status_change", f"status {old.value} -> {status.value}: {reason}")

    session.apply(f"status_{status.value}", apply)
    return True


# The help reply's contact when the study gave none.
NO_CONTACT = "your study team"
# The English confirmations with the default study name (what a deployment without its own texts sends).
OPT_OUT_CONFIRMATION = fixed_text({}, DEFAULT_OPT_OUT_TEXTS, FALLBACK_LANGUAGE, study=DEFAULT_STUDY_NAME, contact="")
OPT_IN_CONFIRMATION = fixed_text({}, DEFAULT_OPT_IN_TEXTS, FALLBACK_LANGUAGE, study=DEFAULT_STUDY_NAME, contact="")


def fixed_reply(config: CoreConfig, kind: OptKind, language: str) -> str:
    """The one text of an opt-out or opt-in confirmation, or of the help reply, in ``language``
    (docs/compliance.md): the study's own template, else the built-in one, English the fallback.
    Every path that confirms (the keyword at the webhook, the coach's opt-out tool) sends this."""
    templates, defaults = {
        OptKind.OPT_OUT: (config.opt_out_texts, DEFAULT_OPT_OUT_TEXTS),
        OptKind.OPT_IN: (config.opt_in_texts, DEFAULT_OPT_IN_TEXTS),
        OptKind.HELP: (config.help_texts, DEFAULT_HELP_TEXTS),
    }[kind]
    return fixed_text(
        templates,
        defaults,
        language or FALLBACK_LANGUAGE,
        study=config.study_name,
        contact=config.study_contact or NO_CONTACT,
    )


def remember_language(session: ConversationSession, language: str) -> None:
    """Store the participant's language when none is stored yet (set at enrolment wins): the fixed
    texts (confirmations, help, the safety reply) come in it (docs/compliance.md)."""
    if not language or session.participant.language:
        return

    def remember(op: OpContext) -> None:
        if not op.participant.language:
            op.participant.language = language
            op.participant_changed = True

    session.apply("language", remember)


def opt_out(
    deps: FlowDeps,
    session: ConversationSession,
    *,
    reason: str = "participant opted out",
    language: str = "",
    confirm: bool = True,
) -> bool:
    """The participant opts out of every message, as STOP does: status PAUSED (every timer and daily
    schedule stops once committed), the ``opted_out`` flag (so START resumes them), one confirmation
    that says how to restart, in their language (``language`` when none is stored yet; none when
    ``confirm`` is false: the provider confirmed). Only an active participant is opted out (an
    organiser's pause, completion or withdrawal stands). Returns whether they were. The caller
    commits the session. The one opt-out of every path: the keyword at the webhook and the tool."""
    if session.participant.status is not ParticipantStatus.ACTIVE:
        return False
    change_status(deps, session, ParticipantStatus.PAUSED, reason=reason)

    def mark_and_confirm(op: OpContext) -> None:
        op.participant.opted_out = True
        op.participant_changed = True
        if not confirm:
            return
        config = config_for(deps.config, deps.study, op.participant)  # a study's own texts (docs/studies.md)
        reply = fixed_reply(config, OptKind.OPT_OUT, op.participant.language or language)
        op.emit(
            op.message(reply, OutboundKind.NOTICE),
            on_hold=True,  # an opt-out is honoured before anything else, a hold included
        )

    session.apply("opt_flag_and_confirm", mark_and_confirm)
    return True
