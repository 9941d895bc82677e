"""The offline coach's less travelled rules: each case pins what the demo's participant sees (the reply
text or the tool call) when intake or feedback takes a side road — unreadable answers, failed tools,
tools the request does not offer, a controller steering to a field a flow added, a schedule listing
without JSON. The main conversations are in tests/unit/test_offline_coach.py."""

from __future__ import annotations

import pytest

from promptpipe.adapters.offline_coach import (
    HOLDING_REPLY,
    OfflineCoach,
    build_habit_prompt,
    classify_barrier,
    friendly_time,
    parse_anchor,
    parse_clock_time,
    parse_domain,
    parse_intake_message,
)
from promptpipe.flow.conversation import GREETING_HINT
from promptpipe.flow.modules import feedback_context, intake_context
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolDefinition
from promptpipe.models.profile import UserProfile
from tests.support.offline_coach_requests import ALL_TOOLS, FEEDBACK_TOOLS, calls, then
from tests.support.offline_coach_requests import text_of as reply

BACKGROUND = "Name: Alex\nGender: \nEthnicity: \nBackground: "
COMPLETE = UserProfile(
    habit_domain="exercise",
    motivational_frame="feel more energetic",
    preferred_time="08:00",
    prompt_anchor="after my morning coffee",
)
DELIVERED = COMPLETE.model_copy(update={"total_prompts": 1})  # a daily prompt has come: a report is about it
LAST_PROMPT = "After your morning coffee, try 1 minute of stretching. Would that feel doable?"
ASK_DOMAIN = (
    "What's one small habit you'd like to build — maybe moving more, sleeping better, drinking more water or reading?"
)
ASK_TIME = "What time of day would you like your daily prompt? For example 8am or 7:30pm."
BARRIER_TWEAK = "make it even smaller so it fits on a busy day"


def intake(
    user: str,
    profile: UserProfile | None = None,
    *,
    tools: list[ToolDefinition] | None = None,
    extra_system: str = "",
) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="intake system prompt"),
        ChatMessage(role="system", content=intake_context(profile or UserProfile(), BACKGROUND)),
    ]
    if extra_system:
        messages.append(ChatMessage(role="system", content=extra_system))
    messages.append(ChatMessage(role="user", content=user))
    return ChatRequest(purpose="intake", messages=messages, tools=ALL_TOOLS if tools is None else tools)


def feedback(
    user: str,
    profile: UserProfile | None = None,
    *,
    last_prompt: str = LAST_PROMPT,
    history: list[tuple[str, str]] = (),  # type: ignore[assignment]
    tools: list[ToolDefinition] | None = None,
) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="feedback system prompt"),
        ChatMessage(role="system", content=feedback_context(profile or DELIVERED, last_prompt, True, BACKGROUND)),
        *(ChatMessage(role=role, content=text) for role, text in history),  # type: ignore[arg-type]
        ChatMessage(role="user", content=user),
    ]
    return ChatRequest(purpose="feedback", messages=messages, tools=FEEDBACK_TOOLS if tools is None else tools)


# -- text helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("13pm", None),  # no such hour on a 12-hour clock
        ("0am", None),
        ("at 5 in the morning", "05:00"),  # a morning word keeps an early hour in the morning
        ("at 5", "17:00"),  # without one, 1-6 o'clock is read as the afternoon
        ("at 7 for breakfast", "07:00"),
    ],
)
def test_clock_time_edge_cases(text: str, expected: str | None) -> None:
    assert parse_clock_time(text) == expected


@pytest.mark.parametrize("value", ["soon", "8", "", "8:xx"])
def test_friendly_time_leaves_what_is_not_hh_mm_as_it_is(value: str) -> None:
    assert friendly_time(value) == value


def test_an_anchor_of_a_single_word_is_no_anchor() -> None:
    # "after" with only a time behind it names no routine
    assert parse_anchor("after at 8") == ("", None)
    assert parse_anchor("after my coffee at 8")[0] == "after my coffee"


def test_a_wish_with_no_substance_is_no_domain() -> None:
    assert parse_domain("I want to whatever") == ""
    assert parse_domain("I want to practise piano") == "practise piano"


# -- reading a bare answer as the field just asked ------------------------------------------------

