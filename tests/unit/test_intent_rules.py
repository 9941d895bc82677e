"""The tool rules on messages as people write them (``promptpipe.flow.intent_rules``, docs/pipeline.md,
"Tools by context"): what the coach last asked or offered decides what a short answer is offered."""

from __future__ import annotations

import pytest

from promptpipe.flow.intent import FEEDBACK_TOOLS, GENERATE, INTAKE_TOOLS, SAVE, SCHEDULER, TRANSITION, intent_hint
from promptpipe.flow.intent_rules import TurnContext, decide, is_capability_question, mentions_time

SCHEDULE_OFFER = (
    "Here's your first one: after dinner, walk for 2 minutes. Shall I send you one like it every day at 8:30?"
)
ANCHOR_QUESTION = "What do you already do every day that this could follow, like your morning coffee?"


def schedule_offer(text: str, *, controller: bool = True) -> TurnContext:
    """Intake after the first prompt was given and a daily schedule offered."""
    node = {"node": "schedule", "node_mode": "EXECUTE", "node_tools": (SCHEDULER, SAVE)} if controller else {}
    return TurnContext(module="intake", text=text, last_reply=SCHEDULE_OFFER, prompt_offered=True, **node)


def anchor_question(text: str, *, controller: bool = True) -> TurnContext:
    """Intake asking for the anchor, the last field missing: the first prompt follows its answer
    (the node tools are what ``steering.turn_tools`` computes for the bundled flow)."""
    node = {"node": "anchor", "node_mode": "RETRY", "node_tools": (SAVE, GENERATE, SCHEDULER)} if controller else {}
    return TurnContext(
        module="intake", text=text, last_reply=ANCHOR_QUESTION, missing_required=("prompt_anchor",), **node
    )


def feedback(text: str, *, last_reply: str = "", has_schedule: bool = True) -> TurnContext:
    return TurnContext(module="feedback", text=text, last_reply=last_reply, has_schedule=has_schedule)


ACCEPTANCES = [
    "yes", "Yes!", "ok", "OK.", "okay", "okk", "sure 👍", "yep", "yup", "yeah", "ya", "si", "Sí!", "vale",
    "sounds good", "sounds good!!", "yes please", "yes pls", "ok sure", "sure thing", "perfect, thanks", "👍",
    "yess", "go ahead", "do it", "claro que si", "dale", "k", "great", "that works",
]  # fmt: skip


@pytest.mark.parametrize("text", ACCEPTANCES)
def test_an_acceptance_of_the_schedule_offer_is_offered_the_scheduler(text: str) -> None:
    for controller in (True, False):
        decided = decide(schedule_offer(text, controller=controller))
        assert SCHEDULER in decided.tools, (text, controller, decided)
        assert decided.tool_choice == "auto"


ANCHOR_ANSWERS = [
    "dinner", "after dinner", "despues del desayuno", "después de cenar", "breakfast", "when I get home",
    "aftr work", "coffee", "my morning coffee", "brushing teeth", "lunch break i guess", "9ish", "noon",
]  # fmt: skip


@pytest.mark.parametrize("text", ANCHOR_ANSWERS)
def test_an_anchor_answer_that_completes_the_profile_is_offered_the_first_prompt(text: str) -> None:
    for controller in (True, False):
        decided = decide(anchor_question(text, controller=controller))
        assert {SAVE, GENERATE} <= set(decided.tools), (text, controller, decided)
        assert decided.tool_choice == "auto"


CAPABILITY_QUESTIONS = [
    "can I change the time later?",
    "is it possible to stop the messages at some point?",
    "can you text me at a different time later on?",
    "Could I pause the reminders if I go on holiday?",
    "will I be able to move the reminder later",
    "what if i want to change the time?",
    "is there a way to stop the texts if I need to",
    "puedo cambiar la hora despues?",
    "can i change the time to 7pm?",
]


@pytest.mark.parametrize("text", CAPABILITY_QUESTIONS)
def test_a_question_about_what_is_possible_is_offered_tools_never_forced(text: str) -> None:
    assert is_capability_question(text)
    for context in (feedback(text), schedule_offer(text)):
        decided = decide(context)
        assert decided.tool_choice == "auto", (text, decided)
        assert SCHEDULER in decided.tools


ACTION_REQUESTS = [
    ("move my reminder to 7pm", "change_time"),
    ("stop the reminders", "stop_messages"),
    ("Please stop sending me messages", "stop_messages"),
    ("can you move my reminder to 7pm?", "change_time"),
    ("change the time to 6.30 pls", "change_time"),
    ("I'd rather get it at 7pm from now on", "change_time"),
    ("switch to 8am instead", "change_time"),
    ("no more reminders please", "stop_messages"),
    ("deja de mandarme mensajes", "stop_messages"),
    ("cambiar la hora del recordatorio a las 8", "change_time"),
    ("pause it", "stop_messages"),
    ("move it to 6 please", "change_time"),
    ("reschedule my daily reminder for the evening", "change_time"),
]


