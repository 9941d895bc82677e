"""The fixed-answer questions (docs/behaviour.md#B-INT-3, B-INT-2, cases W1-W13)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptpipe.flow.questions import (
    DONE_QUESTION,
    Answer,
    apply_intensity,
    button_id,
    canonical_answer_text,
    intensity_question,
    parse_answer,
    render_text,
)
from promptpipe.models.messaging import Question, QuestionOption


def _ids(question: Question) -> list[str]:
    return [option.id for option in question.options]


def _titles(question: Question) -> list[str]:
    return [option.title for option in question.options]


# --- the questions (W12) -----------------------------------------------------------------------


def test_done_question() -> None:
    assert DONE_QUESTION.id == "done"
    assert DONE_QUESTION.text == "Did you do it?"
    assert _ids(DONE_QUESTION) == ["done", "next_time"]
    assert _titles(DONE_QUESTION) == ["Done", "Next time"]


@pytest.mark.parametrize(
    ("current", "titles"),
    [
        ("low", ["Keep current", "Increase"]),
        ("normal", ["Decrease", "Keep current", "Increase"]),
        ("high", ["Decrease", "Keep current"]),
        ("", ["Decrease", "Keep current", "Increase"]),  # unknown level counts as normal
        ("HIGH", ["Decrease", "Keep current"]),
    ],
)
def test_intensity_question_options_depend_on_the_current_level(current: str, titles: list[str]) -> None:
    question = intensity_question(current)
    assert question.id == "intensity"
    assert question.text == "How's the intensity?"
    assert _titles(question) == titles


def test_button_ids_are_namespaced_per_question() -> None:
    assert button_id(DONE_QUESTION, DONE_QUESTION.options[0]) == "done:done"
    normal = intensity_question("normal")
    assert [button_id(normal, o) for o in normal.options] == [
        "intensity:decrease",
        "intensity:keep",
        "intensity:increase",
    ]


# --- text rendering ----------------------------------------------------------------------------


def test_render_done_question() -> None:
    assert render_text(DONE_QUESTION) == "Did you do it? Reply 1 for Done or 2 for Next time."


def test_render_intensity_question_uses_words_so_a_bare_number_answers_done() -> None:
    # The intensity poll follows the "Done" question; numbers stay with "Done" (see render_text).
    assert render_text(intensity_question("normal")) == (
        "How's the intensity? Reply LESS (decrease), SAME (keep current) or MORE (increase) — or low, normal or high."
    )
    assert render_text(intensity_question("low")) == (
        "How's the intensity? Reply SAME (keep current) or MORE (increase) — or low, normal or high."
    )


# --- canonical forms (W13) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question_id", "option_id", "text"),
    [
        ("done", "done", "Q: Did you do it? A: Done"),
        ("done", "next_time", "Q: Did you do it? A: Next time"),
        ("intensity", "decrease", "Q: How's the intensity? A: Decrease"),
        ("intensity", "keep", "Q: How's the intensity? A: Keep current"),
        ("intensity", "increase", "Q: How's the intensity? A: Increase"),
    ],
)
def test_canonical_answer_text(question_id: str, option_id: str, text: str) -> None:
    assert canonical_answer_text(question_id, option_id) == text
    # and the canonical text parses back to the same answer with nothing outstanding
    answer = parse_answer(text, None, [])
    assert answer is not None
    assert (answer.question_id, answer.option_id, answer.canonical_text) == (question_id, option_id, text)


def test_canonical_answer_text_unknown_pair() -> None:
    with pytest.raises(KeyError):
        canonical_answer_text("done", "maybe")


# --- docs/behaviour.md#B-INT-3: W1-W11 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "text", "expected"),
    [
        ("normal", "Q: How's the intensity? A: Decrease", "low"),
        ("high", "Q: How's the intensity? A: Decrease", "normal"),
        ("low", "Q: How's the intensity? A: Decrease", "low"),
        ("normal", "Q: How's the intensity? A: Keep current", "normal"),
        ("low", "Q: How's the intensity? A: Keep current", "low"),
        ("high", "Q: How's the intensity? A: Keep current", "high"),
        ("low", "Q: How's the intensity? A: Increase", "normal"),
        ("normal", "Q: How's the intensity? A: Increase", "high"),
        ("high", "Q: How's the intensity? A: Increase", "high"),
        # typographic apostrophe and extra spaces, as phones type them
        ("normal", "Q: How\u2019s the intensity?  A:  increase", "high"),
    ],
)
def test_intensity_table(current: str, text: str, expected: str) -> None:
    answer = parse_answer(text, None, [])
    assert answer is not None
    assert apply_intensity(current, answer) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Q: How's the intensity? A: Done",  # W: a Done answer is not an intensity answer
        "Q: Did you do it? A: [responded]",  # W13's unknown vote
        "Q: Did you do it? A: Decrease",
        "Q: Something else? A: Done",
        "I found it a bit hard today",  # free text goes to the model
        "",
    ],
)
def test_not_an_answer_without_outstanding_questions(text: str) -> None:
    assert parse_answer(text, None, []) is None


# --- button ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer_id", "question_id", "option_id"),
    [
        ("done:done", "done", "done"),
        ("done:next_time", "done", "next_time"),
        ("intensity:decrease", "intensity", "decrease"),
        ("intensity:keep", "intensity", "keep"),
        ("INTENSITY:INCREASE", "intensity", "increase"),
        ("next_time", "done", "next_time"),  # a bare option id, e.g. a Twilio template payload
        ("increase", "intensity", "increase"),
    ],
)
def test_button_ids_map_directly(answer_id: str, question_id: str, option_id: str) -> None:
    # Given a button press with a meaningless title / Then the id decides, outstanding or not
    answer = parse_answer("whatever the title", answer_id, [])
    assert answer == Answer(
        question_id=question_id,
        option_id=option_id,
        canonical_text=canonical_answer_text(question_id, option_id),
    )


def test_unknown_button_id_falls_back_to_the_text() -> None:
    answer = parse_answer("Done", "some:other", [DONE_QUESTION])
    assert answer is not None and answer.option_id == "done"
    assert parse_answer("hello", "done:maybe", [DONE_QUESTION]) is None


# --- text replies to outstanding questions -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "option_id"),
    [
        ("1", "done"),
        (" 2. ", "next_time"),
        ("Done", "done"),
        ("done!", "done"),
        ("DONE 🎉", "done"),
        ("next time", "next_time"),
        ("Next time.", "next_time"),
        ("next_time", "next_time"),  # the option id typed as text
    ],
)
def test_done_replies(text: str, option_id: str) -> None:
    answer = parse_answer(text, None, [DONE_QUESTION])
    assert answer is not None
    assert (answer.question_id, answer.option_id) == ("done", option_id)


@pytest.mark.parametrize(
    "text",
    ["yes", "Yes!", "y", "Y", "yep", "yeah", "no", "n", "nope", "not yet", "did it", "completed", "finished"],
)
def test_yes_no_and_other_words_are_not_done_answers(text: str) -> None:
    # Every generated prompt ends with a yes/no question ("Would that feel doable?"), so a bare
    # "yes" or "no" is not an answer to "Did you do it?": it reaches the model as typed.
    assert parse_answer(text, None, [DONE_QUESTION]) is None
    assert parse_answer(text, None, [DONE_QUESTION, intensity_question("normal")]) is None


@pytest.mark.parametrize(
    ("current", "text", "option_id", "result"),
    [
        ("normal", "1", None, "normal"),  # numbers answer only the Done question
        ("normal", "Decrease", "decrease", "low"),
        ("normal", "easier please", None, "normal"),
        ("normal", "less", "decrease", "low"),
        ("normal", "LESS", "decrease", "low"),
        ("normal", "easier", None, "normal"),  # only the words the poll offers (see render_text)
        ("normal", "Keep current", "keep", "normal"),
        ("normal", "same", "keep", "normal"),
        ("normal", "more", "increase", "high"),
        ("normal", "Increase!", "increase", "high"),
        ("normal", "Harder!", None, "normal"),
        ("normal", "too hard", None, "normal"),
        ("high", "more", None, "high"),  # Increase was not offered at high
    ],
)
def test_intensity_replies(current: str, text: str, option_id: str | None, result: str) -> None:
    answer = parse_answer(text, None, [intensity_question(current)])
    if option_id is None:
        assert answer is None
        return
    assert answer is not None
    assert (answer.question_id, answer.option_id, answer.absolute_intensity) == ("intensity", option_id, None)
    assert apply_intensity(current, answer) == result


@pytest.mark.parametrize(
    ("current", "text", "expected"),
    [
        ("normal", "low", "low"),
        ("low", "High", "high"),
        ("high", "normal", "normal"),
    ],
)
def test_absolute_intensity_wins(current: str, text: str, expected: str) -> None:
    answer = parse_answer(text, None, [intensity_question(current)])
    assert answer is not None
    assert answer.absolute_intensity == expected
    assert answer.option_id == expected
    assert answer.canonical_text == f"Q: How's the intensity? A: {expected.capitalize()}"
    assert apply_intensity(current, answer) == expected


def test_number_out_of_range_is_not_an_answer() -> None:
    assert parse_answer("3", None, [DONE_QUESTION]) is None
    assert parse_answer("3", None, [intensity_question("low")]) is None
    assert parse_answer("1", None, [intensity_question("normal")]) is None


def test_a_bare_number_always_answers_the_done_question() -> None:
    # Given the daily prompt's Done question and then the intensity poll, in either order
    outstanding = [intensity_question("normal"), DONE_QUESTION]
    # When the participant answers with a number / Then it answers "Did you do it?" (the intensity
    # poll is answered by word, see render_text)
    first = parse_answer("1", None, outstanding)
    assert first is not None and (first.question_id, first.option_id) == ("done", "done")
    # but a word that only fits the older question still answers it
    done = parse_answer("done", None, outstanding)
    assert done is not None and done.question_id == "done"


def test_number_never_answers_the_intensity_poll() -> None:
    # "3" does not fit the Done question (2 options), and numbers never answer the intensity poll.
    assert parse_answer("3", None, [DONE_QUESTION, intensity_question("normal")]) is None
    first = parse_answer("1", None, [DONE_QUESTION, intensity_question("normal")])
    assert first is not None and (first.question_id, first.option_id) == ("done", "done")


def test_words_only_match_outstanding_questions() -> None:
    assert parse_answer("yes", None, []) is None
    assert parse_answer("yes", None, [intensity_question("normal")]) is None
    assert parse_answer("low", None, [DONE_QUESTION]) is None


def test_free_text_is_not_an_answer() -> None:
    outstanding = [intensity_question("normal"), DONE_QUESTION]
    for text in ["yes but I want to move my reminder to 8am", "no idea", "12", "1 2", "more or less"]:
        assert parse_answer(text, None, outstanding) is None, text


def test_apply_intensity_ignores_other_questions() -> None:
    answer = parse_answer("done", None, [DONE_QUESTION])
    assert answer is not None
    assert apply_intensity("high", answer) == "high"


@settings(deadline=None, derandomize=True)
@given(
    st.one_of(st.none(), st.text(max_size=60)),
    st.one_of(st.none(), st.text(max_size=40)),
    st.sampled_from(["low", "normal", "high", ""]),
)
def test_parse_answer_never_raises(text: str | None, answer_id: str | None, current: str) -> None:
    answer = parse_answer(text, answer_id, [intensity_question(current), DONE_QUESTION])
    if answer is not None:
        assert apply_intensity(current, answer) in ("low", "normal", "high")
        assert parse_answer(answer.canonical_text, None, []) == answer


def test_question_text_starts_a_message_with_no_body_and_keeps_the_body_indentation() -> None:
    from promptpipe.flow.questions import (
        DONE_QUESTION,
        intensity_question,
        render_combined_text,
        render_text,
        with_question_text,
    )

    done, combined = render_text(DONE_QUESTION), render_combined_text(intensity_question("normal"))
    # no body (or only blanks): the question is the whole message, no leading blank lines
    assert with_question_text("", DONE_QUESTION) == done
    assert with_question_text(" \n", DONE_QUESTION, intensity_question("normal")) == combined
    assert (
        with_question_text("Try 3 squats.", DONE_QUESTION, intensity_question("normal")) == f"Try 3 squats.\n{combined}"
    )
    # a body: trailing blanks dropped before the paragraph break, its own start kept as written
    assert with_question_text("  Try 3 squats.  \n", DONE_QUESTION) == f"  Try 3 squats.\n\n{done}"
    assert with_question_text("Hi", None) == "Hi"


# --- ------------------------------------------------------------------------------------------
# Fixed-answer questions at their edges (docs/behaviour.md#B-INT-4): typographic apostrophes either
# way round and none at all in the canonical text, questions whose options the parser does not know
# (a hand-built or future question must never be read as an answer it cannot name), one-option
# questions, and the errors that name what was unknown.


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
