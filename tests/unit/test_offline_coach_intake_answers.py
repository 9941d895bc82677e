"""Intake answers in every form (docs/offline-coach.md, "Intake answers in every form"): connectives and
clock times as people text them, a routine by its structure in three languages (and one that "that" points
back to), a time beside a reason, the usual moment of a routine said for the time, and a random daily
window when the participant asked for the time to vary. The phrasings here are deliberately not the
corpus's (built/16_intake_answers_in_every_form.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_moments import routine_moment
from promptpipe.adapters.offline_coach.intake_routines import parse_anchor
from promptpipe.adapters.offline_coach.intake_window import random_window, read_window, window_done, window_offer
from promptpipe.adapters.offline_coach.spoken import as_words
from promptpipe.flow.context import intake_context
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile
from tests.unit.test_offline_coach_reading import TOOLS

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
KNOWN = {DOMAIN: "stretching", MOTIVATION: "a looser back", TIME: "", ANCHOR: ""}


@pytest.mark.parametrize(
    ("texted", "written"),
    [
        ("b4 class like 745", "before class like 7:45"),
        ("aftr supper", "after supper"),
        ("wen the baby naps", "when the baby naps"),
        ("post-run", "after run"),
        ("pre gym maybe", "before gym maybe"),
        ("around 1015 i guess", "around 10:15 i guess"),
    ],
)
def test_connectives_and_clock_times_as_people_text_them(texted: str, written: str) -> None:
    assert as_words(texted) == written


@pytest.mark.parametrize(
    "text", ["like 1000 steps", "i read 300 pages", "postpone it", "prepare lunch", "at 260 mg", "about 145 pounds"]
)
def test_numbers_and_words_that_only_look_like_them_are_left_alone(text: str) -> None:
    assert as_words(text) == text


@pytest.mark.parametrize(
    ("said", "anchor"),
    [
        ("luego de almorzar", "luego de almorzar"),
        ("tras el gimnasio", "tras el gimnasio"),
        ("regresando de la escuela", "regresando de la escuela"),
        ("on my way home from the gym", "on my way home from the gym"),
        ("au coucher", "au coucher"),
        ("à la sortie du bureau", "à la sortie du bureau"),
        ("we walk the dog at 7 and right after that", "right after we walk the dog"),
        ("i normally shower around 6:30am then just after that", "just after I shower"),
    ],
)
def test_a_routine_is_read_by_its_structure(said: str, anchor: str) -> None:
    assert parse_anchor(said)[0] == anchor


@pytest.mark.parametrize("said", ["after that", "ok so after that", "purple elephants"])
def test_a_connective_with_nothing_to_point_back_to_is_no_routine(said: str) -> None:
    assert parse_anchor(said)[0] == ""


def test_the_end_of_the_working_day_places_a_bare_hour_in_the_evening() -> None:
    learned = parse_intake_message("al volver de la oficina tipo a las 6 y media", KNOWN, TIME)
    assert learned == {TIME: "18:30", ANCHOR: "al volver de la oficina"}
    assert parse_intake_message("after i clock out at 4:30", KNOWN, TIME)[TIME] == "16:30"


def test_a_time_beside_the_reason_is_kept_and_one_inside_it_is_not() -> None:
    known = {**KNOWN, MOTIVATION: ""}
    learned = parse_intake_message("for my posture, and 8pm is good for the reminder", known, MOTIVATION)
    assert (learned.get(MOTIVATION), learned.get(TIME)) == ("for my posture", "20:00")
    learned = parse_intake_message("to sleep better, i doze off 11pm every night", known, MOTIVATION)
    assert TIME not in learned and learned.get(MOTIVATION)
    learned = parse_intake_message("to sleep better, 3am wakeups are the worst", known, MOTIVATION)
    assert TIME not in learned and learned.get(MOTIVATION)


def test_a_run_on_reason_ends_where_its_bare_time_and_routine_begin() -> None:
    said = "i wanna stretch for my hips they ache all the time maybe 745 right after i get home"
    learned = parse_intake_message(said, {}, DOMAIN)
    assert learned == {
        DOMAIN: "stretching",
        MOTIVATION: "for my hips they ache all the time",
        TIME: "19:45",
        ANCHOR: "right after i get home",
    }


def test_flossing_said_at_a_bare_evening_hour_is_at_night() -> None:
    known = {DOMAIN: "flossing", MOTIVATION: "healthier gums", TIME: "", ANCHOR: ""}
    assert parse_intake_message("9:15 probably", known, TIME) == {TIME: "21:15"}
    assert parse_intake_message("9:15 in the morning", known, TIME) == {TIME: "09:15"}


@pytest.mark.parametrize(
    ("said", "moment"),
    [
        ("en sortant du travail", "18:00"),
        ("cuando me despierto", "07:00"),
        ("as soon as the kids are dropped off", "08:30"),
        ("whenever i finish lunch", "12:30"),
        ("once i'm in bed", "21:30"),
        ("with my first coffee", "07:30"),
        ("when i come home", "18:00"),
        ("after 7pm", ""),
        ("purple", ""),
    ],
)
def test_a_routine_said_for_the_time_has_a_usual_moment_to_propose(said: str, moment: str) -> None:
    assert routine_moment(said) == moment


@pytest.mark.parametrize(
    ("said", "window"),
    [
        ("between 6 and 9pm then", ("18:00", "21:00")),
        ("from 7 to 10 pm", ("19:00", "22:00")),
        ("anytime 4-7pm", ("16:00", "19:00")),
        ("entre las 5 y las 8 de la tarde", ("17:00", "20:00")),
        ("entre 18h et 21h", ("18:00", "21:00")),
        ("between 7 and 9 in the morning", ("07:00", "09:00")),
    ],
)
def test_a_window_is_read_with_its_half_of_the_day(said: str, window: tuple[str, str]) -> None:
    assert read_window(said) == window


@pytest.mark.parametrize("said", ["from 9pm to 7pm", "between 25 and 30", "between you and me"])
def test_no_window_is_read_where_none_is_said(said: str) -> None:
    assert read_window(said) is None


def test_a_window_is_random_only_when_the_time_was_asked_to_vary() -> None:
    plain = [ChatMessage(role="assistant", content="What time should I text you?")]
    assert random_window(plain, "between 6 and 8pm") is None  # a window alone is read as its start
    asked = [
        ChatMessage(role="user", content="can it come at random times?"),
        ChatMessage(role="assistant", content="Yes — pick a window."),
    ]
    assert random_window(asked, "between 6 and 8pm") == ("18:00", "20:00")
    assert random_window([], "surprise me, anytime between 1 and 3pm") == ("13:00", "15:00")
    spanish = [ChatMessage(role="user", content="¿me lo puedes mandar a una hora distinta cada día?")]
    assert random_window(spanish, "entre las 7 y las 9 de la noche") == ("19:00", "21:00")
    french = [ChatMessage(role="user", content="c'est possible à des heures différentes ?")]
    assert random_window(french, "entre 8h et 10h") == ("08:00", "10:00")


def test_the_window_is_said_in_the_participants_language_with_no_single_time_claimed() -> None:
    assert window_offer(("18:00", "21:00"), "en").endswith("between 6pm and 9pm?")
    assert "entre las 18:00 y las 21:00" in window_done(("18:00", "21:00"), "es")
    assert "entre 18h et 21h" in window_done(("18:00", "21:00"), "fr")
    assert "around" not in window_done(("18:00", "21:00"), "en")


def test_yes_to_the_offer_creates_a_random_schedule_over_the_window_asked_for() -> None:
    profile = UserProfile(
        habit_domain="drawing", motivational_frame="fun", preferred_time="18:00", prompt_anchor="after dinner"
    )
    context = intake_context(profile, "Name: Zoe\nGender: \nEthnicity: \nBackground: ")
    offer = "Try this: “sketch one line”. Shall I send you one like it every day at a random time between 6pm and 9pm?"
    request = ChatRequest(
        purpose="intake",
        messages=[
            ChatMessage(role="system", content="intake system prompt"),
            ChatMessage(role="system", content=context),
            ChatMessage(role="user", content="does it have to be the same time every day?"),
            ChatMessage(role="assistant", content="No — I can send it at a random moment within a window you pick."),
            ChatMessage(role="user", content="from 6 to 9 pm"),
            ChatMessage(role="assistant", content=offer),
            ChatMessage(role="user", content="yes"),
        ],
        tools=TOOLS,
    )
    response = OfflineCoach().complete(request)
    calls = [(c.name, c.parsed_arguments()) for c in response.tool_calls]
    assert calls == [
        (
            "scheduler",
            {"action": "create", "type": "random", "random_start_time": "18:00", "random_end_time": "21:00"},
        )
    ]


@pytest.mark.parametrize(
    ("said", "reason"),
    [("journal daily, therapist homework", "therapist homework"), ("stretch, im stiff", "im stiff")],
)
def test_a_two_word_reason_beside_the_habit_is_the_reason(said: str, reason: str) -> None:
    assert parse_intake_message(said, {}, DOMAIN).get(MOTIVATION) == reason


@pytest.mark.parametrize("said", ["yoga, i guess", "walk, every morning", "read, sounds good"])
def test_a_hedge_a_time_or_a_yes_beside_the_habit_is_no_reason(said: str) -> None:
    assert MOTIVATION not in parse_intake_message(said, {}, DOMAIN)


def test_ya_que_before_a_routines_verb_is_when_and_before_another_verb_is_why() -> None:
    learned = parse_intake_message("como a las 9, ya que desayuno", KNOWN, TIME)
    assert learned.get(ANCHOR) == "ya que desayuno"
    assert ANCHOR not in parse_intake_message("ya que me siento cansado", {**KNOWN, MOTIVATION: ""}, MOTIVATION)


@pytest.mark.parametrize(
    ("said", "anchor"),
    [("coffee break", "on my coffee break"), ("on the train home", "on the train home"),
     ("after my run lol", "after my run")],
)  # fmt: skip
def test_a_short_routine_answer_reads_as_said_without_its_hedge(said: str, anchor: str) -> None:
    assert parse_intake_message(said, {**KNOWN, TIME: "08:00"}, ANCHOR).get(ANCHOR) == anchor


def test_the_car_is_no_french_because() -> None:
    learned = parse_intake_message("in the car after work", {**KNOWN, TIME: "18:00"}, ANCHOR)
    assert learned == {ANCHOR: "after work"}  # the known reason stays


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("quiero bajar unos kilitos", "bajar unos kilitos"),
        ("i wanna have more energy for work", "have more energy for work"),
        ("doc says so", "doc says so"),
        ("médico me lo recomendó", "médico me lo recomendó"),
    ],
)
def test_a_reason_given_while_the_time_was_asked_is_the_reason(said: str, reason: str) -> None:
    learned = parse_intake_message(said, {**KNOWN, MOTIVATION: ""}, TIME)
    assert learned.get(MOTIVATION) == reason and TIME not in learned


@pytest.mark.parametrize("said", ["quiero hacerlo después de cenar", "i want to stretch more", "i'd like to try it"])
def test_a_wish_to_do_the_habit_is_no_reason(said: str) -> None:
    assert MOTIVATION not in parse_intake_message(said, {**KNOWN, MOTIVATION: ""}, TIME)


def test_before_work_said_for_the_time_proposes_the_morning() -> None:
    assert routine_moment("right before class") == "07:30"


def test_the_daily_prompt_is_offered_as_the_window_not_as_one_time() -> None:
    profile = UserProfile(
        habit_domain="drawing", motivational_frame="fun", preferred_time="18:00", prompt_anchor="after dinner"
    )
    context = intake_context(profile, "Name: Zoe\nGender: \nEthnicity: \nBackground: ")
    request = ChatRequest(
        purpose="intake",
        messages=[
            ChatMessage(role="system", content="intake system prompt"),
            ChatMessage(role="system", content=context),
            ChatMessage(role="user", content="can it be random?"),
            ChatMessage(role="assistant", content="Yes — at a random moment within a window you pick."),
            ChatMessage(role="user", content="between 6 and 9pm"),
            ChatMessage(role="assistant", content="What do you usually do around then?"),
            ChatMessage(role="user", content="after dinner"),
        ],
        tools=[t for t in TOOLS if t.name == "save_user_profile"],
    )
    response = OfflineCoach().complete(request)
    assert response.tool_calls == []
    assert (response.content or "").endswith("every day at a random time between 6pm and 9pm?")
