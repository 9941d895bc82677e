"""The scripted LLM fake: order, recording, exhaustion, builders and deterministic call ids."""

from __future__ import annotations

import json

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM, ScriptExhaustedError
from promptpipe.errors import LLMError
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall
from promptpipe.ports import LLM


def ask(text: str, purpose: str = "chat") -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], purpose=purpose)


def test_satisfies_the_port() -> None:
    llm: LLM = ScriptedLLM([ScriptedLLM.text("hi")])
    assert llm.complete(ask("x")).content == "hi"


def test_steps_play_in_order_and_requests_are_recorded() -> None:
    llm = ScriptedLLM([ScriptedLLM.text("one"), ScriptedLLM.text("two")])

    assert llm.complete(ask("a")).content == "one"
    assert llm.complete(ask("b", purpose="feedback")).content == "two"

    assert [r.messages[-1].content for r in llm.requests] == ["a", "b"]
    assert [r.purpose for r in llm.requests] == ["chat", "feedback"]
    assert llm.calls == 2
    assert llm.remaining == 0
    llm.assert_exhausted()


def test_recorded_requests_are_snapshots() -> None:
    messages = [ChatMessage(role="user", content="first")]
    request = ChatRequest(messages=messages)
    llm = ScriptedLLM([ScriptedLLM.text("ok")])

    llm.complete(request)
    request.messages.append(ChatMessage(role="assistant", content="later"))

    assert len(llm.requests[0].messages) == 1


def test_callable_step_receives_the_request() -> None:
    def echo(request: ChatRequest) -> ChatResponse:
        return ScriptedLLM.text(f"you said {request.messages[-1].content}")

    llm = ScriptedLLM([echo])

    assert llm.complete(ask("hello")).content == "you said hello"


def test_callable_returning_the_wrong_type_is_a_type_error() -> None:
    llm = ScriptedLLM([lambda _request: "not a response"])  # type: ignore[list-item,return-value]

    with pytest.raises(TypeError, match="not ChatResponse"):
        llm.complete(ask("x"))


def test_exception_step_is_raised_and_the_request_still_recorded() -> None:
    llm = ScriptedLLM([LLMError("provider down"), ScriptedLLM.text("recovered")])

    with pytest.raises(LLMError, match="provider down"):
        llm.complete(ask("a"))
    assert llm.complete(ask("b")).content == "recovered"
    assert llm.calls == 2


def test_exhaustion_is_an_assertion_error_with_context() -> None:
    llm = ScriptedLLM([ScriptedLLM.text("only")])
    llm.complete(ask("a"))

    with pytest.raises(AssertionError) as caught:
        llm.complete(ask("one more please", purpose="intake"))

    assert isinstance(caught.value, ScriptExhaustedError)
    message = str(caught.value)
    assert "call #2" in message
    assert "'intake'" in message
    assert "one more please" in message
    assert llm.calls == 2


def test_empty_script_is_exhausted_immediately() -> None:
    with pytest.raises(ScriptExhaustedError):
        ScriptedLLM().complete(ask("x"))


def test_assert_exhausted_reports_unused_steps() -> None:
    llm = ScriptedLLM([ScriptedLLM.text("a"), ScriptedLLM.text("b")])
    llm.complete(ask("x"))

    with pytest.raises(AssertionError, match="1 scripted step"):
        llm.assert_exhausted()


def test_add_appends_and_chains() -> None:
    llm = ScriptedLLM().add(ScriptedLLM.text("a")).add(ScriptedLLM.text("b"), ScriptedLLM.text("c"))

    assert llm.remaining == 3
    assert [llm.complete(ask("x")).content for _ in range(3)] == ["a", "b", "c"]


def test_add_rejects_nonsense_steps() -> None:
    with pytest.raises(TypeError, match="script step"):
        ScriptedLLM().add("just a string")  # type: ignore[arg-type]


def test_text_builder() -> None:
    response = ScriptedLLM.text("Hello")
    assert (response.content, response.tool_calls, response.finish_reason) == ("Hello", [], "stop")
    assert response.model == "scripted"


def test_tool_call_builder_encodes_arguments_as_json() -> None:
    response = ScriptedLLM.tool_call("save_user_profile", {"habit_domain": "fitness", "n": 2})

    [call] = response.tool_calls
    assert call.name == "save_user_profile"
    assert json.loads(call.arguments) == {"habit_domain": "fitness", "n": 2}
    assert call.parsed_arguments() == {"habit_domain": "fitness", "n": 2}
    assert response.content is None
    assert response.finish_reason == "tool_calls"


def test_tool_call_builder_with_content_and_explicit_id() -> None:
    response = ScriptedLLM.tool_call("scheduler", {"action": "create"}, call_id="my_id", content="Done!")

    llm = ScriptedLLM([response])
    played = llm.complete(ask("x"))

    assert played.content == "Done!"
    assert played.tool_calls[0].id == "my_id"


def test_call_ids_are_deterministic_across_the_script() -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls([("save_user_profile", {"a": 1}), ("scheduler", {"action": "list"})]),
            ScriptedLLM.tool_call("transition_state", {"target_state": "FEEDBACK"}),
            ScriptedLLM.tool_calls([("x", {}, "fixed"), ("y", {})]),
            ScriptedLLM.text("done"),
        ]
    )

    ids = [[c.id for c in llm.complete(ask(str(i))).tool_calls] for i in range(4)]

    assert ids == [["call_1", "call_2"], ["call_3"], ["fixed", "call_4"], []]


def test_ids_from_callables_are_filled_too() -> None:
    llm = ScriptedLLM([lambda _r: ChatResponse(tool_calls=[ToolCall(id="", name="scheduler")])])

    assert llm.complete(ask("x")).tool_calls[0].id == "call_1"


def test_a_reused_step_is_not_mutated() -> None:
    step = ScriptedLLM.tool_call("scheduler", {})
    llm = ScriptedLLM([step, step])

    first = llm.complete(ask("a"))
    second = llm.complete(ask("b"))

    assert step.tool_calls[0].id == ""
    assert (first.tool_calls[0].id, second.tool_calls[0].id) == ("call_1", "call_2")
    first.tool_calls[0].name = "changed"
    assert second.tool_calls[0].name == "scheduler"
