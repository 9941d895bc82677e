"""The shape every tool shares."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.session import ConversationSession
from promptpipe.models.llm import ToolDefinition


class ToolResult(BaseModel):
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


@dataclass
class ToolContext:
    deps: FlowDeps
    session: ConversationSession


class Tool(Protocol):
    definition: ToolDefinition

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult: ...
