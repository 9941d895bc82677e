"""The offline coach: direct ``complete()`` rules per purpose, and whole conversations driven through
the real ``ConversationFlow`` and tools with in-memory adapters."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from promptpipe.adapters.memory_store import InMemoryStore
from promptpipe.adapters.memory_timers import InMemoryTimers
from promptpipe.adapters.offline_coach import (
    OfflineCoach,
    build_habit_prompt,
    friendly_time,
    parse_clock_time,
    parse_intake_message,
    parse_vague_time,
)
from promptpipe.config import CoreConfig
from promptpipe.flow.conversation import GREETING_HINT, ConversationFlow, TurnResult
from promptpipe.flow.delivery import deliver_daily_prompt
from promptpipe.flow.deps import FlowDeps, IdGenerator
from promptpipe.flow.effects import apply_schedule_changes
from promptpipe.flow.modules import feedback_context, intake_context
from promptpipe.flow.prompts import PromptLibrary
from promptpipe.flow.session import SessionFactory
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolDefinition
from promptpipe.models.messaging import InboundMessage, OutboundMessage
from promptpipe.models.participant import ConversationParticipant, format_background
from promptpipe.models.profile import Intensity, UserProfile
from promptpipe.models.state import FlowState, StateData, SubState, new_state_data
from promptpipe.rules.clock import ManualClock
from promptpipe.settings import Settings

LABEL = "offline-coach (rule-based, no LLM)"
INTAKE_TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
    prompt_generator.PromptGeneratorTool().definition,
]
FEEDBACK_TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
]
BACKGROUND = "Name: Alex\nGender: \nEthnicity: \nBackground: "
COMPLETE = UserProfile(
    habit_domain="exercise",
    motivational_frame="feel more energetic",
    preferred_time="08:00",
    prompt_anchor="after my morning coffee",
)
LAST_PROMPT = (
    "After your morning coffee, try 1 minute of stretching — it helps you feel more energetic. Would that feel doable?"
)


DELIVERED = COMPLETE.model_copy(update={"total_prompts": 1})  # a daily prompt has come: a report is about it


# -- request builders (the engine's own context formats) ----------------------------------------


def intake_request(
    user: str,
    profile: UserProfile | None = None,
    history: list[tuple[str, str]] = (),
    tools: list[ToolDefinition] | None = None,
) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="intake system prompt"),
        ChatMessage(role="system", content=intake_context(profile or UserProfile(), BACKGROUND)),
        *(ChatMessage(role=role, content=text) for role, text in history),  # type: ignore[arg-type]
        ChatMessage(role="user", content=user),
    ]
    return ChatRequest(purpose="intake", messages=messages, tools=INTAKE_TOOLS if tools is None else tools)


def feedback_request(
    user: str,
    profile: UserProfile | None = None,
    last_prompt: str = LAST_PROMPT,
    history: list[tuple[str, str]] = (),
) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="feedback system prompt"),
        ChatMessage(role="system", content=feedback_context(profile or DELIVERED, last_prompt, True, BACKGROUND)),
        *(ChatMessage(role=role, content=text) for role, text in history),  # type: ignore[arg-type]
        ChatMessage(role="user", content=user),
    ]
    return ChatRequest(purpose="feedback", messages=messages, tools=FEEDBACK_TOOLS)


def with_results(request: ChatRequest, response: ChatResponse, *results: str) -> ChatRequest:
    """The next loop round: the model's tool calls and their results appended, as the loop does."""
    assert len(results) == len(response.tool_calls)
    messages = [*request.messages, ChatMessage(role="assistant", content=None, tool_calls=response.tool_calls)]
    messages += [
        ChatMessage(role="tool", tool_call_id=c.id, content=r)
        for c, r in zip(response.tool_calls, results, strict=True)
    ]
    return request.model_copy(update={"messages": messages})


