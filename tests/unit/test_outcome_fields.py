"""The outcome fields a feedback reply carries, read by the pure readers (docs/offline-coach.md, "Outcome
fields in the feedback week"): a done said as fitting it in, what got in the way after a contrast beside
a done, a thanks on a hard day, and what helped said as what made it easy. Phrasings other than the
built corpus's (tests/data/conversations/built/27_feedback_outcome_fields.yaml), in English, Spanish and
French, with the near misses that must not be read as one."""

from __future__ import annotations

import pytest

from promptpipe.rules.feedback_report import what_helped_clause
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.outcome_fields import in_the_way_beside, opens_with_contrast, thanks_on_a_hard_day
from promptpipe.rules.report_details import company, hard_going, says_it_helps


@pytest.mark.parametrize(
    "said",
    [
        "got my 5 min in",
        "squeezed a set in at lunch",
        "snuck it in before the kids woke up",
        "fit mine in right after the school run",
        "finally got the stretches in today",
        "salí a correr un rato",
        "fui a nadar después del trabajo",
        "di mi caminata por el parque",
        "lo logré!!",
    ],
)
def test_a_done_said_as_fitting_it_in_or_going_out_is_a_done(said: str) -> None:
    assert read_outcome(said, asked=False) == "done"


@pytest.mark.parametrize(
    ("said", "reading"),
    [
        ("got in late so no", "not_done"),  # "got in" is arriving, not fitting it in
        ("got stuck in traffic, didnt happen", "not_done"),
        ("I'll fit it in tonight", "no_report"),  # a plan, nothing done yet
        ("gonna try to squeeze it in later", "no_report"),
        ("can i fit it in tomorrow instead?", "no_report"),
        ("voy a salir a caminar al rato", "no_report"),
        ("no lo logré hoy", "not_done"),
    ],
)
def test_arriving_a_plan_or_a_miss_is_no_done(said: str, reading: str) -> None:
    assert read_outcome(said, asked=False) == reading


@pytest.mark.parametrize(
    ("said", "in_the_way"),
    [
        ("did it but the toddler was screaming the whole time", "the toddler was screaming the whole time"),
        ("finished, though my shift ran long", "my shift ran long"),
        ("listo, pero con la lluvia fue más lento", "con la lluvia fue más lento"),
        ("ya quedó aunque andaba bien desvelada", "andaba bien desvelada"),
        ("c'est fait, mais avec le boulot c'était serré", "avec le boulot c'était serré"),
        ("swam a few laps, my shoulder hurts tho", "my shoulder hurts"),  # a contrast that closes the clause
    ],
)
def test_a_contrast_that_names_an_obstacle_beside_a_done_is_what_got_in_the_way(said: str, in_the_way: str) -> None:
    assert in_the_way_beside(said) == in_the_way


@pytest.mark.parametrize(
    "said",
    [
        "did it but it was fun",  # a contrast with nothing in the way
        "done, my kids joined me",  # no contrast: the kids helped
        "did it, but can we move it to 7 since work ends late?",  # a question
        "hecho 💪",
        "done! my sister came along tho",  # no obstacle: she helped
    ],
)
def test_no_obstacle_after_a_contrast_is_nothing_in_the_way(said: str) -> None:
    assert in_the_way_beside(said) == ""


def test_a_clause_that_opens_with_a_contrast_is_told() -> None:
    assert opens_with_contrast("but the kids were sick")
    assert opens_with_contrast("Aunque con el viaje…")
    assert not opens_with_contrast("my sister came along")


@pytest.mark.parametrize(
    "said",
    [
        "thx, rough one w the deadline tho",
        "thank u!! that was tough with the jet lag",
        "gracias, estuvo pesadísimo con el calor",
        "muchas gracias! hoy fue complicado con los niños",
        "merci ! c'était dur avec la pluie",
    ],
)
def test_a_thanks_on_a_day_judged_hard_is_told(said: str) -> None:
    assert thanks_on_a_hard_day(said)


