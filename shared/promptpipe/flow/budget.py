"""A participant's model budget in the turn (docs/safety.md#budgets).

Checked before any model call: a participant past a budget gets one short fixed reply per window;
what they write meanwhile is recorded in the transcript as always and kept on the flow state, and the
first message after the window passes is answered together with it. The counters live on the
flow-state item the turn commits anyway, so counting adds no write.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.engine_texts import BUDGET_REPLIES, ENGLISH, language_of
from promptpipe.flow.session import ConversationSession, OpContext
from promptpipe.flow.study_settings import config_for
from promptpipe.models.budget import DAY, BudgetLimits, BudgetUsage
from promptpipe.models.messaging import OutboundKind, OutboundMessage
from promptpipe.models.metrics import metric
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import DataKey, StateData

REPLY_FOR_AN_HOUR = (
    "Thanks, I have your messages. I'm pausing my replies for a little while: "
    "write again in about an hour and I'll answer everything you sent."
)
REPLY_FOR_A_DAY = (
    "Thanks, I have your messages. I've reached my limit for today: "
    "write again tomorrow and I'll answer everything you sent."
)
HELD_HEADER = "(Messages sent while replies were paused, oldest first:)"
LATEST_HEADER = "(Latest message:)"


def read_usage(data: StateData) -> BudgetUsage:
    # unreadable: start counting again rather than fail the turn (reported, as any corrupt value)
    return data.read_record(DataKey.MODEL_BUDGET, BudgetUsage.model_validate_json, BudgetUsage())


def write_usage(data: StateData, usage: BudgetUsage) -> None:
    data.set(DataKey.MODEL_BUDGET, usage.model_dump_json(exclude_defaults=True))


def limits_of(deps: FlowDeps, participant: ConversationParticipant) -> BudgetLimits:
    """The participant's model budget: their study's where it sets one, else the deployment's."""
    config = config_for(deps.config, deps.study, participant)
    return BudgetLimits(
        model_calls_per_hour=config.budget_model_calls_per_hour,
        model_calls_per_day=config.budget_model_calls_per_day,
        input_chars_per_day=config.budget_input_chars_per_day,
    )


@dataclass(frozen=True)
class Admission:
    """A turn the budget lets through: what the model reads, and how many held texts it answers."""

    text: str
    answered_held: int = 0


def admit(deps: FlowDeps, session: ConversationSession, text: str) -> Admission | None:
    """The turn's text for the model (held messages first), or ``None``: over budget, the message
    is held (and the window's one fixed reply queued)."""
    usage = read_usage(session.data)
    until = usage.over_until(limits_of(deps, session.participant), session.now, len(text))
    if until is None:
        if not usage.held:
            return Admission(text)
        combined = "\n".join([HELD_HEADER, *usage.held, LATEST_HEADER, text])
        return Admission(combined, answered_held=len(usage.held))
    window = "day" if until - session.now > DAY / 24 else "hour"
    session.metrics.append(metric("BudgetExceeded", window=window))
    max_held_chars = deps.config.max_inbound_message_chars
    language = language_of(session.participant.language)  # the participant's (flow/engine_texts.py)
    english = REPLY_FOR_A_DAY if window == "day" else REPLY_FOR_AN_HOUR
    reply = english if language == ENGLISH else BUDGET_REPLIES[window][language]

    def hold(op: OpContext) -> None:
        usage = read_usage(op.data).rolled(op.now)
        # The newest texts that fit what the model can be given; older ones stay in the transcript.
        held = [*usage.held, text]
        while len(held) > 1 and sum(map(len, held)) > max_held_chars:
            held.pop(0)
        notify = usage.notified_until is None or usage.notified_until <= op.now
        if notify and op.participant.is_active:
            to = op.participant.phone_number
            notice = OutboundMessage(participant_id=op.participant.id, to=to, body=reply, kind=OutboundKind.NOTICE)
            op.emit(notice, metadata={"budget": window})
        notified = until if notify else usage.notified_until
        write_usage(op.data, usage.model_copy(update={"held": held, "notified_until": notified}))

    session.apply("hold_for_budget", hold)
    return None


def charge(session: ConversationSession, admission: Admission, *, calls: int) -> None:
    """Count the turn's model calls and input characters; drop the held texts it answered."""
    chars = len(admission.text)

    def apply(op: OpContext) -> None:
        usage = read_usage(op.data).charged(op.now, calls=calls, chars=chars)
        write_usage(op.data, usage.model_copy(update={"held": usage.held[admission.answered_held :]}))

    session.apply("charge_budget", apply)
