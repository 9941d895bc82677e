"""Which language the safety screen reads a text in, and which category it names when both languages'
patterns match (``rules/safety_screen.py``, docs/safety.md): people switch languages mid-message."""

from __future__ import annotations

import pytest

from promptpipe.rules.safety_screen import Category, SafetyReading, screen


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("going for a walk after lunch", "en"),
        ("hoy caminé con mi perro", "es"),
        ("no", "en"),  # "no" is a word of both: a tie with no signal is read as English
        ("ok 👍", None),  # no function word of either language: not read
    ],
)
def test_a_text_without_a_signal_is_read_in_the_language_of_its_words(text: str, language: str | None) -> None:
    assert screen(text) == SafetyReading(flagged=False, category=None, language=language)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "category", "language"),
    [
        # Spanglish: the language with more function words decides whose category is named
        ("mi esposo me pega y tengo chest pain", Category.ABUSE, "es"),
        ("i think my husband hits me, tengo dolor de pecho", Category.ABUSE, "en"),
        # the signal only in the other language: still named, in the language of the words
        ("no sé qué hacer, kms", Category.SUICIDE, "es"),
        ("i dont know what to do anymore, sobredosis", Category.MEDICAL, "en"),
        # the words tie ("no" is both): the English reading, with its category
        ("no, kms, sobredosis", Category.SUICIDE, "en"),
        # the words tie and only a Spanish pattern matched: the Spanish reading
        ("me corté otra vez", Category.SELF_HARM, "es"),
    ],
)
def test_a_text_with_signals_of_both_languages_names_the_category_of_the_language_it_is_read_in(
    text: str, category: Category, language: str
) -> None:
    assert screen(text) == SafetyReading(flagged=True, category=category, language=language)  # type: ignore[arg-type]
