"""Times corrected and read in context, a second round (docs/offline-coach.md, "Times as people write
them"): a day-part said right after its hour wins over one said elsewhere in the message, an hour typed
without its colon beside its day-part, "noon" opening the message before its routine, Spanish routines in
the diminutive or at a break, and "can I change the time?" in the feedback week answered with a question
for the new time, whose answer moves the schedule. Every phrasing here is apart from the corpus files."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_clock_time
from promptpipe.adapters.offline_coach.time_changes import requested_time, time_for_change
from promptpipe.adapters.offline_coach.times import beside_a_suggestion
from promptpipe.models.profile import UserProfile
from tests.support.offline_coach_requests import (
    ASK_TIME,
    PRAISE,
    PROMPT,
    WALKING,
    calls,
    feedback,
    intake,
    text_of,
    then,
)

LISTED_9AM = "Active daily schedules:\n1. every day at 08:50 (America/Toronto), 10 min before 09:00 (internal id: s1)"


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        # the hour's own day-part, whatever another clause says of another part of the day
        ("a las 6 de la tarde, por la mañana trabajo", "18:00"),
        ("at 10 at night, mornings are hectic", "22:00"),
        ("8:45 in the morning even tho evenings are free", "08:45"),
        ("las 5 de la tarde porque en la noche ya estoy cansado", "17:00"),
        # an hour typed without its colon, with its day-part
        ("745 in the evening", "19:45"),
        ("1030 de la noche", "22:30"),
        ("630 in the morning works", "06:30"),
        # noon opening the message before its routine
        ("noon with my sandwich", "12:00"),
        ("midday during my break", "12:00"),
        # a correction: the last time said wins, in the half of the day of the time it corrects
        ("6pm, no sorry 6:20", "18:20"),
        ("10 wait make that 10:20 once in bed", "22:20"),
        ("las 9... bueno no, mejor 9:40 despues de cenar", "21:40"),
    ],
)
def test_a_time_is_read_with_its_own_words(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize("said", ["afternoon at work", "no idea, maybe after the noon meeting?"])
def test_noon_inside_another_word_or_later_in_the_message_is_no_time(said: str) -> None:
    assert parse_clock_time(said) is None


@pytest.mark.parametrize(
    ("said", "hint", "hhmm"),
    [
        ("11:30", "wind down before sleep", "23:30"),  # a bedtime habit: the night
        ("a las 2", "caminar", "14:00"),  # nobody walks at 2 in the night
        ("at 9", "breakfast", "09:00"),
    ],
)
def test_a_bare_hour_takes_its_half_of_the_day_from_the_habit(said: str, hint: str, hhmm: str) -> None:
    assert parse_clock_time(said, hint) == hhmm


@pytest.mark.parametrize(
    ("said", "current", "hhmm"),
    [
        # the hour's day-part wins over the day-part the reason names
        ("mejor a las 8 de la noche, en la mañana no me da tiempo", "07:00", "20:00"),
        ("9 in the morning pls, nights are when i crash", "21:00", "09:00"),
        # the time refused is no answer; the one typed without a colon is
        ("715 in the evening, 6 is too soon for me", "18:00", "19:15"),
    ],
)
def test_a_change_of_time_reads_the_hours_own_day_part(said: str, current: str, hhmm: str) -> None:
    assert requested_time(said, current) == hhmm
    assert time_for_change(said, current) == hhmm


@pytest.mark.parametrize(
    ("said", "anchor"),
    [
        ("7:10 con mi cafecito", "con mi cafecito"),
        ("a las 4 en el receso", "en el receso"),
        ("a las 11 en mi descanso del trabajo", "en mi descanso del trabajo"),
        # an emoji closing the routine is no word of it
        ("a las 4 en el receso 🏃‍♂️", "en el receso"),
        ("5:30 when the kettle boils ☕️", "when the kettle boils"),
    ],
)
def test_a_spanish_routine_beside_the_time_is_the_anchor(said: str, anchor: str) -> None:
    step = OfflineCoach().complete(intake(said, WALKING, ASK_TIME, steer="time (EXECUTE)"))
    (name, args), *_ = calls(step)
    assert name == "save_user_profile"
    assert args["prompt_anchor"] == anchor


def test_noon_at_a_meal_is_noon_and_the_meal_its_routine() -> None:
    step = OfflineCoach().complete(intake("noon w lunch", WALKING, ASK_TIME, steer="time (EXECUTE)"))
    (name, args), *_ = calls(step)
    assert (name, args["preferred_time"]) == ("save_user_profile", "12:00")
    assert args["prompt_anchor"] == "w lunch"


@pytest.mark.parametrize(
    ("asked", "reply"),
    [
        ("could i switch my time?", "Sure. What time would suit you better? For example 7pm."),
        ("¿se puede cambiar la hora? 🙏", "Claro. ¿A qué hora te va mejor? Por ejemplo a las 7pm."),
    ],
)
def test_can_i_change_the_time_moves_nothing_and_asks_for_the_new_time(asked: str, reply: str) -> None:
    said = text_of(feedback(asked, "See you tomorrow!"))
    assert said == reply
    assert not any(word in said.lower() for word in PRAISE)


@pytest.mark.parametrize(
    ("said", "listed", "created"),
    [
        # a bare hour in answer: the small hours are the afternoon
        ("like 5?", LISTED_9AM, "17:00"),
        # its own day-part wins over the listed time's and over the one its reason names
        ("a las 6 de la tarde, en la mañana no puedo", LISTED_9AM, "18:00"),
        ("1015 at night, mornings r crazy", LISTED_9AM, "22:15"),
    ],
)
def test_the_answer_to_what_time_moves_the_schedule(said: str, listed: str, created: str) -> None:
    asked = text_of(feedback("can I change the time?", "See you tomorrow!"))
    request = feedback(said, asked, replied=True)
    first = OfflineCoach().complete(request)
    assert calls(first) == [("scheduler", {"action": "list"})]
    moved = OfflineCoach().complete(then(request, first, listed))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": created}) in calls(moved)
    assert ("save_user_profile", {"preferred_time": created}) in calls(moved)


def test_a_question_beside_a_report_still_records_the_report() -> None:
    response = OfflineCoach().complete(feedback("done! can i change the time tho?", PROMPT))
    assert [name for name, _ in calls(response)] == ["save_user_profile"]


@pytest.mark.parametrize(
    ("said", "suggested", "habit", "hhmm"),
    [
        # its own words say the half of the day
        ("9:15 after supper", "08:00", "stretching", "21:15"),
        ("a las 7 y media al despertar", "19:00", "leer", "07:30"),
        # the habit's nature does: a bedtime habit at a bare 10:45 is the night
        ("10:45 once i'm under the covers", "08:00", "winding down", "22:45"),
        # else the suggestion's half, and never the small hours
        ("earlier, like 7:10", "08:00", "push ups", "07:10"),
        ("at 2 on my break", "08:00", "stretching", "14:00"),
        # a morning routine keeps the morning against an evening suggestion
        ("7:10 with my coffee", "19:00", "reading", "07:10"),
    ],
)
def test_a_time_given_in_place_of_a_suggestion_takes_its_half_from_what_tells_it(
    said: str, suggested: str, habit: str, hhmm: str
) -> None:
    time = parse_clock_time(said) or ""
    assert beside_a_suggestion(time, suggested, said, habit=habit) == hhmm


def test_after_a_suggestion_a_bedtime_habit_keeps_its_night() -> None:
    winding_down = UserProfile(habit_domain="winding down", motivational_frame="sleep better")
    suggestion = "Sorry — let's keep it simple. How about 8am? Just reply yes, or tell me yours."
    step = OfflineCoach().complete(intake("10:45 once im under the covers", winding_down, suggestion))
    (name, args), *_ = calls(step)
    assert (name, args["preferred_time"]) == ("save_user_profile", "22:45")


@pytest.mark.parametrize(
    ("said", "time", "anchor"),
    [
        ("9pm no sorry 9:20 after the dishes", "21:20", "after the dishes"),
        ("a las 7, no, mejor 7:20 antes de desayunar", "07:20", "antes de desayunar"),
        ("10 wait make that 10:10", "22:10", None),
    ],
)
def test_the_words_of_a_correction_are_no_reason(said: str, time: str, anchor: str | None) -> None:
    sleeper = UserProfile(habit_domain="reading before sleep")
    ask_why = "Reading — great choice. Why does reading matter to you? What would it give you?"
    step = OfflineCoach().complete(intake(said, sleeper, ask_why))
    (name, args), *_ = calls(step)
    assert name == "save_user_profile"
    assert "motivational_frame" not in args
    assert (args["preferred_time"], args.get("prompt_anchor")) == (time, anchor)
