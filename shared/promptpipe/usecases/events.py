"""One event, one unit of work: a conversation turn (or the greeting); a daily prompt and a timer
firing are their own use cases (``usecases/daily_prompts.py``, ``usecases/timer_firings.py``), so that
each function imports only its own event's flow (cold start: docs/benchmarks.md, section 2).

Each opens the participant's session, works, commits once and returns an ``EventOutcome`` whose
effects the handler applies with ``usecases.sending.apply_effects``. A redelivered event finds its record and
resumes its effects instead of running again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from promptpipe.errors import LLMError, ParticipantNotFound, ValidationFailed
from promptpipe.flow.effects import desired_schedules
from promptpipe.flow.session import ConversationSession
from promptpipe.models.decision import ProximalOutcomeValue
from promptpipe.models.effects import ScheduleSpec
from promptpipe.models.events import TurnEvent, TurnKind
from promptpipe.models.state import StateData
from promptpipe.usecases import inbound_record
from promptpipe.usecases.context import AppContext
from promptpipe.usecases.decisions import record_outcome
from promptpipe.usecases.outcomes import EventOutcome
from promptpipe.usecases.safety_alerts import alert_team
from promptpipe.usecases.write_once import run_once

if TYPE_CHECKING:
    from promptpipe.flow.conversation import ConversationFlow


_engines: WeakKeyDictionary[AppContext, ConversationFlow] = WeakKeyDictionary()


def conversation_flow(app: AppContext) -> ConversationFlow:
    """The context's conversation engine, built (and its modules imported) by the first turn: the
    scheduled-prompt and timers functions never load it."""
    engine = _engines.get(app)
    if engine is None:
        from promptpipe.flow.conversation import ConversationFlow

        engine = _engines.setdefault(app, ConversationFlow(app.deps))
    return engine


def process_turn(app: AppContext, event: TurnEvent) -> EventOutcome:
    """Worker side: one conversation turn (or the greeting). ``LLMError`` propagates (retry)."""
    if event.kind is TurnKind.SCHEDULES:
        return _deferred_schedules(app, event)

    opened: list[tuple[ConversationSession, bool]] = []  # the session, and whether it accepted the message
    check_in: list[tuple[str, ProximalOutcomeValue]] = []  # the study check-in this message answers

    def work(session: ConversationSession, outcome: EventOutcome) -> None:
        if event.kind is TurnKind.GREETING:
            outcome.turn = conversation_flow(app).handle_greeting(session)
        else:
            if event.message is None:
                raise ValidationFailed("message turn without a message", field="message")
            # In the record before the model: whatever fails next, the message is not lost.
            opened.append((session, inbound_record.accept(app, session, event)))
            check_in[:] = [a for a in [_check_in_answer(app, session, event.message.body)] if a is not None]
            outcome.turn = conversation_flow(app).handle_message(session, event.message)

    try:
        outcome = run_once(app, event.participant_id, event.event_id, work)
    except LLMError:
        for session, _ in opened:
            inbound_record.model_unavailable(app, session)
        raise
    for session, wrote in opened:
        if wrote and outcome.replayed:  # a copy answered before: this run committed nothing
            inbound_record.discard(app, session)
    for decision, value in check_in if outcome.committed_version is not None and not outcome.replayed else ():
        record_outcome(app, decision, value, app.clock.now())  # docs/studies.md: the proximal outcome
    alert_team(app, outcome.turn.alert if outcome.turn is not None else None)
    # A hold this event placed: its alert is on the outcome, an effect ``apply_effects`` publishes.
    return outcome


def _check_in_answer(
    app: AppContext, session: ConversationSession, text: str
) -> tuple[str, ProximalOutcomeValue] | None:
    """The message's reading as the answer to the study's open check-in, if it is one."""
    if app.deps.study is None:
        return None
    # Here, not at import: a deployment without a study never loads the study engine
    # (tests/unit/test_cold_start.py).
    from promptpipe.usecases.studies import answer_check_in

    return answer_check_in(app, session, text)


def _deferred_schedules(app: AppContext, event: TurnEvent) -> EventOutcome:
    """The schedules a STOP / START touched, as the committed state wants them now (``apply_effects``
    applies them; a failure raises and SQS redelivers). Derived, not replayed: a redelivery, or
    a START processed after its STOP's event, brings them in line all the same."""
    outcome = EventOutcome(participant_id=event.participant_id, event_id=event.event_id)
    try:
        loaded = app.store.load(event.participant_id)
    except ParticipantNotFound:
        desired: dict[str, ScheduleSpec] = {}  # deleted since: nothing of theirs stays live
    else:
        data = StateData(dict(loaded.flow.state_data))
        desired = desired_schedules(loaded.participant, data, app.prep_minutes, app.clock.now())
        # A marker left by an earlier failed delivery of these changes: cleared once they apply.
        outcome.pending_effects = loaded.pending_effects
    outcome.schedules = {name: desired.get(name) for name in event.schedules}
    return outcome
