"""The offline intake reads every message for every field still missing, whatever it asked
(docs/offline-coach.md, "Robust to the path"): two answers in one message, a fact given out of turn,
an acknowledgement that keeps the question open. Phrasings here are not the corpus's."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_intake_message
from promptpipe.flow.context import intake_context
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile

DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
    prompt_generator.PromptGeneratorTool().definition,
]
ASK_WHY = "Cycling — great choice. Why does cycling matter to you? What would it give you?"
BACKGROUND = "Name: Alex\nGender: \nEthnicity: \nBackground: "
NOTHING: dict[str, str] = {}
HABIT = {DOMAIN: "cycling"}
HABIT_AND_REASON = {DOMAIN: "cycling", MOTIVATION: "more energy"}


@pytest.mark.parametrize(
    ("said", "known", "asked", "learned"),
    [
        # the habit and why, in one run-on
        ("yoga back pain mostly", NOTHING, DOMAIN, {DOMAIN: "yoga", MOTIVATION: "back pain mostly"}),
        ("journaling to calm my mind", NOTHING, DOMAIN, {DOMAIN: "journaling", MOTIVATION: "calm my mind"}),
        ("drink more water my lips crack", NOTHING, DOMAIN, {DOMAIN: "hydration", MOTIVATION: "my lips crack"}),
        # a habit in a few words, then why in a clause of its own (no keyword needed, three languages)
        (
            "declutter my desk i lose stuff all the time",
            NOTHING,
            DOMAIN,
            {
                DOMAIN: "declutter my desk",
                MOTIVATION: "i lose stuff all the time",
            },
        ),
        (
            "regar las plantas siempre se me olvidan",
            NOTHING,
            DOMAIN,
            {
                DOMAIN: "regar las plantas",
                MOTIVATION: "siempre se me olvidan",
            },
        ),
        (
            "ranger mon bureau je perds tout",
            NOTHING,
            DOMAIN,
            {DOMAIN: "ranger mon bureau", MOTIVATION: "je perds tout"},
        ),
        # why, then when, said together in answer to why
        ("my knees ache 6:30pm", HABIT, MOTIVATION, {MOTIVATION: "my knees ache", TIME: "18:30"}),
        ("stamina 7am", HABIT, MOTIVATION, {MOTIVATION: "stamina", TIME: "07:00"}),
        (
            "i'm sluggish all day 8:10ish after my cereal",
            HABIT,
            MOTIVATION,
            {
                MOTIVATION: "i'm sluggish all day",
                TIME: "08:10",
                ANCHOR: "after my cereal",
            },
        ),
        (
            "para tener más aguante a las 7 de la tarde después del trabajo",
            HABIT,
            MOTIVATION,
            {
                MOTIVATION: "tener más aguante",
                TIME: "19:00",
                ANCHOR: "después del trabajo",
            },
        ),
        # when, then the routine it follows, with no "after"
        ("5:15pm feed the dog", HABIT_AND_REASON, TIME, {TIME: "17:15", ANCHOR: "when I feed the dog"}),
        ("7:40am walking the dog", HABIT_AND_REASON, TIME, {TIME: "07:40", ANCHOR: "after walking the dog"}),
    ],
)
def test_a_message_that_answers_and_gives_more_saves_both(
    said: str, known: dict[str, str], asked: str, learned: dict[str, str]
) -> None:
    assert parse_intake_message(said, known, asked) == learned


@pytest.mark.parametrize(
    ("said", "known", "asked", "learned"),
    [
        ("I crash by 11", HABIT, MOTIVATION, None),  # a time inside the reason: no reason cut short
        ("at 7am, I cycle slowly most days", HABIT_AND_REASON, TIME, {TIME: "07:00"}),  # another clause: no routine
        ("7pm lol thanks", HABIT_AND_REASON, TIME, {TIME: "19:00"}),  # laughter and thanks: no routine
        ("I'd like to learn to paint", NOTHING, None, None),  # the habit goes on: no reason
        ("cycle twice a week", NOTHING, DOMAIN, {DOMAIN: "cycle twice a week"}),
        ("stretch when i wake up", NOTHING, DOMAIN, {DOMAIN: "stretching", ANCHOR: "when i wake up"}),  # a routine
        ("yoga i guess", NOTHING, DOMAIN, {DOMAIN: "yoga"}),  # a hedge, no reason
        ("read more instead of gaming", NOTHING, DOMAIN, {DOMAIN: "reading"}),  # what it replaces, not why
        ("promener mon chien", NOTHING, DOMAIN, {DOMAIN: "promener mon chien"}),  # an object, no new statement
    ],
)
def test_what_is_left_over_is_no_fact_when_it_says_nothing(
    said: str, known: dict[str, str], asked: str | None, learned: dict[str, str] | None
) -> None:
    found = parse_intake_message(said, known, asked)
    if learned is None:
        assert MOTIVATION not in found or found[MOTIVATION] != "I crash"
        assert ANCHOR not in found
    else:
        assert found == learned


def intake(said: str, profile: UserProfile, last: str) -> ChatRequest:
    return ChatRequest(
        purpose="intake",
        messages=[
            ChatMessage(role="system", content="You are a habit coach."),
            ChatMessage(role="system", content=intake_context(profile, BACKGROUND)),
            ChatMessage(role="assistant", content=last),
            ChatMessage(role="user", content=said),
        ],
        tools=TOOLS,
    )


@pytest.mark.parametrize("said", ["ok", "okay", "got it", "vale", "d'accord", "👍"])
def test_an_acknowledgement_saves_nothing_and_keeps_the_question_open(said: str) -> None:
    response = OfflineCoach().complete(intake(said, UserProfile(habit_domain="cycling"), ASK_WHY))
    assert response.tool_calls == []
    assert response.content is not None and response.content != ASK_WHY  # not word for word
    assert response.content.endswith("Why does cycling matter to you? What would it give you?") or (
        "?" in response.content and ("Por qué" in response.content or "Pourquoi" in response.content)
    )
