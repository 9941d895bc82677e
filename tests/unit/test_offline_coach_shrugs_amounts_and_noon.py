"""The offline coach's twelfth round (docs/offline-coach.md, "Shrugs, amounts and noon: a twelfth round"):
after "what helped?", what follows "idk" or "ni idea" is the motivator and a shrug alone saves nothing; "no
idea" is never a missed day; an amount is a report and giving in a miss; a heart is no report; "kinda" of a
feeling is no part of it; an exact time wins over "noon" beside it; an hour said again keeps its half."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_clock_time
from promptpipe.adapters.offline_coach.feedback_answers import after_a_shrug
from promptpipe.adapters.offline_coach.feedback_schedule import only_a_time
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_detours import sends_it_now
from promptpipe.adapters.offline_coach.intake_reasons import parse_domain
from promptpipe.adapters.offline_coach.time_changes import time_for_change
from promptpipe.models.profile import UserProfile
from promptpipe.rules.avoided_day_part import avoided_half
from promptpipe.rules.feedback_reading import asks_for_another_time, is_partial
from promptpipe.rules.intent_patterns import STOP
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.outcome import read_outcome
from tests.support.offline_coach_requests import OFFER, READY, calls, feedback, intake, then

GREETING = "Hi! I'm your habit coach. What small daily habit would you like to build?"

ASKED_HELPED = "Nice work — you did it! What helped you make it happen today?"


@pytest.mark.parametrize(
    ("said", "motivator"),
    [
        ("idk i just went for it", "i just went for it"),
        ("no clue tbh, i was bored so i did it", "i was bored so i did it"),
        ("Not sure. Guess I had the energy", "Guess I had the energy"),
        ("hmm idk, just kinda happened", "just kinda happened"),
        ("nothing in particular, i just remembered this time", "i just remembered this time"),
        ("no sé jaja, tenía ganas", "tenía ganas"),
        ("ni idea, salió solito", "salió solito"),
        ("nada especial, lo hice y ya", "lo hice y ya"),
    ],
)
def test_what_follows_a_shrug_is_what_helped(said: str, motivator: str) -> None:
    response = OfflineCoach().complete(feedback(said, ASKED_HELPED, replied=True))
    assert calls(response) == [("save_user_profile", {"last_motivator": motivator})]


@pytest.mark.parametrize(
    "said", ["idk", "no idea lol", "nothing really", "idk, nothing", "nothing helped tbh", "ni idea"]
)
def test_a_shrug_alone_saves_no_motivator_and_records_nothing(said: str) -> None:
    response = OfflineCoach().complete(feedback(said, ASKED_HELPED, replied=True))
    assert calls(response) == []
    assert response.content  # a reply, not silence


@pytest.mark.parametrize("said", ["no idea lol i just did it", "no sé, ya lo hice", "no clue", "nada en especial"])
def test_not_knowing_is_never_a_missed_day(said: str) -> None:
    assert read_outcome(said, asked=True) != "not_done"


@pytest.mark.parametrize("said", ["no se pudo, llovió todo el día", "no, se me olvidó", "nada hoy"])
def test_a_miss_said_with_the_same_words_stays_a_miss(said: str) -> None:
    assert read_outcome(said, asked=True) == "not_done"
    assert after_a_shrug(said) == said.rstrip(".")


@pytest.mark.parametrize(
    "said",
    ["25 squats 🔥", "3 glasses by lunch", "ya llevo 3 vasos", "12 páginas", "20 min on the bike", "sat for 5 min"],
)
def test_an_amount_in_answer_to_the_prompt_is_a_done(said: str) -> None:
    assert read_outcome(said, asked=True) == "done"
    assert read_outcome(said, asked=False) == "no_report"  # not when the coach asked something else


@pytest.mark.parametrize(
    "said", ["7 works", "6 is too early", "3 days off pls", "2 weeks", "20h", "8 en punto", "10 min later?", "2 of 3"]
)
def test_a_time_a_length_or_part_of_it_is_no_amount_done(said: str) -> None:
    assert read_outcome(said, asked=True) != "done"


@pytest.mark.parametrize(
    "said", ["caved and had chips, long day", "gave in to the donuts at work", "recaí, había pastel"]
)
def test_giving_in_is_a_miss(said: str) -> None:
    assert read_outcome(said, asked=True) == "not_done"


@pytest.mark.parametrize("said", ["❤️", "🥰🥰", "💕"])
def test_a_heart_for_the_message_is_no_report(said: str) -> None:
    assert read_outcome(said, asked=True) == "no_report"


def test_kinda_of_a_feeling_is_not_part_of_it() -> None:
    assert not is_partial("did it, kinda proud of myself ngl")
    assert is_partial("kinda") and is_partial("did it kinda") and is_partial("sort of did it")


def test_a_report_after_the_coachs_welcome_answers_the_prompt() -> None:
    welcome = "You're welcome! I'll check in after your next prompt."
    response = OfflineCoach().complete(feedback("walked to the corner and back", welcome, replied=True))
    [(tool, args)] = calls(response)  # the done's first step: the prompt that worked is saved
    assert tool == "save_user_profile" and set(args) == {"last_successful_prompt"}


@pytest.mark.parametrize(
    ("said", "time"),
    [
        ("a mediodía, sobre las 13:15", "13:15"),
        ("midday-ish, 12:45 on my break", "12:45"),
        ("around noon, say 1", "13:00"),
        ("lunch, maybe noon", "12:00"),
        ("al mediodía", "12:00"),
    ],
)
def test_an_exact_time_wins_over_noon_beside_it(said: str, time: str) -> None:
    assert parse_clock_time(said) == time


def test_a_time_after_de_las_leaves_no_fragment_in_the_routine() -> None:
    learned = parse_intake_message("en la hora de la comida de las 2", {"habit_domain": "caminar"}, "prompt_anchor")
    assert not learned.get("prompt_anchor", "").endswith(("de las", "de la"))


def test_the_saved_hour_said_again_keeps_its_half_of_the_day() -> None:
    known = {"habit_domain": "vitamins", "motivational_frame": "energy", "preferred_time": "14:00"}
    assert parse_intake_message("with my tea, which is around 2", known, "prompt_anchor") == {
        "prompt_anchor": "with my tea"
    }
    assert parse_intake_message("with my tea at 2am", known, "prompt_anchor")["preferred_time"] == "02:00"


@pytest.mark.parametrize("said", ["bueno ya, empecemos ya", "mejor ya arranca porfa", "just start already"])
def test_start_now_in_more_words_sends_it(said: str) -> None:
    assert sends_it_now(said)
    assert not sends_it_now("ya empieza mi turno a las 8")


NINE_AM_LISTED = (
    "Active daily schedules:\n1. every day at 08:50 (America/Toronto), 10 min before 09:00 (internal id: s1)"
)
SEVEN_PM_LISTED = (
    "Active daily schedules:\n1. every day at 18:50 (Europe/Madrid), 10 min before 19:00 (internal id: s1)"
)
OFFERED_A_CHANGE = "Thanks for telling me! Anything you'd like to change — the time, a pause, or a smaller prompt?"


def moved_to(said: str, last: str, listed: str) -> str | None:
    """The time the coach moves the daily prompt to for ``said``, the prompt being listed as ``listed``."""
    request = feedback(said, last, replied=True)
    listing = OfflineCoach().complete(request)
    if calls(listing) != [("scheduler", {"action": "list"})]:
        return None
    created = [
        args for tool, args in calls(OfflineCoach().complete(then(request, listing, listed))) if "fixed_time" in args
    ]
    return created[0]["fixed_time"] if created else None


@pytest.mark.parametrize(("said", "time"), [("9:15pm", "21:15"), ("a las 8 porfa", "08:00"), ("7:30 then", "07:30")])
def test_a_time_alone_answers_the_offer_of_a_change(said: str, time: str) -> None:
    assert only_a_time(said)
    assert moved_to(said, OFFERED_A_CHANGE, NINE_AM_LISTED) == time


@pytest.mark.parametrize("said", ["walked at 7pm", "did it at 8", "my kid wakes at 6"])
def test_a_report_with_a_time_does_not_answer_the_offer_of_a_change(said: str) -> None:
    assert not only_a_time(said)
    assert moved_to(said, OFFERED_A_CHANGE, NINE_AM_LISTED) is None


def test_the_day_part_after_instead_of_is_left() -> None:
    said = "my shift ends at 4 now, could you text me at 4:30 instead of in the morning"
    assert avoided_half(said) == "am"
    assert moved_to(said, "See you tomorrow!", NINE_AM_LISTED) == "16:30"


def test_an_exact_time_beside_noon_is_the_new_time() -> None:
    said = "¿me lo pones al mediodía? a la 1 y media, cuando salgo a comer"
    assert moved_to(said, "¡Hasta mañana!", SEVEN_PM_LISTED) == "13:30"


@pytest.mark.parametrize("said", ["schedule change please", "quiero un cambio de horario"])
def test_a_change_named_as_a_noun_asks_for_the_new_time(said: str) -> None:
    assert read_message(said).request == "change_time"


@pytest.mark.parametrize("said", ["can I choose another time?", "¿se puede escoger otro horario?", "la hora es fija?"])
def test_whether_the_time_can_change_is_asked(said: str) -> None:
    assert read_message(said).topic == "change_time_later"


def test_the_break_of_the_day_is_no_pause() -> None:
    assert read_message("a las 11, en mi descanso").request != "pause"
    assert read_message("necesito un descanso de una semana").request == "pause"


def test_what_helped_then_a_question_saves_it_and_answers() -> None:
    said = "my neighbour walked with me. does it count if I split it in two?"
    response = OfflineCoach().complete(feedback(said, ASKED_HELPED, replied=True))
    assert calls(response) == [("save_user_profile", {"last_motivator": "my neighbour walked with me"})]
    reply = OfflineCoach().complete(then(feedback(said, ASKED_HELPED, replied=True), response, "ok")).content
    assert reply and "study team" in reply  # the question is answered, not dropped


@pytest.mark.parametrize("said", ["the podcast I had on. can we move it to 7pm?", "the podcast. when do you text?"])
def test_what_helped_then_a_request_is_left_to_the_request(said: str) -> None:
    response = OfflineCoach().complete(feedback(said, ASKED_HELPED, replied=True))
    assert calls(response) == [("scheduler", {"action": "list"})]  # the move, or the listed time


def test_the_break_of_the_day_in_a_change_of_time_is_no_pause() -> None:
    said = "¿y si mejor a la hora de la comida? a las 2, ahí tengo mi descanso"
    assert moved_to(said, "¡Hasta mañana!", SEVEN_PM_LISTED) == "14:00"


def test_to_actually_do_something_is_a_reason_not_a_change_of_habit() -> None:
    known = {"habit_domain": "journaling"}
    said = "i forget whole weeks, i want to actually keep track of my life"
    assert set(parse_intake_message(said, known, "motivational_frame")) == {"motivational_frame"}


@pytest.mark.parametrize("said", ["i want to stop biting my nails", "quiero dejar de tomar refresco en la tarde"])
def test_a_habit_of_quitting_is_no_stop_request(said: str) -> None:
    assert not STOP.search(said)


@pytest.mark.parametrize("said", ["stop sending me texts", "deja de mandarme recordatorios", "pls stop the texts"])
def test_a_stop_of_the_messages_is_still_one(said: str) -> None:
    assert STOP.search(said)


def test_a_day_part_inside_the_first_habit_is_the_habits() -> None:
    said = "quiero dejar de tomar refresco en la tarde y mejor tomar agua"
    response = OfflineCoach().complete(intake(said, UserProfile(), GREETING))
    assert calls(response) == [("save_user_profile", {"habit_domain": "dejar de tomar refresco"})]


def test_a_habit_cut_to_its_first_words_ends_on_no_loose_word() -> None:
    assert parse_domain("quiero anotar 2 cosas por las que me siento bien") == "anotar 2 cosas"


def test_can_it_be_later_in_spanish_asks_for_another_time() -> None:
    assert asks_for_another_time("se puede mas temprano? a las 8 ya voy tarde")


@pytest.mark.parametrize(
    ("last", "said", "time"),
    [
        ("Listo: ahora tu mensaje diario llega hacia las 7pm desde hoy.", "a las 8 y media", "20:30"),
        ("Done — your daily prompt will now come around 7pm starting tomorrow.", "ugh make that 7:45", "19:45"),
        (
            "I'll pick: 7pm, “after dinner”. Here's your first one-minute habit to try.",
            "fine. 6:30 in the morning",
            "06:30",
        ),
    ],
)
def test_a_time_alone_after_the_coachs_own_keeps_its_half_unless_said(last: str, said: str, time: str) -> None:
    seven_pm = SEVEN_PM_LISTED.replace("Europe/Madrid", "America/Toronto")
    assert moved_to(said, last, seven_pm) == time


def test_yes_but_another_hour_instead_at_the_offer_takes_that_hour() -> None:
    offer = OFFER.replace("8:30am", "3:45pm")
    profile = READY.model_copy(update={"preferred_time": "15:45"})
    response = OfflineCoach().complete(intake("yes but can we do 4 instead, the bus runs late", profile, offer))
    assert calls(response) == [("save_user_profile", {"preferred_time": "16:00"})]


MOVED_TO_SEVEN_PM = "Done — your daily prompt will now come around 7pm starting tomorrow."


@pytest.mark.parametrize(
    ("said", "time"),
    [
        ("no wait, 7:20", "19:20"),
        ("hmm no sorry, keep it at 8, at 7 I'm still driving", "20:00"),
        ("no espera, mejor 7:40 pm", "19:40"),
    ],
)
def test_a_correction_right_after_a_move_moves_it_again_and_is_no_miss(said: str, time: str) -> None:
    seven_pm = SEVEN_PM_LISTED.replace("Europe/Madrid", "America/Toronto")
    assert moved_to(said, MOVED_TO_SEVEN_PM, seven_pm) == time
    response = OfflineCoach().complete(feedback(said, MOVED_TO_SEVEN_PM, replied=True))
    assert all("last_barrier" not in args for _, args in calls(response))


def test_back_from_a_pause_with_a_new_time_resumes_and_moves() -> None:
    said = "ya volví. ahora mándalo a las 9 de la noche, a las 7 sigo en el gym"
    request = feedback(said, "¡Hasta mañana!", replied=True)
    resumed = OfflineCoach().complete(request)
    assert calls(resumed) == [("scheduler", {"action": "resume"})]
    listing = OfflineCoach().complete(then(request, resumed, "Resumed."))
    assert calls(listing) == [("scheduler", {"action": "list"})]


def test_a_meal_named_with_the_new_time_gives_its_half_of_the_day() -> None:
    assert time_for_change("mejor a la hora del desayuno, como a las 7:45", "20:00") == "07:45"
    assert time_for_change("after dinner, like 7:30", "08:00") == "19:30"