def only_call(response: ChatResponse) -> tuple[str, dict[str, Any]]:
    assert response.content is None
    assert len(response.tool_calls) == 1
    call = response.tool_calls[0]
    return call.name, json.loads(call.arguments)


def generator_request(
    domain: str, motivation: str, anchor: str, intensity: str = "normal", extra: str = ""
) -> ChatRequest:
    system = f"generator system prompt\n\nContext: immediate.\n{extra}Intensity: {intensity} — guidance."
    user = "\n".join(
        [
            "Write today's habit prompt for this participant.",
            f"Habit domain: {domain}",
            f"Motivation: {motivation}",
            "Preferred time: 08:00",
            f"Anchor routine: {anchor}",
            "Additional info: (none)",
        ]
    )
    return ChatRequest(
        purpose="prompt_generator",
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
    )


# -- the response envelope --------------------------------------------------------------------------


def test_every_response_is_labelled_with_estimated_usage() -> None:
    coach = OfflineCoach()
    request = intake_request(GREETING_HINT)
    response = coach.complete(request)
    assert response.model == LABEL
    assert response.finish_reason == "stop"
    assert response.reasoning is None
    chars = sum(len(m.content or "") for m in request.messages)
    assert response.usage.prompt_tokens == chars // 4
    assert response.usage.completion_tokens == len(response.content or "") // 4
    assert OfflineCoach(explain=True).complete(request).reasoning == "intake: greeting hint"


def test_the_same_request_gets_the_same_answer() -> None:
    request = intake_request("I want to walk more because it clears my head, at 7pm after dinner")
    first, second = OfflineCoach().complete(request), OfflineCoach().complete(request)
    assert first == second


# -- prompt generator -------------------------------------------------------------------------------


def test_generator_builds_a_map_prompt() -> None:
    response = OfflineCoach().complete(generator_request("exercise", "feel more energetic", "after my morning coffee"))
    assert response.content == LAST_PROMPT
    assert response.model == LABEL


@pytest.mark.parametrize(
    ("intensity", "quantity"),
    [("low", "30 seconds of stretching"), ("normal", "1 minute of"), ("high", "3 minutes of")],
)
def test_generator_scales_with_intensity(intensity: str, quantity: str) -> None:
    text = OfflineCoach().complete(generator_request("exercise", "", "after lunch", intensity)).content or ""
    assert quantity in text


@pytest.mark.parametrize(
    ("domain", "action"),
    [
        ("walking", "walking"),
        ("better sleep", "winding down"),
        ("hydration", "a glass of water"),
        ("drink more water", "a glass of water"),
        ("reading", "reading a page"),
        ("mindfulness", "slow breathing"),
        ("gardening", "a 1-minute step toward gardening"),
    ],
)
def test_generator_varies_the_action_by_domain(domain: str, action: str) -> None:
    text = build_habit_prompt(
        f"Habit domain: {domain}\nMotivation: (not given)\nAnchor routine: before bed", "Intensity: normal"
    )
    assert action in text
    assert text.startswith("Before bed, try ")
    assert text.endswith("Would that feel doable?")


def test_generator_speaks_to_the_participant_and_stays_under_30_words() -> None:
    long = build_habit_prompt(
        "Habit domain: sleep\nMotivation: my back hurts after sitting all day long and I am very tired every single "
        "day of the week\nAnchor routine: after I brush my teeth and put the kids to bed and wash the dishes",
        "Intensity: normal",
    )
    assert long.startswith("After you brush your teeth, try")
    assert len(long.split()) < 30
    benefit = build_habit_prompt(
        "Habit domain: walking\nMotivation: I want more energy\nAnchor routine: when I get home", "Intensity: normal"
    )
    assert benefit == "When you get home, try 1 minute of walking — it gives you more energy. Would that feel doable?"


