"""The intake resumes after a detour and a hesitation never finishes it (docs/offline-coach.md, "Intakes
with a detour" and "Requests during the intake, and hesitation"): hesitation said on its own saves nothing
and asks the open question again; a purpose clause after the habit ("meditate, to calm my mind", "pa
relajarme") is the reason; a break at work or a meal named beside the habit is the routine; a day-part said
for the time is offered back as the routine; a clause that says why an offered time does not suit names no
routine; a new habit asked for by switching to it ("¿y si mejor cambio a nadar?") is read in the feedback
week, and a day-part answered in its second intake is no time yet. The phrasings are deliberately not the
corpus's (built/25_intake_detours_resume.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.intake_moments import moment_said
from promptpipe.adapters.offline_coach.intake_new_habit import fields_since, habit_named
from promptpipe.adapters.offline_coach.intake_reasons import parse_motivation
from promptpipe.adapters.offline_coach.intake_refusals import past_the_refusal
from promptpipe.adapters.offline_coach.times import parse_vague_time, propose_time
from promptpipe.models.llm import ChatMessage
from promptpipe.models.profile import UserProfile
from promptpipe.rules.hesitation import hesitation, only_hesitation
from promptpipe.rules.message_reading import read_message
from tests.support.offline_coach_requests import ASK_TIME, WALKING, calls, intake, then
from tests.unit.test_offline_coach_intake_detours import with_history

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
EMPTY = dict.fromkeys((DOMAIN, MOTIVATION, TIME, ANCHOR), "")
ASK_DOMAIN = "Hi Maria! I'm your habit coach. What's one small habit you'd like to build?"
ASK_WHY = "Walking — great choice. Why does walking matter to you? What would it give you?"


# -- hesitation on its own ---------------------------------------------------------------------------

HESITATIONS = [
    "one moment, still deciding",
    "hang on im thinking lol",
    "havent made up my mind yet",
    "wait a sec",
    "dame un momentito",
    "sigo pensando la verdad",
    "todavía no lo sé",
    "attends, je réfléchis",
]


@pytest.mark.parametrize("said", HESITATIONS)
def test_hesitation_said_on_its_own_is_read(said: str) -> None:
    assert only_hesitation(said)


@pytest.mark.parametrize(
    "said",
    [
        "hang on, 6:30 works",  # a time beside it: an answer
        "still deciding between yoga and running",  # the choice is said
        "not sure i can do it daily",  # a worry, not "no answer yet"
        "espera, mejor nadar",
        "hold on to that thought: swimming",
        "",
    ],
)
def test_hesitation_beside_an_answer_is_no_hesitation(said: str) -> None:
    assert not only_hesitation(said)


@pytest.mark.parametrize(
    ("said", "puts_off"),
    [
        ("lo tengo que pensar", True),  # thinking it over, still to do
        ("let me check my calendar first", True),
        ("je dois y réfléchir", True),
        ("i need to think about that one", True),
        ("hang on im thinking lol", True),  # hesitation said on its own
        ("i need to walk more", False),  # still to do, but nothing to think over
        ("i think yoga", False),
    ],
)
def test_hesitation_reads_thinking_it_over_as_still_to_do(said: str, puts_off: bool) -> None:
    assert hesitation(said) is puts_off


@pytest.mark.parametrize("said", HESITATIONS)
@pytest.mark.parametrize(("profile", "last"), [(UserProfile(), ASK_DOMAIN), (WALKING, ASK_TIME)])
def test_hesitation_saves_nothing_and_asks_the_open_question_again(said: str, profile: UserProfile, last: str) -> None:
    response = OfflineCoach().complete(intake(said, profile, last))
    assert calls(response) == []
    reply = response.content or ""
    assert "?" in reply  # the question still open, asked again
    assert "Done" not in reply and "Listo" not in reply  # nothing finished


def test_the_answer_after_a_hesitation_goes_on() -> None:
    waited = [(ASK_TIME, "hang on im thinking lol")]
    request = with_history("ok 7:45 after my walk to the bus", WALKING, waited, ASK_TIME)
    assert calls(OfflineCoach().complete(request)) == [
        ("save_user_profile", {TIME: "07:45", ANCHOR: "after my walk to the bus"})
    ]


# -- the reason after the habit, the routine beside it -------------------------------------------------


@pytest.mark.parametrize(
    ("said", "habit", "reason"),
    [
        ("meditate, to calm my mind", "mindfulness", "calm my mind"),
        ("yoga, to loosen up my back", "yoga", "loosen up my back"),
        ("nadar pa relajarme", "nadar", "relajarme"),
        ("correr un rato pa despejarme", "correr un rato", "despejarme"),
    ],
)
def test_a_purpose_clause_after_the_habit_is_the_reason(said: str, habit: str, reason: str) -> None:
    learned = parse_intake_message(said, EMPTY, DOMAIN)
    assert (learned[DOMAIN], learned[MOTIVATION]) == (habit, reason)


@pytest.mark.parametrize("said", ["walk the dog, to the park and back", "stretch, to bed after", "papá me dijo"])
def test_a_place_or_a_word_that_starts_alike_is_no_purpose_clause(said: str) -> None:
    assert parse_motivation(said)[0] == ""


@pytest.mark.parametrize(
    ("said", "anchor"),
    [
        ("floss with dinner", "with dinner"),
        ("estirar durante el almuerzo", "durante el almuerzo"),
        ("méditer au déjeuner", "au déjeuner"),
    ],
)
def test_a_meal_said_beside_the_habit_is_the_routine(said: str, anchor: str) -> None:
    assert parse_intake_message(said, EMPTY, DOMAIN)[ANCHOR] == anchor


@pytest.mark.parametrize("said", ["during my tea break", "en el receso del trabajo", "on the break at work"])
def test_a_break_at_work_is_a_moment_of_the_morning_to_propose(said: str) -> None:
    assert parse_vague_time(said, loose=True) == "10:00"
    assert propose_time(said) == "10:00"


def test_a_break_from_something_is_no_moment() -> None:
    assert parse_vague_time("take a break from my phone", loose=True) is None


@pytest.mark.parametrize(
    ("said", "moment"),
    [("in the evening i guess", "in the evening"), ("por la tarde", "por la tarde"), ("le soir", "le soir")],
)
def test_a_part_of_the_day_said_for_the_time_is_the_moment_offered_back(said: str, moment: str) -> None:
    assert moment_said(said) == moment


# -- a time refused, another given ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("nope thats when i do the school run, 9:30?", "9:30"),
        ("no, a esa hora voy en el metro, mejor a las 9", "a las 9"),
        ("non c'est quand je conduis, plutôt 9h30", "9h30"),
    ],
)
def test_the_clause_about_the_time_refused_is_left_out(said: str, kept: str) -> None:
    rest = past_the_refusal(said)
    assert kept in rest and "when" not in rest and "cuando" not in rest and "quand" not in rest
    assert "metro" not in rest and "school run" not in rest and "conduis" not in rest


@pytest.mark.parametrize("said", ["8:15 when i park at work", "thats when i get home so 6 works", "too early"])
def test_a_routine_said_with_its_time_is_kept(said: str) -> None:
    assert past_the_refusal(said) == said


def test_a_time_refused_keeps_the_routine_already_given() -> None:
    profile = WALKING.model_copy(update={ANCHOR: "after the school drop-off"})
    request = intake("nope thats when i do the school run, 9:30?", profile, "How about 8:30am — would that work?")
    assert calls(OfflineCoach().complete(request)) == [("save_user_profile", {TIME: "09:30"})]


# -- a new habit asked for by switching to it -----------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "habit"),
    [
        ("¿y si mejor cambiamos a nadar?", "nadar"),
        ("can i change to journaling instead", "journaling"),
        ("on peut passer au yoga ?", "yoga"),
        ("y si mejor cambio a las 8?", ""),  # a time, not a habit
    ],
)
def test_the_habit_switched_to_is_named(said: str, habit: str) -> None:
    assert habit_named(said) == habit


@pytest.mark.parametrize("said", ["quiero un hábito distinto", "add a 2nd habit?", "y si mejor cambio a remar"])
def test_another_habit_asked_for_is_a_new_habit_request(said: str) -> None:
    assert read_message(said).request == "new_habit"


def test_a_day_part_answered_in_the_second_intake_is_no_time_yet() -> None:
    switched = "¡Claro, cambiamos! ¿Por qué es importante para ti (nadar)? ¿Qué te aportaría?"
    history = [
        ChatMessage(role="assistant", content=switched),
        ChatMessage(role="user", content="para relajarme"),
        ChatMessage(role="assistant", content="Buena razón. ¿A qué hora del día quieres tu mensaje diario?"),
        ChatMessage(role="user", content="por la tarde"),
    ]
    known = {DOMAIN: "nadar", MOTIVATION: "relajarme", TIME: "07:00", ANCHOR: "al despertar"}
    assert fields_since(history, 0, known)[TIME] == ""  # the earlier habit's 07:00 is not the answer


def test_a_refused_proposal_in_a_second_intake_takes_the_new_time_in_the_morning() -> None:
    coach = OfflineCoach()
    switched = "Sure, let's switch! Why does yoga matter to you? What would it give you?"
    profile = WALKING.model_copy(update={DOMAIN: "yoga", MOTIVATION: "less stiff", TIME: "19:00", ANCHOR: "x"})
    turns = [(switched, "less stiff"), (ASK_TIME, "in the morning")]
    request = with_history("ugh too early, 9 then", profile, turns, "How about 8am — would that work?")
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {TIME: "09:00"})]
    assert then(request, step, "Profile saved.")  # the loop goes on from the saved time


# -- the study asked of first, with no question mark ---------------------------------------------------


@pytest.mark.parametrize(
    "said",
    ["hey is this the study from the hospital", "hola es esto lo del estudio de la clinica", "is this the sleep study"],
)
def test_the_study_asked_of_is_a_question_about_who_we_are(said: str) -> None:
    assert read_message(said) == read_message("who is this?")


@pytest.mark.parametrize("said", ["this is the study i joined, walking", "is it the 7pm one"])
def test_a_study_or_a_time_said_otherwise_is_no_such_question(said: str) -> None:
    assert read_message(said).topic != "who"


def test_the_study_asked_of_first_saves_nothing_and_asks_for_the_habit() -> None:
    request = intake("hi is this the research study from my doctor", UserProfile(), ASK_DOMAIN)
    response = OfflineCoach().complete(request)
    assert calls(response) == []
    assert "habit" in (response.content or "")


# -- a grudging yes, then an answer of one's own with its reason -----------------------------------------

DEFAULT_HABIT = "Sorry — let's keep it simple. How about “a 2-minute walk”? Just reply yes, or tell me yours."


@pytest.mark.parametrize(
    ("said", "saved"),
    [
        ("ok fine. yoga, to loosen my back", {DOMAIN: "yoga", MOTIVATION: "loosen my back"}),
        ("vale. nadar pa despejarme", {DOMAIN: "nadar", MOTIVATION: "despejarme"}),
        ("ok fine, pilates", {DOMAIN: "pilates"}),  # no reason said: none saved
    ],
)
def test_an_answer_past_a_grudging_yes_keeps_its_reason(said: str, saved: dict[str, str]) -> None:
    assert calls(OfflineCoach().complete(intake(said, UserProfile(), DEFAULT_HABIT))) == [("save_user_profile", saved)]
