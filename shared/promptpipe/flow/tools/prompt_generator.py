"""A first habit prompt written for the participant (``tool_table.HABIT_PROMPT``; docs/behaviour.md#generator)."""

from __future__ import annotations

from typing import Any, Literal

from promptpipe.controller.tool_table import HABIT_PROMPT, Module
from promptpipe.errors import LLMError
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.prompt_generator import PromptGenerationError, generate_habit_prompt
from promptpipe.flow.tools.base import RowTool, ToolContext, ToolResult

ROW = HABIT_PROMPT


class PromptGeneratorTool(RowTool):
    row = ROW

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        mode = args.get("delivery_mode")
        if not isinstance(mode, str) or not mode.strip():
            return ToolResult.error("delivery_mode is required")
        if mode not in ("immediate", "scheduled"):
            return ToolResult.error(f"invalid delivery_mode: {mode}", "use 'immediate' or 'scheduled'")
        delivery: Literal["immediate", "scheduled"] = "immediate" if mode == "immediate" else "scheduled"
        notes = args.get("personalization_notes")
        try:
            generated = generate_habit_prompt(ctx.deps, ctx.session, delivery, notes if isinstance(notes, str) else "")
        except PromptGenerationError as exc:
            return ToolResult.error("could not generate a habit prompt", str(exc))
        except LLMError as exc:
            return ToolResult.error("the prompt generator is unavailable right now", str(exc))
        ctx.record_llm_call("prompt_generator", generated.response, generated.prompt_version)
        return ToolResult(ok=True, text=generated.text, data=None)


def build(deps: FlowDeps, module: Module) -> PromptGeneratorTool:
    return PromptGeneratorTool()
