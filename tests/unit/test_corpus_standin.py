"""The competent-model stand-in and the counting of the corpus player, without the pipeline."""

from __future__ import annotations

import json

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolDefinition
from scripts.corpus_model import Conversation, Expected, Turn
from scripts.corpus_player import Observation, TurnOutcome, end_problems
from scripts.corpus_standin import CompetentStandIn, Cursor, purpose_of
from scripts.eval_llm import invalid_arguments

INTAKE_CONTEXT = ChatMessage(role="system", content="INTAKE CONVERSATION CONTEXT:\n- habit_domain: walking")
ANCHOR_TURN = Turn.model_validate(
    {
        "say": "dinner",
        "calls": [
            {"tool": "save_user_profile", "args": {"prompt_anchor": "after dinner", "preferred_time": "19:00"}},
            {"tool": "generate_habit_prompt", "args": {"delivery_mode": "immediate"}},
        ],
        "reply": "Try this: {habit_prompt} Every day at 7pm?",
    }
)
MOVE_TURN = Turn.model_validate(
    {
        "say": "move it to 7pm",
        "rounds": [
            [{"tool": "scheduler", "args": {"action": "list"}}],
            [{"tool": "scheduler", "args": {"action": "delete", "schedule_id": "{schedule_id}"}}],
        ],
        "reply": "Moved.",
    }
)
THANKS_TURN = Turn(say="can I change the time later?", reply="Yes, any time.")


def conversation(*turns: Turn) -> Conversation:
    return Conversation(
        id="c", title="t", turns=list(turns), expect=Expected(sub_state="INTAKE"), greeting="Hello from the corpus"
    )


def tool(name: str) -> ToolDefinition:
    return ToolDefinition(name=name, description="", parameters={"type": "object", "properties": {}})


def standin_at(turn_index: int | None, *turns: Turn) -> CompetentStandIn:
    cursor = Cursor()
    cursor.move(conversation(*turns), turn_index)
    return CompetentStandIn(cursor)


def request(text: str, *tools: str, tool_choice: str | None = None, after: list[ChatMessage] = ()) -> ChatRequest:
    messages = [ChatMessage(role="system", content="prompt"), INTAKE_CONTEXT, ChatMessage(role="user", content=text)]
    return ChatRequest(
        purpose="intake",
        messages=[*messages, *after],
        tools=[tool(name) for name in tools],
        tool_choice=tool_choice,  # type: ignore[arg-type]
    )


def test_it_makes_only_the_offered_calls_then_replies() -> None:
    standin = standin_at(0, ANCHOR_TURN)
    # Only save_user_profile offered: the generator call is not made
    response = standin.complete(request("dinner", "save_user_profile"))
    assert [c.name for c in response.tool_calls] == ["save_user_profile"]
    assert json.loads(response.tool_calls[0].arguments)["prompt_anchor"] == "after dinner"
    # Nothing offered: the annotated reply (the prompt placeholder has nothing to show)
    assert standin.complete(request("dinner")).content == "Try this: a tiny first step Every day at 7pm?"


def test_it_puts_the_generated_prompt_in_the_reply() -> None:
    standin = standin_at(0, ANCHOR_TURN)
    first = standin.complete(request("dinner", "save_user_profile", "generate_habit_prompt"))
    assert [c.name for c in first.tool_calls] == ["save_user_profile", "generate_habit_prompt"]
    results = [ChatMessage(role="assistant", tool_calls=first.tool_calls)] + [
        ChatMessage(role="tool", tool_call_id=c.id, content="Walk for one minute." if i else "Profile saved.")
        for i, c in enumerate(first.tool_calls)
    ]
    final = standin.complete(request("dinner", "save_user_profile", "generate_habit_prompt", after=results))
    assert final.content == "Try this: Walk for one minute. Every day at 7pm?" and not final.tool_calls


def test_rounds_follow_the_tool_results_and_fill_the_schedule_id() -> None:
    standin = standin_at(0, MOVE_TURN)
    listed = standin.complete(request("move it to 7pm", "scheduler", tool_choice="required"))
    assert json.loads(listed.tool_calls[0].arguments) == {"action": "list"}
    result = ChatMessage(
        role="tool", tool_call_id=listed.tool_calls[0].id, content="1. … (internal id: sched_0123456789abcdef)"
    )
    after = [ChatMessage(role="assistant", tool_calls=listed.tool_calls), result]
    deleted = standin.complete(request("move it to 7pm", "scheduler", after=after))
    assert json.loads(deleted.tool_calls[0].arguments) == {"action": "delete", "schedule_id": "sched_0123456789abcdef"}