@pytest.mark.parametrize(("text", "name"), ACTION_REQUESTS)
def test_an_explicit_request_is_hinted_never_forced(text: str, name: str) -> None:
    # Nothing is forced from a message's words (docs/pipeline.md, "Tools by context"): the request
    # names its tools in a hint when there is something to act on, with tool_choice "auto".
    assert not is_capability_question(text)
    decided = decide(feedback(text))
    assert (decided.name, decided.tool_choice) == (name, "auto")
    assert SCHEDULER in decided.tools
    hint = intent_hint(decided)
    assert hint is not None and SCHEDULER in hint
    before = decide(feedback(text, has_schedule=False))  # nothing scheduled yet: an answer, no hint
    assert before.tool_choice == "auto" and SCHEDULER in before.tools
    assert intent_hint(before) is None


@pytest.mark.parametrize(
    "text",
    [
        "I couldn't stop thinking about it",
        "no more excuses, I did it",
        "quiero un recordatorio para la noche",
        "quick update: did my walk, the time worked great",
        "I moved a lot today, the reminder helped",
    ],
)
def test_words_of_an_action_in_a_report_force_nothing(text: str) -> None:
    assert decide(feedback(text)).tool_choice == "auto"


def test_a_greeting_before_anything_was_asked_and_thanks_after_a_finished_exchange_get_no_tools() -> None:
    for text in ("hi", "Hello!", "hey there", "hola"):
        assert decide(TurnContext(module="intake", text=text)).tools == ()
    finished = "Nice work today! 🎉 See you tomorrow."
    for text in ("thanks!", "thank you so much", "👍", "ok"):
        assert decide(feedback(text, last_reply=finished)).tools == ()


def test_a_short_answer_to_a_feedback_question_is_offered_the_modules_tools() -> None:
    asked = "Would 7pm work better for your reminder?"
    for text in ("yes", "ok", "sure 👍", "si"):
        decided = decide(feedback(text, last_reply=asked))
        assert set(decided.tools) == set(FEEDBACK_TOOLS) and decided.tool_choice == "auto"


def test_broaden_proposes_a_default_and_its_one_word_acceptance_is_offered_the_save() -> None:
    proposed = "Let's keep it simple: how about 8am every morning. Just say yes and I'll note it."
    context = TurnContext(
        module="intake", text="yes", last_reply=proposed, node="time", node_mode="BROADEN", node_tools=(SAVE,)
    )
    assert SAVE in decide(context).tools


def test_a_participant_waiting_for_a_person_is_forced_into_nothing() -> None:
    held = "Thanks for bearing with me! A member of our team will follow up with you personally soon."
    back = TurnContext(module="intake", text="hi, I'm back", last_reply=held, paused=True, node="habit")
    assert decide(back).tool_choice == "auto"
    stop = back.model_copy(update={"text": "stop the reminders", "has_schedule": True})
    assert decide(stop).tool_choice == "auto" and SCHEDULER in decide(stop).tools


def test_an_intake_answer_is_offered_the_nodes_tools() -> None:
    for text in ("walking", "I want to sleep better", "more energy i guess", "idk, stretching?"):
        context = TurnContext(
            module="intake",
            text=text,
            last_reply="What habit?",
            node="habit",
            node_tools=(SAVE,),
            missing_required=("prompt_anchor", "preferred_time"),
        )
        assert SAVE in decide(context).tools


def test_a_question_the_rules_cannot_place_is_unsure_and_a_hint_gets_nothing() -> None:
    assert not decide(TurnContext(module="intake", text="how does this work?", last_reply="What habit?")).confident
    assert decide(TurnContext(module="intake", text="<Hint: greet them>")).tools == ()


def test_a_message_giving_the_missing_time_and_anchor_is_offered_the_set_up() -> None:
    context = TurnContext(
        module="intake",
        text="walking after dinner at 7pm, it clears my head",
        last_reply="What habit would you like to build?",
        missing_required=("prompt_anchor", "preferred_time"),
        node="habit",
        node_tools=(SAVE,),
    )
    assert set(decide(context).tools) == set(INTAKE_TOOLS)


def test_a_new_habit_in_feedback_is_hinted_and_repair_goes_back_to_intake() -> None:
    new_habit = decide(feedback("I want a new habit"))
    assert new_habit.tool_choice == "auto" and TRANSITION in (intent_hint(new_habit) or "")
    repair = TurnContext(module="feedback", text="did it", missing_required=("prompt_anchor",))
    assert decide(repair).tools == (TRANSITION,)


@pytest.mark.parametrize(
    "text", ["9ish", "noon", "after work", "7.30", "around 8", "a las 9", "7pm", "19:00", "mornings", "por la mañana"]
)
def test_times_as_people_write_them(text: str) -> None:
    assert mentions_time(text)


@pytest.mark.parametrize("text", ["I like to walk", "my kids", "yes", "3 push ups"])
def test_no_time_in_plain_answers(text: str) -> None:
    assert not mentions_time(text)