def test_generator_varies_the_activity_as_successes_grow() -> None:
    first = OfflineCoach().complete(generator_request("exercise", "", "after lunch")).content or ""
    extra = "The participant has completed 1 habit prompt(s) so far.\n"
    second = OfflineCoach().complete(generator_request("exercise", "", "after lunch", extra=extra)).content or ""
    assert "1 minute of stretching" in first
    assert "1 minute of squats" in second


# -- parsing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8am", "08:00"),
        ("at 8:30", "08:30"),
        ("7:30 pm", "19:30"),
        ("at 7 pm", "19:00"),
        ("19:00", "19:00"),
        ("12pm", "12:00"),
        ("12am", "00:00"),
        ("8-9am", "08:00"),
        ("around 7 in the evening", "19:00"),
        ("at 3", "15:00"),
        ("I walk 10 minutes", None),
    ],
)
def test_clock_times_are_normalised_to_24_hour(text: str, expected: str | None) -> None:
    assert parse_clock_time(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("in the morning", "08:00"), ("after lunch", "13:00"), ("every evening", "19:00"), ("my morning coffee", None)],
)
def test_time_of_day_words(text: str, expected: str | None) -> None:
    assert parse_vague_time(text) == expected


def test_friendly_time() -> None:
    assert [friendly_time(t) for t in ("08:00", "19:30", "12:00", "00:15")] == ["8am", "7:30pm", "12pm", "12:15am"]


@pytest.mark.parametrize(
    ("text", "learned"),
    [
        (
            "I want to walk more because it clears my head, at 7pm after dinner",
            {
                "habit_domain": "walking",
                "motivational_frame": "it clears my head",
                "preferred_time": "19:00",
                "prompt_anchor": "after dinner",
            },
        ),
        (
            "I want to stretch more because my back hurts after sitting all day",
            {"habit_domain": "stretching", "motivational_frame": "my back hurts after sitting all day"},
        ),
        ("I want to feel more energetic", {"motivational_frame": "feel more energetic"}),
        (
            "every morning at 8am after my morning coffee",
            {"preferred_time": "08:00", "prompt_anchor": "after my morning coffee"},
        ),
        ("with my coffee", {"prompt_anchor": "with my coffee"}),
        ("I'd like to learn to play guitar", {"habit_domain": "studying"}),
        ("I want to practise guitar", {"habit_domain": "practise guitar"}),
        ("hi", {}),
        (GREETING_HINT, {}),
    ],
)
def test_intake_facts_from_free_text(text: str, learned: dict[str, str]) -> None:
    assert parse_intake_message(text, {}, None) == learned


def test_a_bare_answer_is_read_as_the_field_just_asked() -> None:
    known = {"habit_domain": "exercise"}
    assert parse_intake_message("more energy for my kids", known, "motivational_frame") == {
        "motivational_frame": "more energy for my kids"
    }
    assert parse_intake_message("my morning coffee", {**known, "preferred_time": "08:00"}, "prompt_anchor") == {
        "prompt_anchor": "after my morning coffee"
    }
    assert parse_intake_message("gardening", {}, "habit_domain") == {"habit_domain": "gardening"}
    assert parse_intake_message("I don't know", {}, "habit_domain") == {}
    assert parse_intake_message("7pm", {}, "habit_domain") == {"preferred_time": "19:00"}


def test_a_known_domain_is_not_replaced_by_a_passing_keyword() -> None:
    known = {"habit_domain": "exercise", "motivational_frame": "x"}
    assert parse_intake_message("at 8am, I run late most days", known, "preferred_time") == {"preferred_time": "08:00"}


# -- intake rules -----------------------------------------------------------------------------------


def test_greeting_introduces_and_asks_the_first_question() -> None:
    response = OfflineCoach().complete(intake_request(GREETING_HINT))
    assert response.tool_calls == []
    assert (response.content or "").startswith("Hi Alex!")
    assert "habit" in (response.content or "")
    assert (response.content or "").endswith("?")


