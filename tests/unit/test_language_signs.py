"""The signs ``rules/language.py`` reads a language by (docs/offline-coach.md, "Languages"): a Spanish
message with none of the listed small words still reads as Spanish by the accented vowels French never
writes, and by its common conjunctions and time words; English and French messages are not pulled in."""

from __future__ import annotations

import pytest

from promptpipe.rules.language import conversation_language, detect_language


@pytest.mark.parametrize(
    "text",
    [
        "ya caminé, aunque llovía",
        "terminó tarde la reunión",
        "hoy lo hice pero poco",
        "sí, ya está",
        "ayer fui al gym",
        "esta semana nada",
    ],
)
def test_spanish_without_the_small_words_reads_as_spanish(text: str) -> None:
    assert detect_language(text) == "es"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("had a café after lunch", "en"),
        ("done, walked after work", "en"),
        ("j'ai marché après le café", "fr"),
        ("fait ce matin, à 7h", "fr"),
    ],
)
def test_english_and_french_keep_their_language(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_a_spanish_outcome_keeps_the_conversation_spanish_after_a_wordless_reply() -> None:
    # the study's English greeting is not theirs; "👍" tells nothing; the outcome tells Spanish
    assert conversation_language(["👍", "ya caminé, aunque llovía"], default="") == "es"