def test_required_does_not_make_it_call_anything_and_the_turn_counts_as_forced() -> None:
    standin = standin_at(0, THANKS_TURN)
    req = request("can I change the time later?", "scheduler", tool_choice="required")
    response = standin.complete(req)
    assert response.content == "Yes, any time." and not response.tool_calls
    observation = Observation(0, "intake", ("scheduler",), "required", response, req)
    outcome = TurnOutcome(0, THANKS_TURN.say, (), ("scheduler",), "required", True, [observation])
    assert outcome.forced and not outcome.stranded
    assert outcome.problems == ["forced: tool_choice=required with [scheduler], nothing needed"]


def test_a_needed_tool_not_offered_is_stranded() -> None:
    outcome = TurnOutcome(3, "yes", ("scheduler",), (), None, True)
    assert outcome.stranded == ("scheduler",) and not outcome.forced
    assert TurnOutcome(3, "yes", ("scheduler",), (), None, False).problems == [
        "no intake/feedback request for this message"
    ]


def test_greeting_generator_synthesis_and_classifier() -> None:
    standin = standin_at(None, ANCHOR_TURN)
    assert standin.complete(request("<Hint: The user has joined>")).content == "Hello from the corpus"
    generator = ChatRequest(
        purpose="prompt_generator",
        messages=[
            ChatMessage(role="system", content="Write a prompt."),
            ChatMessage(
                role="user",
                content="Write today's habit prompt for this participant.\nHabit domain: walking\n"
                "Motivation: energy\nPreferred time: 19:00\nAnchor routine: after dinner",
            ),
        ],
    )
    assert "after dinner" in (standin.complete(generator).content or "").lower()
    standin = standin_at(0, ANCHOR_TURN)
    synthesis = ChatRequest(purpose="synthesis", messages=[ChatMessage(role="user", content="dinner")])
    assert (standin.complete(synthesis).content or "").startswith("Try this:")
    classifier = ChatRequest(purpose="classifier", messages=[ChatMessage(role="user", content="dinner")])
    answer = json.loads(standin.complete(classifier).content or "")
    assert answer["tools"] == ["generate_habit_prompt", "save_user_profile"]


def test_the_purpose_is_recognised_from_a_request_without_one() -> None:
    # Over HTTP the purpose is not on the wire
    def bare(*messages: ChatMessage, **extra: object) -> ChatRequest:
        return ChatRequest(messages=list(messages), **extra)  # type: ignore[arg-type]

    user = ChatMessage(role="user", content="hi")
    assert purpose_of(bare(user, response_format={"type": "json_object"})) == "classifier"
    assert purpose_of(bare(user, ChatMessage(role="system", content="Write the reply."))) == "synthesis"
    assert purpose_of(bare(ChatMessage(role="user", content="Write today's habit prompt for…"))) == "prompt_generator"
    assert purpose_of(bare(INTAKE_CONTEXT, user)) == "intake"
    assert purpose_of(bare(ChatMessage(role="system", content="FEEDBACK TRACKING CONTEXT:"), user)) == "feedback"


def test_end_problems_name_each_difference() -> None:
    convo = Conversation(
        id="c",
        title="t",
        turns=[THANKS_TURN],
        expect=Expected(sub_state="FEEDBACK", profile=["habit_domain", "prompt_anchor"], schedule="19:00"),
    )
    state = {
        "sub_state": "INTAKE",
        "profile": {"habit_domain": "walking", "prompt_anchor": ""},
        "schedules": [{"fixed_time": "08:00"}],
        "controller": {"needs_person": True, "hold": {"nodeId": "schedule"}},
    }
    assert end_problems(convo, state) == [
        "sub_state INTAKE, expected FEEDBACK",
        "profile lacks prompt_anchor",
        "daily schedule ['08:00'], expected ['19:00']",
        "handed off to a person (hold: {'nodeId': 'schedule'})",
    ]
    state = {
        "sub_state": "FEEDBACK",
        "profile": {"habit_domain": "walking", "prompt_anchor": "after dinner"},
        "schedules": [{"fixed_time": "19:00"}],
        "controller": {"needs_person": False},
    }
    assert end_problems(convo, state) == []


def test_invalid_tool_arguments_are_counted_per_call() -> None:
    schema = {"type": "object", "properties": {"action": {"type": "string", "enum": ["list"]}}, "required": ["action"]}
    req = ChatRequest(messages=[], tools=[ToolDefinition(name="scheduler", description="", parameters=schema)])
    calls = [
        ToolCall(id="1", name="scheduler", arguments='{"action": "list"}'),  # fine
        ToolCall(id="2", name="scheduler", arguments='{"action": "remove"}'),  # not in the enum
        ToolCall(id="3", name="scheduler", arguments="[1]"),  # not an object
        ToolCall(id="4", name="transition_state", arguments="{}"),  # not offered
    ]
    observation = Observation(0, "feedback", ("scheduler",), "auto", ChatResponse(tool_calls=calls), req)
    assert invalid_arguments(observation) == 3
