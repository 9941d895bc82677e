"""The offline intake finishes after a detour (docs/offline-coach.md, "Intakes with a detour"): a pause asked
for before the set-up is promised, then made once the schedule exists, and never contradicted; another part
of the day asked for is proposed and a yes replaces the earlier time; the time handed over with a
free-choice word gets a default; a yes with a fact beside it keeps both; "let me think" invents nothing.
The phrasings here are deliberately not the corpus's (built/17_intake_detours_finish.yaml)."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.adapters.offline_coach.intake_detours import (
    asks_for_a_part_of_the_day,
    asks_to_pause,
    asks_who_the_coach_is,
    beside_the_yes,
    hands_over_the_time,
    hesitates,
    is_impatience,
    is_lost,
    proposed_time,
)
from promptpipe.flow.context import intake_context
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile
from tests.support.offline_coach_requests import (
    ALL_TOOLS,
    ASK_ANCHOR,
    ASK_TIME,
    BACKGROUND,
    OFFER,
    READY,
    WALKING,
    calls,
    feedback,
    intake,
    text_of,
    then,
)

TIME, ANCHOR = "preferred_time", "prompt_anchor"
ASK_HABIT = "Hi! I'm your habit coach. What small daily habit would you like to build?"
PAUSED = (
    "Daily prompts paused for 5 day(s): none is sent until Saturday 14 March (2026-03-14 08:20 America/Toronto), "
    "when they resume by themselves at their usual time."
)


def with_history(user: str, profile: UserProfile, turns: list[tuple[str, str]], last: str) -> ChatRequest:
    """An intake request whose history holds ``turns`` (the coach's message, their answer) before ``last``."""
    messages = [
        ChatMessage(role="system", content="intake system prompt"),
        ChatMessage(role="system", content=intake_context(profile, BACKGROUND)),
    ]
    for coach, said in turns:
        messages += [ChatMessage(role="assistant", content=coach), ChatMessage(role="user", content=said)]
    messages += [ChatMessage(role="assistant", content=last), ChatMessage(role="user", content=user)]
    return ChatRequest(purpose="intake", messages=messages, tools=ALL_TOOLS)


@pytest.mark.parametrize(
    ("said", "promised"),
    [
        ("can you hold off the texts for 5 days? im away", "I'll pause it for 5 days."),
        ("pausa los mensajes 4 días porfa", "lo pongo en pausa 4 días."),
        ("vous pouvez mettre les messages en pause 2 jours ? je pars", "je le mets en pause 2 jours."),
    ],
)
def test_a_pause_before_the_set_up_is_promised_and_the_open_question_asked_again(said: str, promised: str) -> None:
    answer = text_of(intake(said, WALKING, ASK_TIME))
    assert promised in answer
    assert "?" in answer.split(promised, 1)[1]  # the question still open, asked again


def test_the_pause_asked_during_the_intake_is_made_once_the_schedule_exists() -> None:
    coach = OfflineCoach()
    turns = [(ASK_HABIT, "walking"), (ASK_TIME, "can you hold off the texts for 5 days? im away")]
    request = with_history("sure", READY, turns, OFFER)
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:30"})]
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "pause", "days": 5})]
    request = then(request, step, PAUSED)
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    said = text_of(then(request, step, "The conversation is now in FEEDBACK."))
    assert "paused until Saturday 14 March" in said
    assert "around" not in said and "tomorrow" not in said  # nothing comes while paused


def test_a_pause_taken_back_is_not_made() -> None:
    turns = [(ASK_HABIT, "walking"), (ASK_TIME, "pause it for a week"), (ASK_TIME, "actually start them again")]
    request = with_history("sure", READY, turns, OFFER)
    step = OfflineCoach().complete(request)
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    assert calls(OfflineCoach().complete(request))[0][0] == "transition_state"


@pytest.mark.parametrize(
    ("said", "part"),
    [
        ("could we make it mornings instead", "morning"),
        ("prefiero por la noche", "night"),
        ("plutôt l'après-midi", "afternoon"),
        ("evenings at 8 would be better", None),  # a clock time: the time itself, not a proposal
        ("after dinner", None),  # a routine, no request
    ],
)
def test_another_part_of_the_day_asked_for_is_read(said: str, part: str | None) -> None:
    assert asks_for_a_part_of_the_day(said) == part


def test_another_part_of_the_day_once_a_time_is_known_is_proposed_and_a_yes_replaces_the_time() -> None:
    nine = WALKING.model_copy(update={"preferred_time": "09:00"})
    proposal = text_of(intake("hmm could we make it mornings instead", nine, ASK_ANCHOR))
    assert proposal == "How about 8am — would that work?"
    assert calls(OfflineCoach().complete(intake("yep", nine, proposal))) == [("save_user_profile", {TIME: "08:00"})]
    # a time restated in the other words of a yes ("ok 8 it is") is the proposal's half of the day
    evening = WALKING.model_copy(update={"preferred_time": "07:00"})
    step = OfflineCoach().complete(intake("ok 7 it is", evening, "How about 7pm — would that work?"))
    assert calls(step) == [("save_user_profile", {TIME: "19:00"})]
    assert proposed_time("night").startswith("21:")


@pytest.mark.parametrize("said", ["whenevs, whenever u want", "any time is fine", "cuando sea", "n'importe quand"])
def test_the_time_handed_over_with_a_free_choice_word_gets_a_default(said: str) -> None:
    assert hands_over_the_time(said)
    known = UserProfile(habit_domain="walking", motivational_frame="energy", prompt_anchor="after lunch")
    step = OfflineCoach().complete(intake(said, known, ASK_TIME))
    assert calls(step)[0] == ("save_user_profile", {TIME: "13:00"})  # from the routine known, not the words


