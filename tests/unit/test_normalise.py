"""The one normal form every reader of a message's words starts from (``rules/normalise.py``)."""

from __future__ import annotations

import pytest

from promptpipe.rules.normalise import fold_accents, normalise_text, strip_edges, words


@pytest.mark.parametrize(
    ("typed", "normal"),
    [
        ("ＳＴＯＰ", "stop"),  # full-width letters
        ("ST\u200bOP", "stop"),  # zero-width space
        ("\ufeffstop\u2060", "stop"),  # BOM, word joiner
        ("\u202estop\u202c", "stop"),  # bidi override and pop
        ("\u2067stop\u2069", "stop"),  # bidi isolate
        ("sto\u00adp", "stop"),  # soft hyphen
        ("Don’t  text\u00a0me", "don't text me"),  # typographic apostrophe, no-break space
        ("  Stop\t\nplease  ", "stop please"),
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),  # casefold
        ("ﬁnished", "finished"),  # ligature
        ("stop\u2014now", "stop-now"),  # em dash
        ("❤\ufe0f stop", "❤ stop"),  # variation selector
    ],
)
def test_the_normal_form(typed: str, normal: str) -> None:
    assert normalise_text(typed) == normal


def test_punctuation_and_emoji_stay_in_the_normal_form() -> None:
    # A question mark still says the message asks; only the edges are stripped on request.
    assert normalise_text("Help?") == "help?"
    assert strip_edges(" stop 🛑") == "stop"
    assert strip_edges("¿Ayuda?") == "ayuda"
    assert strip_edges("🛑🛑") == ""
    assert strip_edges("'stop it!'") == "stop it"


def test_words_split_on_everything_but_letters_digits_and_inner_apostrophes() -> None:
    assert words("OPT-OUT 🛑") == ("opt", "out")
    assert words("opt_out") == ("opt", "out")
    assert words("No quiero recibir más mensajes.") == ("no", "quiero", "recibir", "mas", "mensajes")
    assert words("I don’t want these!!") == ("i", "don't", "want", "these")
    assert words("9ish, 7:30") == ("9ish", "7", "30")
    assert words("") == ()


def test_fold_accents() -> None:
    assert fold_accents("información más señal") == "informacion mas senal"