def test_intake_saves_only_the_fields_it_learned_then_asks_the_next_one() -> None:
    coach = OfflineCoach()
    request = intake_request("I'd like to exercise more")
    response = coach.complete(request)
    assert only_call(response) == ("save_user_profile", {"habit_domain": "exercise"})
    assert response.tool_calls[0].id == "offline_1"
    assert response.finish_reason == "tool_calls"
    reply = coach.complete(with_results(request, response, "Profile saved (1 field(s) updated: habit_domain)."))
    assert reply.tool_calls == []
    assert reply.content == "Exercise — great choice. Why does exercise matter to you? What would it give you?"


def test_intake_asks_again_when_it_learned_nothing() -> None:
    profile = UserProfile(habit_domain="exercise", motivational_frame="energy")
    # ("whenever really" hands the time over: a default, test_offline_coach_intake_detours.py)
    response = OfflineCoach().complete(intake_request("purple really", profile))
    assert response.tool_calls == []
    assert response.content == (
        "Sorry, I didn't catch a time there. What time of day would you like your daily prompt? "
        "For example 8am or 7:30pm."
    )


def test_intake_completion_drives_prompt_schedule_and_transition() -> None:
    coach = OfflineCoach()
    profile = UserProfile(habit_domain="exercise", motivational_frame="feel more energetic", preferred_time="08:00")
    request = intake_request("after my morning coffee", profile)
    step = coach.complete(request)
    assert only_call(step) == ("save_user_profile", {"prompt_anchor": "after my morning coffee"})
    request = with_results(request, step, "Profile saved (1 field(s) updated: prompt_anchor).")
    step = coach.complete(request)
    assert only_call(step) == ("generate_habit_prompt", {"delivery_mode": "immediate"})
    assert step.tool_calls[0].id == "offline_2"
    request = with_results(request, step, LAST_PROMPT)
    step = coach.complete(request)
    assert step.tool_calls == []  # the schedule is proposed with the first prompt, not made before a yes
    offer = step.content or ""
    assert "“After your morning coffee, try 1 minute of stretching" in offer
    assert offer.endswith("Shall I send you one like it every day around 8am?")
    done = COMPLETE.model_copy(update={"preferred_time": "08:00"})
    request = intake_request("yes", done, history=[("user", "after my morning coffee"), ("assistant", offer)])
    step = coach.complete(request)
    assert only_call(step) == ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "08:00"})
    request = with_results(
        request,
        step,
        "Daily habit prompt scheduled: every day at 07:50 (America/Toronto), 10 min before 08:00. The first one "
        'arrives tomorrow. Internal schedule id, not for the participant: sched_1\n{"schedule_id": "sched_1"}',
    )
    step = coach.complete(request)
    name, args = only_call(step)
    assert (name, args["target_state"]) == ("transition_state", "FEEDBACK")
    step = coach.complete(with_results(request, step, "The conversation is now in FEEDBACK."))
    assert step.tool_calls == []
    assert "Your first prompt comes tomorrow around 8am, then every day" in (step.content or "")
    assert "sched_1" not in (step.content or "")


def test_a_complete_profile_with_a_legacy_time_is_scheduled_in_hhmm() -> None:
    profile = COMPLETE.model_copy(update={"preferred_time": "7pm"})
    request = intake_request("ready", profile)
    step = OfflineCoach().complete(request)
    assert only_call(step) == ("generate_habit_prompt", {"delivery_mode": "immediate"})
    offer = OfflineCoach().complete(with_results(request, step, LAST_PROMPT)).content or ""
    assert "every day around 7pm?" in offer
    step = OfflineCoach().complete(intake_request("sure", profile, history=[("user", "ready"), ("assistant", offer)]))
    assert only_call(step)[1]["fixed_time"] == "19:00"


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        (["ERROR: the stored profile is unreadable; nothing was saved (bad json)"], "couldn't save that just now"),
        (["Profile saved.", "ERROR: could not generate a habit prompt (boom)"], "couldn't create your habit prompt"),
    ],
)
def test_intake_tells_the_truth_when_a_tool_fails(results: list[str], expected: str) -> None:
    coach = OfflineCoach()
    request = intake_request("after my morning coffee", COMPLETE.model_copy(update={"prompt_anchor": ""}))
    step = coach.complete(request)
    for result in results:
        request = with_results(request, step, result)
        step = coach.complete(request)
    assert step.tool_calls == []
    assert expected in (step.content or "")


