"""Times read in the flow's context (docs/offline-coach.md, "Times as people write them" and "Feedback as
people write it"): a time corrected inside one message, an hour and its minutes written apart, "más
temprano" after an evening proposal, a question about changing *when* the prompts come, and a change of
time that names a part of the day to avoid. Phrasings other than the built corpus's (built/26_…)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.times import parse_asked_time, parse_clock_time, without_times
from promptpipe.rules.avoided_day_part import without_avoided_day_part
from promptpipe.rules.change_of_when import asks_to_change_when
from promptpipe.rules.feedback_requests import asks_when
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.report_details import proposes_a_time
from tests.support.offline_coach_requests import PROMPT, READY, calls, feedback, intake, then

LISTED_NOON = "Active daily schedules:\n1. every day at 12:20 (America/Toronto), 10 min before 12:30 (internal id: s1)"


def _moved_to(said: str, last: str = PROMPT) -> tuple[str | None, str]:
    """The time the feedback turn moves the schedule to (None: not moved), and the coach's reply."""
    request = feedback(said, last)
    response = OfflineCoach().complete(request)
    if calls(response) == [("scheduler", {"action": "list"})]:
        request = then(request, response, LISTED_NOON)
        response = OfflineCoach().complete(request)
    created = [args["fixed_time"] for name, args in calls(response) if args.get("action") == "create"]
    return (created[0] if created else None), response.content or ""


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("9pm... nope 915 once the dishes are done", "21:15"),
        ("6:45am, wait 705", "07:05"),
        ("a las 8 de la noche, bueno 815", "20:15"),
        ("7am - no, 720", "07:20"),
        ("19h, non plutôt 1930", "19:30"),
    ],
)
def test_an_hour_without_its_colon_corrects_the_time_just_said(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("around 7 45 when i get home", "19:45"),
        ("tipo 6 15 de la tarde", "18:15"),
        ("10 15 pm", "22:15"),
        ("mornings!! 5 50 before the kids wake", "05:50"),
        ("9 pm. nah 9 15", "21:15"),
    ],
)
def test_an_hour_and_its_minutes_written_apart_are_one_time(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize("said", ["i have 2 kids, 3 15 year olds", "do 8 30 squats"])
def test_two_numbers_apart_that_count_things_are_no_time(said: str) -> None:
    assert parse_clock_time(said) is None


def test_a_correction_without_its_colon_leaves_the_routine_readable() -> None:
    assert without_times("a las 8, no, mejor 845 después de cenar").strip(" ,") == "después de cenar"
    assert parse_asked_time("ok at 8. thanks") in ("08:00", "20:00")  # an hour before a full stop is an hour


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [("un poco más temprano, a las 5", "17:00"), ("mas temprano tipo 6", "18:00"), ("earlier, say 5:30", "17:30")],
)
def test_earlier_than_an_evening_proposal_stays_in_the_evening(said: str, hhmm: str) -> None:
    profile = READY.model_copy(update={"preferred_time": "", "prompt_anchor": ""})
    response = OfflineCoach().complete(intake(said, profile, "¿Qué tal a las 7pm? ¿Te va bien?"))
    assert ("save_user_profile", {"preferred_time": hhmm}) in calls(response)


def test_early_in_the_morning_is_still_the_morning() -> None:
    profile = READY.model_copy(update={"preferred_time": "", "prompt_anchor": ""})
    response = OfflineCoach().complete(intake("temprano, a las 6", profile, "¿A qué hora te escribo?"))
    assert any(args.get("preferred_time") == "06:00" for _, args in calls(response))


@pytest.mark.parametrize(
    "said",
    [
        "any chance to change when these arrive?",
        "could they come at a different hour?",
        "¿se podría cambiar cuándo me los mandas?",
        "me los puedes mandar a otra hora?",
        "on peut modifier l'heure des messages ?",
        "is it possible to move my schedule?",
    ],
)
def test_a_question_about_changing_when_is_asked_for_the_new_time(said: str) -> None:
    assert asks_to_change_when(said)
    assert not asks_when(said)
    assert read_message(said).topic == "change_time_later"
    moved, reply = _moved_to(said)
    assert moved is None
    assert "?" in reply and ("time" in reply or "hora" in reply or "heure" in reply)


@pytest.mark.parametrize(
    "said", ["when do my texts come?", "i changed my mind about when i walk", "what time do you send it?"]
)
def test_when_asked_or_a_change_of_something_else_is_no_change_of_when(said: str) -> None:
    assert not asks_to_change_when(said)


def test_the_time_that_answers_the_question_moves_the_schedule() -> None:
    _, asked = _moved_to("any chance to change when these arrive?")
    moved, _ = _moved_to("quarter to 6 in the evening, at noon i'm slammed", asked)
    assert moved == "17:45"


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("after work would be better, lunch hour is always hectic", "after work would be better"),
        ("por la mañana porfa, en las noches ando agotada", "por la mañana porfa"),
        ("le matin plutôt, le soir j'oublie tout", "le matin plutôt"),
        ("send it at night? afternoons i have class", "send it at night?"),
    ],
)
def test_the_clause_that_avoids_a_part_of_the_day_is_set_apart(said: str, kept: str) -> None:
    assert without_avoided_day_part(said) == kept


@pytest.mark.parametrize(
    "said",
    ["mornings are crazy", "forgot today sry, evenings are hectic", "mornings work better for me", "move it to 7pm"],
)
def test_nothing_is_set_apart_when_nothing_else_says_when(said: str) -> None:
    assert without_avoided_day_part(said) == said


@pytest.mark.parametrize(
    ("said", "proposed"),
    [
        ("evenings would be better, mornings i'm always running late", "7pm"),
        ("por la mañana porfa, en las noches ando agotada", "8am"),
        ("le matin plutôt, le soir j'oublie tout", "8am"),
        ("switch it to the afternoon? by night i'm too tired", "3pm"),
    ],
)
def test_a_change_that_names_a_part_of_the_day_to_avoid_proposes_the_wanted_one(said: str, proposed: str) -> None:
    moved, reply = _moved_to(said)
    assert moved is None
    assert proposed in reply
    recorded = calls(OfflineCoach().complete(feedback(said, PROMPT)))
    assert not any(args.get("last_successful_prompt") or args.get("last_barrier") for _, args in recorded)


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("after work would be better, like 6. lunch hour is always hectic", "18:00"),
        ("mejor en la noche tipo 9, al mediodía ando a mil", "21:00"),
        ("lunch never works for me, could it be in the evening around 8:15", "20:15"),
    ],
)
def test_a_change_with_a_time_and_a_part_of_the_day_to_avoid_moves_to_the_time(said: str, hhmm: str) -> None:
    assert _moved_to(said)[0] == hhmm


def test_a_report_that_blames_a_part_of_the_day_is_still_a_report() -> None:
    response = OfflineCoach().complete(feedback("forgot today sry, evenings are hectic", PROMPT))
    assert any("last_barrier" in args for _, args in calls(response))
    assert _moved_to("forgot today sry, evenings are hectic")[0] is None


@pytest.mark.parametrize(
    "said", ["could it be in the evening, like 8?", "can they be at 7:30 instead?", "¿podría ser a las 9?"]
)
def test_could_it_be_with_a_time_proposes_it(said: str) -> None:
    assert proposes_a_time(said)
