"""The pure stages of a turn (shared/promptpipe/flow/pipeline.py), exactly: what the model is told and
what the audit records."""

from __future__ import annotations

from promptpipe.flow.pipeline import (
    LLMCallRecord,
    ParsedTurn,
    parse,
    refused_call_text,
    synthesis_messages,
    validate_inbound,
)
from promptpipe.models.llm import ChatMessage, ChatResponse, TokenUsage, ToolCall


def test_parse_of_nothing_is_empty_text() -> None:
    assert parse(None) == ParsedTurn(text="", is_hint=False)  # type: ignore[arg-type]
    assert parse("   ") == ParsedTurn(text="", is_hint=False)
    assert parse(" <Hint: x> ") == ParsedTurn(text="<Hint: x>", is_hint=True)


def test_a_clipped_text_is_never_a_hint() -> None:
    clipped = validate_inbound(parse("a" * 20), max_tokens=2)
    assert clipped == ParsedTurn(text="aaaaaaaa […]", is_hint=False, clipped=True)
    assert clipped.is_hint is False


def test_refused_call_text_is_exact() -> None:
    # what the model reads for each call over the limit: the numbers must be right
    assert refused_call_text(3) == (
        "ERROR: not run: a response may make at most 3 tool calls; this was call number 4 "
        "or later. Call it again in the next response if it is still needed."
    )


def test_synthesis_rewrites_tool_exchanges_as_user_notes_and_keeps_the_rest() -> None:
    calls = [ToolCall(id="1", name="scheduler", arguments='{"action":"list"}'), ToolCall(id="2", name="x")]
    messages = [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="assistant", content="plain answer"),
        ChatMessage(role="assistant", content="thinking", tool_calls=calls),
        ChatMessage(role="assistant", content=None, tool_calls=calls[:1]),
        ChatMessage(role="tool", content=None, tool_call_id="1"),
        ChatMessage(role="tool", content="ok", tool_call_id="2"),
    ]
    out = synthesis_messages(messages, "write the reply")
    assert [(m.role, m.content) for m in out] == [
        ("system", "sys"),
        ("assistant", "plain answer"),
        ("user", 'thinking\n[Note: the assistant called scheduler({"action":"list"}); x({})]'),
        ("user", '[Note: the assistant called scheduler({"action":"list"})]'),
        ("user", "[Note: tool result] "),
        ("user", "[Note: tool result] ok"),
        ("system", "write the reply"),
    ]
    assert all(not m.tool_calls for m in out)


def test_llm_call_record_audit_fields() -> None:
    record = LLMCallRecord(
        purpose="turn",
        model="m",
        prompt_tokens=10,
        completion_tokens=5,
        latency_ms=12.5,
        cached_tokens=2,
        stage="model_loop",
        prompt_version="v3",
        tools_offered=4,
    )
    assert record.to_audit() == {
        "purpose": "turn",
        "stage": "model_loop",
        "model": "m",
        "prompt_tokens": 10,
        "cached_tokens": 2,
        "completion_tokens": 5,
        "latency_ms": 12.5,
        "prompt_version": "v3",
        "tools_offered": 4,
    }


def test_llm_call_record_of_takes_every_figure_from_the_response() -> None:
    response = ChatResponse(
        content="hi",
        model="gpt-x",
        usage=TokenUsage(prompt_tokens=120, completion_tokens=30, cached_tokens=64),
        latency_ms=842.5,
    )
    assert LLMCallRecord.of(response, purpose="turn", stage="model_loop") == LLMCallRecord(
        purpose="turn",
        model="gpt-x",
        prompt_tokens=120,
        completion_tokens=30,
        latency_ms=842.5,
        cached_tokens=64,
        stage="model_loop",
        prompt_version="",
        tools_offered=0,
    )
    offered = LLMCallRecord.of(response, purpose="synthesis", stage="synthesis", prompt_version="v3", tools_offered=2)
    assert (offered.purpose, offered.stage, offered.prompt_version, offered.tools_offered) == (
        "synthesis",
        "synthesis",
        "v3",
        2,
    )