KNOWN_DOMAIN = {"habit_domain": "walking"}
KNOWN_ALL_BUT_ANCHOR = {"habit_domain": "walking", "motivational_frame": "energy", "preferred_time": "08:00"}


@pytest.mark.parametrize(
    ("text", "known", "expected", "learned"),
    [
        # a question back is not an answer
        ("why do you ask?", KNOWN_DOMAIN, "motivational_frame", {}),
        # a time instead of a reason: the time is kept, no reason is made up
        ("in the morning", KNOWN_DOMAIN, "motivational_frame", {"preferred_time": "08:00"}),
        ("every evening please", KNOWN_DOMAIN, "motivational_frame", {"preferred_time": "19:00"}),
        ("at 7pm", KNOWN_DOMAIN, "motivational_frame", {"preferred_time": "19:00"}),
        # an anchor phrased with a word the anchor patterns do not know
        ("during lunch", KNOWN_ALL_BUT_ANCHOR, "prompt_anchor", {"prompt_anchor": "during lunch"}),
        ("once the kids leave", KNOWN_ALL_BUT_ANCHOR, "prompt_anchor", {"prompt_anchor": "once the kids leave"}),
        # something that is neither a routine nor a time is not taken as the anchor
        ("purple", KNOWN_ALL_BUT_ANCHOR, "prompt_anchor", {}),
        # a field a flow definition added takes the answer as written
        ("piano scales", KNOWN_ALL_BUT_ANCHOR, "favourite_song", {"favourite_song": "piano scales"}),
        ("ok", KNOWN_ALL_BUT_ANCHOR, "favourite_song", {}),
    ],
)
def test_a_bare_answer_is_read_for_the_field_asked_only_when_it_can_be_one(
    text: str, known: dict[str, str], expected: str, learned: dict[str, str]
) -> None:
    assert parse_intake_message(text, known, expected) == learned


# -- the generated prompt ----------------------------------------------------------------------------


def test_a_prompt_without_domain_or_anchor_still_names_a_small_step() -> None:
    assert build_habit_prompt("Habit domain: (unknown)\nAnchor routine: (none)", "") == (
        "After your usual morning routine, try 1 minute of something small for yourself — it helps you build "
        "momentum. Would that feel doable?"
    )


def test_an_anchor_without_a_time_word_is_led_by_after_and_a_for_reason_reads_naturally() -> None:
    text = build_habit_prompt(
        "Habit domain: walking\nMotivation: for my health\nAnchor routine: brushing my teeth", "Intensity: normal"
    )
    assert (
        text
        == "After brushing your teeth, try 1 minute of walking — it's great for your health. Would that feel doable?"
    )


def test_a_prompt_that_would_reach_30_words_drops_the_benefit() -> None:
    text = build_habit_prompt(
        "Habit domain: healthy eating\nMotivation: (not given)\n"
        "Anchor routine: after I get home from my long shift at the hospital downtown",
        "Intensity: high",
    )
    assert (
        text == "After you get home from your long shift, try adding two servings of veg to your plate. "
        "Would that feel doable?"
    )
    assert len(text.split()) < 30


# -- barriers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "barrier", "tweak"),
    [
        ("nope", "not specified", "make it even smaller — just 30 seconds right after your usual routine"),
        ("no, it rained", "it rained", BARRIER_TWEAK),  # the words of the miss are no part of it
        ("no because idk", "no because idk", BARRIER_TWEAK),  # a cause that says nothing: the whole reply
    ],
)
def test_barriers_without_a_known_cause(text: str, barrier: str, tweak: str) -> None:
    assert classify_barrier(text) == (barrier, tweak)


# -- intake side roads -----------------------------------------------------------------------------


def test_a_request_for_another_purpose_gets_a_neutral_check_in() -> None:
    request = ChatRequest(purpose="classifier", messages=[ChatMessage(role="user", content="hello")])
    assert reply(request) == "Thanks for your message! How is your habit going today?"


def test_a_greeting_hint_with_time_and_anchor_known_welcomes_back() -> None:
    assert reply(intake(GREETING_HINT, COMPLETE)) == (
        "Hi Alex! Welcome back. Send me any message and I'll set up your first habit prompt."
    )


