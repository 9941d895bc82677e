"""More intakes that finish after a detour (docs/offline-coach.md, "More intakes with a detour"): a slip of
the thumb in the habit or the routine, Spanish as texted ("antes d dormir"), the time handed over with "I
don't mind what time", an emoji after a connective that names no routine, a routine said as a state ("ya
acostado"), "instead of" inside a reason, a grudging yes before an answer of one's own, a moment of the day
said for the time (proposed, then offered back as the routine), and a new habit asked for in the feedback
week (the habit it names saved, its intake asking again, its schedule replacing the earlier one). The
phrasings here are deliberately not the corpus's (built/21_intake_detours_more.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_answers import parse_anchor, parse_intake_message
from promptpipe.adapters.offline_coach.intake_detours import hands_over_the_time, own_answer_past_the_yes
from promptpipe.adapters.offline_coach.intake_moments import moment_said
from promptpipe.adapters.offline_coach.intake_new_habit import fields_since, habit_named, second_intake_start
from promptpipe.adapters.offline_coach.spoken import with_clause_breaks
from promptpipe.adapters.offline_coach.times import propose_time
from promptpipe.flow.context import feedback_context
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile
from promptpipe.rules.message_reading import read_message
from tests.support.offline_coach_requests import (
    ALL_TOOLS,
    ASK_TIME,
    BACKGROUND,
    PROMPT,
    READY,
    calls,
    intake,
    text_of,
    then,
)
from tests.unit.test_offline_coach_intake_detours import with_history

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
EMPTY = dict.fromkeys((DOMAIN, MOTIVATION, TIME, ANCHOR), "")
DEFAULT_HABIT = "Sorry — let's keep it simple. How about “a 2-minute walk”? Just reply yes, or tell me yours."
LISTED = "Active daily schedules:\n1. every day at 08:20 (America/Toronto), 10 min before 08:30 (internal id: s1)"


# -- messages as thumbs type them ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("stretchng before work", "stretching before work"),  # a letter left out
        ("exercisse a bit", "exercise a bit"),  # a letter doubled
        ("meditatiom", "meditation"),  # a neighbouring key
        ("caminsr un rato", "caminar un rato"),
        ("antes d dormir", "antes de dormir"),  # Spanish as texted
        ("dsp del gym", "después del gym"),
    ],
)
def test_a_slip_of_the_thumb_is_read_as_the_word_meant(typed: str, meant: str) -> None:
    assert with_clause_breaks(typed) == meant


@pytest.mark.parametrize("typed", ["7pm works", "she walks", "i'd go at 8", "vitamins", "take vitamin d at noon"])
def test_a_word_that_is_no_slip_is_left_as_typed(typed: str) -> None:
    assert with_clause_breaks(typed) == typed


def test_a_routine_typed_in_spanish_texting_is_the_anchor() -> None:
    learned = parse_intake_message("a las 10 antes d acostarme", EMPTY | {DOMAIN: "leer"}, TIME)
    assert learned == {TIME: "22:00", ANCHOR: "antes de acostarme"}


@pytest.mark.parametrize("said", ["ya acostado", "estando en pijama"])
def test_a_routine_said_as_a_state_is_the_anchor(said: str) -> None:
    assert parse_anchor(said)[0] == said


@pytest.mark.parametrize("said", ["whenever 😅", "when 🤷‍♀️"])
def test_a_connective_and_an_emoji_name_no_routine(said: str) -> None:
    assert parse_anchor(said)[0] == ""


@pytest.mark.parametrize("said", ["must i answer every single day", "can u read what i send", "will u text on sundays"])
def test_a_yes_no_question_with_no_question_mark_is_a_question(said: str) -> None:
    assert read_message(said).kind == "question"


@pytest.mark.parametrize("said", ["did it 💪", "would love to swim more", "i can do mornings"])
def test_an_auxiliary_that_asks_nothing_is_no_question(said: str) -> None:
    assert read_message(said).kind != "question"


# -- the time handed over ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said", ["honestly i don't mind what time", "no me importa la hora", "peu importe l'heure", "just send them"]
)
def test_not_minding_when_hands_the_time_over(said: str) -> None:
    assert hands_over_the_time(said)


@pytest.mark.parametrize("said", ["just send it at 9", "i don't mind the rain"])
def test_a_time_or_another_thing_not_minded_hands_nothing_over(said: str) -> None:
    assert not hands_over_the_time(said)


def test_the_time_handed_over_with_an_emoji_saves_a_default_and_no_routine() -> None:
    no_time = READY.model_copy(update={TIME: "", ANCHOR: ""})
    step = OfflineCoach().complete(intake("dont care when 🙃 just send it", no_time, ASK_TIME))
    saved = dict(calls(step)[0][1])
    # a default time; "when 🙃" is no routine ("just send it" may fill the routine with the default one)
    assert saved.get(TIME) and "when" not in saved.get(ANCHOR, "")


# -- "instead of" inside a reason, and a grudging yes ----------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "ok great. get outside instead of sitting around",
        "awesome. to actually rest rather than work late",
        "bueno. moverme en lugar de estar en el sofá",
    ],
)
def test_instead_of_inside_the_reason_is_the_reason_not_another_habit(said: str) -> None:
    learned = parse_intake_message(said, EMPTY | {DOMAIN: "yoga"}, MOTIVATION)
    assert DOMAIN not in learned and learned.get(MOTIVATION)


def test_a_change_of_habit_is_still_read() -> None:
    learned = parse_intake_message("hmm actually switch me to journaling", EMPTY | {DOMAIN: "yoga"}, MOTIVATION)
    assert learned.get(DOMAIN) == "journaling"


@pytest.mark.parametrize(("said", "habit"), [("ok fine, pilates", "pilates"), ("vale. nadar un poco", "nadar un poco")])
def test_a_grudging_yes_then_an_answer_of_ones_own_is_the_answer(said: str, habit: str) -> None:
    assert own_answer_past_the_yes(said, DOMAIN, EMPTY).lower() == habit
    step = OfflineCoach().complete(intake(said, UserProfile(), DEFAULT_HABIT))
    assert calls(step) == [("save_user_profile", {DOMAIN: own_answer_past_the_yes(said, DOMAIN, EMPTY)})]


@pytest.mark.parametrize("said", ["fine, i suppose", "ok"])
def test_a_yes_with_no_answer_of_its_own_takes_the_suggestion(said: str) -> None:
    step = OfflineCoach().complete(intake(said, UserProfile(), DEFAULT_HABIT))
    assert calls(step) == [("save_user_profile", {DOMAIN: "a 2-minute walk"})]


# -- a moment of the day said for the time -------------------------------------------------------


@pytest.mark.parametrize(("said", "time"), [("first thing tomorrow", "07:00"), ("dès la première heure", "07:00")])
def test_the_start_of_the_day_proposes_an_early_time(said: str, time: str) -> None:
    assert propose_time(said) == time


@pytest.mark.parametrize(
    ("said", "moment"),
    [
        ("at my tea break i guess", "at my tea break"),
        ("a la hora del almuerzo", "a la hora del almuerzo"),
        ("à l'heure du dîner", "à l'heure du dîner"),
    ],
)
def test_a_moment_named_by_its_meal_or_its_break_is_read(said: str, moment: str) -> None:
    assert moment_said(said) == moment


def test_the_moment_said_for_the_time_is_offered_back_as_the_routine_once_the_time_is_taken() -> None:
    profile = READY.model_copy(update={TIME: "", ANCHOR: ""})
    request = with_history("yes", profile, [(ASK_TIME, "around breakfast time")], "How about 8am — would that work?")
    step = OfflineCoach().complete(request)
    assert calls(step) == [("save_user_profile", {TIME: "08:00"})]
    after = then(request, step, "Profile saved.")
    assert "“around breakfast time”" in text_of(after)  # the routine to take with one word


# -- a new habit from the feedback week ------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "habit"),
    [
        ("could i switch to a different habit? thinking yoga", "yoga"),
        ("me gustaría un nuevo hábito: leer más", "leer más"),
        ("I want a new habit", ""),  # none named: the coach asks which
    ],
)
def test_the_habit_a_request_for_a_new_one_names(said: str, habit: str) -> None:
    assert habit_named(said).lower() == habit


def _feedback(user: str) -> ChatRequest:
    profile = READY.model_copy(update={"total_prompts": 1, "success_count": 1})
    return ChatRequest(
        purpose="feedback",
        messages=[
            ChatMessage(role="system", content="feedback system prompt"),
            ChatMessage(role="system", content=feedback_context(profile, PROMPT, True, BACKGROUND)),
            ChatMessage(role="assistant", content="Nice work — you did it! What helped?"),
            ChatMessage(role="user", content=user),
        ],
        tools=ALL_TOOLS[:3],
    )


def test_a_new_habit_named_in_the_feedback_week_is_saved_and_its_reason_asked() -> None:
    coach, request = OfflineCoach(), _feedback("could i switch to a different habit? thinking yoga")
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {DOMAIN: "yoga"})]
    request = then(request, step, "Profile saved.")
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    said = text_of(then(request, step, "The conversation is now in INTAKE."))
    assert "Why does yoga matter to you?" in said


SWITCHED = "Sure, let's switch! Why does yoga matter to you? What would it give you?"


def test_the_second_intake_asks_again_what_was_the_earlier_habits() -> None:
    history = [ChatMessage(role="assistant", content=SWITCHED), ChatMessage(role="user", content="to loosen my hips")]
    start = second_intake_start(history)
    assert start == 0
    known = {DOMAIN: "yoga", MOTIVATION: "loosen my hips", TIME: "08:30", ANCHOR: "after breakfast"}
    assert fields_since(history, start, known) == known | {TIME: "", ANCHOR: ""}


def test_the_second_intake_replaces_the_earlier_schedule() -> None:
    coach = OfflineCoach()
    profile = READY.model_copy(update={DOMAIN: "yoga", MOTIVATION: "loosen my hips"})
    request = with_history("9pm once the kids are down", profile, [(SWITCHED, "to loosen my hips")], ASK_TIME)
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {TIME: "21:00", ANCHOR: "once the kids are down"})]
    request = then(request, step, "Profile saved.")
    step = coach.complete(request)
    assert calls(step)[0] == ("generate_habit_prompt", {"delivery_mode": "immediate"})
    request = then(request, step, "Once the kids are down, try 1 minute of yoga.")
    offer = coach.complete(request)
    assert calls(offer) == [] and offer.content  # the new habit's schedule is proposed, made on the yes
    turns = [(SWITCHED, "to loosen my hips"), (ASK_TIME, "9pm once the kids are down")]
    request = with_history(
        "yes", profile.model_copy(update={TIME: "21:00", ANCHOR: "once the kids are down"}), turns, offer.content
    )
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    request = then(request, step, LISTED)
    step = coach.complete(request)
    assert calls(step) == [
        ("scheduler", {"action": "delete", "schedule_id": "s1"}),
        ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "21:00"}),
    ]