def test_a_time_beside_the_free_choice_word_is_no_hand_over() -> None:
    assert not hands_over_the_time("any time after 6")


def test_a_yes_with_a_routine_beside_it_keeps_both() -> None:
    assert beside_the_yes("sure, after dinner") == "after dinner"
    assert beside_the_yes("yes!") == "" and beside_the_yes("ok, 7") == ""
    step = OfflineCoach().complete(
        intake("sounds good, right after my shower", WALKING, "How about 7am — would that work?")
    )
    assert calls(step) == [("save_user_profile", {TIME: "07:00", ANCHOR: "right after my shower"})]


@pytest.mark.parametrize(
    "said", ["hmm i need to think about that one", "lo tengo que pensar", "je vais voir, je sais pas encore"]
)
def test_let_me_think_invents_nothing_and_asks_again(said: str) -> None:
    assert hesitates(said)
    answer = text_of(intake(said, WALKING, ASK_ANCHOR))
    assert "?" in answer


def test_a_time_said_while_thinking_it_over_is_an_answer() -> None:
    assert not hesitates("let me think... 7:30 i guess")


@pytest.mark.parametrize(
    ("said", "known", "learned"),
    [
        # the clause about the time replaced is no fact; the reason beside is kept
        (
            "ok so could we do 7:15 instead, 9 is when my shift starts. its to wake up",
            {"preferred_time": "09:00"},
            {TIME: "07:15", "motivational_frame": "its to wake up"},
        ),
        ("hmm make it 8:30, 7 is way too early", {"preferred_time": "07:00"}, {TIME: "08:30"}),
        ("mejor a las 9, a las 8 todavía estoy en el metro", {"preferred_time": "20:00"}, {TIME: "21:00"}),
    ],
)
def test_another_time_among_other_facts_replaces_the_time_and_keeps_the_rest(
    said: str, known: dict[str, str], learned: dict[str, str]
) -> None:
    profile = UserProfile(habit_domain="walking", **known)
    last = "Walking — great choice. Why does walking matter to you? What would it give you?"
    if "motivational_frame" not in learned:
        profile = profile.model_copy(update={"motivational_frame": "energy"})
        last = ASK_ANCHOR
    step = OfflineCoach().complete(intake(said, profile, last))
    assert calls(step)[0] == ("save_user_profile", learned)


@pytest.mark.parametrize(
    ("said", "reply_starts"),
    [
        ("im kinda confused what do u want me to say", "I mean: something you already do every day"),
        # the rewordings are English: a message in Spanish gets the question again, in Spanish
        ("no entiendo qué tengo que poner", "Perdona, lo hacemos más sencillo. ¿Qué haces ya cada día"),
    ],
)
def test_lost_is_no_answer_the_question_is_said_another_way(said: str, reply_starts: str) -> None:
    assert is_lost(said)
    answer = text_of(intake(said, WALKING.model_copy(update={"preferred_time": "09:00"}), ASK_ANCHOR))
    assert answer.startswith(reply_starts) and answer.endswith("?")


def test_the_plan_while_paused_says_when_it_comes_back_not_that_it_comes() -> None:
    listed = "The daily prompts are paused until 2026-03-14 08:20 (then: daily at 08:20, 10 min before 08:30)."
    request = feedback("yes", "Would that feel doable?", delivered=0)
    step = OfflineCoach().complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    said = text_of(then(request, step, listed))
    assert "after your pause (until 2026-03-14)" in said and "around" not in said


@pytest.mark.parametrize(
    "said",
    ["i always skip breakfast, thats the problem", "quiero descansar la vista", "take a break from sugar"],
)
def test_a_skip_or_a_rest_in_a_fact_is_no_pause(said: str) -> None:
    assert asks_to_pause(said) is None


@pytest.mark.parametrize(
    ("said", "part"),
    [("i wanna run in the mornings bc my doctor says move more", None), ("evenings are better tbh", "evening")],
)
def test_a_part_of_the_day_inside_a_fact_is_no_request(said: str, part: str | None) -> None:
    assert asks_for_a_part_of_the_day(said) == part


def test_impatience_beside_a_question_is_no_fact() -> None:
    assert is_impatience("estoy apurada") and not is_impatience("after my run")
    answer = text_of(intake("how many more questions? im in a rush", WALKING, ASK_TIME))
    assert "?" in answer  # answered, the time asked again, nothing saved


@pytest.mark.parametrize("said", ["et toi t'es qui au juste", "y usted quien es", "ok but who r u"])
def test_who_the_coach_is_asked_in_any_order_is_a_question(said: str) -> None:
    assert asks_who_the_coach_is(said)
    text_of(intake(said, WALKING, "Walking — great choice. Why does walking matter to you? What would it give you?"))


def test_whenever_to_a_suggestion_takes_it() -> None:
    step = OfflineCoach().complete(intake("whenever honestly", WALKING, "Sorry! How about 7am — would that work?"))
    assert calls(step) == [("save_user_profile", {TIME: "07:00"})]


def test_whenever_while_the_routine_is_asked_is_no_routine() -> None:
    nine = WALKING.model_copy(update={"preferred_time": "09:00"})
    step = OfflineCoach().complete(intake("meh send it whenever", nine, ASK_ANCHOR))
    assert "whenever" not in str(calls(step))  # a default routine, never their words
