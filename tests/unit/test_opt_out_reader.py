"""The opt-out / opt-in / HELP reader (``rules/opt_out.py``, docs/compliance.md)."""

from __future__ import annotations

import pytest

from promptpipe.rules.opt_out import (
    DEFAULT_HELP_TEXTS,
    DEFAULT_OPT_OUT_TEXTS,
    OptKind,
    OptReading,
    fixed_text,
    keyword_lists,
    primary_language,
    provider_keyword,
    read_opt_message,
)


@pytest.mark.parametrize(
    "text",
    ["STOP", "stop", "Stop.", "STOP!", "ＳＴＯＰ", "S\u200bTOP", " stop 🛑", "STOPALL", "stop all", "Unsubscribe",
     "CANCEL", "end", "Quit!", "REVOKE", "optout", "OPT OUT", "opt-out", "Opt_Out", "stop please", "pls stop",
     "ok STOP now", "«stop»"],
)  # fmt: skip
def test_an_english_opt_out_word_in_any_written_form(text: str) -> None:
    assert read_opt_message(text) == OptReading(OptKind.OPT_OUT, "en", keyword=True)


@pytest.mark.parametrize("text", ["BAJA", "baja.", "Parar", "ALTO!", "cancelar", "Basta", "DETENER", "para"])
def test_a_spanish_opt_out_word(text: str) -> None:
    assert read_opt_message(text) == OptReading(OptKind.OPT_OUT, "es", keyword=True)


@pytest.mark.parametrize(("text", "language"), [("HELP", "en"), ("help?", "en"), ("ＩＮＦＯ", "en"),
                                                ("Ayuda", "es"), ("¿ayuda?", "es"), ("INFORMACIÓN", "es")])  # fmt: skip
def test_help_words(text: str, language: str) -> None:
    assert read_opt_message(text) == OptReading(OptKind.HELP, language, keyword=True)


def test_a_word_of_two_languages_goes_to_the_preferred_one() -> None:
    assert read_opt_message("info", preferred_language="es") == OptReading(OptKind.HELP, "es")
    assert read_opt_message("info") == OptReading(OptKind.HELP, "en")


@pytest.mark.parametrize("text", ["START", "Start!", "ｓｔａｒｔ", "unstop", "resume", "ALTA", "reanudar"])
def test_opt_in_words(text: str) -> None:
    reading = read_opt_message(text)
    assert reading is not None and reading.kind is OptKind.OPT_IN


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Stop sending me these!", "en"),
        ("could you please stop texting me", "en"),
        ("i dont want your messages anymore", "en"),
        ("do not contact me again", "en"),
        ("I'd like to unsubscribe", "en"),
        ("opt me out", "en"),
        ("no more text messages, thanks", "en"),
        ("hey, stop the texts. this isn't for me", "en"),
        ("stop messaging me i hate this", "en"),  # a run-on after the request
        ("Por favor deja de escribirme", "es"),
        ("ya no quiero mensajes", "es"),
        ("no me envíen más textos", "es"),
        ("sácame de la lista", "es"),
    ],
)
def test_a_plain_language_request_to_stop_all_messages(text: str, language: str) -> None:
    assert read_opt_message(text) == OptReading(OptKind.OPT_OUT, language, keyword=False)


@pytest.mark.parametrize(
    "text",
    ["stop texting me in the evenings", "stop sending me reminders", "no more texts until monday please",
     "stop the messages for 2 days", "deja de mandarme mensajes en la mañana", "stop texting me, at least on weekends",
     "stop texting before 9"],
)  # fmt: skip
def test_a_narrowed_stop_request_is_unclear_not_an_opt_out(text: str) -> None:
    assert read_opt_message(text) == OptReading(OptKind.UNCLEAR_STOP, "", keyword=False)


@pytest.mark.parametrize(
    "text",
    [
        "I'll stop by the gym after work",
        "trying to stop snacking at night",
        "can't stop smiling",
        "end of the day works",
        "stop",
        "stopping by later",
        "I want to stop eating late",
        "don't stop the texts, they help",
        "the end is near",
        "help me pick a time",
        "can I stop the messages later if I want?",
        "stop texting my ex was the best idea",
        "para mí es difícil",
        "me ayuda mucho",
        "",
        "🛑",
        "?!",
    ],
)
def test_a_sentence_that_only_contains_the_word_is_nothing(text: str) -> None:
    reading = read_opt_message(text)
    assert reading is None or (text == "stop" and reading.kind is OptKind.OPT_OUT)


def test_keyword_lists_replace_a_language_but_keep_the_fccs_words() -> None:
    lists = keyword_lists({"opt_out": {"en": ["halt"], "fr": ["arret"]}})
    assert read_opt_message("halt", lists) == OptReading(OptKind.OPT_OUT, "en")
    assert read_opt_message("ARRÊT", lists) == OptReading(OptKind.OPT_OUT, "fr")
    for word in ("stop", "quit", "end", "revoke", "opt out", "cancel", "unsubscribe"):
        assert read_opt_message(word, lists) == OptReading(OptKind.OPT_OUT, "en")
    assert read_opt_message("stopall", lists) is None  # the study's list replaced English's; STOPALL is not the FCC's
    assert read_opt_message("baja", lists) == OptReading(OptKind.OPT_OUT, "es")  # Spanish kept its default


def test_an_opt_out_word_wins_when_a_list_also_names_it_for_another_kind() -> None:
    lists = keyword_lists({"help": {"en": ["help", "stop"]}})
    assert read_opt_message("STOP", lists) == OptReading(OptKind.OPT_OUT, "en")


