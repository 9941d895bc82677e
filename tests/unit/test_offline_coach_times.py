"""Which half of the day a time means, as people write it (docs/offline-coach.md, "Times as people write
them"): in English, Spanish and French, at intake and in the feedback week. The order: what the message
says (am/pm, a 24-hour form, "de la noche", "du soir", a day-part word), what the participant said of the
time earlier, the habit's own nature, plausibility (a bare 1 to 5 is the afternoon). A correction keeps
the half of the day of the answer it corrects; a request to change the time takes it from its words, then
from the current schedule ("too early": after it), then from the current schedule's half of the day."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.time_changes import time_for_change
from promptpipe.adapters.offline_coach.times import parse_clock_time, settle_half_of_day
from promptpipe.models.llm import ChatMessage
from promptpipe.models.profile import UserProfile
from promptpipe.rules.half_of_day import plausible, toward, way_asked
from tests.support.offline_coach_requests import PROMPT, calls, feedback, then
from tests.unit.test_offline_coach_reading import intake

ASK_WHEN = "Great reason. What time of day would you like your daily prompt? For example 8am or 7:30pm."


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # what the message says: a marker, a 24-hour form, a day-part word anywhere in it
        ("vers 8h le soir", "20:00"),
        ("la nuit vers 10h", "22:00"),
        ("9 du soir", "21:00"),
        ("9 le soir", "21:00"),
        ("9 en la noche", "21:00"),
        ("9 por la noche", "21:00"),
        ("a las 8 y media de la noche", "20:30"),
        ("8h30", "08:30"),  # French: the 24-hour clock, with nothing else said
        ("20h", "20:00"),
        ("vers 7h", "07:00"),
        ("half 10 just before lights out", "22:30"),
        ("5:45 with my first coffee", "05:45"),  # the first coffee is the morning, not a bare 5:45
        ("is 11 too late? thats when i get into bed", "23:00"),
        ("so i was thinking maybe like 9 cause thats after the kids are asleep", "21:00"),
        # time words in Spanish and French
        ("8 y cuarto", "08:15"),
        ("midi et quart", "12:15"),
        ("à midi et quart pendant ma pause", "12:15"),
        ("medianoche", "00:00"),
        ("à minuit", "00:00"),
        ("at midnight", "00:00"),
        ("noonish on my lunch break", "12:00"),
        ("mediodía", "12:00"),
        # plausibility: nobody means 2 in the morning
        ("arond 2:30 when i get back from lunch", "14:30"),
        ("2ish", "14:00"),
        ("9ish", "09:00"),
        # a count of things is no hour
        ("i want to do like ten squats and the best time is like 8 after dinner", "20:00"),
        # corrections keep the half of the day of the answer they correct
        ("10pm wait no 10:45", "22:45"),
        ("8pm. hmm make it 9", "21:00"),
        ("9:30pm... wait no, 9:45 once im under the covers", "21:45"),
        ("8pm. hmm no, 9 is more realistic", "21:00"),
        ("in the evening... actually 10 is better", "22:00"),
        ("sometime in the evening, hmm actually 9 would be best", "21:00"),
        ("7am, no wait, 7:30", "07:30"),
        ("a las 9 de la noche... no, mejor a las 10", "22:00"),
        ("8 de la mañana, bueno mejor 9", "09:00"),
        ("à 9h du soir, enfin plutôt 10h", "22:00"),
        ("19h... non, plutôt 9h30", "21:30"),
    ],
)  # fmt: skip
def test_the_half_of_the_day_from_the_message(said: str, expected: str) -> None:
    assert parse_clock_time(said) == expected


@pytest.mark.parametrize(
    ("time", "said", "earlier", "habit", "expected"),
    [
        # the participant's earlier words about the time
        ("10:00", "around 10 after i brush my teeth", "i wanna stretch at night, my hips are so tight", "", "22:00"),
        ("09:00", "9 would be good", "evenings are easier for me", "", "21:00"),
        ("08:30", "como a las 8 y media", "mejor en la noche", "", "20:30"),
        ("10:00", "vers 10h", "le soir de préférence", "", "22:00"),
        ("17:00", "5", "in the morning before work", "", "05:00"),
        # the habit's own nature
        ("18:15", "6:15ish before i shower", "", "morning runs", "06:15"),
        ("10:15", "10:15 probably", "", "winding down without screens", "22:15"),
        ("10:30", "a las 10 y media más o menos", "", "dejar el celular para dormir mejor", "22:30"),
        ("09:00", "9", "", "reading in bed", "21:00"),
        ("17:30", "5:30", "", "breakfast with no phone", "05:30"),
        # what the message says wins
        ("08:00", "8am", "at night", "reading in bed", "08:00"),
        ("19:00", "19h", "", "morning run", "19:00"),
        ("07:30", "7:30 in the morning", "evenings", "", "07:30"),
        # a weak hint never makes a night of the morning, nor the small hours of the afternoon
        ("07:00", "7", "", "reading in bed", "07:00"),
        ("10:00", "vers 10h", "", "lire avant de dormir", "10:00"),  # the French 24-hour clock
        ("15:00", "3", "in the morning", "", "15:00"),
        ("14:00", "2", "", "a morning walk", "14:00"),
        ("09:00", "9", "", "", "09:00"),
    ],
)  # fmt: skip
def test_the_half_of_the_day_from_what_else_is_known(
    time: str, said: str, earlier: str, habit: str, expected: str
) -> None:
    assert settle_half_of_day(time, said, earlier=earlier, habit=habit) == expected


def test_a_reason_tells_the_half_of_the_day_only_when_it_is_sleep() -> None:
    assert settle_half_of_day("10:30", "a las 10 y media", reason="para dormir mejor") == "22:30"
    assert settle_half_of_day("09:00", "9", habit="drinking water", reason="headaches every afternoon") == "09:00"


@pytest.mark.parametrize(
    ("said", "current", "expected"),
    [
        # the request's own words
        ("can u switch it to the evening, like 8", "08:00", "20:00"),
        ("can it be 6 in the evening", "08:00", "18:00"),
        ("¿me lo puedes cambiar para la tarde? a las 5 y media", "09:00", "17:30"),
        ("tu peux le mettre le soir plutôt ? vers 9h", "08:00", "21:00"),
        ("move it to 7:30am", "19:00", "07:30"),
        ("passe-le à 20h", "08:00", "20:00"),
        # the current schedule's relation: "too early" moves forward, "too late" back
        ("6 is too soon, im still on the bus. 7:15?", "18:00", "19:15"),
        ("6 is too early, 7:30", "18:00", "19:30"),
        ("9 is too late, im already half asleep. 8?", "21:00", "20:00"),
        ("6:30 is brutal lol can we do 7:45 instead", "06:30", "07:45"),
        ("a las 7 es muy temprano, mejor a las 8 y media", "19:00", "20:30"),
        ("21h c'est trop tard, je dors déjà à moitié. 8h30 ?", "21:00", "20:30"),
        ("un poco más tarde, a las 10", "21:00", "22:00"),
        ("earlier, like 6:30", "19:00", "18:30"),
        ("plus tôt, vers 7h", "21:00", "19:00"),
        ("later pls, like 9", "20:00", "21:00"),
        # then the current schedule's half of the day, then plausibility
        ("¿se podría a las 9 mejor?", "20:00", "21:00"),
        ("se puede cambiar a las 6?", "20:00", "18:00"),
        ("can we do 2 instead", "09:00", "14:00"),
        ("8:15 maybe", "07:00", "08:15"),
        # a day-part alone is no time: it is proposed, then confirmed
        ("mejor en la tarde", "09:00", None),
        ("passer au soir", "08:00", None),
    ],
)  # fmt: skip
def test_the_new_time_of_a_change_request(said: str, current: str, expected: str | None) -> None:
    assert time_for_change(said, current) == expected


def test_a_time_judged_toward_its_way_never_stays_put_and_the_small_hours_are_the_afternoon() -> None:
    assert toward("08:00", "08:00", "later") == "20:00"  # the same time is no move: the other half
    assert toward("08:00", "20:00", "earlier") == "08:00"
    assert way_asked("later or earlier, idk") is None
    assert plausible("03:30") == "15:30" and plausible("05:00") == "05:00"
    assert settle_half_of_day("12:00", "12", habit="reading in bed") == "12:00"


SIX_PM_LISTED = (
    "Active daily schedules:\n1. every day at 17:50 (America/Toronto), 10 min before 18:00 (internal id: s1)"
)


def test_a_request_that_judges_the_current_time_moves_the_prompt_the_way_it_says() -> None:
    request = feedback("6 is too soon, im still on the bus. 7:15?", PROMPT)
    listing = OfflineCoach().complete(request)
    assert calls(listing) == [("scheduler", {"action": "list"})]
    moved = OfflineCoach().complete(then(request, listing, SIX_PM_LISTED))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:15"}) in calls(moved)


def time_saved(said: str, profile: UserProfile, asked: str, earlier: str) -> str:
    """The time the intake saves for ``said``, after the coach asked ``asked`` and they answered ``earlier``."""
    history = [ChatMessage(role="assistant", content=asked), ChatMessage(role="user", content=earlier)]
    request = intake(said, profile, ASK_WHEN)
    request = request.model_copy(update={"messages": [*request.messages[:2], *history, *request.messages[2:]]})
    saved = [args for name, args in calls(OfflineCoach().complete(request)) if name == "save_user_profile"]
    return str(saved[0]["preferred_time"]) if saved else ""


@pytest.mark.parametrize(
    ("said", "profile", "asked", "earlier", "expected"),
    [
        # the moment said with the habit gives a bare hour its half of the day
        ("around 10 after i brush my teeth", UserProfile(habit_domain="stretching"),
         "Hi! What small daily habit would you like to build?", "i wanna stretch at night, my hips are so tight",
         "22:00"),
        # an answer to why says nothing of when
        ("around 10 at my desk", UserProfile(habit_domain="water", motivational_frame="I get headaches in the evening"),
         "Water — great choice. Why does water matter to you?", "I get headaches in the evening", "10:00"),
        # nor does a reason said with the habit
        ("vers 10h quand j'arrive au bureau",
         UserProfile(habit_domain="boire plus d'eau", motivational_frame="j'ai toujours mal à la tête le soir"),
         "Quelle petite habitude aimeriez-vous prendre ?", "boire plus d'eau j'ai toujours mal à la tête le soir",
         "10:00"),
    ],
)  # fmt: skip
def test_the_intake_reads_a_bare_hour_with_what_they_said_of_when_earlier(
    said: str, profile: UserProfile, asked: str, earlier: str, expected: str
) -> None:
    assert time_saved(said, profile, asked, earlier) == expected
