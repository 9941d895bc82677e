"""The engine's fixed replies in the participant's language (``flow/engine_texts.py``): the budget's
notice, the reply after a failed or empty synthesis and a module's fallback come in Spanish or French
when that is the participant's stored language, and in the same English as before otherwise (the
English texts are pinned here word for word: they are part of the behavioural contract)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.controller import tool_table
from promptpipe.errors import LLMError
from promptpipe.flow import budget, modules
from promptpipe.flow.engine_texts import BUDGET_REPLIES, FALLBACKS, MODULE_FALLBACKS, TOOL_PHRASES, language_of
from promptpipe.flow.modules import ToolRun, fallback_reply
from promptpipe.models.llm import ChatResponse
from promptpipe.settings import Settings
from tests.support import memory_harness, turn

ENGLISH = {
    "hour": (
        "Thanks, I have your messages. I'm pausing my replies for a little while: "
        "write again in about an hour and I'll answer everything you sent."
    ),
    "day": (
        "Thanks, I have your messages. I've reached my limit for today: "
        "write again tomorrow and I'll answer everything you sent."
    ),
    "try_again": "Sorry, I couldn't finish that just now. Could you try again in a moment?",
    "intake": "I'm here to help you build a small daily habit. What would you like to work on?",
    "feedback": "Thanks for the update! How did today's habit go for you?",
}


def test_the_english_texts_are_unchanged_word_for_word() -> None:
    assert ENGLISH["hour"] == budget.REPLY_FOR_AN_HOUR
    assert ENGLISH["day"] == budget.REPLY_FOR_A_DAY
    assert ENGLISH["try_again"] == modules.TRY_AGAIN_FALLBACK
    assert ENGLISH["intake"] == modules.INTAKE_FALLBACK
    assert ENGLISH["feedback"] == modules.FEEDBACK_FALLBACK


def _run(name: str, ok: bool = True) -> ToolRun:
    return ToolRun(name=name, arguments={"action": "create"}, ok=ok, result="", duration_ms=1.0)


@pytest.mark.parametrize("language", [None, "", "en", "en-GB", "de", "pt"])
def test_without_texts_in_their_language_the_fallback_is_the_english_one(language: str | None) -> None:
    assert fallback_reply([], language) == ENGLISH["try_again"]
    saved_not_scheduled = [_run("save_user_profile"), _run("scheduler", ok=False)]
    assert fallback_reply(saved_not_scheduled, language) == (
        "I've saved your details. I couldn't change your reminder schedule: could you try that again?"
    )


@pytest.mark.parametrize(
    ("language", "try_again", "mixed", "three"),
    [
        (
            "es-MX",
            "Perdona, no pude terminar eso ahora. ¿Puedes intentarlo de nuevo en un momento?",
            "He guardado tus datos. No pude cambiar el horario de tus recordatorios: ¿puedes intentarlo de nuevo?",
            "He actualizado el horario de tus recordatorios, preparado tu mensaje del hábito y guardado tus datos.",
        ),
        (
            "fr",
            "Désolé, je n'ai pas pu terminer cela pour l'instant. Pouvez-vous réessayer dans un moment ?",
            "J'ai enregistré vos informations. Je n'ai pas pu modifier l'horaire de vos rappels : "
            "pouvez-vous réessayer ?",
            "J'ai mis à jour l'horaire de vos rappels, préparé votre message d'habitude "
            "et enregistré vos informations.",
        ),
    ],
)
def test_the_fallback_is_written_whole_in_the_participants_language(
    language: str, try_again: str, mixed: str, three: str
) -> None:
    assert fallback_reply([], language) == try_again
    assert fallback_reply([_run("save_user_profile"), _run("scheduler", ok=False)], language) == mixed
    runs = [_run("scheduler"), _run("generate_habit_prompt"), _run("save_user_profile")]
    assert fallback_reply(runs, language) == three


def test_every_tool_the_fallback_may_claim_has_its_phrases_in_each_language() -> None:
    claimed = {row.name for row in tool_table.TABLE if row.done_phrase}
    assert claimed == set(TOOL_PHRASES)
    for name in claimed:
        assert set(TOOL_PHRASES[name]) == set(FALLBACKS), name
    assert {language for texts in BUDGET_REPLIES.values() for language in texts} == set(FALLBACKS)
    assert all(set(texts) == set(FALLBACKS) for texts in MODULE_FALLBACKS.values())
    assert language_of("ES_mx") == "es" and language_of("fr-CA") == "fr" and language_of("it") == "en"


# -- through the turn --------------------------------------------------------------------------------


@pytest.mark.parametrize(("language", "window"), [("es", "hour"), ("fr", "hour"), ("es", "day"), ("fr", "day")])
def test_the_budget_notice_comes_in_the_participants_language(language: str, window: str) -> None:
    settings = (
        Settings(budget_model_calls_per_hour=1, budget_model_calls_per_day=0)
        if window == "hour"
        else Settings(budget_model_calls_per_day=1, budget_model_calls_per_hour=0)
    )
    h = memory_harness(ScriptedLLM([ScriptedLLM.text("hola")]), settings=settings)
    p = h.enroll(language=language)
    turn(h, p, "quiero caminar más")
    h.clock.advance(timedelta(seconds=1))
    turn(h, p, "otra vez")
    h.clock.advance(timedelta(seconds=1))
    turn(h, p, "y otra")
    assert [m.body for m in h.outbox.messages()] == ["hola", BUDGET_REPLIES[window][language]]


def test_the_budget_notice_of_a_participant_without_a_language_is_the_english_one() -> None:
    h = memory_harness(
        ScriptedLLM([ScriptedLLM.text("hi")]),
        settings=Settings(budget_model_calls_per_hour=1, budget_model_calls_per_day=0),
    )
    p = h.enroll()
    turn(h, p, "hi there")
    h.clock.advance(timedelta(seconds=1))
    turn(h, p, "again")
    assert [m.body for m in h.outbox.messages()] == ["hi", ENGLISH["hour"]]


def _failing_schedule() -> ChatResponse:
    return ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed"})  # no fixed_time


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("es", "He guardado tus datos. No pude cambiar el horario de tus recordatorios: ¿puedes intentarlo de nuevo?"),
        (
            "fr",
            "J'ai enregistré vos informations. Je n'ai pas pu modifier l'horaire de vos rappels : "
            "pouvez-vous réessayer ?",
        ),
        ("", "I've saved your details. I couldn't change your reminder schedule: could you try that again?"),
    ],
)
def test_a_failed_synthesis_after_tool_errors_answers_in_the_participants_language(
    language: str, expected: str
) -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls(
                [
                    ("save_user_profile", {"habit_domain": "walking"}),
                    ("scheduler", {"action": "create", "type": "fixed"}),
                ]
            ),
            *[_failing_schedule() for _ in range(3)],
            LLMError("down"),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll(language=language) if language else h.enroll()
    # (a participant with no language stored is read at intake: an English text keeps them English)
    text = "I want to walk, remind me at 8pm" if not language else "quiero caminar, recuérdame a las 8pm"
    outcome = turn(h, p, text)
    assert outcome.outbound[0].body == expected


@pytest.mark.parametrize(("language", "expected"), [("es", "es"), ("fr", "fr")])
def test_a_turn_with_no_reply_at_all_gets_the_modules_fallback_in_their_language(language: str, expected: str) -> None:
    llm = ScriptedLLM([ScriptedLLM.text(""), ScriptedLLM.text("")])  # nothing written, nor by the synthesis
    h = memory_harness(llm)
    p = h.enroll(language=language)
    outcome = turn(h, p, "hola")
    assert outcome.outbound[0].body == MODULE_FALLBACKS["intake"][expected]