def test_the_providers_own_keywords_are_single_words_as_sent() -> None:
    assert provider_keyword(" stop ") == "opt_out"
    assert provider_keyword("Revoke") == "opt_out"
    assert provider_keyword("help") == "help"
    assert provider_keyword("YES") == "opt_in"
    assert provider_keyword("Stop.") is None
    assert provider_keyword("stop please") is None
    assert provider_keyword("BAJA") is None


def test_fixed_texts_come_in_the_language_with_english_as_the_fallback() -> None:
    help_es = fixed_text({}, DEFAULT_HELP_TEXTS, "es-MX", study="Estudio", contact="+1 555 0100")
    assert help_es.startswith("Estudio:") and "+1 555 0100" in help_es and "BAJA" in help_es
    # a language with no text of its own (French has one now) falls back to English
    assert fixed_text({}, DEFAULT_OPT_OUT_TEXTS, "de", study="S", contact="") == fixed_text(
        {}, DEFAULT_OPT_OUT_TEXTS, "en", study="S", contact=""
    )
    assert "START" in fixed_text({}, DEFAULT_OPT_OUT_TEXTS, "fr-CA", study="S", contact="")
    own = {"en": "{study} stopped. START to restart."}
    assert fixed_text(own, DEFAULT_OPT_OUT_TEXTS, "de", study="S", contact="") == "S stopped. START to restart."
    assert "START" in fixed_text({}, DEFAULT_OPT_OUT_TEXTS, "es", study="S", contact="")
    assert primary_language("EN_us") == "en"


@pytest.mark.parametrize(
    ("body", "language"),
    [("STOP. i want to end it all", "en"), ("Stop!! I mean it", "en"), ("BAJA. ya no quiero", "es")],
)
def test_an_opt_out_word_standing_as_the_first_sentence_is_an_opt_out(body: str, language: str) -> None:
    reading = read_opt_message(body)
    assert reading is not None and reading.kind is OptKind.OPT_OUT and reading.language == language
    assert not reading.keyword  # the provider's own filter reads whole messages only


@pytest.mark.parametrize("body", ["Cancel. I'm sick today", "End. of the day works", "I'll stop by. later ok"])
def test_end_or_cancel_as_a_first_sentence_or_stop_inside_one_is_not(body: str) -> None:
    assert read_opt_message(body) is None


def test_an_opt_out_word_wins_whichever_kind_the_study_lists_first() -> None:
    """A study's settings may list a word for help before they list it as an opt-out word: STOP is
    still honoured."""
    lists = {"help": {"en": ["stop"]}, "opt_out": {"en": ["stop"]}}
    assert read_opt_message("STOP", lists) == OptReading(OptKind.OPT_OUT, "en", keyword=True)


@pytest.mark.parametrize("body", ['"Stop sending me these"', "'opt me out'", "“unsubscribe me”"])
def test_a_request_in_quotes_is_still_a_request(body: str) -> None:
    assert read_opt_message(body) == OptReading(OptKind.OPT_OUT, "en", keyword=False)


def test_an_opt_out_word_as_the_first_sentence_is_no_keyword_reading() -> None:
    """Not ``keyword=True`` (the provider's filter did not read it) and not a missing value."""
    assert read_opt_message("STOP. please, I mean it") == OptReading(OptKind.OPT_OUT, "en", keyword=False)


def test_the_request_patterns_joined_bare_read_as_joined_with_a_group_each() -> None:
    """The request patterns join their cores bare (``a|b``, for cold start): on every clause of the
    built and held-out cases, each language's anchored and floating pattern finds the same matches,
    span for span, as with a group around each core (``(?:a)|(?:b)``, as before)."""
    import json
    import re
    from pathlib import Path

    from promptpipe.rules import opt_out_requests as requests

    data = Path(__file__).resolve().parents[1] / "data" / "opt_out"
    texts = [
        json.loads(line)["text"]
        for name in ("built.jsonl", "heldout.jsonl")
        for line in (data / name).read_text(encoding="utf-8").splitlines()
        if line
    ]
    clauses = [
        re.sub(r"\s+", " ", clause.strip(" '\""))
        for text in texts
        for clause in requests._CLAUSE.split(requests._mend(requests.fold_accents(requests.normalise_text(text))))
    ]
    tables = {
        "en": (requests._EN_LEAD, requests._EN_ANCHORED, requests._EN_FLOATING),
        "es": (requests._ES_LEAD, requests._ES_ANCHORED, requests._ES_FLOATING),
        "fr": (requests._FR_LEAD, requests._FR_ANCHORED, requests._FR_FLOATING),
        "pt": (requests._PT_LEAD, requests._PT_ANCHORED, requests._PT_FLOATING),
    }
    matched = 0
    for language, anchored, floating in requests._requests():
        lead, anchored_cores, floating_cores = tables[language]

        def grouped(cores: tuple[str, ...]) -> str:
            return "|".join(f"(?:{core})" for core in cores)

        anchored_grouped = re.compile(rf"^{lead}(?:{grouped((*anchored_cores, *floating_cores))})\b")
        floating_grouped = re.compile(rf"(?<![\w'-])(?:{grouped(floating_cores)})(?![\w'])")
        for clause in clauses:
            found, expected = anchored.match(clause), anchored_grouped.match(clause)
            assert (found and found.span()) == (expected and expected.span()), (language, clause)
            spans = [m.span() for m in floating.finditer(clause)]
            assert spans == [m.span() for m in floating_grouped.finditer(clause)], (language, clause)
            matched += bool(found or spans)
    assert matched > 100  # the cases do reach the patterns
