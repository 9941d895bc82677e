"""The safety screen on its labelled corpus (docs/safety.md): the built part is gated (recall at
least 0.98, false alarms at most 2 %); the held-out part is measured by ``scripts/corpus/safety_report.py
--heldout`` and reported, never gated or tuned against."""

from __future__ import annotations

import pytest

from promptpipe.rules.safety_screen import Category, normalise, screen
from scripts.corpus.safety_report import load, measure


def test_the_built_corpus_is_caught_with_few_false_alarms() -> None:
    rows = load("built")
    assert sum(r.crisis for r in rows) >= 150 and sum(not r.crisis for r in rows) >= 150
    figures = measure(rows)
    assert figures.recall >= 0.98, [r.text for r in figures.misses]
    assert figures.false_alarm_rate <= 0.02, [r.text for r in figures.alarms]


def test_each_language_of_the_built_corpus_meets_the_goal_on_its_own() -> None:
    for language in ("en", "es"):
        figures = measure([r for r in load("built") if r.language == language])
        assert figures.recall >= 0.98, (language, [r.text for r in figures.misses])
        assert figures.false_alarm_rate <= 0.02, (language, [r.text for r in figures.alarms])


def test_the_held_out_part_is_big_enough_and_a_quarter_spanish() -> None:
    rows = load("heldout")
    crisis = [r for r in rows if r.crisis]
    negatives = [r for r in rows if not r.crisis]
    assert len(crisis) >= 40 and len(negatives) >= 40
    for part in (crisis, negatives):
        assert sum(r.language == "es" for r in part) * 4 >= len(part)


@pytest.mark.parametrize(
    ("text", "category", "language"),
    [
        ("i want to end it all", Category.SUICIDE, "en"),
        ("STOP. i want to end it all", Category.SUICIDE, "en"),
        ("no quiero seguir viviendo", Category.SUICIDE, "es"),
        ("i made myself throw up after dinner", Category.EATING_DISORDER, "en"),
        ("my husband hits me", Category.ABUSE, "en"),
        ("having chest pain right now", Category.MEDICAL, "en"),
        ("me corté otra vez", Category.SELF_HARM, "es"),
    ],
)
def test_a_reading_names_the_category_and_the_language(text: str, category: Category, language: str) -> None:
    reading = screen(text)
    assert reading.flagged and reading.category is category and reading.language == language and reading.read


@pytest.mark.parametrize("text", ["my feet are killing me", "me muero de hambre", "stop", "Done ✅"])
def test_idioms_and_habit_talk_are_read_and_not_flagged(text: str) -> None:
    reading = screen(text)
    assert not reading.flagged and reading.category is None


def test_a_language_the_screen_does_not_read_goes_on_unflagged() -> None:
    reading = screen("je suis fatigué aujourd'hui")
    assert reading == reading.__class__(flagged=False, category=None, language=None) and not reading.read


def test_hidden_characters_and_lookalike_forms_do_not_hide_a_signal() -> None:
    # zero-width space inside a word, a right-to-left mark, full-width letters, a curly apostrophe
    assert screen("i want to k\u200bill myself").flagged
    assert screen("\u200fi want to die").flagged
    assert screen("ｉ ｗａｎｔ ｔｏ ｄｉｅ").flagged
    assert screen("i don\u2019t want to live anymore").flagged
    assert normalise("  Ya NO quiero\u200d vivir  ") == "ya no quiero vivir"


def test_a_signal_without_function_words_is_still_read() -> None:
    reading = screen("kms")
    assert reading.flagged and reading.language == "en"
    reading = screen("sobredosis")
    assert reading.flagged and reading.language == "es"


def test_one_alternation_a_category_reads_as_its_patterns_one_by_one() -> None:
    """The screen compiles a category's patterns into one alternation (for cold start): on every text
    of both parts, the first category that matches is the one a pattern-by-pattern reading finds."""
    import re

    from promptpipe.rules import safety_screen

    texts = [normalise(r.text) for r in load("built") + load("heldout")]
    for table, compiled in (
        (safety_screen._EN_PATTERNS, safety_screen._EN),
        (safety_screen._ES_PATTERNS, safety_screen._ES),
    ):
        one_by_one = [(category, re.compile(p)) for category, patterns in table.items() for p in patterns]
        for text in texts:
            expected = next((category for category, pattern in one_by_one if pattern.search(text)), None)
            assert safety_screen._first(compiled, text) == expected, text