def test_intake_tells_the_truth_when_the_schedule_agreed_to_fails() -> None:
    offer = (
        f"Here's your first one-minute habit to try: “{LAST_PROMPT}” Shall I send you one like it every day around 8am?"
    )
    request = intake_request("yes", COMPLETE, history=[("user", "after my morning coffee"), ("assistant", offer)])
    step = OfflineCoach().complete(request)
    assert only_call(step)[0] == "scheduler"
    step = OfflineCoach().complete(with_results(request, step, "ERROR: Failed to schedule prompt (throttled)"))
    assert step.tool_calls == []
    assert "couldn't set up your daily prompt just now (Failed to schedule prompt)" in (step.content or "")


def test_no_tool_is_called_that_the_request_does_not_offer() -> None:
    response = OfflineCoach().complete(intake_request("I'd like to exercise more", tools=[]))
    assert response.tool_calls == []
    assert response.content


def test_tool_call_ids_continue_after_those_in_the_request() -> None:
    request = intake_request("I want to read more", UserProfile())
    prior = ChatResponse(
        tool_calls=[{"id": "offline_1", "name": "scheduler", "arguments": "{}"}, {"id": "x", "name": "y"}]  # type: ignore[list-item]
    )
    request = with_results(request, prior, "ok", "ok")
    # A save has not been made in this loop yet, so it is the next step, with the next free id.
    response = OfflineCoach().complete(request)
    assert [c.id for c in response.tool_calls] == ["offline_3"]


# -- feedback rules ---------------------------------------------------------------------------------


def test_done_saves_the_successful_prompt_and_congratulates() -> None:
    coach = OfflineCoach()
    profile = COMPLETE.model_copy(update={"success_count": 2, "total_prompts": 3})
    request = feedback_request("Q: Did you do it? A: Done", profile)
    step = coach.complete(request)
    assert only_call(step) == ("save_user_profile", {"last_successful_prompt": LAST_PROMPT})
    reply = coach.complete(with_results(request, step, "Profile saved (1 field(s) updated: last_successful_prompt)."))
    assert reply.content == "Nice work — you did it! That's 2 done so far. What helped you make it happen today?"


def test_done_with_a_reason_saves_the_motivator() -> None:
    step = OfflineCoach().complete(feedback_request("Yes! Having my mat out helped a lot"))
    assert only_call(step) == (
        "save_user_profile",
        {"last_successful_prompt": LAST_PROMPT, "last_motivator": "Having my mat out"},
    )


def test_the_answer_to_what_helped_is_saved_as_the_motivator() -> None:
    history = [("assistant", "Nice work — you did it! What helped you make it happen today?")]
    step = OfflineCoach().complete(feedback_request("the music I put on", history=history))
    assert only_call(step) == ("save_user_profile", {"last_motivator": "the music I put on"})


@pytest.mark.parametrize(
    ("text", "barrier"),
    [
        ("Q: Did you do it? A: Next time", "not specified"),
        ("no, I forgot", "forgot"),
        ("didn't have time today", "not enough time"),
        ("couldn't, too tired", "too tired"),
        ("no because the kids were sick", "too tired"),
        ("didn't because my friend visited", "my friend visited"),
    ],
)
def test_not_done_saves_barrier_and_tweak(text: str, barrier: str) -> None:
    coach = OfflineCoach()
    request = feedback_request(text)
    step = coach.complete(request)
    name, args = only_call(step)
    assert name == "save_user_profile"
    assert args["last_barrier"] == barrier
    assert args["last_tweak"]
    reply = coach.complete(with_results(request, step, "Profile saved (2 field(s) updated: last_barrier, last_tweak)."))
    assert args["last_tweak"] in (reply.content or "")
    assert ("What got in the way today?" in (reply.content or "")) == (barrier == "not specified")