@pytest.mark.parametrize(
    "said",
    [
        "thanks!",
        "thanks, it wasn't hard at all",  # not judged hard
        "thanks, is it hard to change the time?",  # a question
        "that was tough, thanks for asking",  # the thanks does not open it
        "gracias por los mensajes",
    ],
)
def test_a_thanks_alone_or_a_question_is_not_a_hard_day(said: str) -> None:
    assert not thanks_on_a_hard_day(said)


@pytest.mark.parametrize(
    ("said", "hard"),
    [
        ("did it but barely", "barely"),
        ("lo hice, pero fue complicadísimo con la visita", "con la visita"),
        ("done, tricky with the new schedule", "with the new schedule"),
    ],
)
def test_barely_and_complicated_judge_the_day_hard(said: str, hard: str) -> None:
    assert hard in hard_going(said)


@pytest.mark.parametrize(
    ("said", "helped"),
    [
        ("the new playlist made it fly by", "the new playlist"),
        ("prepping my clothes the night before works wonders", "prepping my clothes the night before"),
        ("having a buddy really works", "having a buddy"),
        ("con la playlist nueva se me hizo rápido", "con la playlist nueva"),
        ("el audiolibro me lo hizo más llevadero", "el audiolibro"),
        ("le casque m'a facilité la tâche", "le casque"),
    ],
)
def test_what_made_it_easy_names_what_helped(said: str, helped: str) -> None:
    assert what_helped_clause(said) == helped


@pytest.mark.parametrize(
    "said", ["that works for me", "7pm works", "the new time works better", "so it went by fast", "así se pasa volando"]
)
def test_an_agreement_a_time_or_a_pronoun_is_no_helper(said: str) -> None:
    assert what_helped_clause(said) == ""


# --- company and the texts judged, in forms the readers were not written on ------------------------------
@pytest.mark.parametrize(
    ("said", "who"),
    [
        ("my wife did them too", "my wife did them too"),
        ("my sister did it with me", "my sister did it with me"),
        ("mi primo lo hizo conmigo", "mi primo"),
    ],
)
def test_someone_who_did_it_too_is_what_helped(said: str, who: str) -> None:
    assert what_helped_clause(said) == who


@pytest.mark.parametrize("said", ["did it too late, almost forgot", "I did it too", "we did it too"])
def test_doing_it_oneself_or_too_late_names_no_helper(said: str) -> None:
    assert what_helped_clause(said) == ""


@pytest.mark.parametrize(("said", "who"), [("went with a coworker", "a coworker"), ("fui con una amiga", "una amiga")])
def test_a_companion_named_with_an_article_is_company(said: str, who: str) -> None:
    assert company(said) == who


def test_an_illness_after_with_is_no_company() -> None:
    assert company("woke up with a headache") == ""


@pytest.mark.parametrize(
    "said",
    [
        "this actually helps",
        "these msgs r helping a lot",
        "the reminders have been working",
        "it's been really good for me",
    ],
)
def test_the_habit_or_the_texts_judged_to_help(said: str) -> None:
    assert says_it_helps(said)


@pytest.mark.parametrize("said", ["this isn't helping", "that helps?", "the texts are not working"])
def test_not_helping_or_a_question_is_no_judgement(said: str) -> None:
    assert not says_it_helps(said)


@pytest.mark.parametrize(
    ("said", "in_the_way"),
    [
        ("got it done even w the rain lol", "the rain lol"),
        ("did it despite being so tired", "being so tired"),
        ("lo hice a pesar del calor", "calor"),
        ("fait malgré la pluie", "la pluie"),
        ("walked even with my sister", ""),  # a companion, no obstacle
    ],
)
def test_a_concession_beside_a_done_says_what_was_in_the_way(said: str, in_the_way: str) -> None:
    from promptpipe.rules.outcome_fields import in_the_way_beside

    assert in_the_way_beside(said) == in_the_way
