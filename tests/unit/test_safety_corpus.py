"""The safety screen on its labelled corpus (docs/safety.md): the built part is gated (recall at
least 0.98, false alarms at most 2 %); the held-out part is measured by ``scripts/corpus/safety_report.py
--heldout`` and reported, never gated or tuned against."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _vocabulary() -> list[str]:
    """The words the patterns are made of (their literal runs), for texts that come near a match."""
    import re

    from promptpipe.rules import safety_screen

    patterns = [
        p for table in (safety_screen._EN_PATTERNS, safety_screen._ES_PATTERNS) for ps in table.values() for p in ps
    ]
    return sorted({word for p in patterns for word in re.findall(r"[a-z]{2,}", re.sub(r"\\[a-zA-Z]", " ", p))})


_WORDS = _vocabulary()


_CORPUS = [normalise(r.text) for r in load("built") + load("heldout")]
_TEXTS = st.one_of(
    # words of the patterns in any order: near misses and chance matches
    st.lists(st.sampled_from([*_WORDS, "i", "me", "to", "a", "de", "no", "ya", "kms", "..."]), max_size=14).map(
        " ".join
    ),
    # a corpus text cut, with words of the patterns spliced in: matches that break or move
    st.tuples(
        st.sampled_from(_CORPUS),
        st.integers(0, 200),
        st.integers(0, 200),
        st.lists(st.sampled_from(_WORDS), max_size=3),
    ).map(lambda t: f"{t[0][: t[1]]} {' '.join(t[3])} {t[0][t[1] + t[2] % 12 :]}"),
)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(_TEXTS)
def test_the_bare_alternation_matches_as_the_grouped_one_and_the_patterns_one_by_one(text: str) -> None:
    """Joined bare (``a|b``) a category's alternation finds the same match, span for span, as joined
    with a group a pattern (``(?:a)|(?:b)``, as before), and matches exactly when one of its patterns does."""
    _same_reading(text)


def test_the_bare_alternation_reads_every_corpus_text_as_the_grouped_one() -> None:
    for text in _CORPUS:
        _same_reading(text)


def _same_reading(text: str) -> None:
    import re

    from promptpipe.rules import safety_screen

    for table, compiled in (
        (safety_screen._EN_PATTERNS, safety_screen._EN),
        (safety_screen._ES_PATTERNS, safety_screen._ES),
    ):
        for (category, patterns), (compiled_category, alternation) in zip(table.items(), compiled, strict=True):
            assert category is compiled_category
            grouped = re.compile("|".join(f"(?:{p})" for p in patterns))
            found, expected = alternation.search(text), grouped.search(text)
            assert (found and found.span()) == (expected and expected.span()), (category, text)
            assert (found is not None) == any(re.search(p, text) for p in patterns), (category, text)