def test_the_answer_to_what_got_in_the_way_is_saved_as_the_barrier() -> None:
    history = [("assistant", "No worries. What got in the way today?")]
    step = OfflineCoach().complete(feedback_request("I was running late for work", history=history))
    assert only_call(step) == (
        "save_user_profile",
        {"last_barrier": "not enough time", "last_tweak": "shrink it to a 30-second version you can do anywhere"},
    )


@pytest.mark.parametrize(
    ("answer", "level", "expected"),
    [
        ("Increase", "high", "a little more challenging (intensity: high)"),
        ("Decrease", "low", "a bit easier (intensity: low)"),
        ("Keep current", "normal", "keep it just as it is"),
        ("Low", "low", "your intensity is now low"),
    ],
)
def test_intensity_answers_are_acknowledged(answer: str, level: str, expected: str) -> None:
    profile = COMPLETE.model_copy(update={"intensity": Intensity(level)})
    response = OfflineCoach().complete(feedback_request(f"Q: How's the intensity? A: {answer}", profile))
    assert response.tool_calls == []
    assert expected in (response.content or "")


def test_a_time_change_lists_then_replaces_the_schedule() -> None:
    coach = OfflineCoach()
    request = feedback_request("Can you change my time to 7pm?")
    step = coach.complete(request)
    assert only_call(step) == ("scheduler", {"action": "list"})
    listing = {"schedules": [], "schedule_ids": ["sched_a", "sched_b"], "prep_time_minutes": 10}
    request = with_results(request, step, "Active daily schedules:\n1. …\n" + json.dumps(listing))
    step = coach.complete(request)
    assert [(c.name, json.loads(c.arguments)) for c in step.tool_calls] == [
        ("scheduler", {"action": "delete", "schedule_id": "sched_a"}),
        ("scheduler", {"action": "delete", "schedule_id": "sched_b"}),
        ("scheduler", {"action": "create", "type": "fixed", "fixed_time": "19:00"}),
        ("save_user_profile", {"preferred_time": "19:00"}),
    ]
    assert [c.id for c in step.tool_calls] == ["offline_2", "offline_3", "offline_4", "offline_5"]
    request = with_results(request, step, "Deleted.", "Deleted.", "Scheduled. The first one arrives today.", "Saved.")
    reply = coach.complete(request)
    assert reply.content == "Done — your daily prompt will now come around 7pm starting today."


def test_a_missing_profile_in_feedback_goes_back_to_intake() -> None:
    coach = OfflineCoach()
    request = feedback_request("hello", COMPLETE.model_copy(update={"prompt_anchor": ""}))
    step = coach.complete(request)
    assert only_call(step)[0] == "transition_state"
    assert only_call(step)[1]["target_state"] == "INTAKE"
    reply = coach.complete(with_results(request, step, "The conversation is now in INTAKE."))
    assert "something you already do every day" in (reply.content or "")


def test_other_feedback_messages_get_a_short_coach_reply() -> None:
    assert OfflineCoach().complete(feedback_request("what's the weather like?")).content == (
        "I can't answer that one myself, but the study team can. How did your latest habit prompt go?"
    )
    assert OfflineCoach().complete(feedback_request("thanks!")).content == (
        "You're welcome! I'll check in after your next prompt."
    )


# -- whole conversations through the real engine -------------------------------------------------


