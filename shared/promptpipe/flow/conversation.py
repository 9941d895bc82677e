"""``ConversationFlow``: one inbound message or the enrollment greeting, per docs/behaviour.md#B-TURN-2.

For a message, in order: the inbound text is recorded; a "Done" answer is counted once per
delivered prompt; an intensity answer is applied; the daily-prompt reply hook runs; the sub-state
routes to Intake or Feedback (an empty or unknown one is persisted as INTAKE); the module's reply is
appended to history (bounded to what the model can be shown: docs/behaviour.md#B-HIST-1) and queued
for sending; debug output follows when enabled.
Everything goes through the session, so one commit writes it all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from promptpipe.channels.context import allows_emoji
from promptpipe.config import CoreConfig
from promptpipe.flow import budget, questions
from promptpipe.flow.audit import module_audit
from promptpipe.flow.day_outcome import OUTCOME_WINDOW_HOURS, record_done
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.hold import alert_of, asked_turn, crisis_in_opt_out, flag_turn, held_turn
from promptpipe.flow.lifecycle import opt_out, remember_language
from promptpipe.flow.modules import (
    ConversationModule,
    FeedbackModule,
    IntakeModule,
    ModuleResult,
    tool_runs_summary,
)
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.sms_fit import hold_reply_to_one_segment
from promptpipe.flow.state_ops import clear_timer_key, write_sub_state
from promptpipe.flow.study_settings import config_for
from promptpipe.models.messaging import InboundMessage, OutboundKind, Question
from promptpipe.models.state import ConversationMessage, DataKey, FeedbackState, SubState
from promptpipe.models.store import Direction
from promptpipe.rules.ask_person import asks_for_person
from promptpipe.rules.opt_words import OptKind
from promptpipe.rules.safety_screen import SafetyReading, screen
from promptpipe.rules.text_clipping import clip_inbound_text

if TYPE_CHECKING:
    from promptpipe.models.alerts import SafetyAlert
    from promptpipe.rules.opt_out import OptReading

GREETING_HINT = "<Hint: The user has joined the conversation and is expecting a greeting>"
DEBUG_PREFIX = "🐛 DEBUG: "


@dataclass
class TurnResult:
    module: str | None
    reply: str | None
    audit: dict[str, Any] = field(default_factory=dict)
    # A safety flag: the study team is told once the turn has committed (usecases/events.py).
    alert: SafetyAlert | None = None


def outstanding_questions(session: ConversationSession, within_hours: float = OUTCOME_WINDOW_HOURS) -> list[Question]:
    """The fixed-answer questions of the latest daily prompt that are still open (asked within
    ``within_hours`` and not answered yet). "Done" comes first: a bare number answers it (the
    intensity poll is answered by word, see ``questions.render_text``)."""
    data, now = session.data, session.now
    last_prompt = data.get_time(DataKey.LAST_PROMPT_SENT_AT)
    if not last_prompt or (now - last_prompt).total_seconds() > within_hours * 3600:
        return []
    sent = data.get(DataKey.LAST_PROMPT_SENT_AT)
    marks = data.answered_questions()
    asked: list[Question] = []
    if marks.get("done") != sent and data.get(DataKey.DONE_COUNTED_FOR_PROMPT) != sent:
        asked.append(questions.DONE_QUESTION)
    if marks.get("intensity_asked") == sent and marks.get("intensity") != sent:
        asked.append(questions.intensity_question(data.profile().intensity.value))
    return asked


def asked_combined(session: ConversationSession) -> bool:
    """Whether the latest prompt asked its questions in the combined SMS line (docs/behaviour.md#B-SMS-1)."""
    sent = session.data.get(DataKey.LAST_PROMPT_SENT_AT)
    return bool(sent) and session.data.answered_questions().get(questions.COMBINED_MARK) == sent


def _answer_ops(answer: questions.Answer, prompt_sent_at: str) -> list[tuple[str, Any]]:
    """The operations of a fixed answer, guarded by the prompt it answered: a "Done" for yesterday's
    prompt is never counted against today's, even when today's was delivered meanwhile."""

    def still_same_prompt(op: OpContext) -> bool:
        return op.data.get(DataKey.LAST_PROMPT_SENT_AT) == prompt_sent_at

    def mark(op: OpContext) -> None:
        if still_same_prompt(op) and prompt_sent_at:
            op.data.mark_question(answer.question_id, prompt_sent_at)

    ops: list[tuple[str, Any]] = [("mark_answered", mark)]
    if answer.question_id == questions.DONE_QUESTION.id and answer.option_id == "done":
        ops.append(("count_done", record_done(prompt_sent_at)))  # the one recorder (flow/day_outcome.py)
    if answer.question_id == "intensity":
        ops.append(("set_intensity", _set_intensity(answer)))
    return ops


def _set_intensity(answer: questions.Answer) -> Any:
    def apply(op: OpContext) -> None:
        profile = op.data.profile()
        new = questions.apply_intensity(profile.intensity.value, answer)
        if new != profile.intensity.value:
            profile.intensity = new  # type: ignore[assignment]
            profile.updated_at = op.now
            op.data.set_profile(profile)

    return apply


class ConversationFlow:
    def __init__(self, deps: FlowDeps) -> None:
        self.deps = deps
        self.intake = IntakeModule(deps)
        self.feedback = FeedbackModule(deps)

    def _config(self, session: ConversationSession) -> CoreConfig:
        """The settings as they apply to this participant (a study's own over the deployment's)."""
        return config_for(self.deps.config, self.deps.study, session.participant)

    def _module_for(self, state: SubState) -> ConversationModule:
        return self.feedback if state is SubState.FEEDBACK else self.intake

    def debug_enabled(self, session: ConversationSession) -> bool:
        return self.deps.config.promptpipe_debug or session.participant.debug_mode

    # -- inbound message --------------------------------------------------------------------
    def handle_message(self, session: ConversationSession, message: InboundMessage) -> TurnResult:
        started = time.perf_counter()
        typed = clip_inbound_text(message.body, self.deps.config.max_inbound_message_chars)
        answers = questions.parse_answers(
            typed, message.answer_id, outstanding_questions(session), combined=asked_combined(session)
        )
        # The model and history get the original's canonical answer(s); the transcript keeps both.
        text = "\n".join(a.canonical_text for a in answers) if answers else typed
        received_at = message.received_at
        metadata = {"provider": message.provider, "provider_message_id": message.provider_message_id}
        if answers:
            metadata["parsed_answer"] = text
        session.apply("record_inbound", lambda op: op.record(Direction.INBOUND, "message", typed, metadata=metadata))
        # People first (docs/safety.md): an opt-out in any form is honoured before anything else reads
        # the message, the safety screen included. The webhook reads every text it queues and marks it
        # (usecases/receive_text.py); a message it did not read (a turn fed directly, one queued before
        # the mark existed) is read here, as the webhook would read it. Reading it once is the saving:
        # a worker's ordinary first event never loads the reader.
        opt = None if message.opt_out_read else self._opt_out_in(session, message.body)
        # The safety net, before anything reads the message for the coach (docs/safety.md): every
        # inbound text but STOP / START (the webhook screens those) passes here, before any model.
        reading = screen(typed) if self.deps.config.safety_screen_enabled else None
        if opt is not None:
            return self._opted_out(session, opt, reading)
        user = ConversationMessage(role="user", content=typed, timestamp=received_at)
        if reading is not None and reading.flagged:
            reply, audit = flag_turn(self._config(session), session, reading, user)
            alert = alert_of(session.participant.id, session.participant.phone_number, reading)
            return TurnResult(module="safety", reply=reply, audit=audit, alert=alert)
        if not session.participant.is_active:
            return TurnResult(module=None, reply=None, audit={"skipped": f"participant {session.participant.status}"})
        hold = session.data.hold()
        if hold is not None:
            reply, audit = held_turn(self._config(session), session, hold, reading, user)
            return TurnResult(module=None, reply=reply, audit=audit)
        if reading is not None and reading.language and session.data.sub_state is SubState.INTAKE:
            # Detected at intake (English or Spanish, by the screen's reading of function words) when
            # enrolment gave none: the fixed texts then come in it (docs/compliance.md).
            remember_language(session, reading.language)
        if asks_for_person(typed):  # docs/safety.md, "Asking for a person": before any model
            reply, audit = asked_turn(
                self._config(session), session, user, language=reading.language if reading is not None else None
            )
            return TurnResult(module=None, reply=reply, audit=audit)

        for answer in answers:
            for name, op in _answer_ops(answer, session.data.get(DataKey.LAST_PROMPT_SENT_AT)):
                session.apply(name, op)
        session.apply("daily_prompt_reply", self._daily_prompt_reply(received_at))

        def default_sub_state(op: OpContext) -> None:
            # Checked inside the operation: a transition committed meanwhile must not be undone.
            if op.data.sub_state_raw not in SubState.__members__:
                write_sub_state(op, SubState.INTAKE)

        session.apply("default_sub_state", default_sub_state)

        admission = budget.admit(self.deps, session, text)  # docs/safety.md#budgets
        if admission is None:
            return TurnResult(module=None, reply=None, audit={"skipped": "over budget"})
        text = admission.text
        state = session.data.sub_state
        module = self._module_for(state)
        history = session.data.history()
        result = module.run(self.deps, session, text, history)
        if self.deps.config.sms_channel:  # docs/behaviour.md#B-SMS-3
            result.reply, calls = hold_reply_to_one_segment(
                self.deps, session, typed, result.reply, route=module.name, allow_emoji=allows_emoji(session.data)
            )
            result.llm_calls.extend(calls)
        budget.charge(session, admission, calls=len(result.llm_calls))
        audit = module_audit(result, duration_ms=(time.perf_counter() - started) * 1000)
        self._store_reply(
            session, result, audit, user=ConversationMessage(role="user", content=text, timestamp=received_at)
        )
        if state is SubState.FEEDBACK:
            session.apply("cancel_pending_feedback", self._cancel_pending_feedback)
        self._emit_debug(session, result)
        return TurnResult(module=module.name, reply=result.reply, audit=audit)

    def _opt_out_in(self, session: ConversationSession, text: str) -> OptReading | None:
        """The message read by the opt-out reader (the deployment's keyword lists, as the webhook
        reads it), when it is an opt-out; an unclear stop request, HELP or START go on as before."""
        # Here, not at import: the reader's module loads with the first text read, not at cold start
        # (tests/unit/test_cold_start.py); its patterns compile at the first sentence read.
        from promptpipe.rules.opt_out import keyword_lists, read_opt_message

        keywords = keyword_lists(self.deps.config.opt_keywords)
        reading = read_opt_message(text, keywords, preferred_language=session.participant.language or "")
        return reading if reading is not None and reading.kind is OptKind.OPT_OUT else None

    def _opted_out(self, session: ConversationSession, opt: OptReading, reading: SafetyReading | None) -> TurnResult:
        """An opt-out at the worker, as at the webhook: paused, flagged, one confirmation, no model;
        a crisis read in it as well holds them and the team is alerted after the commit."""
        alert: SafetyAlert | None = None
        audit: dict[str, Any] = {"opted_out": opt.language}
        if reading is not None and reading.flagged:
            crisis_in_opt_out(session, reading)
            participant = session.participant
            alert = alert_of(participant.id, participant.phone_number, reading, opted_out=True)
            audit["safety"] = {"category": alert.category, "language": alert.language}
        remember_language(session, opt.language)
        if not opt_out(self.deps, session, reason="participant opted out", language=opt.language):
            audit["skipped"] = f"participant {session.participant.status}"
        return TurnResult(module="opt-out", reply=None, audit=audit, alert=alert)

    def _daily_prompt_reply(self, received_at: datetime) -> Any:
        """docs/behaviour.md#B-REM-2: a reply not older than the prompt cancels its reminder."""

        def apply(op: OpContext) -> None:
            pending = op.data.daily_prompt_pending()
            if pending is None or received_at < pending.sent_at:
                return
            op.data.set_daily_prompt_pending(None)
            clear_timer_key(op, DataKey.DAILY_PROMPT_REMINDER_TIMER_ID)
            op.data.set_time(DataKey.DAILY_PROMPT_RESPONDED_AT, received_at)

        return apply

    def _cancel_pending_feedback(self, op: OpContext) -> None:
        clear_timer_key(op, DataKey.FEEDBACK_TIMER_ID)
        clear_timer_key(op, DataKey.FEEDBACK_FOLLOWUP_TIMER_ID)
        if op.data.get(DataKey.FEEDBACK_STATE):
            op.data.set(DataKey.FEEDBACK_STATE, FeedbackState.COMPLETED.value)

    # -- greeting ---------------------------------------------------------------------------
    def handle_greeting(self, session: ConversationSession) -> TurnResult:
        """The hint is for this turn only; the greeting is the first assistant message
        (docs/behaviour.md#B-GREET-1, B-GREET-2)."""
        if not session.participant.is_active:
            return TurnResult(module=None, reply=None, audit={"skipped": f"participant {session.participant.status}"})
        hold = session.data.hold()
        if hold is not None:
            return TurnResult(module=None, reply=None, audit={"skipped": f"on hold ({hold.reason.value})"})
        started = time.perf_counter()
        module = self._module_for(session.data.sub_state)
        result = module.run(self.deps, session, GREETING_HINT, session.data.history())
        audit = module_audit(result, duration_ms=(time.perf_counter() - started) * 1000)
        self._store_reply(session, result, audit, user=None, kind=OutboundKind.GREETING)
        self._emit_debug(session, result)
        return TurnResult(module=module.name, reply=result.reply, audit=audit)

    # -- shared -----------------------------------------------------------------------------
    def _store_reply(
        self,
        session: ConversationSession,
        result: ModuleResult,
        audit: dict[str, Any],
        *,
        user: ConversationMessage | None,
        kind: OutboundKind = OutboundKind.REPLY,
    ) -> None:
        reply = result.reply

        def store(op: OpContext) -> None:
            if not op.participant.is_active:  # paused or opted out while the model was answering
                return
            assistant = ConversationMessage(role="assistant", content=reply, timestamp=op.now)
            op.data.append_history(*([user] if user else []), assistant)
            op.emit(op.message(reply, kind), metadata={**audit, "state_version": op.version})

        session.apply("store_reply", store)

    def _emit_debug(self, session: ConversationSession, result: ModuleResult) -> None:
        if not self.debug_enabled(session):
            return
        lines = [f"{result.module} module; tools: {tool_runs_summary(result.tool_runs)}"]
        lines += [f"thinking: {r}" for r in result.reasoning]

        def emit(op: OpContext) -> None:
            if not op.participant.is_active:
                return
            profile = op.data.profile()
            info = (
                f"Current state: {op.data.sub_state.value}\nProfile: Domain={profile.habit_domain}, "
                f"Motivation={profile.motivational_frame}, Time={profile.preferred_time}, "
                f"Anchor={profile.prompt_anchor}, Intensity={profile.intensity.value}, "
                f"Success={profile.success_count}/{profile.total_prompts}"
            )
            for body in (*lines, info):
                op.emit(op.message(DEBUG_PREFIX + body, OutboundKind.DEBUG))

        session.apply("debug_output", emit)
