"""The offline coach reads the conversation, not only its last question (docs/offline-coach.md, "A
reader before an answerer"): times as people write them, a change of mind, a greeting, a question or a
complaint that is no answer, and what it may say of the study."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, StudyFacts, answer_faq, parse_intake_message
from promptpipe.adapters.offline_coach.times import parse_clock_time, same_half_of_day
from promptpipe.flow.context import intake_context
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from promptpipe.models.profile import UserProfile

TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
    prompt_generator.PromptGeneratorTool().definition,
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7:15ish", "07:15"),
        ("quarter past 7", "07:15"),
        ("quarter to 8", "07:45"),
        ("half 8", "08:30"),
        ("19h", "19:00"),
        ("7 in the evening", "19:00"),
        ("before bed like 10:30", "22:30"),
        ("9:30 at night after brushing my teeth", "21:30"),
        ("8:15 with my first coffee", "08:15"),
        ("vers 7h30", "07:30"),
        ("7am right after i get out of bed", "07:00"),
        ("9 de la noche después de cenar", "21:00"),
        # French and Spanish grammar, "930", and the half of the day from the sentence
        ("change the time to 8 so i can stretch", "08:00"),
        ("can you push the reminders to 9 tonight", "21:00"),
        ("vers 7h30 après le café", "07:30"),
        ("le soir après le dîner vers 21h", "21:00"),
        ("8h et demie en arrivant au bureau", "08:30"),
        ("8h moins le quart", "07:45"),
        ("vers 7 heures", "07:00"),
        ("7h du soir", "19:00"),
        ("à midi", "12:00"),
        ("a las 6 y cuarto de la tarde al salir del trabajo", "18:15"),
        ("a las 8 menos cuarto", "07:45"),
        ("después de comer como a las 3", "15:00"),
        ("antes de dormir, sobre las 11", "23:00"),
        ("en la comida a las 2", "14:00"),
        ("930 pm after i brush teeth", "21:30"),
        ("around 930", "09:30"),
        ("ok 6:45 before everyone wakes up", "06:45"),
        ("every day at 1 when i take my lunch break", "13:00"),
        ("dinner time around 6:30", "18:30"),
    ],
)
def test_times_as_people_write_them(text: str, expected: str) -> None:
    assert parse_clock_time(text) == expected


def test_what_is_known_of_the_moment_tells_night_from_morning() -> None:
    assert parse_clock_time("10:30", hint="before bed") == "22:30"
    assert parse_clock_time("10:30 in the morning", hint="before bed") == "10:30"
    known = {"habit_domain": "sleep", "motivational_frame": "always tired"}
    assert parse_intake_message("10.30", known, "preferred_time") == {"preferred_time": "22:30"}
    assert parse_intake_message("7:15ish", known, "preferred_time") == {"preferred_time": "07:15"}


def test_a_time_inside_a_sentence_keeps_the_other_facts() -> None:
    learned = parse_intake_message("8:15 with my first coffee", {"habit_domain": "flossing"}, "motivational_frame")
    assert learned == {"preferred_time": "08:15", "prompt_anchor": "with my first coffee"}
    learned = parse_intake_message("before bed like 10:30", {"habit_domain": "reading"}, "preferred_time")
    assert learned == {"preferred_time": "22:30", "prompt_anchor": "before bed"}


def test_the_habit_and_its_reason_in_one_answer() -> None:
    learned = parse_intake_message("estirar, paso todo el dia sentado", {}, "habit_domain")
    assert learned["motivational_frame"] == "paso todo el dia sentado"
    learned = parse_intake_message("I sit at a desk all day, I want to stretch more", {}, "habit_domain")
    assert learned == {"habit_domain": "stretching", "motivational_frame": "I sit at a desk all day"}


@pytest.mark.parametrize(
    ("said", "earlier", "expected"),
    [
        ("actually make it 9", "20:00", "21:00"),
        ("actually 9am", "20:00", "09:00"),
        ("make it 6 instead", "07:00", "06:00"),
        ("make it 7:30 actually", "07:00", "07:30"),
        ("19:30 then", "07:00", "19:30"),
    ],
)
def test_a_change_of_mind_keeps_the_half_of_the_day(said: str, earlier: str, expected: str) -> None:
    assert same_half_of_day(parse_clock_time(said), earlier, said) == expected


def intake(user: str, profile: UserProfile, last_reply: str) -> ChatRequest:
    context = intake_context(profile, "Name: Alex\nGender: \nEthnicity: \nBackground: ")
    return ChatRequest(
        purpose="intake",
        messages=[
            ChatMessage(role="system", content="intake system prompt"),
            ChatMessage(role="system", content=context),
            ChatMessage(role="assistant", content=last_reply),
            ChatMessage(role="user", content=user),
        ],
        tools=TOOLS,
    )


ASK_WHY = "Walking — great choice. Why does walking matter to you? What would it give you?"
WALKING = UserProfile(habit_domain="walking")


def reply(response: ChatResponse) -> str:
    assert response.tool_calls == [], response.tool_calls  # nothing saved
    return response.content or ""


@pytest.mark.parametrize(
    ("said", "pending"),
    [
        ("heyy", "Why does walking matter to you? What would it give you?"),
        ("who is this?", "Why does walking matter to you? What would it give you?"),
        ("how did u get my number", "Why does walking matter to you? What would it give you?"),
        ("sounds good lol", "Why does walking matter to you? What would it give you?"),
        # written in Spanish: the pending question comes again in Spanish
        ("buenas tardes", "¿Por qué es importante para ti (walking)? ¿Qué te aportaría?"),
    ],
)
def test_no_greeting_question_or_yes_is_saved_and_the_pending_question_comes_again(said: str, pending: str) -> None:
    answer = reply(OfflineCoach().complete(intake(said, WALKING, ASK_WHY)))
    assert answer.endswith(pending), answer


def test_a_question_is_answered_from_the_study_facts() -> None:
    study = StudyFacts(name="Move Study", team="the Move Lab", contact="move@example.org")
    answer = reply(OfflineCoach(study=study).complete(intake("who is this?", WALKING, ASK_WHY)))
    assert answer.startswith(
        "I'm the automated habit coach of Move Study, the study you signed up for, run by the Move Lab."
    )
    answer = reply(OfflineCoach(study=study).complete(intake("does this cost anything?", WALKING, ASK_WHY)))
    assert answer.startswith("I can't answer that one myself, but the Move Lab at move@example.org can.")
    assert "no person types" in answer_faq("bot", StudyFacts())
    assert answer_faq("what_sent", StudyFacts(sends="a short text at 8am")) == "I'll send a short text at 8am."
    assert StudyFacts.from_settings(object()) == StudyFacts()


def test_a_complaint_gets_an_easier_way_on_and_its_yes_saves_the_default() -> None:
    answer = reply(OfflineCoach().complete(intake("this is annoying. too many questions", WALKING, ASK_WHY)))
    assert answer == (
        "Sorry — let's keep it simple. How about “to feel a bit better every day”? Just reply yes, or tell me yours."
    )
    saved = OfflineCoach().complete(intake("👍🏼", WALKING, answer)).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [
        ("save_user_profile", {"motivational_frame": "to feel a bit better every day"})
    ]


def test_a_complaint_that_hands_the_choice_over_takes_the_default_at_once() -> None:
    # "just pick one" is an easier way on: the default is chosen (docs/offline-coach.md, "Intakes that finish")
    saved = OfflineCoach().complete(intake("this is annoying. just pick one", WALKING, ASK_WHY)).tool_calls
    assert [(c.name, c.parsed_arguments()) for c in saved] == [
        ("save_user_profile", {"motivational_frame": "to feel a bit better every day"})
    ]


def test_not_now_is_no_answer() -> None:
    answer = reply(OfflineCoach().complete(intake("not yet, let me think", WALKING, ASK_WHY)))
    assert answer.startswith("No rush — take your time.") and answer.endswith("?")
