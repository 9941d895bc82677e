"""Fixed-answer questions at their edges (docs/behaviour.md#B-INT-4): typographic apostrophes either
way round and none at all in the canonical text, questions whose options the parser does not know
(a hand-built or future question must never be read as an answer it cannot name), one-option
questions, and the errors that name what was unknown."""

from __future__ import annotations

import pytest

from promptpipe.models.messaging import Question, QuestionOption
from promptpipe.questions import (
    DONE_QUESTION,
    Answer,
    apply_intensity,
    canonical_answer_text,
    intensity_question,
    parse_answer,
    render_text,
)

KEEP = ("intensity", "keep")


def _read(text: str) -> tuple[str, str] | None:
    answer = parse_answer(text, None, [])
    return None if answer is None else (answer.question_id, answer.option_id)


@pytest.mark.parametrize(
    "text",
    [
        "Q: How's the intensity? A: Keep current",
        "Q: How\u2019s the intensity? A: Keep current",  # right single quote (iOS)
        "Q: How\u2018s the intensity? A: Keep current",  # left single quote
        "Q: Hows the intensity? A: Keep current",  # typed without the apostrophe
        "q: how's   the intensity?  a: keep current!",
    ],
)
def test_the_canonical_intensity_text_is_read_whatever_the_apostrophe(text: str) -> None:
    assert _read(text) == KEEP


def test_an_unknown_question_id_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="mood"):
        canonical_answer_text("mood", "good")
    with pytest.raises(KeyError, match="maybe"):
        canonical_answer_text("done", "maybe")


def test_a_number_never_answers_with_an_option_the_parser_does_not_know() -> None:
    done_like = Question(id="done", text="Did you do it?", options=[QuestionOption(id="maybe", title="Maybe")])
    assert parse_answer("1", None, [done_like]) is None


def test_words_skip_unknown_options_and_still_find_a_known_one() -> None:
    poll = Question(
        id="intensity",
        text="How's the intensity?",
        options=[QuestionOption(id="sideways", title="Sideways"), QuestionOption(id="keep", title="Keep current")],
    )
    answer = parse_answer("same", None, [poll])
    assert answer is not None and (answer.question_id, answer.option_id) == KEEP
    assert parse_answer("sideways", None, [poll]) is None


def test_an_intensity_option_without_a_step_changes_nothing() -> None:
    odd = Answer(question_id="intensity", option_id="sideways", canonical_text="Q: How's the intensity? A: Sideways")
    assert apply_intensity("normal", odd) == "normal"
    assert apply_intensity("low", odd) == "low"


def test_a_one_option_question_renders_without_an_or() -> None:
    only = Question(id="done", text="Did you do it?", options=[DONE_QUESTION.options[0]])
    assert render_text(only) == "Did you do it? Reply 1 for Done."


def test_an_intensity_option_without_a_word_is_offered_by_its_title() -> None:
    poll = intensity_question("normal").model_copy(
        update={"options": [QuestionOption(id="pause", title="Pause"), QuestionOption(id="keep", title="Keep current")]}
    )
    assert render_text(poll) == (
        "How's the intensity? Reply Pause (pause) or SAME (keep current) — or low, normal or high."
    )
