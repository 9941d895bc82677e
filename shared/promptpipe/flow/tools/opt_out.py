"""A plain-language request to stop every message, honoured as STOP is (``tool_table.OPT_OUT``).

The operation is the flow's one opt-out (``flow.lifecycle.opt_out``): paused, flagged, one
confirmation saying how to restart. The model's own reply is not sent after it (an inactive
participant gets nothing more: ``ConversationFlow._store_reply``).
"""

from __future__ import annotations

from typing import Any

from promptpipe.controller.tool_table import OPT_OUT, Module
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.lifecycle import opt_out
from promptpipe.flow.tools.base import RowTool, ToolContext, ToolResult

ROW = OPT_OUT


class OptOutTool(RowTool):
    row = ROW

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        if not opt_out(ctx.deps, ctx.session, reason="participant asked to stop all messages"):
            return ToolResult(ok=True, text="They already receive no messages; nothing changed.")
        return ToolResult(
            ok=True, text="Opted out: no more messages. The confirmation (with how to restart) is sent for you."
        )


def build(deps: FlowDeps, module: Module) -> OptOutTool:
    return OptOutTool()
