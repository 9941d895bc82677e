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


# -- forms the rules were not built on (built/12_feedback_unseen_forms.yaml, committed first) ---------


@pytest.mark.parametrize("said", ["2 of 3 glasses", "3 out of 5 sets", "2 de 3 vasos", "1 sur 2"])
def test_a_count_short_of_the_whole_is_partial(said: str) -> None:
    assert fr.is_partial(said)


@pytest.mark.parametrize("said", ["3 of 3!", "did 5 pushups", "a las 8 de la noche"])
def test_a_whole_count_or_a_time_is_not_partial(said: str) -> None:
    assert not fr.is_partial(said)


@pytest.mark.parametrize(
    ("said", "minutes"),
    [
        ("can you push it an hour? dinner runs late these days", 60),
        ("push it back 30 min", 30),
        ("bump it an hour pls", 60),
        ("move it up an hour", -60),
        ("bring it forward half an hour", -30),
        ("adelántalo media hora", -30),
        ("atrásalo una hora porfa", 60),
        ("décale d'une heure stp", 60),
        ("avance-le de 30 minutes", -30),
        ("¿lo puedes pasar media hora antes?", -30),
    ],
)  # fmt: skip
def test_a_shift_said_with_a_verb_of_direction(said: str, minutes: int) -> None:
    assert fr.shift_minutes(said) == minutes


@pytest.mark.parametrize(
    "said", ["move it 2 hours", "my train was delayed 30 min", "i moved 2 hours of boxes", "did it an hour ago"]
)
def test_no_shift_without_a_way_or_a_verb_of_the_prompt(said: str) -> None:
    assert fr.shift_minutes(said) is None


@pytest.mark.parametrize(
    "said",
    [
        "tu peux le décaler à 21h ?",
        "a las 7 mejor, así salgo antes del trabajo",
        "mejor cámbialo a las 9 de la noche",
        "¿me lo puedes mandar a las 6?",
        "could we switch it to 12:30?",
        "move it to 9 then?",
        "send them at 6 from now on",
        "21h plutôt",
        "can you change my reminder time",
    ],
)
def test_a_verb_of_change_with_the_prompt_as_its_object_asks_for_another_time(said: str) -> None:
    assert fr.asks_for_another_time(said)


@pytest.mark.parametrize(
    "said",
    [
        "tengo que pasar a la farmacia primero, al rato lo hago",
        "need to stop at the pharmacy first, will do it after",
        "I'm stopping by the gym later, will stretch there",
        "passer à la pharmacie à 18h",
        "send me a pic",
        "did it but like 2 hours late lol",
        "ran out of time before my 9am meeting",
    ],
)
def test_an_errand_a_report_or_a_time_in_passing_asks_for_no_other_time(said: str) -> None:
    assert not fr.asks_for_another_time(said)


def test_an_errand_is_read_as_one() -> None:
    assert fr.runs_an_errand("tengo que pasar a la farmacia primero")
    assert not fr.runs_an_errand("pásalo a las 7")


@pytest.mark.parametrize(
    ("said", "asked", "outcome"),
    [
        ("sí pero tarde, como a las 10", True, "done"),  # a yes with a qualifier answers "did you?"
        ("yes but late lol", True, "done"),
        ("sí pero tarde", False, "no_report"),  # not asked: nothing presumed
        ("ran out of time before my 9am meeting", True, "not_done"),  # "ran" is no run here
        ("ran 2 miles", False, "done"),
        ("nel, se me pasó", True, "not_done"),
        ("hoy no pude", False, "not_done"),
        ("ya quedó", False, "done"),
        ("sí, ya caminé. oye, ¿cuánto dura el estudio?", False, "done"),
        ("leí 5 páginas", False, "done"),
        ("j'ai marché 10 minutes", False, "done"),
        ("I went to bed early", False, "no_report"),
        ("Tom said hi", False, "no_report"),
    ],
)
def test_outcomes_in_unseen_forms(said: str, asked: bool, outcome: str) -> None:
    assert read_outcome(said, asked=asked) == outcome


def test_hoy_no_pude_says_nothing_beyond_the_miss() -> None:
    assert without_outcome_words("hoy no pude") == ""


@pytest.mark.parametrize(
    ("said", "pause"),
    [
        ("skip tomorrow pls", PauseRequest(days=1)),
        ("no texts tomorrow, big exam", PauseRequest(days=1)),
        ("mañana no me mandes mensajes", PauseRequest(days=1)),
    ],
)
def test_tomorrow_is_the_length_of_a_pause(said: str, pause: PauseRequest) -> None:
    assert fr.pause_request(said) == pause


def test_the_morning_is_no_tomorrow() -> None:
    assert fr.pause_request("en la mañana no puedo") is None


