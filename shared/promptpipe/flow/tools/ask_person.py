"""A request for a person of the study team, in words the rule does not know (``tool_table.ASK_PERSON``).

The operation is the one hold (``flow.hold.place``, reason ``asked``): the coach sends nothing more
until a coordinator releases it; the model's reply in this turn, the placing event's own message,
still goes out (docs/safety.md, "The hold"), and the study team is told once the turn commits.
"""

from __future__ import annotations

from typing import Any

from promptpipe.controller.tool_table import ASK_PERSON, Module
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.hold import place
from promptpipe.flow.tools.base import ToolContext, ToolResult, definition_of
from promptpipe.models.safety import HoldReason

ROW = ASK_PERSON


class AskPersonTool:
    def __init__(self) -> None:
        self.definition = definition_of(ROW)

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        ctx.session.apply("asked_hold", place(HoldReason.ASKED, "coach", detail="the coach's tool"))
        return ToolResult(
            ok=True, text="Held for a person: tell them a member of the study team will follow up; nothing more."
        )


def build(deps: FlowDeps, module: Module) -> AskPersonTool:
    return AskPersonTool()
