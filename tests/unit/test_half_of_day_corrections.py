"""The time that ends up scheduled (docs/offline-coach.md, "Times as people write them"): a correction
wins and keeps the half of the day already established, a hesitation alone corrects nothing, a bare
hour takes its half of the day from the habit and its routine, and a request in the feedback week moves
to the day-part it names."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach.intake_answers import parse_anchor, parse_intake_message
from promptpipe.adapters.offline_coach.intake_words import ANCHOR, DOMAIN, MOTIVATION, TIME
from promptpipe.adapters.offline_coach.time_changes import time_for_change
from promptpipe.adapters.offline_coach.time_forms import spoken_times
from promptpipe.adapters.offline_coach.times import (
    parse_clock_time,
    same_half_of_day,
    settle_half_of_day,
)
from promptpipe.rules.feedback_report import report_parts
from promptpipe.rules.feedback_requests import asks_for_another_time, runs_an_errand
from promptpipe.rules.half_of_day import asked_half_of_day, in_half_of_day


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("10pm wait no 10:45 once im in bed", "22:45"),
        ("21h... non 21h45, une fois couchée", "21:45"),
        ("a las 9 de la noche... no, mejor a las 10", "22:00"),
        ("en la noche, mejor a las 10 cuando los niños ya se durmieron", "22:00"),
        ("a las 7 o mejor 7:30, después del desayuno", "07:30"),
        ("7h, ou plutôt 7h30 après mon café", "07:30"),
        # the corrected hour said bare: the half of the day comes from the whole message
        ("ok so like 8 no actually 8:30 bc thats when the kids are finally asleep", "20:30"),
        ("hmm 6. no make that 6:15 when my alarm goes", "06:15"),
        ("9ish... nah make it 930 after dinner", "21:30"),
    ],
)
def test_a_correction_wins_and_keeps_the_half_of_the_day(said: str, expected: str) -> None:
    assert parse_clock_time(said) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("at 7 or 8, whichever", "07:00"),  # "or": a choice left open, not a correction
        ("8 or so, after i drop the 2 kids at school", "08:00"),  # "or so" hedges; 2 counts kids
        ("vers 7h ou un peu après, avant le boulot", "07:00"),
        ("bueno, a las 7 después de desayunar, o 2 veces si puedo", "07:00"),
        ("no sé, a las 9 de la noche, unos 10 minutos antes de dormir", "21:00"),
        ("7:30 i think, no later than 8pm tho", "07:30"),  # a limit, not a second answer
        ("no se, a las 8 o a las 9", "08:00"),
    ],
)
def test_a_hesitation_alone_picks_no_later_number(said: str, expected: str) -> None:
    assert parse_clock_time(said) == expected


@pytest.mark.parametrize(
    ("said", "rewritten"),
    [
        ("8 or so", "at 8"),
        ("8:30 or so, after dinner", "8:30, after dinner"),
        ("815 right after dinner", "at 8:15 right after dinner"),
        ("nah make it 930", "nah make it 9:30"),
        ("make it 100 squats", "make it 100 squats"),  # a count, not 1:00
        ("1000 steps after lunch", "1000 steps after lunch"),
    ],
)
def test_the_spoken_forms_of_a_correction(said: str, rewritten: str) -> None:
    assert spoken_times(said) == rewritten


@pytest.mark.parametrize(
    ("time", "said", "habit", "reason", "expected"),
    [
        ("18:45", "6:45 with my coffee", "vitamins with my coffee", "", "06:45"),
        ("18:45", "6:45 con el cafecito", "leer", "", "06:45"),  # the routine said, not yet saved
        ("14:00", "2 with my coffee", "walking", "", "14:00"),  # a weak hint never makes the small hours
        ("10:30", "10:30 after brushing my teeth", "gratitude journal", "go to bed calmer", "22:30"),
        # a day-part said in the message's own words, which a reason read apart took from the time
        ("08:30", "like 8:30 bc thats when the kids are finally asleep", "yoga", "", "20:30"),
        ("07:00", "7am, even though i go to bed late", "running", "", "07:00"),  # am said outright
    ],
)
def test_a_bare_hour_takes_its_half_of_the_day_from_the_habit_and_the_words(
    time: str, said: str, habit: str, reason: str, expected: str
) -> None:
    assert settle_half_of_day(time, said, habit=habit, reason=reason) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("mornings are too rushed, move it to the evening, like 8", "pm"),
        ("le matin c'est la course, on peut passer au soir ? vers 8h30", "pm"),
        ("¿me lo puedes cambiar para la tarde?", "pm"),
        ("le soir je suis crevé, plutôt le matin, vers 7h", "am"),
        ("in the evening im busy, switch it to mornings", "am"),
        ("mornings are too rushed", None),  # said of now, not where to go
        ("en la noche ya estoy muerta", None),
    ],
)
def test_the_day_part_a_request_moves_to(said: str, expected: str | None) -> None:
    assert asked_half_of_day(said) == expected


def test_a_time_moved_into_a_half_of_the_day() -> None:
    assert [in_half_of_day("08:00", "pm"), in_half_of_day("19:30", "am"), in_half_of_day("20:15", "pm")] == [
        "20:00",
        "07:30",
        "20:15",
    ]


@pytest.mark.parametrize(
    ("said", "current", "expected"),
    [
        ("mornings are too rushed, move it to the evening, like 8", "07:00", "20:00"),
        ("le matin c'est la course, on peut passer au soir ? vers 8h30", "07:30", "20:30"),
        ("en la noche ya estoy muerta, cámbialo a las 7 de la mañana mejor", "20:00", "07:00"),  # its own words win
        ("can we do 10 instead.. no wait 9:30", "21:00", "21:30"),
        ("make it 8, no actually 8:30", "21:00", "20:30"),
        ("can u switch it to 6", "18:30", "18:00"),
        ("¿se puede cambiar la hora a las 6?", "07:00", "06:00"),
        ("switch it to 2 pls, lunch is too busy", "12:30", "14:00"),
        ("no, mejor 8:45 que llego tarde a casa", "20:00", "20:45"),  # "tarde" here is late, not the afternoon
    ],
)
def test_a_feedback_request_moves_to_the_half_of_the_day_its_words_or_the_schedule_give(
    said: str, current: str, expected: str
) -> None:
    assert time_for_change(said, current) == expected


def test_late_and_tomorrow_say_no_half_of_the_day() -> None:
    assert same_half_of_day("08:45", "20:00", "mejor 8:45 que llego tarde") == "20:45"
    assert same_half_of_day("08:00", "20:00", "mañana mejor a las 8") == "20:00"
    assert same_half_of_day("04:00", "20:00", "por la tarde a las 4") == "04:00"  # said: left as read


@pytest.mark.parametrize("said", ["can we do 10 instead.. no wait 9:30", "make it 8, no actually 8:30"])
def test_a_correction_of_the_time_is_no_report_of_a_miss(said: str) -> None:
    # "no wait 9:30" after a request corrects the time asked for; it does not say "no, I didn't"
    assert report_parts(said, asked=True) is None


def test_a_count_after_no_is_still_a_clause_of_its_own() -> None:
    parts = report_parts("did it, no 2 sets only", asked=True)
    assert parts is not None and parts.outcome == "done" and parts.facts == ("no 2 sets only",)


def test_a_day_part_to_go_to_is_no_errand() -> None:
    assert asks_for_another_time("le matin c'est la course, on peut passer au soir ? vers 8h30")
    errand = "je dois passer à la pharmacie"
    assert runs_an_errand(errand) and not asks_for_another_time(errand)


def test_a_habit_said_with_its_moment_keeps_the_habit() -> None:
    empty = {DOMAIN: "", MOTIVATION: "", TIME: "", ANCHOR: ""}
    learned = parse_intake_message("leer antes de dormir", empty, DOMAIN)
    assert learned == {ANCHOR: "antes de dormir", DOMAIN: "leer"}
    assert parse_intake_message("antes de dormir", empty, DOMAIN) == {ANCHOR: "antes de dormir"}
    with_why = parse_intake_message("leer antes de dormir para desconectar", empty, DOMAIN)
    assert with_why[DOMAIN] == "leer" and with_why[ANCHOR] == "antes de dormir"


def test_once_in_bed_in_french_is_a_routine_and_once_a_day_is_not() -> None:
    assert parse_anchor("à 9h du soir, enfin plutôt 10h, une fois couché")[0] == "une fois couché"
    assert parse_anchor("une fois par jour")[0] == ""


@pytest.mark.parametrize(
    ("new", "earlier", "said", "kept"),
    [
        ("18:15", "07:00", "6:15", "06:15"),  # offered 7am: a quarter past is still the morning
        ("19:20", "08:00", "7:20 is better", "07:20"),
        ("18:45", "07:30", "6:45 pls", "06:45"),
        ("18:00", "07:00", "a las 18", "18:00"),  # the 24-hour clock said
        ("18:30", "07:00", "18:30", "18:30"),
    ],
)
def test_minutes_are_not_read_as_an_hour_of_the_24_hour_clock(new: str, earlier: str, said: str, kept: str) -> None:
    assert same_half_of_day(new, earlier, said) == kept


@pytest.mark.parametrize(
    ("said", "proposed"),
    [
        ("a la hora de comer", "14:00"),  # the Spanish midday meal
        ("en la comida", "14:00"),
        ("después de comer", "15:00"),
        ("a la hora de cenar", "19:00"),
        ("al desayunar", "08:00"),
        ("à l'heure du déjeuner", "12:30"),
        ("au petit-déjeuner", "08:00"),  # breakfast, not lunch
        ("à l'heure du dîner", "19:00"),
    ],
)
def test_a_meal_said_for_the_time_is_a_proposal_in_every_language(said: str, proposed: str) -> None:
    from promptpipe.adapters.offline_coach.times import propose_time

    assert propose_time(said) == proposed


@pytest.mark.parametrize("said", ["a la hora de comer", "a la hora de cenar", "en la hora del desayuno"])
def test_a_meal_said_with_its_verb_is_the_moment_too(said: str) -> None:
    from promptpipe.adapters.offline_coach.intake_moments import moment_said

    assert moment_said(said)


@pytest.mark.parametrize(
    "said",
    [
        "can you move it to 8pm, no wait, 8:30",
        "move it to 9, no, 9:30 pls",
        "pásalo a las 8, no, espera, 8:30",
        "mets-le à 20h, non, 20h30",
    ],
)
def test_a_time_corrected_across_commas_is_one_request_and_no_report(said: str) -> None:
    assert report_parts(said, asked=True) is None


def test_a_correction_word_before_no_time_is_kept_apart_as_before() -> None:
    parts = report_parts("did it, no wait, that was yesterday", asked=True)
    assert parts is not None and parts.outcome == "done" and parts.report == "did it"


@pytest.mark.parametrize(
    "said",
    [
        "could it come right when i wake up instead?",
        "mejor nada más levantarme, en la noche llego muy cansada",
        "je préfère au réveil",
        "better as soon as i get up",
    ],
)
def test_waking_up_asked_for_in_the_week_is_the_morning(said: str) -> None:
    from promptpipe.rules.feedback_reading import time_preference

    preference = time_preference(said)
    assert preference is not None and preference.wanted == "morning"


@pytest.mark.parametrize("said", ["i woke up late", "did it when i woke up", "lo hice al levantarme"])
def test_waking_up_in_a_report_asks_for_no_morning(said: str) -> None:
    from promptpipe.rules.feedback_reading import time_preference

    preference = time_preference(said)
    assert preference is None or preference.wanted is None
