"""The participant's language, detected at intake when enrolment gave none (docs/compliance.md): the
fixed texts (an opt-out's confirmation, help, the safety reply) then come in it."""

from __future__ import annotations

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.flow.state_ops import write_sub_state
from promptpipe.models.state import SubState
from promptpipe.usecases.receive_text import receive_text
from tests.support import memory_harness, turn


def test_a_spanish_message_at_intake_stores_spanish_and_the_opt_out_then_answers_in_it() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("¡Genial! ¿A qué hora te viene bien?")]))
    participant = h.enroll()
    turn(h, participant, "quiero caminar por la mañana para tener más energía")
    assert h.store.participants[participant.id].language == "es"
    # Then "STOP" (a word of every language) is confirmed in Spanish
    receive_text(h.app, h.message(participant, "STOP"))
    assert h.outbox.messages(participant.id)[-1].body.startswith("Te diste de baja")


def test_an_english_message_at_intake_stores_english() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Nice! When would suit you?")]))
    participant = h.enroll()
    turn(h, participant, "i want to walk more in the evening")
    assert h.store.participants[participant.id].language == "en"


def test_the_enrolled_language_wins_and_feedback_detects_nothing() -> None:
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("Great!"), ScriptedLLM.text("Nice!")]))
    enrolled = h.enroll(language="en")
    turn(h, enrolled, "quiero caminar por la mañana")
    assert h.store.participants[enrolled.id].language == "en"
    # A participant already in feedback is not re-read: detection belongs to intake
    other = h.enroll(phone="+14155550177")
    session = h.app.sessions.open(other.id, "to-feedback")
    session.apply("to_feedback", lambda op: write_sub_state(op, SubState.FEEDBACK))
    session.commit()
    turn(h, other, "lo hice esta mañana, fue fácil")
    assert h.store.participants[other.id].language == ""
