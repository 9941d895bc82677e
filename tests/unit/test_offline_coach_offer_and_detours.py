"""The offline coach's tenth round of readings (docs/offline-coach.md): the offer taken up in more forms (a
yes with a question, "i like it", "start the texts" after a pause), "just send it" filling what is still
open, a time proposal that stands when another question is answered, hours written without their colon,
and a change of time that names the time it already comes at."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_clock_time
from promptpipe.adapters.offline_coach.intake_detours import sends_it_now, yes_then_question
from promptpipe.adapters.offline_coach.reading import common_question
from promptpipe.adapters.offline_coach.times import parse_asked_time
from promptpipe.models.llm import ChatMessage, ChatRequest
from promptpipe.models.profile import UserProfile
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.outcome import read_outcome
from promptpipe.rules.report_details import planned_tweak, says_it_helps
from tests.support.offline_coach_requests import (
    ASK_TIME,
    OFFER,
    READY,
    WALKING,
    calls,
    feedback,
    intake,
    then,
)

CREATE = ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:30"})
CREATED = "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow."
LISTED_NOON = "Active daily schedules:\n1. every day at 11:50 (Europe/Madrid), 10 min before 12:00 (internal id: s1)"


def confirmation(request: ChatRequest) -> str:
    """The schedule created, the hand-over made: the reply that confirms the set-up."""
    coach = OfflineCoach()
    step = coach.complete(request)
    assert calls(step) == [CREATE]
    request = then(request, step, CREATED)
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    return coach.complete(then(request, step, "Moved to FEEDBACK.")).content or ""


@pytest.mark.parametrize("said", ["i like it", "i really like that", "lemme try tmrw", "let me try it tomorrow"])
def test_the_first_prompt_taken_up_in_these_words_agrees_to_the_offer(said: str) -> None:
    assert calls(OfflineCoach().complete(intake(said, READY, OFFER))) == [CREATE]


def test_a_yes_with_a_question_sets_up_and_answers_the_question_in_the_confirmation() -> None:
    reply = confirmation(intake("ok! what if i forget?", READY, OFFER))
    assert "8:30am" in reply
    assert "Nothing bad happens" in reply


def test_a_yes_asking_when_it_comes_is_answered_by_the_confirmation_alone() -> None:
    reply = confirmation(intake("ok. what time will it come?", READY, OFFER))
    assert "8:30am" in reply
    assert "can't answer" not in reply


@pytest.mark.parametrize("said", ["will it come on weekends too?", "ok but can it be at 9 instead?", "no thanks?"])
def test_what_is_not_a_yes_with_a_question(said: str) -> None:
    assert yes_then_question(said) == ""


def test_start_the_texts_to_the_offer_still_open_sets_it_up() -> None:
    last = f"Nothing is scheduled yet, so no daily messages will come until we finish setting up. {OFFER}"
    assert calls(OfflineCoach().complete(intake("ok we're back, start the texts again", READY, last))) == [CREATE]


@pytest.mark.parametrize(
    "said",
    ["just send it", "can u just send the reminder", "ugh skip the questions", "solo mándalo", "no more questions pls"],
)
def test_just_send_it_is_read(said: str) -> None:
    assert sends_it_now(said)


@pytest.mark.parametrize("said", ["just text me at 8", "send it at 7 please", "i just sent it to my sister"])
def test_what_is_not_just_send_it(said: str) -> None:
    assert not sends_it_now(said)


def test_just_send_it_with_a_time_saves_the_time_and_every_field_still_open() -> None:
    profile = UserProfile(habit_domain="walking")
    response = OfflineCoach().complete(intake("just send it at 7pm", profile, ASK_TIME))
    ((name, args),) = calls(response)
    assert name == "save_user_profile"
    assert args["preferred_time"] == "19:00"
    assert args["motivational_frame"]  # a default, not their words
    assert args["prompt_anchor"]


def test_just_send_it_without_a_time_fills_every_field_still_open() -> None:
    profile = WALKING.model_copy(update={"preferred_time": "19:00"})
    asked = "7pm works. What's something you already do every day that we can attach it to?"
    ((name, args),) = calls(OfflineCoach().complete(intake("can u just send the reminder", profile, asked)))
    assert name == "save_user_profile"
    assert set(args) == {"prompt_anchor"}


def test_a_time_proposal_answered_with_the_routine_is_proposed_again() -> None:
    proposal = "How about 12:30pm — would that work?"
    request = intake("after i eat", WALKING, proposal)
    coach = OfflineCoach()
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"prompt_anchor": "after i eat"})]
    reply = coach.complete(then(request, step, "Profile saved.")).content or ""
    assert reply.endswith(proposal)


def test_a_time_proposal_refused_is_not_proposed_again() -> None:
    request = intake("no, after i eat", WALKING, "How about 12:30pm — would that work?")
    coach = OfflineCoach()
    step = coach.complete(request)
    reply = coach.complete(then(request, step, "Profile saved.")).content if step.tool_calls else step.content
    assert "12:30" not in (reply or "")


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("730", "07:30"),
        ("6 too early. 730", "07:30"),
        ("6 is too early lol, 730", "07:30"),
        ("7 too early tbh. 730?", "07:30"),
        ("845ish", "08:45"),
        ("1030pm", "22:30"),
    ],
)
def test_an_hour_without_its_colon_said_as_a_clause_is_a_time(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize("said", ["read 100 pages", "walk 1000 steps", "i walk 1000. steps", "1260"])
def test_a_count_is_not_a_time(said: str) -> None:
    assert parse_clock_time(said) is None


@pytest.mark.parametrize("said", ["is this automated?", "is this a chatbot", "are you a real person?"])
def test_is_this_automated_is_the_bot_question(said: str) -> None:
    assert read_message(said).topic == "bot"
    assert common_question(said) == "bot"


def test_a_change_that_names_the_time_it_already_comes_at_asks_which_and_moves_nothing() -> None:
    # noon is named as the time to leave ("estoy muy liada"): the new time is asked for, nothing is listed
    step = OfflineCoach().complete(feedback("oye se puede cambiar la hora? a mediodía estoy muy liada", "¡Muy bien!"))
    assert calls(step) == []
    assert step.content == "Claro. ¿A qué hora te va mejor? Por ejemplo a las 7pm."


def test_a_move_to_the_time_it_already_comes_at_asks_which_and_moves_nothing() -> None:
    request = feedback("can you move it to 12pm?", "Great!")
    coach = OfflineCoach()
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    step = coach.complete(then(request, step, LISTED_NOON))
    assert calls(step) == []
    assert "?" in (step.content or "")


@pytest.mark.parametrize("said", ["thank u, the reminders help", "ty, helping so far", "los mensajes me ayudan mucho"])
def test_thanks_with_the_messages_judged_helpful_says_it_helps(said: str) -> None:
    assert says_it_helps(said)


@pytest.mark.parametrize("said", ["the reminders dont help", "not helping so far", "helps a lot?"])
def test_what_does_not_say_it_helps(said: str) -> None:
    assert not says_it_helps(said)


@pytest.mark.parametrize("said", ["just had energy today", "just felt like it", "just walked after lunch"])
def test_what_happened_is_no_plan(said: str) -> None:
    assert planned_tweak(said) == ""


@pytest.mark.parametrize(
    ("said", "plan"), [("ill set an alarm tomorrow", "set an alarm tomorrow"), ("i will need less", "need less")]
)
def test_a_plan_is_still_read(said: str, plan: str) -> None:
    assert planned_tweak(said) == plan


@pytest.mark.parametrize("said", ["hoy fallé, mucho trabajo", "i failed today", "failed today lol"])
def test_a_day_failed_is_not_done(said: str) -> None:
    assert read_outcome(said, asked=True) == "not_done"


def test_a_failure_of_something_else_is_no_missed_day() -> None:
    assert read_outcome("the alarm failed but i did it", asked=True) == "done"


ASK_WHY = "Mindfulness — great choice. Why does mindfulness matter to you? What would it give you?"
DEFAULT_REASON = "No problem. How about “to feel a bit better every day”?"


@pytest.mark.parametrize("said", ["why not", "honestly no idea, just seems good", "idk"])
def test_a_shrug_at_the_reason_gets_the_default_reason_to_take_with_one_word(said: str) -> None:
    response = OfflineCoach().complete(intake(said, UserProfile(habit_domain="mindfulness"), ASK_WHY))
    assert calls(response) == []
    assert response.content == DEFAULT_REASON


def test_ok_to_the_reason_asked_again_gets_the_default_reason() -> None:
    profile = UserProfile(habit_domain="mindfulness", preferred_time="07:30", prompt_anchor="after i shower")
    request = intake("ok", profile, ASK_WHY)
    request.messages.insert(2, ChatMessage(role="user", content="meditate"))
    response = OfflineCoach().complete(request)
    assert calls(response) == []
    assert response.content == DEFAULT_REASON


@pytest.mark.parametrize("said", ["omg just send me something", "pls just send it already", "can you just start"])
def test_just_send_me_something_fills_the_reason_and_the_time(said: str) -> None:
    profile = UserProfile(habit_domain="walking", prompt_anchor="after dinner")
    ((name, args),) = calls(OfflineCoach().complete(intake(said, profile, ASK_WHY)))
    assert name == "save_user_profile"
    assert args["motivational_frame"] == "to feel a bit better every day"
    assert args["preferred_time"]


@pytest.mark.parametrize(
    "said",
    ["that'd be great", "i'm down", "say less", "aight", "yeh", "órale", "de acuerdo", "por supuesto", "muy bien"],
)
def test_agreement_in_these_words_sets_the_offer_up(said: str) -> None:
    assert calls(OfflineCoach().complete(intake(said, READY, OFFER))) == [CREATE]


@pytest.mark.parametrize("said", ["ok will try my best", "easy enough", "hopefully i remember lol"])
def test_the_prompt_taken_up_in_these_words_sets_the_offer_up(said: str) -> None:
    assert calls(OfflineCoach().complete(intake(said, READY, OFFER))) == [CREATE]


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("mmm mejor a las 10, 9:30 es muy temprano", "10:00"),
        ("7:30 pls, 6am is way too early", "07:30"),
        ("8h c'est trop tôt, 9h plutôt", "09:00"),
        ("a las 6 de la tarde", "18:00"),  # "tarde" is the afternoon here, no judgement
    ],
)
def test_a_time_judged_too_early_or_late_is_not_the_answer(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize(
    "said", ["mejor 10 q ya se durmieron", "10 when the kids are asleep", "ok pero 10 porque salgo tarde"]
)
def test_a_lone_hour_then_why_answers_the_time(said: str) -> None:
    assert parse_asked_time(said) == "10:00"


@pytest.mark.parametrize("said", ["i'll do 10 when i wake up", "sure, 10 pushups when i wake"])
def test_a_count_then_when_is_no_time(said: str) -> None:
    assert parse_asked_time(said) is None


def test_another_hour_at_the_offer_keeps_the_offers_half_of_the_day() -> None:
    evening = READY.model_copy(update={"preferred_time": "21:30"})
    offer = OFFER.replace("8:30am", "9:30pm")
    step = OfflineCoach().complete(intake("no, mejor 10", evening, offer))
    assert calls(step) == [("save_user_profile", {"preferred_time": "22:00"})]


def test_a_time_beside_the_reason_is_read_and_is_never_the_reason() -> None:
    reading = UserProfile(habit_domain="leer")
    step = OfflineCoach().complete(intake("para dormir mejor, en la noche mejor 10", reading, ASK_WHY))
    ((name, args),) = calls(step)
    assert name == "save_user_profile"
    assert args.get("preferred_time") == "22:00"
    assert "10" not in args.get("motivational_frame", "")
