"""The competent-model stand-in and the counting of the corpus player, without the pipeline."""

from __future__ import annotations

import json

import pytest

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolDefinition
from scripts.corpus.eval_llm import invalid_arguments
from scripts.corpus.model import Conversation, Expected, Turn
from scripts.corpus.player import Observation, TurnOutcome, end_problems
from scripts.corpus.standin import CompetentStandIn, Cursor, purpose_of

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


# --- roles, turn limits, the richer end, and the splits' figures ---------------------------------
DONE_TURN = Turn.model_validate(
    {
        "say": "Done, 20 pushups",
        "calls": [
            {"tool": "record_outcome", "args": {"outcome": "done"}},
            {
                "tool": "save_user_profile",
                "args": {"last_successful_prompt": "x", "prompt_anchor": "", "preferred_time": ""},
            },
        ],
        "reply": "Nice!",
    }
)


def test_a_role_is_called_with_the_offered_tool_bound_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from scripts.corpus import standin as corpus_standin

    # Given the engine names its outcome tool differently, and the binding says so
    def adapt(args: dict[str, object]) -> dict[str, object]:
        return {"completed": args["outcome"] == "done"}

    bindings = {**corpus_standin.ROLE_TOOLS, "record_outcome": (("log_habit_outcome", adapt),)}
    monkeypatch.setattr(corpus_standin, "ROLE_TOOLS", bindings)
    standin = standin_at(0, DONE_TURN)

    # When the turn offers it, the role's call is made with that tool and its arguments
    response = standin.complete(request("Done, 20 pushups", "log_habit_outcome", "save_user_profile"))
    calls = [(c.name, c.parsed_arguments()) for c in response.tool_calls]
    assert calls[0] == (
        "log_habit_outcome",
        {"completed": True},
    )
    # And the turn needing the role is not stranded; without the tool it is, by the role's name
    assert not TurnOutcome(0, DONE_TURN.say, ("record_outcome",), ("log_habit_outcome",), None, True).stranded
    assert TurnOutcome(0, DONE_TURN.say, ("record_outcome",), ("scheduler",), None, True).stranded == (
        "record_outcome",
    )
    classifier = ChatRequest(purpose="classifier", messages=[ChatMessage(role="user", content="Done")])
    assert json.loads(standin.complete(classifier).content or "")["tools"] == ["log_habit_outcome", "save_user_profile"]


def test_a_role_not_offered_leaves_the_other_calls() -> None:
    standin = standin_at(0, DONE_TURN)
    response = standin.complete(request("Done, 20 pushups", "save_user_profile"))
    assert [c.name for c in response.tool_calls] == ["save_user_profile"]


def test_model_calls_and_replies_are_checked_per_turn() -> None:
    req = request("STOP")
    observation = Observation(0, "feedback", (), None, None, req)
    # An opt-out word: no model may read it, one confirmation; a model call and two replies are problems
    outcome = TurnOutcome(
        0, "Stop.", (), (), None, True, [observation], max_model_calls=0, expected_replies=1, replies=2
    )
    assert outcome.problems == [
        "1 model call(s) (feedback), at most 0 expected",
        "2 message(s) sent in answer, 1 expected",
    ]
    # No model request at all is what such a turn expects: not "unanswered"
    quiet = TurnOutcome(0, "Stop.", (), (), None, False, [], max_model_calls=0, expected_replies=1, replies=1)
    assert quiet.problems == []


def test_end_problems_check_the_done_count_the_opt_out_and_the_prompts_after() -> None:
    expect = Expected.model_validate(
        {
            "sub_state": "FEEDBACK",
            "schedule": "any",
            "done": 2,
            "opted_out": True,
            "after": {"days": 2, "daily_prompts": 0},
        }
    )
    convo = Conversation(id="c", title="t", turns=[THANKS_TURN], expect=expect)
    state = {"sub_state": "FEEDBACK", "profile": {"success_count": 1}, "schedules": [{"fixed_time": "08:00"}]}
    assert end_problems(convo, state, {"opted_out": False, "status": "active"}, 2) == [
        "done count 1, expected 2",
        "opted out False (status active), expected True",
        "2 daily prompt(s) in the 2 day(s) after the last message, expected 0",
    ]
    state["profile"] = {"success_count": 2}  # any schedule is fine with "any"
    assert end_problems(convo, state, {"opted_out": True, "status": "paused"}, 0) == []


def test_a_split_reports_pass_rates_and_each_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    from scripts.corpus.player import ConversationOutcome, CorpusFigures, print_splits

    convo = conversation(THANKS_TURN)
    good = ConversationOutcome(convo, [TurnOutcome(0, "hi", (), ("scheduler",), "auto", True)], {}, [], [])
    forced = ConversationOutcome(
        convo.model_copy(update={"id": "d"}), [TurnOutcome(0, "hi", (), ("scheduler",), "required", True)], {}, [], []
    )
    figures = CorpusFigures.of([good, forced], "held_out")
    assert (figures.completed, figures.passed, figures.forced) == (2, 1, 1)  # completed, yet a turn was forced
    assert figures.line().startswith("held_out: conversations 2") and "passed 1/2 (50%)" in figures.line()

    print_splits({"built": [good], "held_out": [good, forced]}, as_json=False)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("built: conversations 1") and "passed 1/1 (100%)" in out[0]
    assert out[1].startswith("held_out: conversations 2")
    assert out[2:4] == ["  PASS c", "  FAIL d"]
    assert out[4].startswith("  d turn 1 'hi': forced")

    print_splits({"held_out": [good, forced]}, as_json=True)
    report = json.loads(capsys.readouterr().out)
    assert [c["passed"] for c in report["held_out"]["conversations"]] == [True, False]
    assert report["held_out"]["figures"]["passed"] == 1
