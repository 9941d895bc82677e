"""An acknowledgement is said of what the coach said, never the answer (docs/offline-coach.md): before a
reason it is left out ("ok good. sleep better" saves "sleep better"), alone it saves nothing; a question
opened by "hang on" is a question; "cos" is "because" only as a word of its own ("cost" is not). The
phrasings are not the corpus's (built/20_intake_acknowledged_reasons.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_reasons import parse_motivation
from promptpipe.adapters.offline_coach.text import is_acknowledgement
from promptpipe.rules.message_reading import read_message

KNOWN = {"habit_domain": "walking"}
WHY = "motivational_frame"


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("ok great. my knees feel better when i move", "my knees feel better when i move"),
        ("awesome, to keep my blood sugar down", "keep my blood sugar down"),
        ("thanks! less brain fog at work", "less brain fog at work"),
        ("vale. para estar menos cansada", "estar menos cansada"),
        ("très bien, pour le moral", "pour le moral"),
    ],
)
def test_an_acknowledgement_before_the_reason_is_left_out(said: str, reason: str) -> None:
    assert parse_intake_message(said, KNOWN, WHY) == {WHY: reason}


@pytest.mark.parametrize("said", ["great!", "ok perfect", "genial", "parfait !", "sounds good", "thx"])
def test_an_acknowledgement_alone_saves_nothing(said: str) -> None:
    assert is_acknowledgement(said)
    assert parse_intake_message(said, KNOWN, WHY) == {}


@pytest.mark.parametrize("said", ["good health", "perfect posture someday", "great grandkids to chase"])
def test_a_reason_that_opens_with_an_acknowledging_word_is_still_the_reason(said: str) -> None:
    assert not is_acknowledgement(said)
    assert parse_intake_message(said, KNOWN, WHY).get(WHY)


@pytest.mark.parametrize(
    ("said", "topic"),
    [("hold on how long does this go", "how_long"), ("hang on who r u", "who"), ("espera, quien eres", "who")],
)
def test_a_question_opened_by_hold_on_is_a_question(said: str, topic: str) -> None:
    assert read_message(said).kind == "question" and read_message(said).topic == topic


def test_a_cost_question_with_is_there_is_a_question_and_cost_is_no_because() -> None:
    assert read_message("is there any charge for this").kind == "question"
    assert parse_motivation("is there any cost to me")[0] == ""
    assert parse_motivation("cos my doctor said so")[0] == "my doctor said so"
