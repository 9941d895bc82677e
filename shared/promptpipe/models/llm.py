"""The language-model port's request and response shapes (OpenAI Chat Completions, with tools)."""

import json
from typing import Any, Literal

from pydantic import Field

from promptpipe.lazy_model import LazyModel


class ToolCall(LazyModel):
    id: str
    name: str
    arguments: str = "{}"  # raw JSON text, exactly as the model produced it

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; ``ValueError`` when they are not a JSON object."""
        value = json.loads(self.arguments or "{}")
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


class ChatMessage(LazyModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        return message


class ToolDefinition(LazyModel):
    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class TokenUsage(LazyModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # The part of ``prompt_tokens`` the provider served from its prompt cache (billed at a discount).
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatRequest(LazyModel):
    messages: list[ChatMessage]
    tools: list[ToolDefinition] = Field(default_factory=list)
    # Which part of the engine is asking: "intake", "feedback", "prompt_generator", … (metrics, fakes)
    purpose: str = "chat"
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    # OpenAI-compatible endpoint of this call's route (``None``: the adapter's default).
    base_url: str | None = None
    # "auto" (default when tools are sent), "required" (the turn is an explicit action) or "none".
    tool_choice: Literal["auto", "required", "none"] | None = None
    parallel_tool_calls: bool | None = None
    # {"type": "json_object"} for the intent classifier.
    response_format: dict[str, Any] | None = None


class ChatResponse(LazyModel):
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    model: str = ""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    latency_ms: float = 0.0
    finish_reason: str | None = None
    # The model's reasoning when LLM_REASONING_CAPTURE is on (shown only in debug mode).
    reasoning: str | None = None
