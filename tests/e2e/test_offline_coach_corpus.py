"""The offline coach's parity gate (docs/offline-coach.md, "Parity with the corpus"): the conversation
corpus played through the real pipeline with the offline coach as the model (no model key). On the
built split, at least 95 % of the intake conversations and 95 % of all end as a capable model ends them
(profile, daily schedule, sub-state, no hand-off). On both splits (the held-out one is played, never
tuned against: only these invariants are asserted of it): no reply praises doing the habit before a
daily prompt was delivered or for a message that did not say it was done, no message the corpus marks as
no fact (a greeting, a question, a complaint) is saved, and no reply claims what the stored state
contradicts or asks how it went before a prompt was delivered."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.corpus.model import HELD_OUT
from scripts.corpus.offline import ParityFigures, figures_of, play_offline

pytestmark = pytest.mark.slow

INTAKE_SHARE_GATE = 0.95  # reached: 76/78 (with built/09, the intakes as people write them)
ALL_SHARE_GATE = 0.95  # reached: 90/93 (docs/offline-coach.md, "Parity with the corpus")
LANGUAGE_SHARE_GATE = 0.90  # each of en, es, fr on the built split


@pytest.fixture(scope="module")
def played() -> tuple[list[Any], ParityFigures, list[str]]:
    outcomes = play_offline()
    figures, problems = figures_of(outcomes)
    return outcomes, figures, problems


def test_intake_conversations_end_as_with_a_capable_model(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert figures.intake_conversations >= 30
    assert figures.intake_share >= INTAKE_SHARE_GATE, figures.line() + "\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def held_out() -> tuple[ParityFigures, list[str]]:
    return figures_of(play_offline(split=HELD_OUT))


def test_all_built_conversations_end_as_with_a_capable_model(
    played: tuple[list[Any], ParityFigures, list[str]],
) -> None:
    _outcomes, figures, problems = played
    ended = figures.intake_completed + figures.week_completed
    everything = figures.intake_conversations + figures.week_conversations
    assert ended / everything >= ALL_SHARE_GATE, figures.line() + "\n" + "\n".join(problems)


def test_no_false_praise(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert figures.false_praise == 0, "\n".join(p for p in problems if "end:" not in p)


def test_no_non_fact_saved_and_no_claim_contradicted(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert (figures.non_facts_saved, figures.claims_contradicted) == (0, 0), "\n".join(
        p for p in problems if "end:" not in p
    )


def test_the_held_out_split_keeps_the_invariants(held_out: tuple[ParityFigures, list[str]]) -> None:
    figures, problems = held_out
    assert figures.intake_conversations + figures.week_conversations >= 40
    invariants = (figures.false_praise, figures.non_facts_saved, figures.claims_contradicted)
    assert invariants == (0, 0, 0), "\n".join(p for p in problems if "end:" not in p)


def test_one_word_answers_reach_the_schedule(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    # "dinner" as the anchor and "sure" to the offer; "lunch" and "ok"; "despues del desayuno" and "si"
    by_id = {o.conversation.id: o for o in played[0]}
    for conversation_id, at in (("dinner-one-word-anchor", "19:00"), ("water-ok", "12:00"), ("es-caminar-si", "09:00")):
        state = by_id[conversation_id].state
        assert [s["fixed_time"] for s in state["schedules"]] == [at], conversation_id
        assert state["sub_state"] == "FEEDBACK" and state["profile"]["prompt_anchor"], conversation_id


def test_stop_and_time_change_go_through_the_scheduler(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    by_id = {o.conversation.id: o for o in played[0]}
    assert by_id["week-stop-the-reminders"].state["schedules"] == []
    moved = by_id["week-move-it-to-7pm"].state
    assert [s["fixed_time"] for s in moved["schedules"]] == ["19:00"]
    assert moved["profile"]["preferred_time"] == "19:00"


def test_each_language_ends_as_with_a_capable_model(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    _outcomes, figures, problems = played
    assert {"en", "es", "fr"} <= set(figures.by_language)
    for language, (ended, of) in figures.by_language.items():
        assert ended / of >= LANGUAGE_SHARE_GATE, f"{language}: {ended}/{of}\n" + "\n".join(problems)


def test_the_coach_asks_in_the_participants_language(played: tuple[list[Any], ParityFigures, list[str]]) -> None:
    by_id = {o.conversation.id: o for o in played[0]}

    def first_reply(conversation_id: str) -> str:
        turn = by_id[conversation_id].turns[0]
        return next(o.response.content for o in reversed(turn.observations) if o.response and o.response.content)

    assert "Pourquoi" in first_reply("fr-lire-le-soir-apres-le-diner")
    assert "¿Por qué" in first_reply("es-leer-antes-de-dormir-vale")
    assert "Why does" in first_reply("people-read-before-bed-or-so")


def test_spanish_and_french_conversations_are_answered_in_their_language(
    played: tuple[list[Any], ParityFigures, list[str]],
) -> None:
    """Once the participant's own words tell their language, no coach reply is in English (the
    intake's suggestions, the first habit prompt, the feedback week's replies)."""
    from promptpipe.rules.language import conversation_language, detect_language
    from scripts.corpus.claims import replies_of
    from scripts.corpus.offline import language_of

    english: list[str] = []
    for outcome in played[0]:
        language = language_of(outcome.conversation)
        if language == "en":
            continue
        said: list[str] = []
        for turn in outcome.turns:
            said.append(turn.say)
            if conversation_language(said, default="") != language:
                continue  # "yoga" after an English greeting: nothing has told the language yet
            english += [f"{outcome.conversation.id}: {turn.say!r}: {reply!r}" for reply in replies_of(turn)
                        if detect_language(reply) == "en"]  # fmt: skip
    assert not english, "\n".join(english)