def test_a_shrug_is_met_kindly_and_the_question_asked_again() -> None:
    assert reply(intake("I don't know")) == f"No problem — small and simple is perfect. {ASK_DOMAIN}"


def test_a_save_whose_arguments_were_not_json_is_reported_as_a_failed_save() -> None:
    # Given a save earlier in this loop with arguments that are not JSON, refused by the tool
    request = intake("I'd like to exercise more")
    bad = ChatResponse(tool_calls=[ToolCall(id="c1", name="save_user_profile", arguments="{not json")])
    request = then(request, bad, "ERROR: invalid arguments (not JSON)")
    # Then the coach does not save again but tells the participant
    assert reply(request) == (
        "Sorry — I couldn't save that just now (invalid arguments). Could you send it again in a moment?"
    )


def yes_to_the_offer(user: str = "yes") -> ChatRequest:
    """ "yes" to the first prompt and its offer of the daily schedule (the schedule is made on it)."""
    request = intake("ready", COMPLETE)
    offer = reply(then(request, OfflineCoach().complete(request), LAST_PROMPT))
    asked = intake(user, COMPLETE)
    messages = [*asked.messages[:-1], ChatMessage(role="assistant", content=offer), asked.messages[-1]]
    return asked.model_copy(update={"messages": messages})


def test_a_failed_transition_at_the_end_of_intake_is_told() -> None:
    coach = OfflineCoach()
    request = intake("ready", COMPLETE)
    step = coach.complete(request)
    assert calls(step) == [("generate_habit_prompt", {"delivery_mode": "immediate"})]
    assert coach.complete(then(request, step, LAST_PROMPT)).tool_calls == []  # proposed: made on the yes
    request = yes_to_the_offer()
    step = coach.complete(request)
    assert calls(step)[0][0] == "scheduler"
    request = then(request, step, "Daily habit prompt scheduled. The first one arrives tomorrow.")
    step = coach.complete(request)
    assert calls(step)[0][0] == "transition_state"
    request = then(request, step, "ERROR: could not change state (conflict)")
    assert reply(request) == (
        "I couldn't finish setting things up on my side (could not change state), so I may check in again soon."
    )


def test_without_the_scheduler_tool_the_schedule_is_offered_not_promised() -> None:
    coach = OfflineCoach()
    tools = [
        state_transition.StateTransitionTool().definition,
        profile_save.ProfileSaveTool().definition,
        prompt_generator.PromptGeneratorTool().definition,
    ]
    request = intake("ready", COMPLETE, tools=tools)
    step = coach.complete(request)
    request = then(request, step, LAST_PROMPT)
    # No scheduler offered: no schedule is claimed and intake does not hand over to feedback
    # without one; the daily prompt is offered, to be set up when they say yes.
    assert reply(request) == (
        "Here's your first one-minute habit to try: “After your morning coffee, try 1 minute of stretching.” "
        "Shall I send you one like it every day around 8am?"
    )


def test_an_existing_schedule_is_reported_as_already_set() -> None:
    coach = OfflineCoach()
    request = yes_to_the_offer("sure")
    for result in ("A daily prompt already exists for 08:00.", "The conversation is now in FEEDBACK."):
        request = then(request, coach.complete(request), result)
    assert reply(request).startswith("Your daily prompt is already set for around 8am.")


def test_a_preferred_time_that_cannot_be_read_keeps_intake_open() -> None:
    # Given every field filled, but a time no rule can read
    profile = COMPLETE.model_copy(update={"preferred_time": "whenever suits"})
    # Then no prompt is generated; the coach asks whether there is anything else
    assert reply(intake("hello", profile)) == "Hi! Anything else you'd like me to know before we start?"


def test_the_controller_steering_to_a_field_a_flow_added_asks_for_it() -> None:
    steering = "FLOW CONTROLLER:\n- pursue: song (ASK)\n- fields: favourite_song"
    assert reply(intake("hello", COMPLETE, extra_system=steering)) == (
        "Hi! One more thing before we start: could you tell me your favourite song?"
    )
    # And the answer is saved under that field
    step = OfflineCoach().complete(intake("Here Comes the Sun", COMPLETE, extra_system=steering))
    assert calls(step) == [("save_user_profile", {"favourite_song": "Here Comes the Sun"})]