class Harness:
    """The real ConversationFlow, tools and session over in-memory adapters, with the offline coach."""

    def __init__(self) -> None:
        self.clock = ManualClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))  # 07:00 in Toronto
        self.store = InMemoryStore()
        self.timers = InMemoryTimers()
        settings = Settings()
        self.deps = FlowDeps(
            config=CoreConfig.from_settings(settings),
            llm=OfflineCoach(),
            timers=self.timers,
            clock=self.clock,
            prompts=PromptLibrary.from_settings(settings),
            ids=IdGenerator(random.Random(7)),
        )
        now = self.clock.now()
        self.participant = ConversationParticipant(
            id="p_" + "a" * 32,
            phone_number="+15551234567",
            name="Alex",
            enrolled_at=now,
            created_at=now,
            updated_at=now,
        )
        background = format_background(self.participant)
        self.store.create(
            self.participant, FlowState(participant_id=self.participant.id, state_data=new_state_data(background))
        )
        self.sessions = SessionFactory(self.store, self.clock)
        self.flow = ConversationFlow(self.deps)
        self.events = 0
        self.transcript: list[str] = []

    def _open(self):  # type: ignore[no-untyped-def]
        self.events += 1
        return self.sessions.open(self.participant.id, f"evt-{self.events}")

    def greet(self) -> TurnResult:
        session = self._open()
        result = self.flow.handle_greeting(session)
        apply_schedule_changes(self.timers, session.commit().schedules)
        self.transcript.append(f"COACH: {result.reply}")
        return result

    def say(self, text: str) -> TurnResult:
        self.clock.advance(timedelta(minutes=1))
        session = self._open()
        message = InboundMessage(
            provider="local",
            provider_message_id=f"m{self.events}",
            from_phone=self.participant.phone_number,
            body=text,
            received_at=self.clock.now(),
        )
        result = self.flow.handle_message(session, message)
        apply_schedule_changes(self.timers, session.commit().schedules)
        self.transcript += [f"USER: {text}", f"COACH: {result.reply}"]
        return result

    def deliver(self) -> list[OutboundMessage]:
        session = self._open()
        schedule = self.data.schedules()[0]
        payload = self.timers.schedules[schedule.timer_id].payload
        assert deliver_daily_prompt(self.deps, session, payload).delivered  # type: ignore[arg-type]
        effects = session.commit()
        apply_schedule_changes(self.timers, effects.schedules)
        sent = effects.messages
        self.transcript += [f"PROMPT: {m.body}" for m in sent if m.body]
        return sent

    @property
    def data(self) -> StateData:
        return StateData(self.store.flows[self.participant.id].state_data)


def tools_of(result: TurnResult) -> list[tuple[str, str]]:
    return [(c["name"], c["outcome"]) for c in result.audit["tool_calls"]]


