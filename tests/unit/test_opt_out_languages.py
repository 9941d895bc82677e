"""Opt-outs in Spanish and French as people write them are read before anything else (rules/opt_out.py);
sentences that only contain the word, or narrow the request, are not opt-outs."""

from __future__ import annotations

import pytest

from promptpipe.rules.opt_out import OptKind, read_opt_message


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("arrêtez", "fr"),
        ("Arrêtez svp", "fr"),
        ("DÉSABONNER", "fr"),
        ("désabonnez-moi", "fr"),
        ("je veux me désabonner", "fr"),
        ("arrêtez de m'envoyer des messages", "fr"),
        ("Bonjour, je ne veux plus recevoir de messages", "fr"),
        ("ne m'envoyez plus de messages merci", "fr"),
        ("merci de ne plus m'envoyer de messages", "fr"),
        ("plus de messages svp", "fr"),
        ("ya no quiero recibir mensajes", "es"),
        ("ya no quiero participar", "es"),
        ("quiero salirme del estudio", "es"),
        ("cancela mi suscripción porfa", "es"),
    ],
)
def test_spanish_and_french_opt_outs_are_honoured(text: str, language: str) -> None:
    reading = read_opt_message(text)
    assert reading is not None and reading.kind is OptKind.OPT_OUT
    assert reading.language == language


@pytest.mark.parametrize(
    "text",
    ["je vais arrêter de fumer", "j'arrête le café après le dîner", "après le café", "vers 7h30 après le café"],
)
def test_a_sentence_that_only_contains_the_word_is_no_opt_out(text: str) -> None:
    assert read_opt_message(text) is None


def test_a_french_stop_narrowed_to_a_time_is_unclear() -> None:
    reading = read_opt_message("arrêtez les messages le soir")
    assert reading is not None and reading.kind is OptKind.UNCLEAR_STOP


def test_aide_asks_for_help() -> None:
    reading = read_opt_message("aide")
    assert reading is not None and reading.kind is OptKind.HELP and reading.language == "fr"