def test_a_controller_waiting_for_a_person_gets_the_holding_reply() -> None:
    steering = "FLOW CONTROLLER UPDATE:\n- pursue: nothing: the participant is waiting for a member of the team."
    assert reply(intake("hello?", extra_system=steering)) == HOLDING_REPLY


# -- feedback side roads ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "result", "expected"),
    [
        (
            "scheduler",
            "ERROR: Failed to schedule prompt (throttled)",
            "Sorry — I couldn't update your daily schedule just now (Failed to schedule prompt). "
            "Could you try again later?",
        ),
        (
            "transition_state",
            "ERROR: conflict",
            "Sorry — something went wrong on my side (conflict). Could you send that again?",
        ),
        (
            "save_user_profile",
            "ERROR: ",
            "Thanks for letting me know! (I couldn't save that note just now: an unexpected error.)",
        ),
    ],
)
def test_a_failed_tool_in_feedback_is_told_plainly(tool: str, result: str, expected: str) -> None:
    request = feedback("hello")
    request = then(request, ChatResponse(tool_calls=[ToolCall(id="c1", name=tool, arguments="{}")]), result)
    assert reply(request) == expected


def test_a_greeting_hint_in_feedback_asks_how_it_went() -> None:
    assert reply(feedback(GREETING_HINT)) == "Welcome back! How did your habit go today?"


def test_asking_for_a_new_habit_goes_back_to_intake_then_asks_for_it() -> None:
    coach = OfflineCoach()
    request = feedback("I'd like a new habit please")
    step = coach.complete(request)
    assert calls(step) == [
        ("transition_state", {"target_state": "INTAKE", "reason": "participant wants a different habit"})
    ]
    assert reply(then(request, step, "The conversation is now in INTAKE.")) == (
        "Sure, let's pick a new one! What small habit would you like to build instead?"
    )


def test_a_missing_time_in_feedback_is_asked_for_after_going_back_to_intake() -> None:
    coach = OfflineCoach()
    request = feedback("hello", COMPLETE.model_copy(update={"preferred_time": ""}))
    step = coach.complete(request)
    assert calls(step)[0] == (
        "transition_state",
        {"target_state": "INTAKE", "reason": "profile incomplete: needs repair"},
    )
    assert reply(then(request, step, "The conversation is now in INTAKE.")) == (
        f"Before your next prompt I need one more detail. {ASK_TIME}"
    )


def test_done_without_a_recorded_prompt_saves_nothing_about_it() -> None:
    # Given no last prompt recorded, and no save tool offered
    request = feedback("Done!", last_prompt="", tools=[state_transition.StateTransitionTool().definition])
    # Then the coach congratulates without a tool call
    assert reply(request) == "Nice work — you did it! What helped you make it happen today?"


def test_an_unexplained_follow_up_to_what_got_in_the_way_is_saved_as_written() -> None:
    history = [("assistant", "No worries. What got in the way today?")]
    step = OfflineCoach().complete(feedback("not today, nope", history=history))
    assert calls(step) == [
        (
            "save_user_profile",
            {
                "last_barrier": "not today, nope",
                "last_tweak": "make it even smaller — just 30 seconds right after your usual routine",
            },
        )
    ]


@pytest.mark.parametrize(
    "listing",
    [
        "Active daily schedules:\n1. every day at 08:00 (internal id: sched_a)\n"
        "2. every day at 12:00 (internal id: sched_b)",
        # JSON that does not parse: the ids are read from the text
        "Active daily schedules:\n1. every day at 08:00 (internal id: sched_a)\n"
        "2. every day at 12:00 (internal id: sched_b)\n{not json",
    ],
)
def test_a_time_change_reads_the_ids_from_a_listing_without_json(listing: str) -> None:
    coach = OfflineCoach()
    tools = [state_transition.StateTransitionTool().definition, scheduler.definition(10)]  # no save tool
    request = feedback("Please move my reminder to 6pm", tools=tools)
    step = coach.complete(request)
    assert calls(step) == [("scheduler", {"action": "list"})]
    step = coach.complete(then(request, step, listing))
    assert calls(step) == [
        ("scheduler", {"action": "delete", "schedule_id": "sched_a"}),
        ("scheduler", {"action": "delete", "schedule_id": "sched_b"}),
        ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "18:00"}),
    ]