@pytest.mark.parametrize(
    ("said", "away"),
    [
        ("I'm away this weekend", PauseRequest(days=2)),
        ("estoy de viaje toda la semana", PauseRequest(days=7)),
        ("je pars en vacances 10 jours", PauseRequest(days=10)),
        ("out of town until thursday", PauseRequest(weekday=3)),
        ("I'm away", None),  # no length: nothing to offer yet
        ("did it before going away", None),
        ("work was crazy today", None),
    ],
)
def test_being_away_for_a_length(said: str, away: PauseRequest | None) -> None:
    assert fr.away_for(said) == away


@pytest.mark.parametrize(
    "said", ["you can text me again", "puedes volver a mandarme los mensajes", "ya regresé", "estoy de vuelta"]
)
def test_resumes_in_other_words(said: str) -> None:
    assert fr.resumes(said)


@pytest.mark.parametrize("said", ["nothing after 9pm", "no mensajes después de las 10", "rien après 21h stp"])
def test_a_limit_on_the_hour(said: str) -> None:
    assert fr.limits_the_hours(said)


@pytest.mark.parametrize("said", ["not on weekends pls", "los fines de semana no me mandes, porfa", "pas le week-end"])
def test_a_limit_on_the_days(said: str) -> None:
    assert fr.limits_the_days(said)


@pytest.mark.parametrize("said", ["no texts this weekend pls", "did it on the weekend", "I did it before 9"])
def test_a_pause_or_a_report_is_no_limit(said: str) -> None:
    assert not fr.limits_the_days(said) and not fr.limits_the_hours(said)


@pytest.mark.parametrize("said", ["not yet, will do it tonight", "todavía no, al rato", "pas encore, ce soir"])
def test_not_yet_is_no_miss(said: str) -> None:
    assert fr.not_yet(said)


@pytest.mark.parametrize("said", ["not yet, forgot", "nope", "todavía no, no pude"])
def test_a_miss_is_no_not_yet(said: str) -> None:
    assert not fr.not_yet(said)


@pytest.mark.parametrize("said", ["later pls, like 9", "could it be a bit later?", "un poco más temprano porfa"])
def test_a_way_asked_for_is_another_time(said: str) -> None:
    assert fr.asks_for_another_time(said)


@pytest.mark.parametrize("said", ["I'll do it later", "did it later than usual", "not yet, later"])
def test_a_plan_for_later_is_no_other_time(said: str) -> None:
    assert not fr.asks_for_another_time(said)


@pytest.mark.parametrize("said", ["I want to do yoga instead", "prefiero hacer yoga en vez de caminar"])
def test_another_activity_instead_is_a_new_habit(said: str) -> None:
    assert fr.new_habit(said)


@pytest.mark.parametrize("said", ["I want to do it at 7 instead", "rather do it in the evening instead"])
def test_another_time_instead_is_no_new_habit(said: str) -> None:
    assert not fr.new_habit(said)


@pytest.mark.parametrize("said", ["what time will it come?", "¿a qué hora llega?", "quand est-ce que tu m'écris ?"])
def test_asks_when_the_prompt_comes(said: str) -> None:
    assert fr.asks_when(said)


@pytest.mark.parametrize(("said", "asked"), [("yes finally!!", True), ("sí, por fin", True), ("oui enfin", True)])
def test_a_yes_that_goes_on_answers_did_you(said: str, asked: bool) -> None:
    assert read_outcome(said, asked=asked) == "done"


def test_tried_then_stopped_is_part_of_it() -> None:
    assert fr.is_partial("I tried but gave up after a minute")
    assert fr.limits_the_hours("arrête de m'envoyer des messages le soir")


@pytest.mark.parametrize(
    ("said", "pause"),
    [
        ("puedes parar los mensajes unos días?", PauseRequest(days=3)),
        ("deja de mandarme mensajes por 3 días", PauseRequest(days=3)),
        ("can you give me a break until sunday", PauseRequest(weekday=6)),
        ("hold the reminders for several days", PauseRequest(days=3)),
    ],
)
def test_a_stop_with_a_length_is_a_pause(said: str, pause: PauseRequest) -> None:
    assert fr.pause_request(said) == pause


@pytest.mark.parametrize("said", ["para los mensajes", "on my lunch break", "deja de mandarme mensajes"])
def test_a_stop_without_a_length_or_a_break_of_the_day_is_no_pause(said: str) -> None:
    assert fr.pause_request(said) is None


@pytest.mark.parametrize(
    "said", ["je m'arrête à la boulangerie et après je le fais", "tengo que parar en el súper", "stop by the store"]
)
def test_stopping_at_a_place_is_an_errand_and_no_pause(said: str) -> None:
    assert fr.runs_an_errand(said) and fr.pause_request(said) is None


@pytest.mark.parametrize("said", ["sip", "simón", "obvio", "claro que sí", "ofc", "bien sûr"])
def test_a_yes_in_other_words_answers_did_you(said: str) -> None:
    assert read_outcome(said, asked=True) == "done" and read_outcome(said, asked=False) == "no_report"


def test_forgot_again_is_a_miss_not_a_resume() -> None:
    assert not fr.resumes("se me olvidó otra vez")
    assert read_outcome("se me olvidó otra vez", asked=True) == "not_done"
    assert fr.resumes("mándamelos otra vez")
