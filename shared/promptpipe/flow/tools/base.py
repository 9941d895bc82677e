"""The shape every tool shares."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from promptpipe.controller.tool_table import ToolRow
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import ConversationSession
from promptpipe.lazy_model import LazyModel
from promptpipe.models.llm import ChatResponse, ToolDefinition


class ToolResult(LazyModel):
    ok: bool
    text: str  # what the model reads
    data: Any = None

    def for_model(self) -> str:
        if self.data is None:
            return self.text
        return f"{self.text}\n{json.dumps(self.data, ensure_ascii=False, default=str)}"

    @classmethod
    def error(cls, message: str, detail: str | None = None) -> ToolResult:
        """A failure the model must see with its detail (docs/behaviour.md#B-LOOP-3)."""
        text = f"ERROR: {message}" + (f" ({detail})" if detail and detail != message else "")
        return cls(ok=False, text=text, data={"success": False, "message": message, "error": detail or message})


# (purpose, response, prompt version): a model call a tool made itself, for the turn's metrics.
LLMCallSink = Callable[[str, ChatResponse, str], None]


@dataclass
class ToolContext:
    deps: FlowDeps
    session: ConversationSession
    on_llm_call: LLMCallSink | None = None

    def record_llm_call(self, purpose: str, response: ChatResponse, prompt_version: str = "") -> None:
        if self.on_llm_call is not None:
            self.on_llm_call(purpose, response, prompt_version)


class Tool(Protocol):
    definition: ToolDefinition

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult: ...


def definition_of(row: ToolRow, parameters: dict[str, Any] | None = None, **description: object) -> ToolDefinition:
    """The definition the model is shown for ``row``: its schema (or a narrowed view of it) and its
    description with ``description``'s placeholders filled. Built when a module is, not at import."""
    return ToolDefinition.model_construct(
        name=row.name, description=row.describe(**description), parameters=parameters or row.parameters()
    )


class RowTool:
    """A tool whose definition is its row's, as the table gives it (no setting in its description,
    no narrowed schema): the subclass names its ``row`` and writes ``execute``."""

    row: ClassVar[ToolRow]

    def __init__(self) -> None:
        self.definition = definition_of(self.row)
