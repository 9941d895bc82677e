"""The feedback reader (``rules/feedback_reading.py``) and the outcome words added for it
(``rules/outcome.py``), on messages as people text them: emoji, typos, voice-to-text, Spanish, French."""

from __future__ import annotations

import pytest

from promptpipe.rules import feedback_reading as fr
from promptpipe.rules.feedback_reading import PauseRequest, TimePreference
from promptpipe.rules.outcome import read_outcome, without_outcome_words


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("did it bc my sister joined me, she wants to stretch too", "my sister joined me"),
        ("porque mi hermana me acompañó", "mi hermana me acompañó"),
        ("parce que ma sœur était là", "ma sœur était là"),
        ("yeah I did it right after breakfast it was easy because the glass was already on the counter",
         "the glass was already on the counter"),
        ("done thanks to the alarm i set", "the alarm i set"),
        ("too tired cuz work was insane", "work was insane"),
        ("did it", ""),
        ("no because idk", ""),  # one word says nothing
    ],
)  # fmt: skip
def test_the_reason_inside_a_report_is_read_in_the_participants_words(said: str, reason: str) -> None:
    assert fr.reason_clause(said) == reason


@pytest.mark.parametrize("said", ["half of it, got interrupted", "kinda", "sort of?", "la mitad", "à moitié"])
def test_part_of_it_is_partial(said: str) -> None:
    assert fr.is_partial(said)


@pytest.mark.parametrize("said", ["did it", "done ✅", "nope", "hoy no pude"])
def test_a_whole_report_is_not_partial(said: str) -> None:
    assert not fr.is_partial(said)


@pytest.mark.parametrize(
    ("said", "pause"),
    [
        ("pause till monday pls, family stuff", PauseRequest(weekday=0)),
        ("puedes pausar los mensajes hasta el viernes?", PauseRequest(weekday=4)),
        ("mettre en pause jusqu'à dimanche", PauseRequest(weekday=6)),
        ("pause 2 jours stp", PauseRequest(days=2)),
        ("tu peux mettre en pause une semaine ? je pars en vacances", PauseRequest(days=7)),
        ("PAUSE for a couple of weeks", PauseRequest(days=14)),
        ("can u pause", PauseRequest()),
    ],
)
def test_a_pause_has_a_length_or_a_weekday(said: str, pause: PauseRequest) -> None:
    assert fr.pause_request(said) == pause


@pytest.mark.parametrize("said", ["need to stop at the pharmacy first", "a week went by fast", "did it monday"])
def test_no_pause_without_the_word(said: str) -> None:
    assert fr.pause_request(said) is None


@pytest.mark.parametrize(("weekday", "today", "days"), [(0, 1, 6), (0, 6, 1), (2, 2, 7), (4, 0, 4)])
def test_days_until_a_weekday(weekday: int, today: int, days: int) -> None:
    assert fr.days_until(weekday, today) == days


@pytest.mark.parametrize("said", ["tu peux reprendre les messages", "je suis de retour", "start them again pls"])
def test_resumes(said: str) -> None:
    assert fr.resumes(said)


def test_a_pause_is_no_resume() -> None:
    assert not fr.resumes("pause them, I'll tell you when to start them again")


@pytest.mark.parametrize(
    ("said", "preference"),
    [
        ("mornings might be better tbh", TimePreference("morning")),
        ("can we move it to evenings? mornings are a blur", TimePreference("evening")),
        ("mornings don't work for me, always rushing to the bus", TimePreference(None, "morning")),
        ("no, en la mañana no me da tiempo, mejor en la tarde", TimePreference("afternoon", "morning")),
        ("tu peux le changer ? plutôt le soir", TimePreference("evening")),
        ("pas le matin", TimePreference(None, "morning")),
    ],
)
def test_a_day_part_asked_for_or_refused(said: str, preference: TimePreference) -> None:
    assert fr.time_preference(said) == preference


@pytest.mark.parametrize("said", ["did it this morning", "good morning!", "it was a long evening"])
def test_a_day_part_in_passing_asks_for_nothing(said: str) -> None:
    assert fr.time_preference(said) is None


LANGUAGES = {
    "es": ("ya lo hice ✅", "hoy no pude", "¿puedes pausar?", "si"),
    "fr": ("c'est fait", "pas aujourd'hui, trop fatiguée", "oui"),
    "en": ("done ✅", "👍", "did it bc my sister joined me"),
}


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_the_language_to_reply_in(lang: str) -> None:
    assert [fr.language(said) for said in LANGUAGES[lang]] == [lang] * len(LANGUAGES[lang])


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("c'est fait ✅", "done"),
        ("fait !", "done"),
        ("pas aujourd'hui, trop fatiguée", "not_done"),
        ("forgto today sry", "not_done"),
        ("j'ai oublié", "not_done"),
        ("je vais essayer demain", "no_report"),
        ("hurt my foot", "no_report"),
    ],
)
def test_outcomes_in_french_and_typos(said: str, outcome: str) -> None:
    assert read_outcome(said, asked=False) == outcome


def test_without_outcome_words_leaves_what_it_was_about() -> None:
    assert without_outcome_words("no, it rained") == ", it rained"
    assert without_outcome_words("nope") == ""