def test_a_full_intake_and_feedback_conversation() -> None:
    h = Harness()
    greeting = h.greet()
    assert (greeting.reply or "").startswith("Hi Alex!")
    assert h.say("Hi").reply == (
        "Hi! What's one small habit you'd like to build — maybe moving more, sleeping better, drinking more water "
        "or reading?"
    )
    assert tools_of(h.say("I'd like to exercise more")) == [("save_user_profile", "ok")]
    assert tools_of(h.say("I want to feel more energetic")) == [("save_user_profile", "ok")]
    reply = h.say("around 8am")
    assert reply.reply == (
        "8am works. What's something you already do every day that we can attach it to — like your morning coffee "
        "or brushing your teeth?"
    )
    assert h.data.sub_state is SubState.INTAKE

    offered = h.say("after my morning coffee")
    assert tools_of(offered) == [("save_user_profile", "ok"), ("generate_habit_prompt", "ok")]
    assert "After your morning coffee, try 1 minute of stretching" in (offered.reply or "")
    assert (offered.reply or "").endswith("Shall I send you one like it every day around 8am?")
    assert h.data.sub_state is SubState.INTAKE and h.data.schedules() == []  # proposed, not made before a yes
    done = h.say("yes")
    assert tools_of(done) == [("scheduler", "ok"), ("transition_state", "ok")]
    assert {c["model"] for c in done.audit["llm_calls"]} == {LABEL}
    assert "Your first prompt comes today around 8am" in (done.reply or "")  # 07:05 Toronto, first firing 07:50
    profile = h.data.profile()
    assert (profile.habit_domain, profile.motivational_frame, profile.preferred_time, profile.prompt_anchor) == (
        "exercise",
        "feel more energetic",
        "08:00",
        "after my morning coffee",
    )
    assert h.data.sub_state is SubState.FEEDBACK
    (schedule,) = h.data.schedules()
    assert (schedule.fixed_time, schedule.timezone) == ("08:00", "America/Toronto")
    timer = h.timers.schedules[schedule.timer_id]
    assert (timer.hour, timer.minute) == (7, 50)

    # Day 2: the daily prompt, a "done" and what helped.
    h.clock.set(datetime(2026, 3, 3, 12, 50, tzinfo=UTC))
    h.deliver()
    first = h.say("done")
    assert first.module == "feedback"
    assert first.reply == "Nice work — you did it! That's 1 done so far. What helped you make it happen today?"
    h.say("Having my mat next to the coffee machine helped")
    profile = h.data.profile()
    assert profile.last_successful_prompt == LAST_PROMPT
    assert profile.last_motivator == "Having my mat next to the coffee machine"

    # Day 3: more, then not done and why, then a new time.
    h.clock.set(datetime(2026, 3, 4, 12, 50, tzinfo=UTC))
    h.deliver()
    assert "more challenging (intensity: high)" in (h.say("more").reply or "")
    assert "What got in the way today?" in (h.say("Next time").reply or "")
    h.say("I was running late for work")
    profile = h.data.profile()
    assert (profile.last_barrier, profile.intensity.value) == ("not enough time", "high")
    changed = h.say("Can you change my time to 7pm?")
    assert tools_of(changed) == [("scheduler", "ok")] * 3 + [("save_user_profile", "ok")]
    assert changed.reply == "Done — your daily prompt will now come around 7pm starting today."
    (schedule,) = h.data.schedules()
    assert schedule.fixed_time == "19:00"
    assert h.data.profile().preferred_time == "19:00"
    daily = [t for t in h.timers.schedules.values() if t.kind == "daily_prompt"]
    assert [(t.hour, t.minute) for t in daily] == [(18, 50)]


def test_everything_in_one_message() -> None:
    h = Harness()
    h.greet()
    result = h.say("I want to walk more because it clears my head, at 7pm after dinner")
    assert [name for name, _ in tools_of(result)] == ["save_user_profile", "generate_habit_prompt"]
    assert "After dinner, try 1 minute of walking — it clears your head." in (result.reply or "")
    assert h.data.sub_state is SubState.INTAKE
    assert [name for name, _ in tools_of(h.say("sure"))] == ["scheduler", "transition_state"]
    assert h.data.sub_state is SubState.FEEDBACK


def test_a_scheduler_failure_is_reported_and_retried_on_the_next_message() -> None:
    h = Harness()
    h.greet()
    for text in ("I'd like to read more", "to unwind before sleep", "9pm"):
        h.say(text)
    # A zone EventBridge would refuse: the tool refuses before anything is decided
    h.store.participants[h.participant.id].timezone = "posix/Europe/Paris"
    h.say("before bed")  # the first prompt, and the schedule proposed
    failed = h.say("yes")
    assert tools_of(failed)[-1] == ("scheduler", "error")
    assert "couldn't set up your daily prompt just now" in (failed.reply or "")
    assert h.data.sub_state is SubState.INTAKE
    assert h.data.schedules() == [] and h.timers.schedules == {}

    h.store.participants[h.participant.id].timezone = "America/Toronto"
    retried = h.say("ok, try again")
    assert tools_of(retried) == [("scheduler", "ok"), ("transition_state", "ok")]
    assert h.data.sub_state is SubState.FEEDBACK
    assert [s.fixed_time for s in h.data.schedules()] == ["21:00"]
