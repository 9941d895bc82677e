"""The offline coach's eleventh round of readings (docs/offline-coach.md, "Opening words, reports told in the
past, and what helped"): what opens a first message is no reason, a habit's object or measure is no reason,
a report told in the past or judged helpful is a done, the answer to "what helped?" is the motivator, a time
said as a limit is not the new time, and a yes hummed or said in slang takes the offer."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_clock_time
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_detours import sends_it_now
from promptpipe.adapters.offline_coach.reading import accepts, common_question
from promptpipe.models.profile import UserProfile
from promptpipe.rules.avoided_day_part import when_wanted, without_a_deadline
from promptpipe.rules.feedback_reading import time_preference
from promptpipe.rules.message_reading import shrugs
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.report_details import says_it_helps
from tests.support.offline_coach_requests import OFFER, READY, calls, feedback, intake, text_of, then

GREETING = "Hi! I'm your habit coach. What small daily habit would you like to build?"
ASKED_HELPED = "Nice work — you did it! What helped you make it happen today?"


def first_message(said: str) -> dict[str, str]:
    return parse_intake_message(said, {}, "habit_domain")


@pytest.mark.parametrize(
    ("said", "habit"),
    [
        ("buenos dias, quiero ponerme bloqueador todos los dias", "ponerme bloqueador"),
        ("hola, me recomendaron este numero. quiero escribir en mi diario", "escribir en mi diario"),
        ("q onda, quiero preparar mi lunch pal trabajo", "preparar mi lunch pal trabajo"),
        ("Hello, I'm Ruth. I would like to walk a bit more", "walking"),
        ("hi i want to make my bed every morning lol", "make my bed"),
        ("Hi so I want to get into the habit of walking every day", "walking"),
    ],
)
def test_what_opens_a_first_message_is_never_the_reason(said: str, habit: str) -> None:
    learned = first_message(said)
    assert learned.get("habit_domain") == habit
    assert "motivational_frame" not in learned


@pytest.mark.parametrize(
    "said",
    [
        "gratitude list, like 3 things",
        "hola quiero estudiar pal examen, aunq sea poquito diario",
        "Hi I'd like to walk the dog a little longer every morning",
        "walk my dog every morning",
        "read my bible daily",
    ],
)
def test_a_habits_object_or_measure_is_not_its_reason(said: str) -> None:
    learned = first_message(said)
    assert learned.get("habit_domain")
    assert "motivational_frame" not in learned


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("stretch, my back hurts all day", "my back hurts all day"),
        ("drink more water my lips crack", "my lips crack"),
        ("I sit at a desk all day, I want to stretch more", "I sit at a desk all day"),
        ("hola, quiero regar mis plantas, se me mueren todas", "se me mueren todas"),
    ],
)
def test_a_reason_beside_the_habit_is_still_read(said: str, reason: str) -> None:
    assert first_message(said)["motivational_frame"] == reason


def test_a_first_message_with_the_habit_its_time_and_its_routine_saves_all_three() -> None:
    learned = first_message("hi i want to do 10 min of yoga at 6am after i let the dog out")
    assert learned == {"habit_domain": "yoga", "preferred_time": "06:00", "prompt_anchor": "after i let the dog out"}


@pytest.mark.parametrize(
    "said",
    [
        "I pulled a few weeds by the front step. Lovely to be out there again.",
        "walked to the park n back, 12 min",
        "cleaned the kitchen",
        "ya me lo puse, gracias",
        "ya toque un rato 🎸",
        "ya, 20 min en la bici y sudé como nunca",
        "ya quedo el lunch",
        "hoy también, y les quité las hojas secas",
    ],
)
def test_what_was_done_told_in_the_past_answers_the_prompt(said: str) -> None:
    assert read_outcome(said, asked=True) == "done"


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("worked late again", "no_report"),
        ("wanted to but didnt", "not_done"),
        ("started but got interrupted", "no_report"),
        ("ya voy", "no_report"),
        ("ya casi", "no_report"),
        ("ya no quiero", "not_done"),
    ],
)
def test_a_plan_an_attempt_or_what_got_in_the_way_is_not_a_done(said: str, outcome: str) -> None:
    assert read_outcome(said, asked=True) == outcome


@pytest.mark.parametrize(
    "said",
    [
        "Thank you for the reminder it's actually really helping me get out the door",
        "appreciate it, def helping",
        "muchas gracias, de verdad que me está viniendo genial 😊",
        "gracias de verdad 🥹 si me esta haciendo bien escribirlas",
        "gracias hermano, si me ayuda mucho esto 🙏",
    ],
)
def test_the_habit_judged_helpful_in_more_words(said: str) -> None:
    assert says_it_helps(said)


def test_its_not_really_helping_is_no_judgement_that_it_helps() -> None:
    assert not says_it_helps("its not really helping")


@pytest.mark.parametrize(
    ("said", "motivator"),
    [
        ("honestly just the text popping up, i was about to sit on the couch", "the text popping up"),
        ("I think leaving the notebook on my pillow so I literally couldn't miss it", "notebook on my pillow"),
    ],
)
def test_the_answer_to_what_helped_is_the_motivator(said: str, motivator: str) -> None:
    response = OfflineCoach().complete(feedback(said, ASKED_HELPED))
    [(tool, args)] = calls(response)
    assert tool == "save_user_profile"
    assert set(args) == {"last_motivator"}
    assert motivator in args["last_motivator"]


def test_after_what_helped_a_plan_for_next_time_is_no_motivator() -> None:
    response = OfflineCoach().complete(feedback("next time i'll put the mat out the night before", ASKED_HELPED))
    assert all("last_motivator" not in args for _, args in calls(response))


@pytest.mark.parametrize("said", ["mhm", "go on then", "yes x", "arre", "sipi", "ta bien", "amen, si", "uh huh"])
def test_a_yes_hummed_or_in_slang_takes_the_offer(said: str) -> None:
    assert accepts(said)
    assert calls(OfflineCoach().complete(intake(said, READY, OFFER)))[0][0] == "scheduler"


def test_a_time_said_as_a_limit_is_not_the_new_time() -> None:
    assert "7" not in without_a_deadline("could we do earlier? im out the door by 7")
    # nothing moves: the time is asked for (before, 7 was taken as the new time)
    reply = text_of(feedback("could we do earlier? im out the door by 7", "See you tomorrow!"))
    assert reply == "Sure. What time would suit you better? For example 7pm."


def test_a_part_of_the_day_judged_unfit_is_refused_and_never_proposed() -> None:
    assert time_preference("ugh mornings arent working for me").refused == "morning"  # type: ignore[union-attr]
    assert time_preference("It is getting far too hot in the afternoons").refused == "afternoon"  # type: ignore[union-attr]
    request = feedback("ugh mornings arent working for me. is it possible to change the time?", "Bye!")
    response = OfflineCoach().complete(request)
    assert calls(response) == [("save_user_profile", {"last_barrier": "ugh mornings arent working for me"})]
    reply = OfflineCoach().complete(then(request, response, "Saved.")).content or ""
    assert reply == "Sure. What time would suit you better? For example 7pm."  # no morning proposed


@pytest.mark.parametrize(
    "said",
    [
        "tio es q no acabas nunca 😅 solo manda el recordatorio a esa hora",
        "neta otra? ya manda el recordatorio y ya",
        "a las 14:30 y no me preguntes mas porfa, envialo y ya",
    ],
)
def test_send_it_now_in_spanish_as_people_write_it(said: str) -> None:
    assert sends_it_now(said)


def test_send_it_now_is_never_saved_as_the_routine() -> None:
    profile = UserProfile(habit_domain="meditar", motivational_frame="estar menos ansiosa", preferred_time="20:15")
    response = OfflineCoach().complete(intake("neta otra? ya manda el recordatorio y ya", profile, "¿Qué haces ya?"))
    assert all("manda" not in str(args.get("prompt_anchor", "")) for _, args in calls(response))


@pytest.mark.parametrize("said", ["is it a real person?", "¿eres un bot?", "is this automated?"])
def test_the_bot_question_is_read_by_the_shared_reader(said: str) -> None:
    assert common_question(said) == "bot"


@pytest.mark.parametrize(("said", "shrug"), [("honestly no idea, just seems good", True), ("to sleep", False)])
def test_a_shrug_is_found_wherever_it_stands(said: str, shrug: bool) -> None:
    assert shrugs(said) is shrug


def test_a_greeting_alone_is_no_habit() -> None:
    assert first_message("hola") == {}
    assert calls(OfflineCoach().complete(intake("hola", UserProfile(), GREETING))) == []


KNOWN = {"habit_domain": "walking", "motivational_frame": "health"}


@pytest.mark.parametrize(
    ("said", "expected", "learned"),
    [
        (
            "Um I'd say afternoon sometime, actually no let's say 1:30 because that's my lunch break",
            "preferred_time",
            {"preferred_time": "13:30", "prompt_anchor": "at my lunch break"},
        ),
        (
            "wait no scratch that, 7:45. thats when i sit down on the train",
            "preferred_time",
            {"preferred_time": "07:45", "prompt_anchor": "when i sit down on the train"},
        ),
        (
            "I always heat up my lunch in the microwave at work so maybe then",
            "prompt_anchor",
            {"prompt_anchor": "when I heat up my lunch in the microwave at work", "preferred_time": "12:00"},
        ),
    ],
)
def test_the_moment_named_beside_a_time_is_the_routine_and_the_reason_stays(
    said: str, expected: str, learned: dict[str, str]
) -> None:
    assert parse_intake_message(said, KNOWN, expected) == learned


LISTED_7AM = "Active daily schedules:\n1. every day at 06:50 (America/Toronto), 10 min before 07:00 (internal id: s1)"
ASK_WHICH = "Sure. What time would suit you better? For example 7pm."


@pytest.mark.parametrize(("said", "created"), [("6:15", "06:15"), ("like 5?", "17:00"), ("9", "09:00")])
def test_a_bare_hour_to_move_the_prompt_keeps_the_half_it_comes_in_now(said: str, created: str) -> None:
    request = feedback(said, ASK_WHICH)
    listed = OfflineCoach().complete(request)
    assert calls(listed) == [("scheduler", {"action": "list"})]
    moved = calls(OfflineCoach().complete(then(request, listed, LISTED_7AM)))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": created}) in moved


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("ya lo he hecho", "done"),
        ("he caminado 20 min", "done"),
        ("hoy no he podido", "not_done"),
        ("se me ha olvidado", "not_done"),
        ("no me ha dado tiempo, mucho curro", "not_done"),
        ("he estado liadísima", "no_report"),
        ("he tenido mucho trabajo", "no_report"),
    ],
)
def test_the_perfect_of_spain_reports_the_day(said: str, outcome: str) -> None:
    assert read_outcome(said, asked=True) == outcome


@pytest.mark.parametrize(
    "said", ["thank you!! this has been so helpful", "muy útil, gracias", "thanks, helps me a lot", "ur helping!"]
)
def test_helpful_said_in_more_ways_says_it_helps(said: str) -> None:
    assert says_it_helps(said)


@pytest.mark.parametrize(
    ("said", "proposal"),
    [("cuando salgo del trabajo", "¿Qué tal a las 5:30pm?"), ("después del curro", "¿Qué tal a las 5:30pm?")],
)
def test_a_routine_given_as_the_new_time_gets_its_time_proposed(said: str, proposal: str) -> None:
    reply = text_of(feedback(said, "Claro. ¿A qué hora te va mejor? Por ejemplo a las 7pm."))
    assert proposal in reply


def test_the_part_of_the_day_to_leave_is_never_the_one_wanted() -> None:
    assert when_wanted("¿se puede cambiar la hora? a mediodía estoy muy liada") == "¿se puede cambiar la hora?"
    assert when_wanted("mornings are chaos, evenings at 8") == "evenings at 8"


@pytest.mark.parametrize(
    ("said", "time"),
    [
        ("too many questions man. tonight, just send it", "19:00"),
        ("ugh. whatever. 7pm. just send it", "19:00"),
        ("solo manda el recordatorio a las 21:00", "21:00"),
    ],
)
def test_just_send_it_keeps_the_time_beside_it_and_no_word_of_the_complaint(said: str, time: str) -> None:
    profile = UserProfile(habit_domain="walking")
    response = OfflineCoach().complete(intake(said, profile, "Walking — great choice. Why does walking matter to you?"))
    [(tool, args)] = calls(response)
    assert tool == "save_user_profile"
    assert args["preferred_time"] == time
    assert "question" not in args["motivational_frame"] and "ugh" not in args["motivational_frame"]


@pytest.mark.parametrize(
    "said",
    [
        "📖 thanks",
        "🏋️ cheers",
        "12 more today",
        "otra vez, 10 paginas",
        "leído",
        "Today I took the stairs all 6 floors!",
        "I have played this morning. Some scales",
    ],
)
def test_another_day_done_in_few_words(said: str) -> None:
    assert read_outcome(said, asked=True) == "done"


@pytest.mark.parametrize(
    "said",
    ["🙏", "😴", "olvidado", "today i went to bed early", "i went out with friends", "had a migraine", "cancelled"],
)
def test_what_only_tells_the_day_is_no_done(said: str) -> None:
    assert read_outcome(said, asked=True) != "done"


@pytest.mark.parametrize(
    "said", ["read a few pages, cheers this is helping me wind down", "thanks mate, it's working, did 10"]
)
def test_a_thanks_and_the_habit_judged_are_no_motivator(said: str) -> None:
    response = OfflineCoach().complete(feedback(said, "See you tomorrow!"))
    saved = next(args for tool, args in calls(response) if tool == "save_user_profile")
    assert "last_successful_prompt" in saved
    assert "last_motivator" not in saved


@pytest.mark.parametrize(
    "said",
    [
        "not looking for a coach, I just need a daily reminder to take my vitamins. 9am",
        "can u do that without a bunch of questions",
        "does it matter why?? remind me at 10pm, that's all I need",
        "madre mia, cuantas preguntas... a las 8 de la tarde. mandame el aviso y listo",
        "sin tanto rollo porfa, nomas quiero q me recuerdes tomar agua a las 10",
    ],
)
def test_the_questions_declined_in_more_words(said: str) -> None:
    assert sends_it_now(said)


@pytest.mark.parametrize(("said", "yes"), [("Righto, yes.", True), ("que si", True), ("q siii", True)])
def test_more_yeses(said: str, yes: bool) -> None:
    assert accepts(said) is yes


def test_a_preference_against_something_is_no_change_of_habit() -> None:
    learned = parse_intake_message(
        "Heart's not what it was and the cardiologist wants me moving. Also I'd rather not waste her money.",
        {"habit_domain": "exercise"},
        "motivational_frame",
    )
    assert "habit_domain" not in learned


@pytest.mark.parametrize(
    ("said", "time"),
    [
        ("uy no, las 8 es muy temprano, aun estoy medio dormida. mejor 1015", "10:15"),
        ("hmm actually 9 is too late, I'm stuck in meetings by then. 830 pls.", "08:30"),
        ("better 845", "08:45"),
    ],
)
def test_an_hour_without_its_colon_after_a_preference_or_before_a_please(said: str, time: str) -> None:
    assert parse_clock_time(said) == time


@pytest.mark.parametrize("said", ["read 100 pages", "mejor 1000 pasos"])
def test_a_count_is_no_hour_without_its_colon(said: str) -> None:
    assert parse_clock_time(said) is None
