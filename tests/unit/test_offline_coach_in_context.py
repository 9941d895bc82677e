"""The offline coach reads a reply against what it last asked (docs/offline-coach.md): short answers
as people write them, acceptances of its own suggestions and offers, no praise for what did not
happen, and the common questions and requests answered from the participant's state through the
real tools."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import OfflineCoach, parse_clock_time
from promptpipe.adapters.offline_coach.reading import accepts
from promptpipe.models.profile import UserProfile
from tests.support.offline_coach_requests import (
    ALL_TOOLS,
    ASK_ANCHOR,
    ASK_MOTIVATION,
    ASK_TIME,
    LISTED_8PM,
    OFFER,
    PRAISE,
    PROMPT,
    READY,
    SUMMARY,
    WALKING,
    calls,
    feedback,
    intake,
    text_of,
    then,
)

# -- 1. short answers in context ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "anchor"),
    [
        ("dinner", "after dinner"),
        ("lunch", "after lunch"),
        ("after breakfast", "after breakfast"),
        ("despues del desayuno", "despues del desayuno"),
        ("coffee", "after my coffee"),
        ("feed the cat", "when I feed the cat"),
        ("brushing my teeth", "after brushing my teeth"),
    ],
)
def test_a_meal_or_routine_word_is_the_anchor_when_the_coach_asked_for_one(said: str, anchor: str) -> None:
    profile = WALKING.model_copy(update={"preferred_time": "09:00"})
    step = OfflineCoach().complete(intake(said, profile, ASK_ANCHOR, steer="anchor (EXECUTE)"))
    assert calls(step) == [("save_user_profile", {"prompt_anchor": anchor})]


def test_the_reply_is_read_against_the_question_asked_not_the_controllers_next_node() -> None:
    # The coach asked why; the controller has moved on to the time; "headaches" is the reason
    profile = UserProfile(habit_domain="drinking water")
    step = OfflineCoach().complete(intake("headaches", profile, ASK_MOTIVATION, steer="time (EXECUTE)"))
    assert calls(step) == [("save_user_profile", {"motivational_frame": "headaches"})]


@pytest.mark.parametrize(
    ("said", "hhmm"),
    [
        ("9ish", "09:00"),
        ("noon", "12:00"),
        ("7.30", "07:30"),
        ("8:30am", "08:30"),
        ("half 8", "08:30"),
        ("quarter past 7", "07:15"),
        ("early, like 6", "06:00"),
        ("a las 9 de la noche", "21:00"),
        ("a las 8 y media de la mañana", "08:30"),
        ("8:30? maybe 8:45", "08:45"),
        ("make it 8 not 9", "08:00"),
    ],
)
def test_times_as_people_write_them(said: str, hhmm: str) -> None:
    assert parse_clock_time(said) == hhmm


@pytest.mark.parametrize(("said", "hhmm"), [("9ish", "09:00"), ("morning 7", "07:00"), ("6", "18:00")])
def test_a_time_written_loosely_is_saved_when_the_coach_asked_for_a_time(said: str, hhmm: str) -> None:
    step = OfflineCoach().complete(intake(said, WALKING, ASK_TIME, steer="time (EXECUTE)"))
    assert calls(step) == [("save_user_profile", {"preferred_time": hhmm})]


def test_a_vague_time_gets_a_concrete_suggestion_that_yes_saves() -> None:
    # "after work" for the time: the coach suggests a time instead of guessing one silently
    suggested = text_of(intake("after work", WALKING, ASK_TIME, steer="time (EXECUTE)"))
    assert suggested == "How about 5:30pm — would that work?"
    step = OfflineCoach().complete(intake("yes that works", WALKING, suggested, steer="time (RETRY)"))
    assert calls(step) == [("save_user_profile", {"preferred_time": "17:30"})]


def test_a_reply_that_is_only_a_time_of_day_answers_the_time_whatever_was_asked() -> None:
    said = text_of(intake("afternoon sometime", UserProfile(habit_domain="stretching"), ASK_MOTIVATION))
    assert said == "How about 3pm — would that work?"
    # ...but for the anchor, "after lunch" is the anchor (and, with no time known yet, the time too)
    step = OfflineCoach().complete(intake("after lunch", WALKING, ASK_ANCHOR, steer="anchor (EXECUTE)"))
    assert calls(step) == [("save_user_profile", {"preferred_time": "13:00", "prompt_anchor": "after lunch"})]


def test_not_sure_about_the_anchor_gets_a_suggestion_that_yes_saves() -> None:
    profile = WALKING.model_copy(update={"preferred_time": "09:00"})
    suggested = text_of(intake("not sure", profile, ASK_ANCHOR, steer="anchor (EXECUTE)", tools=ALL_TOOLS[1:2]))
    assert suggested == "No problem. How about “after my morning coffee”?"
    step = OfflineCoach().complete(intake("sure 👍", profile, suggested, steer="anchor (RETRY)"))
    assert calls(step) == [("save_user_profile", {"prompt_anchor": "after my morning coffee"})]


@pytest.mark.parametrize(
    "said",
    ["yes", "ok", "sure 👍", "yes that works", "si", "dale!!", "👌", "yeah go ahead", "sure, why not", "claro que sí"],
)
def test_acceptances_as_people_write_them(said: str) -> None:
    assert accepts(said)


@pytest.mark.parametrize("said", ["no, only weekdays?", "yes but at 8", "not now", "can I change it later?", "dinner"])
def test_what_is_not_an_acceptance(said: str) -> None:
    assert not accepts(said)


# -- 2. never claim what did not happen ------------------------------------------------------------


def test_yes_to_the_schedule_offer_sets_it_up_and_confirms_the_plan() -> None:
    coach = OfflineCoach()
    request = intake("sure 👍", READY, OFFER, steer="schedule (EXECUTE)")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:30"})]
    request = then(request, step, "Daily habit prompt scheduled: every day at 08:20. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    request = then(request, step, "The conversation is now in FEEDBACK.")
    said = text_of(request)
    assert "Your first prompt comes tomorrow around 8:30am" in said
    assert not any(word in said.lower() for word in PRAISE)


def test_a_different_time_in_answer_to_the_offer_is_saved_then_scheduled() -> None:
    coach = OfflineCoach()
    request = intake("actually make it 8 not 8:30", READY, OFFER, steer="schedule (EXECUTE)")
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"preferred_time": "08:00"})]
    step = coach.complete(then(request, step, "Profile saved."))
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:00"})]


@pytest.mark.parametrize("said", ["yes but make it 8", "ok, 8am then", "sí, pero a las 8"])
def test_a_yes_with_a_different_time_is_saved_then_scheduled(said: str) -> None:
    coach = OfflineCoach()
    request = intake(said, READY, OFFER, steer="schedule (EXECUTE)")
    step = coach.complete(request)
    assert calls(step) == [("save_user_profile", {"preferred_time": "08:00"})]
    step = coach.complete(then(request, step, "Profile saved."))
    assert calls(step) == [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:00"})]


@pytest.mark.parametrize("said", ["yes", "ok", "sure 👍", "yes!! done"])
def test_yes_before_any_prompt_was_delivered_confirms_the_plan_and_praises_nothing(said: str) -> None:
    # Intake ended with the set-up and the first prompt's "Would that feel doable?"; nothing delivered yet
    request = feedback(said, SUMMARY, delivered=0)
    response = OfflineCoach().complete(request)
    # nothing saved as a success: the plan is read from the stored schedule, not from earlier replies
    assert calls(response) == [("scheduler", {"action": "list"})]
    listed = "Active daily schedules:\n1. every day at 08:20 (America/Toronto), 10 min before 08:30 (internal id: s1)"
    assert OfflineCoach().complete(then(request, response, listed)).content == (
        "Great! Your daily prompt comes every day around 8:30am; I'll check in after the first one arrives. "
        "Anything you'd like to change before then?"
    )


@pytest.mark.parametrize("said", ["ok", "yes", "sure 👍"])
def test_yes_to_a_suggested_tweak_is_not_a_report_of_doing_it(said: str) -> None:
    # They already answered today's prompt ("2"); the coach suggested a tweak
    last = "No worries. One small tweak for next time: shrink it to a 30-second version. Does that sound doable?"
    answer = text_of(feedback(said, last, replied=True))
    assert answer == "Great — let's try that next time. I'll check in after your next prompt."


def test_yes_to_the_daily_prompts_question_is_a_report() -> None:
    last = f"{PROMPT}\n\nDid you do it? Reply 1 for Done or 2 for Next time."
    step = OfflineCoach().complete(feedback("yes", last))
    assert calls(step) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_yup_did_it_while_the_daily_prompt_awaits_its_answer_is_a_report() -> None:
    # The last message the coach sent was its own reply; the context says the prompt is unanswered
    step = OfflineCoach().complete(feedback("yup did it 💪", "Great! I'll check in after your next prompt."))
    assert calls(step) == [("save_user_profile", {"last_successful_prompt": PROMPT})]


def test_a_spreadsheet_formula_saying_done_is_not_congratulated() -> None:
    last = f"{PROMPT}\n\nDid you do it? Reply 1 for Done or 2 for Next time."
    said = text_of(feedback('=HYPERLINK("http://example.com","Done")', last))
    assert said == "Sorry, I couldn't read that. Did you get to today's habit? Reply 1 for Done or 2 for Next time."


# -- 3. the common questions and requests -----------------------------------------------------------


def test_can_i_change_the_time_later_is_answered_in_intake_then_the_offer_stands() -> None:
    said = text_of(intake("can I change the time later?", READY, OFFER, steer="schedule (EXECUTE)"))
    assert said.startswith("Yes — any time. Just text me the new time")
    assert said.endswith("Shall I send you one like it every day around 8:30am?")


def test_a_question_mid_intake_is_answered_and_the_unanswered_question_asked_again() -> None:
    said = text_of(intake("how long does this take each day?", WALKING, ASK_TIME, steer="anchor (EXECUTE)"))
    assert said.startswith("About a minute a day")
    assert said.endswith("What time of day would you like your daily prompt? For example 8am or 7:30pm.")


def test_cancel_the_messages_in_intake_is_not_read_as_an_answer() -> None:
    profile = WALKING.model_copy(update={"preferred_time": "07:00"})
    said = text_of(intake("cancel my daily messages please, I'm moving house", profile, ASK_ANCHOR, steer="anchor"))
    assert said.startswith("Nothing is scheduled yet, so no daily messages will come.")


def test_is_it_possible_to_stop_the_messages_is_answered_not_acted_on() -> None:
    said = text_of(feedback("is it possible to stop the messages at some point?", "Talk soon!"))
    assert "text “stop the reminders”" in said


def test_stop_the_reminders_deletes_every_schedule_through_the_scheduler() -> None:
    coach = OfflineCoach()
    request = feedback("stop the reminders please, I'm away for a while", "See you tomorrow!")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    listing = "Active daily schedules:\n1. every day at 08:20 (America/Toronto), 10 min before 08:30 (internal id: s1)"
    request = then(request, step, listing)
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "delete", "schedule_id": "s1"})]
    said = text_of(then(request, step, "Deleted the daily habit prompt schedule s1."))
    assert said.startswith("Done — I've stopped your daily prompts.")


def test_when_do_you_text_me_is_answered_from_the_schedule() -> None:
    coach = OfflineCoach()
    request = feedback("when do you text me?", "See you tomorrow!")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    listing = "Active daily schedules:\n1. every day at 08:20 (America/Toronto), 10 min before 08:30 (internal id: s1)"
    assert text_of(then(request, step, listing)) == "Your daily prompt comes every day around 8:30am."


def test_what_is_my_habit_is_answered_from_the_profile() -> None:
    said = text_of(feedback("what's my habit again?", "See you tomorrow!"))
    assert said == f"Your habit is walking; your latest prompt was: “{PROMPT}”"


def test_what_do_you_mean_rephrases_the_last_question() -> None:
    profile = WALKING.model_copy(update={"preferred_time": "09:00"})
    said = text_of(intake("what do you mean?", profile, ASK_ANCHOR, steer="anchor (EXECUTE)"))
    assert said.startswith("I mean: something you already do every day, so the habit can come right after it")


@pytest.mark.parametrize(
    ("said", "last", "question"),
    [
        (
            "no entiendo, qué pongo?",
            "¿A qué hora del día quieres tu mensaje diario? Por ejemplo 8:00 o 19:30.",
            "¿A qué hora",
        ),
        (
            "perdón, cómo así? 🤔",
            "¿Qué haces ya cada día a lo que podamos unirlo, como el café de la mañana o lavarte los dientes?",
            "¿Qué haces ya cada día",
        ),
    ],
)
def test_what_do_you_mean_in_spanish_asks_again_in_spanish(said: str, last: str, question: str) -> None:
    """The rewordings are English: a Spanish conversation gets its own question again, in Spanish."""
    profile = WALKING.model_copy(update={"preferred_time": "09:00"} if "unirlo" in last else {})
    reply = text_of(intake(said, profile, last))
    assert question in reply and "I mean" not in reply


def test_id_rather_get_it_at_7pm_from_now_on_moves_the_schedule() -> None:
    coach = OfflineCoach()
    request = feedback("I'd rather get it at 7pm from now on", "See you tomorrow!")
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    listing = "Active daily schedules:\n1. every day at 08:20 (America/Toronto), 10 min before 08:30 (internal id: s1)"
    step = coach.complete(then(request, step, listing))
    assert calls(step) == [
        ("scheduler", {"action": "delete", "schedule_id": "s1"}),
        ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"}),
        ("save_user_profile", {"preferred_time": "19:00"}),
    ]


@pytest.mark.parametrize("text", ["stop texting me at night", "can you stop messaging me in the morning"])
def test_an_unclear_stop_request_is_asked_about_in_feedback_and_intake(text: str) -> None:
    # The webhook opts out a clear request; a narrowed one reaches the coach, which asks, and changes nothing yet.
    from promptpipe.adapters.offline_coach.reading import STOP_WHICH

    assert text_of(feedback(text, "See you tomorrow!")) == STOP_WHICH
    assert text_of(intake(text, WALKING, "What time works for you?")) == STOP_WHICH


def test_a_stop_request_with_a_new_time_changes_the_time_instead_of_asking() -> None:
    response = OfflineCoach().complete(feedback("stop texting me in the morning, move it to 7pm instead", "Bye!"))
    assert calls(response) == [("scheduler", {"action": "list"})]  # on its way to the change


# -- requests read before anything else, and nothing claimed the state does not say -------


@pytest.mark.parametrize(
    ("said", "days"), [("pause for a week please", 7), ("can u pause the texts for 3 days? sick in bed 🤒", 3)]
)
def test_a_pause_with_its_length_goes_to_the_scheduler_and_says_until_when(said: str, days: int) -> None:
    request = feedback(said, "See you tomorrow!")
    response = OfflineCoach().complete(request)
    assert calls(response) == [("scheduler", {"action": "pause", "days": days})]
    result = "Daily prompts paused for 7 day(s): none is sent until Monday 09 March (2026-03-09 08:00 …)"
    answer = OfflineCoach().complete(then(request, response, result)).content or ""
    assert answer.startswith("Done — your daily prompts are paused until Monday 09 March; they start again")


def test_a_pause_without_a_length_asks_how_long() -> None:
    assert text_of(feedback("can you pause the reminders", "See you tomorrow!")).startswith("Sure — for how many days")


def test_resume_goes_to_the_scheduler_and_says_when_they_come() -> None:
    request = feedback("im back! start the texts again pls", "See you tomorrow!")
    response = OfflineCoach().complete(request)
    assert calls(response) == [("scheduler", {"action": "resume"})]
    resumed = "Daily prompts resumed: every day at 19:50 (America/Toronto), 10 min before 20:00."
    assert (OfflineCoach().complete(then(request, response, resumed)).content or "").startswith(
        "Welcome back! Your daily prompts are on again every day around 8pm."
    )
    nothing = OfflineCoach().complete(then(request, response, "Nothing is paused: the daily schedules are as listed."))
    assert (nothing.content or "").startswith("Your daily prompts weren't paused")


def test_a_limit_moves_nothing_and_asks_for_the_time() -> None:
    from promptpipe.adapters.offline_coach.reading import STOP_WHICH

    # The opt-out reader's unclear stop is asked about first; a time in answer moves the prompt
    assert text_of(feedback("no more texts after 9pm pls", "See you tomorrow!")) == STOP_WHICH
    assert calls(OfflineCoach().complete(feedback("earlier, like 5pm", STOP_WHICH))) == [
        ("scheduler", {"action": "list"})
    ]
    request = feedback("no reminders after 10pm", "See you tomorrow!")
    response = OfflineCoach().complete(request)
    assert calls(response) == [("scheduler", {"action": "list"})]  # read only: nothing deleted
    answer = OfflineCoach().complete(then(request, response, LISTED_8PM)).content
    # 8pm already keeps "no reminders after 10pm": said, nothing asked
    assert answer == (
        "Got it — your daily prompt comes around 8pm, so nothing changes. Tell me if you'd like another time."
    )
    request = feedback("no reminders after 7pm", "See you tomorrow!")
    answer = OfflineCoach().complete(then(request, OfflineCoach().complete(request), LISTED_8PM)).content
    assert answer == (
        "Got it. Right now your daily prompt comes every day around 8pm. What time would suit you better? "
        "For example 5pm."
    )
    assert calls(OfflineCoach().complete(feedback("7ish", answer))) == [("scheduler", {"action": "list"})]


def test_an_errand_is_no_stop_and_no_report() -> None:
    response = OfflineCoach().complete(
        feedback("need to stop at the pharmacy first, will walk later", "Did you do it?")
    )
    assert response.tool_calls == [] and "did it" not in (response.content or "").lower()


def test_a_day_part_is_proposed_then_moved_on_yes() -> None:
    proposal = text_of(feedback("can we move it to evenings?", "See you tomorrow!"))
    assert proposal == "Sure. How about 7pm — would that work?"
    request = feedback("yes", proposal)
    response = OfflineCoach().complete(request)
    assert calls(response) == [("scheduler", {"action": "list"})]
    step = OfflineCoach().complete(then(request, response, LISTED_8PM))
    assert calls(step)[1] == ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"})
    assert text_of(feedback("can we move it to another time?", "Bye!")) == (
        "Sure. What time would suit you better? For example 7pm."
    )


def test_actually_make_it_9_after_8pm_is_9pm() -> None:
    request = feedback("actually make it 9", "Done — your daily prompt will now come around 8pm.")
    response = OfflineCoach().complete(request)
    step = OfflineCoach().complete(then(request, response, LISTED_8PM))
    assert ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "21:00"}) in calls(step)


@pytest.mark.parametrize(
    ("said", "start"),
    [
        ("ugh this is annoying", "Sorry about that. I can make your prompt smaller"),
        ("not yet, let me think", "No rush"),
        ("hey", "Hi! How did your latest habit prompt go?"),
        ("who is this?", "I'm the automated habit coach of Habit coach"),
    ],
)
def test_feedback_messages_that_are_no_report_record_nothing(said: str, start: str) -> None:
    response = OfflineCoach().complete(feedback(said, "See you tomorrow!"))
    assert response.tool_calls == [] and (response.content or "").startswith(start), response.content


def test_before_any_delivered_prompt_a_greeting_or_a_question_asks_nothing_about_the_habit() -> None:
    hello = text_of(feedback("hi", "Done!", delivered=0))
    assert hello.startswith("Hi! Your first daily prompt hasn't come yet") and "how did" not in hello.lower()
    assert text_of(feedback("who is this?", "Done!", delivered=0)).endswith("Anything else you'd like to know?")
    request = feedback("nah", "Done!", delivered=0)  # not a missed day: nothing was sent yet
    assert calls(OfflineCoach().complete(request)) == [("scheduler", {"action": "list"})]
    none = OfflineCoach().complete(
        then(request, OfflineCoach().complete(request), "The participant has no active daily schedules yet.")
    )
    assert (none.content or "").startswith("Thanks! There's no daily prompt scheduled right now")


def test_in_intake_a_pause_is_answered_with_nothing_saved() -> None:
    answer = text_of(intake("pause for 3 days", WALKING, "Why does walking matter to you?"))
    # nothing is scheduled yet: the pause is promised for the set-up (test_offline_coach_intake_detours.py)
    assert answer.startswith("Sure — once your daily prompt is set up, I'll pause it for 3 days.")
    assert "What time of day would you like" in answer
